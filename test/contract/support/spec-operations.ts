import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type supertest from 'supertest';
import type { Test } from 'supertest';

/** One operation of the interface specification (test/contract/operations.json, a copy of the seed). */
export interface SpecOperation {
  method: string;
  path: string;
  success: number[];
  section: string;
  public: boolean;
}

export interface OpenApiOperation {
  summary?: string;
  description?: string;
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  'x-access'?: { rule: string };
  [key: string]: unknown;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
  [key: string]: unknown;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export const contractDir = dirname(fileURLToPath(import.meta.url)).replace(/\/support$/, '');
export const repoRoot = join(contractDir, '..', '..');

export function loadSpecOperations(): SpecOperation[] {
  return JSON.parse(readFileSync(join(contractDir, 'operations.json'), 'utf8')) as SpecOperation[];
}

/**
 * The form in which a spec path and an OpenAPI path are compared: parameter names do not
 * matter (`{}`), a trailing slash does not (Express routes `/x/` and `/x` alike), and a colon
 * escaped for the router (`dimensions\:assign`) is a literal colon.
 */
export function normalisePath(path: string): string {
  const plain = path.replace(/\\:/g, ':').replace(/\{[^}]+\}/g, '{}');
  return plain.length > 1 ? plain.replace(/\/+$/, '') : plain;
}

export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${normalisePath(path)}`;
}

/** Every operation the OpenAPI document declares, by normalised key. */
export function documentedOperations(
  document: OpenApiDocument,
): Map<string, { method: string; path: string; operation: OpenApiOperation }> {
  const operations = new Map<string, { method: string; path: string; operation: OpenApiOperation }>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) operations.set(operationKey(method, path), { method: method.toUpperCase(), path, operation });
    }
  }
  return operations;
}

/** Plausible values for the path parameters of the specification. */
export function fillPath(path: string, uuid: () => string): string {
  const samples: Record<string, string> = {
    name: 'summarisation',
    version: '1.0.0',
    key: 'summary',
    section_key: 'summary',
    ref: 'release-gate',
    config_name: 'exact-match',
    config_version: '1',
    metric_name: 'faithfulness',
  };
  return path.replace(/\{([^}]+)\}/g, (_, param: string) =>
    param.endsWith('_id') ? uuid() : (samples[param] ?? 'sample'),
  );
}

/** A request of `method` on `url`, with a `{}` JSON body where the method carries one. */
export function send(http: ReturnType<typeof supertest>, method: string, url: string): Test {
  const verb = method.toLowerCase() as (typeof HTTP_METHODS)[number];
  const request = http[verb](url);
  return verb === 'post' || verb === 'put' || verb === 'patch' ? request.send({}) : request;
}
