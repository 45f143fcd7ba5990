/** Evaluation Workspace Service client 0.1.0, generated from its OpenAPI document by swagger-typescript-api (npm run sdk). */
export * from './api';
