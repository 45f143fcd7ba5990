import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { completeOpenApiDocument } from '#libs/common/openapi-completion.js';
import { admitNullReferences } from '#libs/common/openapi-nullable.js';
import { stateImpliedBounds } from '#libs/common/openapi-bounds.js';
import { EXAMPLE_OTLP_LOGS_REQUEST, EXAMPLE_OTLP_REQUEST } from './modules/traces/dto/traces.dto.js';
import { describeOtlpErrors, describeOtlpRoute } from './modules/traces/otlp-http.js';
import { SERVICE_VERSION } from './version.js';

export const API_TITLE = 'Evaluation Workspace Service';

/** What each tag of the document groups, in the order a user meets them. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  status: 'Liveness and readiness probes.',
  branding: 'The name, logo and colours a deployment shows.',
  templates: 'Built-in project templates to start from.',
  auth: 'Log in (JSON or the OAuth2 password form), log out, the caller, password resets.',
  users: 'Accounts of the deployment (system admins), deactivation, password changes.',
  workspaces: 'Workspaces, their members and roles; every record belongs to one workspace.',
  secrets: 'Encrypted workspace secrets (API keys of SUTs and judges), revealed only through `reveal`.',
  'api-keys':
    'Machine credentials for CI jobs and trace exporters: a key acts for its creator in one workspace, at a role no higher than theirs (`Authorization: Bearer ews_…`). An addition beside the specification.',
  invitations: 'Invitations of people into a workspace by e-mail, and their acceptance.',
  audit:
    "The audit log: who did what to which record, across every family, for workspace admins (and the system's own events for system admins); filters, cursor paging, JSON Lines and CSV exports, retention. An addition beside the specification.",
  datasets: 'Test datasets: rows, uploads, staged edits, commits and exports.',
  'dataset versions': 'Immutable committed versions of a dataset, their rows and labels.',
  'dataset dimensions': 'Dimensions that slice a dataset (topic, difficulty, …) and the partitions they define.',
  'dataset quality': 'Quality checks of a dataset version (duplicates, empty fields, leakage) and their findings.',
  files: 'Files attached to dataset rows.',
  'embedding configs': 'The embedding model a workspace uses for similarity, clustering and semantic metrics.',
  metrics: 'The catalogue of built-in metrics.',
  notifications: 'Webhooks a workspace is notified through when runs and analyses settle.',
  judges: 'LLM judges: model, rubric and scale, with their versions.',
  'metric configs': 'Configured metrics (thresholds, judges, parameters) with their versions and workspace defaults.',
  'eval configs': 'Sets of metric configs a run scores with.',
  suts: 'Systems under test: connections (HTTP, OpenAI-compatible), adapters, validation and test calls.',
  ops: 'The operation registry: built-in and custom operations runs and analyses apply.',
  runs: 'Runs of a SUT over a dataset version: start, progress, results, verdicts, diffs and offline uploads.',
  'synthetic data': 'Synthetic data generation through adapters.',
  analysis: 'Analyses of dataset versions (text, annotation, visual) and clustering runs.',
  mcp: 'The Model Context Protocol server: the service as tools, resources and prompts for coding agents and assistants (docs/mcp.md).',
  traces: 'Trace ingestion (OTLP, JSONL, Phoenix, Langfuse) into trace datasets, connections, topology and enrichment.',
  projects: 'Projects grouping datasets, SUTs and runs, with coverage and trends.',
  'test plans': 'Test plans of a project: thresholds and the release rule, with versions.',
  'test packages': 'Recommended test packages for a project.',
  'online evaluation':
    'Online evaluators on trace datasets: sampled by trace id, scored as spans land and by backfills, each target once per version (docs/online-evaluation.md).',
  'online alerts':
    "Alert rules on an online evaluator's scores: a recent window's pass rate tested against a reference, with hysteresis, firings and resolutions sent to webhooks (docs/online-alerts.md).",
  reports: 'Reports from runs: sections, narratives, edits and exports (Markdown, HTML, PDF).',
  review:
    'Human review queues: rubrics, items leased to reviewers, blind labels, adjudication, agreement statistics and exports of confirmed labels (docs/review.md).',
  sdk: 'The generated TypeScript SDK and examples bundle.',
};

/** The OpenAPI document: Bearer tokens, plus the OAuth2 password flow Swagger UI's Authorize button uses. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setDescription(
      'Keep test datasets, run your LLM application over them, score outputs with metrics and judges, compare runs, ingest traces and publish reports. ' +
        'Errors are application/problem+json (RFC 9457) with an error_code; see docs/errors.md.',
    )
    .setVersion(SERVICE_VERSION)
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description:
        'A token from POST /auth/token (a JWT, one hour), or an API key of a workspace (`ews_…`, POST /workspaces/{workspace_id}/api-keys).',
    })
    .addOAuth2({ type: 'oauth2', flows: { password: { tokenUrl: '/auth/token', scopes: {} } } }, 'oauth2')
    .build();
  // Every handler names its operation: @ApiOperation({ operationId: 'listSecrets' }), what client
  // generators name their methods after. One left out gets Nest's `SecretsController_list`, which
  // test/contract/operation-ids.spec.ts refuses (docs/api-conventions.md, "Operation ids").
  const document = SwaggerModule.createDocument(app, config);
  describeOtlpRoute(document as never, { traces: EXAMPLE_OTLP_REQUEST, logs: EXAMPLE_OTLP_LOGS_REQUEST });
  // The document follows 3.0.3's reading of `nullable` (libs/common/openapi-nullable.ts).
  document.openapi = '3.0.3';
  admitNullReferences(document);
  // Relative: Try it out calls the server that served the document, whatever its address.
  const completed = completeOpenApiDocument(document, {
    tags: TAG_DESCRIPTIONS,
    servers: [{ url: '/', description: 'This service' }],
  });
  describeOtlpErrors(completed as never);
  stateImpliedBounds(completed);
  return completed;
}

/** Serves the document at /docs (Swagger UI), /openapi.json and /openapi.yaml; `document` runs at the first request. */
export function serveOpenApi(app: INestApplication, document: () => OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    customSiteTitle: API_TITLE,
    // deepLinking: #/tag/operationId opens (and links to) one operation; Swagger UI renders only what is near the viewport.
    swaggerOptions: { persistAuthorization: true, deepLinking: true },
  });
}
