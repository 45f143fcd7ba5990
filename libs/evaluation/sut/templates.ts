import { DEFAULT_RETRY, defaultAdapter } from './adapter.js';
import type { AdapterSpec, ConnectionAuth, ConnectionSpec } from './sut.types.js';

/** A ready connection and adapter to start from; the user picks the secret, so auth has none yet. */
export interface SutTemplate {
  id: string;
  name: string;
  description: string;
  connection: Omit<ConnectionSpec, 'auth'> & { auth: Omit<ConnectionAuth, 'secret_id'> | null };
  adapter: AdapterSpec;
  row_mapping_hint: string;
}

const CHAT_MESSAGES: unknown[] = ['{{history}}', { role: 'user', content: '{{input}}' }];

const OPENAI_USAGE = {
  prompt_tokens: '$.usage.prompt_tokens',
  completion_tokens: '$.usage.completion_tokens',
  total_tokens: '$.usage.total_tokens',
};

const LIMITS = { timeout_ms: 60000, max_concurrency: 4, requests_per_second: null, retry: DEFAULT_RETRY };

export const SUT_TEMPLATES: readonly SutTemplate[] = [
  {
    id: 'openai_chat',
    name: 'OpenAI-compatible chat',
    description:
      'Any /chat/completions endpoint: OpenAI, vLLM, Ollama, LiteLLM, OpenRouter… The earlier turns of a session are sent as history.',
    connection: {
      kind: 'openai_chat',
      openai_chat: {
        base_url: 'https://api.openai.com/v1',
        model: 'gpt-4o-mini',
        parameters: { temperature: 0 },
        headers: {},
      },
      auth: { scheme: 'bearer' },
      ...LIMITS,
    },
    adapter: defaultAdapter('openai_chat'),
    row_mapping_hint:
      'Map the column with the user message to input; expected_output is used by the metrics, not sent.',
  },
  {
    id: 'http_json',
    name: 'Generic JSON REST',
    description: 'POSTs {"input": …} and reads the answer from "output". Edit the body and the paths to fit your API.',
    connection: {
      kind: 'http',
      http: { url: 'https://sut.example.com/answer', method: 'POST', headers: {} },
      auth: { scheme: 'bearer' },
      ...LIMITS,
    },
    adapter: defaultAdapter('http'),
    row_mapping_hint: 'Map the question column to input; other columns are available as {{row.<column>}}.',
  },
  {
    id: 'anthropic_messages',
    name: 'Anthropic Messages API',
    description: 'Claude through POST /v1/messages with an x-api-key header.',
    connection: {
      kind: 'http',
      http: {
        url: 'https://api.anthropic.com/v1/messages',
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
      },
      auth: { scheme: 'header', header: 'x-api-key' },
      ...LIMITS,
    },
    adapter: {
      request: { body: { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: CHAT_MESSAGES } },
      response: {
        language: 'jsonpath',
        output: '$.content[0].text',
        usage: { prompt_tokens: '$.usage.input_tokens', completion_tokens: '$.usage.output_tokens' },
      },
    },
    row_mapping_hint: 'Map the user message column to input; history must alternate user and assistant turns.',
  },
  {
    id: 'azure_openai',
    name: 'Azure OpenAI',
    description:
      'A chat deployment on Azure OpenAI with an api-key header. Replace {resource} and {deployment} in the URL.',
    connection: {
      kind: 'http',
      http: {
        url: 'https://{resource}.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21',
        method: 'POST',
        headers: {},
      },
      auth: { scheme: 'header', header: 'api-key' },
      ...LIMITS,
    },
    adapter: {
      request: { body: { messages: CHAT_MESSAGES, temperature: 0 } },
      response: { language: 'jsonpath', output: '$.choices[0].message.content', usage: OPENAI_USAGE },
    },
    row_mapping_hint: 'Map the user message column to input; the deployment decides the model.',
  },
  {
    id: 'rag_endpoint',
    name: 'RAG endpoint',
    description:
      'A retrieval-augmented service answering {answer, contexts: [{text, …}]}; the retrieved texts are kept for context metrics.',
    connection: {
      kind: 'http',
      http: { url: 'https://rag.example.com/query', method: 'POST', headers: {} },
      auth: { scheme: 'bearer' },
      ...LIMITS,
    },
    adapter: {
      request: { body: { question: '{{input}}' } },
      response: { language: 'jsonpath', output: '$.answer', extras: { contexts: '$.contexts[*].text' } },
    },
    row_mapping_hint:
      'Map the question column to input and the reference answer to expected_output; retrieved contexts come back in extras.contexts.',
  },
];
