export * from './access.decorators.js';
export * from './access.repository.js';
export * from './roles.js';
export * from './token-signer.js';
export * from './workspace-resource.registry.js';
export * from './auth-lib.module.js';
export * from './password-hasher.js';
export * from './session.repository.js';
