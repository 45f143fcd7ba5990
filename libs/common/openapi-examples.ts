import { ApiSchema, type ApiSchemaOptions } from '@nestjs/swagger';

/**
 * The records the OpenAPI examples describe, one of each, so that every example refers to the
 * same world: the workspace `support-bot-v2` evaluates belongs to is the one its dataset, runs
 * and reports belong to, and an id in one example names the record another example shows.
 */
export const EXAMPLE_ID = {
  workspace: '8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b',
  /** The workspace a project moves to. */
  otherWorkspace: 'c76382bf-32c5-4ecd-b7b0-686fa9ee9fa3',
  /** The caller: an owner of the workspace. */
  user: '2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a',
  /** A member the caller adds or invites. */
  member: '7decc0e4-66f7-48ce-95ab-9a5bb71185c6',
  token: '64a841c7-c213-4bde-b6f6-4549729dc851',
  invitation: '67dde1eb-57e4-4070-bf3f-db08d2f03590',
  /** The secret holding the LLM API key. */
  secret: '7571d304-22fc-477d-bce6-15c4e3b0f69d',
  /** A second secret (a Langfuse public key, a webhook signing secret). */
  otherSecret: 'a4155dda-ae8f-4bb5-8444-ab992e5aabc9',
  dataset: '6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c',
  /** The dataset's current version (number 3). */
  version: '89fa3cc1-e563-4ad1-af4c-d5becdca17df',
  /** The version before it (number 2). */
  previousVersion: 'ed0be736-a7bd-4869-9e2f-d6dbdd29b445',
  rows: [
    '0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11',
    '6c861b83-60a8-4bcf-845d-126ac56874a4',
    '69f1ff1c-e24a-4a1b-9b43-2656779f2185',
  ],
  partition: 'e6c2feed-97c3-43e5-b733-96f1ee7aa5e0',
  qualityRun: '05e5fc47-409a-4408-b6bc-f9483b99e829',
  sut: 'a92b7315-b960-467d-9b3d-45e8b02b3351',
  connection: '9535f71a-4c76-4544-92c7-d0117af05d92',
  adapter: '6b4d6ef7-4d2b-4ce8-af33-df2d01b3e53f',
  judge: 'e171b466-fde7-4636-a3d1-b73872eb9e36',
  metricConfig: '3f5a0983-0d67-4a7e-a129-973f816631f0',
  evalConfig: 'fbe89949-95ca-4fae-9022-be8b4fd7304c',
  embeddingConfig: '6d206dd2-0e8b-4d3b-970b-0abf6cd1b2e0',
  notificationConfig: '6e2d5c3d-61f8-4620-b504-e65050e19b29',
  /** The run under review. */
  run: 'cab22811-9604-4326-bc9d-ff3c6d2bd1d4',
  /** The earlier run it is compared with (the last release). */
  baseRun: '27e1b0d8-e509-43eb-a23c-37b7a89187e2',
  gateVerdict: '5c3e9d1a-7b2f-4e8a-9c6d-0f1e2a3b4c5d',
  job: 'fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae',
  project: '9b8a0353-a1c1-46e3-a5d1-685e862c1010',
  testPlan: 'fff19340-5181-49eb-ab99-294933175b23',
  testPlanVersion: '2fc1aebf-8f1f-498c-9a27-c8829fb02bc3',
  report: '43488329-2fac-4156-acc1-c4e948966c8d',
  reportConfig: '15115010-2486-4f4c-a504-6dd7adf2f0b4',
  reportExport: 'c3141298-a7ee-4566-bfb7-3da25f5af77a',
  customOp: '529836c2-8075-4340-b74d-dc1be3c9556a',
  sdgAdapter: 'c3ebed4f-a227-4ee3-a299-c84e18aecb04',
  sdgRun: 'de9ce042-6ae0-40e2-8f9f-b99d76e2b4ca',
  analysisRun: 'efc67246-99cf-4379-9046-84c9213e480e',
  clusterRun: 'b780f90b-310d-41d8-a044-c965d12e0857',
  traceConnection: '9890244a-b700-49c4-ac22-d5dfb3c2ffde',
  traceUpload: '1c2cf2f5-dcc2-4610-b190-6e541af34b2c',
  traceIngestRun: 'd92aed34-d835-4276-b59e-0b2a492cade7',
  /** The trace dataset landings write to, and its current version. */
  traceDataset: 'f0eef60d-4b04-4046-aa3a-779fe13e072d',
  traceVersion: 'c126235b-f123-4f0a-83b8-ae22e7b83c4d',
  groundTruth: '35ba2ad3-e467-445e-87dd-49b42320a300',
  traceDrop: '8ba5910e-dce7-4905-95d8-741cfacb7b9b',
  traceFeedback: 'e3a1c5d7-2b4f-4a6e-8c0d-1f3b5d7e9a2c',
  request: '3f0c2d4e-8b1a-4c5d-9e7f-6a2b1c0d9e8f',
} as const;

/** The names of the same records, where another record or a message repeats them. */
export const EXAMPLE_NAME = {
  workspace: 'Customer support QA',
  user: 'Ada Lovelace',
  userEmail: 'ada.lovelace@example.com',
  member: 'Grace Hopper',
  memberEmail: 'grace.hopper@example.com',
  secret: 'OPENAI_API_KEY',
  dataset: 'faq-golden-set',
  sut: 'support-bot-v2',
  connection: 'production-api',
  judge: 'gpt-4o-mini-judge',
  metricConfig: 'answer-correctness',
  evalConfig: 'support-release-gate',
  run: 'support-bot-v2 nightly 2025-05-13',
  project: 'support-bot-release',
  testPlan: 'support-release-plan',
  reportConfig: 'release-review',
  embeddingConfig: 'openai-small',
  traceDataset: 'support-bot-production-traces',
  customOp: 'toxicity-scorer',
} as const;

/** The instants of the examples: a record created, changed a day later, a run that took a minute. */
export const EXAMPLE_AT = {
  created: '2025-05-12T09:30:00.000Z',
  updated: '2025-05-13T14:05:12.000Z',
  started: '2025-05-13T14:06:00.000Z',
  finished: '2025-05-13T14:07:04.000Z',
  expires: '2025-05-20T09:30:00.000Z',
  /** An access token issued at `updated`, valid an hour (TOKEN_TTL_SECONDS). */
  tokenExpires: '2025-05-13T15:05:12.000Z',
} as const;

/** Credentials of the examples: obviously fake, never a working key or a real password. */
export const EXAMPLE_CREDENTIAL = {
  accessToken:
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIyZjRlNmE4Yy0xYjNkLTRmNWUtOGE3Yy05ZTBiMWQyYzNmNGEifQ.example-signature',
  password: 'correct-horse-battery-staple',
  newPassword: 'a-new-and-longer-passphrase',
  resetToken: 'rst_example-reset-token-not-a-real-one',
  invitationToken: 'inv_example-invitation-token-not-a-real-one',
  apiKey: 'sk-test-0000example0000key0000',
} as const;

/** A row of the example dataset (faq-golden-set, mapped: question is the input, answer the expected output). */
export const EXAMPLE_ROW = {
  question: 'How do I reset my password?',
  answer: 'Open Settings > Security and choose Reset password.',
  topic: 'account_access',
  language: 'en',
};

/** What support-bot-v2 answered to EXAMPLE_ROW. */
export const EXAMPLE_OUTPUT = 'Open Settings > Security and choose Reset password; the link expires after one hour.';

/** What an agent did for the example row: a search of the knowledge base, then its answer. */
export const EXAMPLE_TRAJECTORY = {
  source: 'response',
  steps: [
    {
      type: 'tool_call',
      name: 'search_kb',
      arguments: { query: 'reset password' },
      output: ['kb/security/reset-password'],
      call_id: 'call_1',
    },
  ],
};

/** The SHA-256 over the rows of the example dataset's current version. */
export const EXAMPLE_CONTENT_SHA256 = '9f2c4a1be0d3c5f7a8b6e4d2c0a1f3e5b7d9c8a6f4e2d0b1c3a5e7f9d8b6c4a2';

/** Trace and span ids as OpenTelemetry writes them (hex). */
export const EXAMPLE_TRACE = {
  trace: '4bf92f3577b34da6a3ce929d0e0e4736',
  span: '00f067aa0ba902b7',
  otherTrace: '5b8efff798038103d269b633813fc60c',
} as const;

/**
 * An example of the whole object, for a request schema whose properties' own examples do not
 * make one body together (alternatives such as `user_id` or `email`, or fields of one `kind`).
 * openapi-completion uses it as the request body's example.
 */
export function ApiSchemaExample(example: Record<string, unknown>): ClassDecorator {
  // ApiSchema spreads its options into the schema; its declared type names only `name` and `description`.
  return ApiSchema({ example } as ApiSchemaOptions);
}
