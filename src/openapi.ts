import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import packageJson from '../package.json' with { type: 'json' };

export const API_TITLE = 'Evaluation Workspace Service';

/** The OpenAPI document: Bearer tokens, plus the OAuth2 password flow Swagger UI's Authorize button uses. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setDescription(
      'Keep test datasets, run your LLM application over them, score outputs with metrics and judges, compare runs, ingest traces and publish reports. ' +
        'Errors are application/problem+json (RFC 9457) with an error_code; see docs/errors.md.',
    )
    .setVersion(packageJson.version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    .addOAuth2({ type: 'oauth2', flows: { password: { tokenUrl: '/auth/token', scopes: {} } } }, 'oauth2')
    .build();
  return SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controllerKey: string, methodKey: string) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
}

export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    customSiteTitle: API_TITLE,
    swaggerOptions: { persistAuthorization: true },
  });
}
