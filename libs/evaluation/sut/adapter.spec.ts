import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RETRY, checkAdapter, defaultAdapter, renderRequest } from './adapter.js';
import { SUT_TEMPLATES } from './templates.js';
import { CONNECTION_KINDS, type AdapterSpec, type ConnectionSpec, type RowContext } from './sut.types.js';

const row: RowContext = {
  row_id: 'r1',
  data: { q: 'a b&c', lang: 'fr' },
  input: 'a b&c',
  history: [{ role: 'assistant', content: 'earlier' }],
};

const httpConn = (overrides: Partial<ConnectionSpec> = {}): ConnectionSpec => ({
  kind: 'http',
  http: { url: 'https://sut.test/api?v=1', method: 'POST', headers: { 'X-Static': 's', 'X-Over': 'static' } },
  auth: null,
  timeout_ms: 1000,
  max_concurrency: 1,
  requests_per_second: null,
  retry: DEFAULT_RETRY,
  ...overrides,
});

const chatConn = (overrides: Partial<ConnectionSpec> = {}): ConnectionSpec => ({
  ...httpConn(),
  kind: 'openai_chat',
  http: undefined,
  openai_chat: {
    base_url: 'https://llm.test/v1/',
    model: 'm-1',
    parameters: { temperature: 0, max_tokens: 5 },
    headers: { 'OpenAI-Organization': 'org' },
  },
  auth: { secret_id: 'sec', scheme: 'bearer' },
  ...overrides,
});

describe('defaultAdapter and checkAdapter', () => {
  it('default adapters are valid for their kind', () => {
    for (const kind of CONNECTION_KINDS) expect(checkAdapter(defaultAdapter(kind), kind)).toEqual([]);
    expect(defaultAdapter('openai_chat').request.messages).toEqual([
      '{{history}}',
      { role: 'user', content: '{{input}}' },
    ]);
    expect(defaultAdapter('http')).toEqual({
      request: { body: { input: '{{input}}' } },
      response: { language: 'jsonpath', output: '$.output' },
    });
  });

  it('every ready template passes checkAdapter', () => {
    expect(SUT_TEMPLATES.map((template) => template.id)).toEqual([
      'openai_chat',
      'http_json',
      'anthropic_messages',
      'azure_openai',
      'rag_endpoint',
    ]);
    for (const template of SUT_TEMPLATES)
      expect({ id: template.id, issues: checkAdapter(template.adapter, template.connection.kind) }).toEqual({
        id: template.id,
        issues: [],
      });
  });

  it('reports template and path issues with their pointers', () => {
    const spec: AdapterSpec = {
      request: {
        body: { q: '{{ input', model: '{{env.model}}' },
        headers: { 'x-a/b': 'ok', 'x-c': '{{nope}}' },
        query: { k: '{{row}}' },
      },
      response: {
        language: 'jsonpath',
        output: 'choices',
        usage: { prompt_tokens: '$.u[' },
        extras: { 'a~b': '$.ok' },
      },
    };
    expect(checkAdapter(spec, 'http').map(({ pointer, code }) => `${code} ${pointer}`)).toEqual([
      'template_syntax /request/body/q',
      'unknown_placeholder /request/body/model',
      'invalid_spec /request/headers/x-a~1b',
      'unknown_placeholder /request/query/k',
      'path_syntax /response/output',
      'path_syntax /response/usage/prompt_tokens',
    ]);
  });

  it('reports structural problems as invalid_spec', () => {
    const broken = {
      request: { messages: ['{{input}}'], headers: { a: 1 } },
      response: { language: 'xpath', output: 3, extras: [] },
    } as unknown as AdapterSpec;
    expect(checkAdapter(broken, 'http').map(({ pointer, code }) => `${code} ${pointer}`)).toEqual([
      'invalid_spec /request/messages',
      'invalid_spec /request/headers/a',
      'invalid_spec /response/language',
      'invalid_spec /response/output',
      'invalid_spec /response/extras',
    ]);
    expect(
      checkAdapter(
        {
          request: { messages: '{{input}}' },
          response: { language: 'jmespath', output: 'a' },
        } as unknown as AdapterSpec,
        'openai_chat',
      ),
    ).toEqual([{ pointer: '/request/messages', code: 'invalid_spec', message: 'must be an array' }]);
    expect(checkAdapter(null as unknown as AdapterSpec, 'http')[0].code).toBe('invalid_spec');
  });
});

describe('renderRequest', () => {
  it('http: url with templated query, headers lower-cased in order, JSON body', () => {
    const adapter: AdapterSpec = {
      request: {
        body: { input: '{{input}}', lang: '{{row.lang}}' },
        headers: { 'X-Over': 'adapter-{{row.lang}}' },
        query: { q: '{{input}}' },
      },
      response: { language: 'jsonpath', output: '$.output' },
    };
    const { request, issues } = renderRequest(httpConn(), adapter, row, null);
    expect(issues).toEqual([]);
    expect(request).toEqual({
      method: 'POST',
      url: 'https://sut.test/api?v=1&q=a+b%26c',
      headers: { 'x-static': 's', 'x-over': 'adapter-fr', 'content-type': 'application/json' },
      body: { input: 'a b&c', lang: 'fr' },
    });
  });

  it('http GET sends no body and no content-type', () => {
    const conn = httpConn({ http: { url: 'https://sut.test/get', method: 'GET', headers: {} } });
    const { request } = renderRequest(conn, defaultAdapter('http'), row, null);
    expect(request).toEqual({ method: 'GET', url: 'https://sut.test/get', headers: {} });
  });

  it('openai_chat: chat/completions URL, messages with history, parameters then body', () => {
    const adapter: AdapterSpec = {
      ...defaultAdapter('openai_chat'),
      request: { ...defaultAdapter('openai_chat').request, body: { max_tokens: 9, user: '{{row_id}}' } },
    };
    const { request, issues } = renderRequest(chatConn(), adapter, row, 'sk-1');
    expect(issues).toEqual([]);
    expect(request).toEqual({
      method: 'POST',
      url: 'https://llm.test/v1/chat/completions',
      headers: { 'openai-organization': 'org', 'content-type': 'application/json', authorization: 'Bearer sk-1' },
      body: {
        model: 'm-1',
        messages: [
          { role: 'assistant', content: 'earlier' },
          { role: 'user', content: 'a b&c' },
        ],
        temperature: 0,
        max_tokens: 9,
        user: 'r1',
      },
    });
  });

  it('auth schemes, and redaction everywhere', () => {
    const header = httpConn({ auth: { secret_id: 's', scheme: 'header', header: 'X-Api-Key', prefix: 'Key ' } });
    expect(renderRequest(header, defaultAdapter('http'), row, 'top').request.headers['x-api-key']).toBe('Key top');
    expect(
      renderRequest(header, defaultAdapter('http'), row, 'top', { redact: true }).request.headers['x-api-key'],
    ).toBe('Key ***');
    const query = httpConn({ auth: { secret_id: 's', scheme: 'query', param: 'key' } });
    expect(renderRequest(query, defaultAdapter('http'), row, 'top').request.url).toBe(
      'https://sut.test/api?v=1&key=top',
    );
    const redacted = renderRequest(query, defaultAdapter('http'), row, 'top', { redact: true }).request;
    expect(redacted.url).toBe('https://sut.test/api?v=1&key=***');
    expect(JSON.stringify(redacted)).not.toContain('top');
    expect(
      renderRequest(chatConn(), defaultAdapter('openai_chat'), row, 'sk', { redact: true }).request.headers
        .authorization,
    ).toBe('Bearer ***');
  });

  it('reports what cannot be rendered', () => {
    expect(renderRequest(chatConn(), defaultAdapter('openai_chat'), row, null).issues).toEqual([
      { pointer: '', code: 'invalid_spec', message: 'the connection needs a secret and none was given' },
    ]);
    const offline = renderRequest(
      { ...httpConn(), kind: 'offline', http: undefined },
      defaultAdapter('offline'),
      row,
      null,
    );
    expect(offline.issues.map((issue) => issue.code)).toEqual(['invalid_spec']);
    const missing = renderRequest(
      httpConn(),
      {
        request: { body: { a: '{{row.gone}}' }, query: { b: '{{expected_output}}' } },
        response: { language: 'jsonpath', output: '$.o' },
      },
      row,
      null,
    );
    expect(missing.issues.map(({ pointer, code }) => `${code} ${pointer}`)).toEqual([
      'missing_value /request/body/a',
      'missing_value /request/query/b',
    ]);
    expect(
      renderRequest(
        httpConn({ http: { url: 'not a url', method: 'POST', headers: {} } }),
        defaultAdapter('http'),
        row,
        null,
      ).issues[0].code,
    ).toBe('invalid_spec');
    const multiline = renderRequest(
      httpConn(),
      { ...defaultAdapter('http'), request: { headers: { 'x-q': '{{input}}' } } },
      { ...row, input: 'a\nb' },
      null,
    );
    expect(multiline.issues.map(({ pointer, code }) => `${code} ${pointer}`)).toEqual([
      'invalid_spec /request/headers/x-q',
    ]);
  });
});
