import { defineErrorCodes } from '../../../libs/common/error-codes.js';

export const CatalogueErrors = defineErrorCodes('catalogues', {
  embedding_config_name_taken: { status: 409, title: 'Embedding config name taken', description: 'The workspace already has an embedding config with this name (compared case-insensitively), or the name is `local`, the built-in embedder\'s.' },
  embedding_config_not_found: { status: 404, title: 'Embedding config not found', description: 'No embedding config of the workspace has this id or name; `available` lists the names.' },
  notification_config_name_taken: { status: 409, title: 'Webhook name taken', description: 'The workspace already has a notification config with this name (compared case-insensitively).' },
  unknown_secret: { status: 400, title: 'Unknown secret', description: 'The secret_id names no secret of the workspace.' },
});
