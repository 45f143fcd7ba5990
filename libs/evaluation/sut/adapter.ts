import { checkPath } from './extract.js';
import {
  ALL_PLACEHOLDER_ROOTS,
  HTTP_PLACEHOLDER_ROOTS,
  checkTemplate,
  joinPointer,
  renderTemplate,
} from './template.js';
import {
  PATH_LANGUAGES,
  type AdapterIssue,
  type AdapterSpec,
  type ConnectionKind,
  type ConnectionSpec,
  type PathLanguage,
  type RenderedRequest,
  type RetryPolicy,
  type RowContext,
} from './sut.types.js';

export const DEFAULT_RETRY: RetryPolicy = {
  max_attempts: 3,
  initial_backoff_ms: 500,
  max_backoff_ms: 10000,
  retry_on_status: [408, 409, 425, 429, 500, 502, 503, 504],
  retry_on_timeout: true,
};

/** What the secret is shown as in a redacted rendering. */
export const REDACTED = '***';

const DEFAULT_MESSAGES: unknown[] = ['{{history}}', { role: 'user', content: '{{input}}' }];

/** The adapter a new connection of this kind starts with. */
export function defaultAdapter(kind: ConnectionKind): AdapterSpec {
  switch (kind) {
    case 'openai_chat':
      return {
        request: { messages: structuredClone(DEFAULT_MESSAGES) },
        response: {
          language: 'jsonpath',
          output: '$.choices[0].message.content',
          usage: {
            prompt_tokens: '$.usage.prompt_tokens',
            completion_tokens: '$.usage.completion_tokens',
            total_tokens: '$.usage.total_tokens',
          },
        },
      };
    case 'http':
      return { request: { body: { input: '{{input}}' } }, response: { language: 'jsonpath', output: '$.output' } };
    case 'offline':
      return { request: {}, response: { language: 'jsonpath', output: '$.output' } };
  }
}

/** RFC 9110 token: what fetch accepts as a header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(pointer: string, message: string): AdapterIssue {
  return { pointer, code: 'invalid_spec', message };
}

/** Issues of a `Record<string, string>` member; header names are also checked as tokens. */
function checkStringMap(value: unknown, pointer: string, headerNames: boolean): AdapterIssue[] {
  if (value === undefined) return [];
  if (!isRecord(value)) return [invalid(pointer, 'must be an object of strings')];
  return Object.entries(value).flatMap(([key, item]) => {
    const at = joinPointer(pointer, key);
    if (typeof item !== 'string') return [invalid(at, 'must be a string')];
    if (headerNames && !HEADER_NAME.test(key)) return [invalid(at, `"${key}" is not a valid header name`)];
    return [];
  });
}

function checkRequest(request: unknown, kind: ConnectionKind): AdapterIssue[] {
  if (!isRecord(request)) return [invalid('/request', 'must be an object')];
  const roots = kind === 'openai_chat' ? ALL_PLACEHOLDER_ROOTS : HTTP_PLACEHOLDER_ROOTS;
  const issues: AdapterIssue[] = [...checkTemplate(request.body, '/request/body', roots)];
  if (kind === 'openai_chat' && request.body !== undefined && !isRecord(request.body))
    issues.push(invalid('/request/body', 'must be an object, merged over {model, messages, ...parameters}'));
  if (request.messages !== undefined) {
    if (kind !== 'openai_chat')
      issues.push(invalid('/request/messages', 'messages are for openai_chat connections only; put them in the body'));
    else if (!Array.isArray(request.messages)) issues.push(invalid('/request/messages', 'must be an array'));
    else issues.push(...checkTemplate(request.messages, '/request/messages', roots));
  }
  for (const [member, headerNames] of [
    ['headers', true],
    ['query', false],
  ] as const) {
    const mapIssues = checkStringMap(request[member], `/request/${member}`, headerNames);
    issues.push(...(mapIssues.length ? mapIssues : checkTemplate(request[member], `/request/${member}`, roots)));
  }
  return issues;
}

function checkPathMember(language: PathLanguage | null, value: unknown, pointer: string): AdapterIssue[] {
  if (typeof value !== 'string') return [invalid(pointer, 'must be a path string')];
  const issue = language ? checkPath(language, value, pointer) : null;
  return issue ? [issue] : [];
}

function checkResponse(response: unknown): AdapterIssue[] {
  if (!isRecord(response)) return [invalid('/response', 'must be an object')];
  const issues: AdapterIssue[] = [];
  const language = PATH_LANGUAGES.find((candidate) => candidate === response.language) ?? null;
  if (!language) issues.push(invalid('/response/language', `must be one of ${PATH_LANGUAGES.join(', ')}`));
  issues.push(...checkPathMember(language, response.output, '/response/output'));
  if (response.usage !== undefined) {
    if (!isRecord(response.usage)) issues.push(invalid('/response/usage', 'must be an object'));
    else {
      for (const [key, value] of Object.entries(response.usage)) {
        const pointer = joinPointer('/response/usage', key);
        if (key !== 'prompt_tokens' && key !== 'completion_tokens' && key !== 'total_tokens')
          issues.push(invalid(pointer, 'usage takes prompt_tokens, completion_tokens and total_tokens'));
        else if (value !== undefined) issues.push(...checkPathMember(language, value, pointer));
      }
    }
  }
  if (response.cost_usd !== undefined)
    issues.push(...checkPathMember(language, response.cost_usd, '/response/cost_usd'));
  if (response.trajectory !== undefined)
    issues.push(...checkPathMember(language, response.trajectory, '/response/trajectory'));
  if (response.extras !== undefined) {
    if (!isRecord(response.extras)) issues.push(invalid('/response/extras', 'must be an object of paths'));
    else
      for (const [name, value] of Object.entries(response.extras))
        issues.push(...checkPathMember(language, value, joinPointer('/response/extras', name)));
  }
  return issues;
}

/** Every structural, template and path problem of an adapter for a connection of this kind. */
export function checkAdapter(spec: AdapterSpec, kind: ConnectionKind): AdapterIssue[] {
  const candidate: unknown = spec;
  if (!isRecord(candidate)) return [invalid('', 'the adapter must be an object')];
  return [...checkRequest(candidate.request, kind), ...checkResponse(candidate.response)];
}

interface RenderedParts {
  url: URL;
  method: RenderedRequest['method'];
  headers: Record<string, string>;
  body?: unknown;
}

/** Header names are case-insensitive; lower-casing keeps later ones overriding earlier ones. */
function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function renderStringMap(
  map: Record<string, string> | undefined,
  pointer: string,
  row: RowContext,
  model: string | undefined,
  issues: AdapterIssue[],
): Array<[string, string]> {
  return Object.entries(map ?? {}).map(([key, template]) => {
    const rendered = renderTemplate(template, row, { model }, joinPointer(pointer, key));
    issues.push(...rendered.issues);
    const value = rendered.value;
    return [key, typeof value === 'string' ? value : value === null ? '' : JSON.stringify(value)];
  });
}

function parseUrl(text: string, what: string, issues: AdapterIssue[]): URL | null {
  try {
    return new URL(text);
  } catch {
    issues.push(invalid('', `the connection's ${what} "${text}" is not a valid URL`));
    return null;
  }
}

function renderTransport(
  conn: ConnectionSpec,
  adapter: AdapterSpec,
  row: RowContext,
  issues: AdapterIssue[],
): RenderedParts | null {
  if (conn.kind === 'http') {
    if (!conn.http) {
      issues.push(invalid('', 'an http connection needs its http settings'));
      return null;
    }
    const url = parseUrl(conn.http.url, 'url', issues);
    if (!url) return null;
    const hasBody = conn.http.method !== 'GET' && adapter.request.body !== undefined;
    const body = hasBody ? renderTemplate(adapter.request.body, row, {}, '/request/body') : null;
    if (body) issues.push(...body.issues);
    return {
      url,
      method: conn.http.method,
      headers: lowerCaseKeys(conn.http.headers),
      ...(body ? { body: body.value } : {}),
    };
  }
  if (conn.kind === 'openai_chat') {
    const chat = conn.openai_chat;
    if (!chat) {
      issues.push(invalid('', 'an openai_chat connection needs its openai_chat settings'));
      return null;
    }
    const url = parseUrl(`${chat.base_url.replace(/\/+$/, '')}/chat/completions`, 'base_url', issues);
    if (!url) return null;
    const env = { model: chat.model };
    const messages = renderTemplate(adapter.request.messages ?? DEFAULT_MESSAGES, row, env, '/request/messages');
    const extra =
      adapter.request.body === undefined ? null : renderTemplate(adapter.request.body, row, env, '/request/body');
    issues.push(...messages.issues, ...(extra?.issues ?? []));
    const extraBody = extra && isRecord(extra.value) ? extra.value : {};
    if (extra && !isRecord(extra.value))
      issues.push(invalid('/request/body', 'must be an object, merged over {model, messages, ...parameters}'));
    return {
      url,
      method: 'POST',
      headers: lowerCaseKeys(chat.headers),
      body: { model: chat.model, messages: messages.value, ...chat.parameters, ...extraBody },
    };
  }
  issues.push(invalid('', 'an offline connection makes no requests'));
  return null;
}

/**
 * The request for one row: transport, templated query and headers, body and auth. With `redact`
 * the secret shows as `***`, for display; without it a missing secret for an authenticated connection is an issue.
 */
export function renderRequest(
  conn: ConnectionSpec,
  adapter: AdapterSpec,
  row: RowContext,
  secret: string | null,
  opts: { redact?: boolean } = {},
): { request: RenderedRequest; issues: AdapterIssue[] } {
  const issues: AdapterIssue[] = [];
  const parts = renderTransport(conn, adapter, row, issues);
  if (!parts) return { request: { method: 'POST', url: '', headers: {} }, issues };
  const model = conn.openai_chat?.model;

  for (const [key, value] of renderStringMap(adapter.request.query, '/request/query', row, model, issues))
    parts.url.searchParams.append(key, value);
  const headers: Record<string, string> = {
    ...parts.headers,
    ...lowerCaseKeys(
      Object.fromEntries(renderStringMap(adapter.request.headers, '/request/headers', row, model, issues)),
    ),
  };
  if (parts.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  // fetch rejects line breaks in header values; caught here they name the header instead of failing as a network error.
  for (const [name, value] of Object.entries(headers))
    if (/[\r\n]/.test(value))
      issues.push(
        invalid(joinPointer('/request/headers', name), `the value of header "${name}" contains a line break`),
      );

  const auth = conn.auth;
  if (auth) {
    const value = opts.redact ? REDACTED : secret;
    if (value === null) issues.push(invalid('', 'the connection needs a secret and none was given'));
    else if (auth.scheme === 'bearer') headers.authorization = `Bearer ${value}`;
    else if (auth.scheme === 'header') {
      if (auth.header && HEADER_NAME.test(auth.header))
        headers[auth.header.toLowerCase()] = `${auth.prefix ?? ''}${value}`;
      else issues.push(invalid('', 'header auth needs a valid header name'));
    } else if (auth.param) parts.url.searchParams.set(auth.param, value);
    else issues.push(invalid('', 'query auth needs a param name'));
  }

  const request: RenderedRequest = { method: parts.method, url: parts.url.toString(), headers };
  if (parts.body !== undefined) request.body = parts.body;
  return { request, issues };
}
