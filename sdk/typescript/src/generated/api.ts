/* Evaluation Workspace Service client 0.1.0: generated from docs/openapi.json by swagger-typescript-api (npm run sdk). Do not edit. */
export interface AcceptInvitationRequest {
  /**
   * For a new account; defaults to the email's local part
   * @minLength 1
   * @maxLength 200
   * @example "Grace Hopper"
   */
  display_name?: string;
  /**
   * A new account's password; or, for an existing account without a bearer token, its current password
   * @minLength 1
   * @maxLength 256
   * @example "correct-horse-battery-staple"
   */
  password?: string;
  /**
   * The token from the invitation (shown once when it was created or resent)
   * @minLength 1
   * @maxLength 200
   * @example "inv_example-invitation-token-not-a-real-one"
   */
  token: string;
}

export interface AdapterIssueDto {
  /** @example "path_no_match" */
  code:
    | "template_syntax"
    | "unknown_placeholder"
    | "missing_value"
    | "path_syntax"
    | "path_no_match"
    | "not_a_number"
    | "response_not_json"
    | "invalid_spec";
  /** @example "$.answer matched nothing in the sample response" */
  message: string;
  /**
   * JSON Pointer into the adapter
   * @example "/response/output"
   */
  pointer: string;
}

export interface AdapterRequestDto {
  /**
   * Any JSON value; a string that is exactly one placeholder is replaced by the value itself
   * @example {"question":"{{input}}","history":"{{history}}"}
   */
  body?: string | number | boolean | Record<string, any> | any[];
  /**
   * Headers, templated
   * @example {"X-Request-Source":"evaluation"}
   */
  headers?: Record<string, string>;
  /**
   * openai_chat only: the messages template; an element that is exactly "{{history}}" is spread into the earlier turns
   * @maxItems 200
   * @example [{"role":"system","content":"You are a support agent."},"{{history}}",{"role":"user","content":"{{input}}"}]
   */
  messages?: any[];
  /**
   * Query parameters, templated
   * @example {"locale":"en"}
   */
  query?: Record<string, string>;
}

export interface AdapterResponse {
  /** @example "9535f71a-4c76-4544-92c7-d0117af05d92" */
  connection_id: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * null for the kind's default adapter (no revision posted yet)
   * @format uuid
   * @maxLength 36
   * @example "6b4d6ef7-4d2b-4ce8-af33-df2d01b3e53f"
   */
  id: string | null;
  request: AdapterRequestDto;
  response: AdapterResponseMappingDto;
  /**
   * 1, 2, … per POST; 0 for the kind's default
   * @example 2
   */
  revision: number;
  /**
   * `default` until an adapter is posted
   * @example "custom"
   */
  source: "default" | "custom";
}

export interface AdapterResponseMappingDto {
  /**
   * Where the SUT reports its own cost in USD
   * @maxLength 500
   * @example "$.cost.usd"
   */
  cost_usd?: string;
  /**
   * More fields kept with each result, by name (e.g. contexts of a RAG answer)
   * @example {"sources":"$.sources"}
   */
  extras?: Record<string, string>;
  /**
   * The path language of every expression here
   * @example "jsonpath"
   */
  language: "jsonpath" | "jmespath";
  /**
   * Where the output is, e.g. `$.choices[0].message.content` (JSONPath) or `choices[0].message.content` (JMESPath)
   * @minLength 1
   * @maxLength 500
   * @example "$.answer"
   */
  output: string;
  /**
   * Where an agent endpoint lists its steps: a list of `{type?, name|tool|tool_name|function.name,
   * arguments|args|input|function.arguments, output|result, error}` or of OpenAI chat messages.
   * openai_chat connections read the completion's tool calls without it
   * @minLength 1
   * @maxLength 500
   * @example "$.steps"
   */
  trajectory?: string;
  usage?: UsagePathsDto;
}

export interface AdapterValidateResult {
  /**
   * The revision checked; null when the adapter came in the body
   * @format int64
   * @example null
   */
  adapter_revision: number | null;
  /** What was extracted from the sample response (null without one) */
  extracted: ExtractedOutputDto | null;
  /** @example [] */
  issues: AdapterIssueDto[];
  /** The request a run would send for the sample row (null when it cannot render) */
  request: RenderedRequestDto | null;
  /**
   * True when the request rendered and (if a response was given) the output was extracted
   * @example true
   */
  valid: boolean;
}

export interface AddMemberParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

/** @example {"email":"grace.hopper@example.com","role":"member"} */
export interface AddMemberRequest {
  /**
   * The email of an existing user (case-insensitive); give this or `user_id`
   * @format email
   * @maxLength 320
   * @example "grace.hopper@example.com"
   */
  email?: string;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /**
   * The user to add; give this or `email`
   * @format uuid
   * @maxLength 36
   * @example "7decc0e4-66f7-48ce-95ab-9a5bb71185c6"
   */
  user_id?: string;
}

export interface AddReviewItemsParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface AddReviewItemsRequest {
  /** A trace or session source's traces that have end-user feedback of this kind (sessions: the sessions of those traces) */
  feedback?: FeedbackSelectionDto;
  /**
   * A filter in the query language (docs/query-language.md) over the source's rows (for traces and sessions: their spans)
   * @example {"field":"topic","op":"eq","value":"refunds"}
   */
  filter?: Record<string, any>;
  /**
   * Row ids (run, dataset version), trace ids or session ids: 1..1000
   * @maxItems 1000
   * @minItems 1
   * @example ["0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60"]
   */
  ids?: string[];
  /** A run source's failed rows (by verdict, or by one metric) */
  run_failures?: RunFailuresDto;
  /** With `filter` or `feedback`: a seeded random sample of the matching rows (traces, sessions) */
  sample?: SampleDto;
}

export interface AddReviewItemsResponse {
  /**
   * Items added
   * @example 58
   */
  added: number;
  /**
   * Ids named that the source does not have
   * @example []
   */
  not_found: string[];
  /**
   * Items the queue already had
   * @example 2
   */
  skipped: number;
  /** @example 60 */
  total: number;
}

export interface AdjudicateRequest {
  /**
   * The final label, validated against the queue's current rubric version
   * @example {"correct":true,"tone":"warm","helpfulness":4}
   */
  values: Record<string, any>;
}

export interface AdjudicateReviewItemParams {
  /**
   * The item's id
   * @format uuid
   * @maxLength 36
   */
  itemId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface AgreementResponse {
  /** @example 0.95 */
  confidence: number;
  /**
   * Items in disagreement, awaiting adjudication
   * @example 7
   */
  disagreements: number;
  fields: FieldAgreementResponse[];
  /** @example 60 */
  items: number;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51" */
  queue_id: string;
  /**
   * Reviewers who labelled any item
   * @example ["2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"]
   */
  reviewers: string[];
  /**
   * @format int64
   * @example 42
   */
  seed: number | null;
}

export interface AlertCheckResponse {
  evaluation: AlertEvaluationResponse;
  /** The rule with its state after the check */
  rule: AlertRuleResponse;
  /**
   * `firing` when this check fired the alert, `resolved` when it resolved it, else null
   * @example "firing"
   */
  transition: "firing" | "resolved" | null;
}

export interface AlertDifference {
  interval: IntervalDto;
  /** @example -0.1 */
  value: number;
}

export interface AlertEvaluationResponse {
  /**
   * @format date-time
   * @example "2026-11-29T10:00:00.000Z"
   */
  checked_at: string;
  difference: AlertDifference | null;
  /**
   * One-sided: the chance of a recent rate this low if both windows had the same rate
   * @example 0.00055
   */
  p_value: number | null;
  /**
   * Why there is no verdict: which window has fewer than min_samples scores
   * @example null
   */
  reason: string | null;
  recent: AlertWindowEvidence;
  reference: AlertWindowEvidence;
  /** The alert after this check */
  state: AlertStateDto;
  /**
   * `fisher_exact` when a cell of the 2x2 table expects fewer than 5, else `two_proportion_z`
   * @example "two_proportion_z"
   */
  test: "fisher_exact" | "two_proportion_z" | null;
  /**
   * `breach` (p < alpha and a drop of at least min_drop), `calm` (p >= alpha_resolve), `inconclusive`, or `no_verdict` (too few scores)
   * @example "breach"
   */
  verdict: "breach" | "calm" | "inconclusive" | "no_verdict";
}

export interface AlertEventResponse {
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  created_at: string;
  /**
   * Webhook deliveries queued for it (one per notification config subscribed to the event)
   * @format int64
   * @example 1
   */
  deliveries: number;
  evaluation: AlertEvaluationResponse;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b01"
   */
  evaluator_id: string;
  /** Up to 5 of the recent window's lowest scores (failures first) */
  examples: AlertExample[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b21"
   */
  id: string;
  /** @example "firing" */
  kind: "firing" | "resolved";
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b11"
   */
  rule_id: string;
}

export interface AlertEventResponsePage {
  items: AlertEventResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface AlertExample {
  /**
   * @format date-time
   * @example "2026-11-29T09:41:07.000Z"
   */
  observed_at: string;
  /** @example false */
  passed: boolean | null;
  /** @example "the answer ignores the question" */
  reason: string | null;
  /** @example 0.2 */
  score: number | null;
  /** @example null */
  session_id: string | null;
  /** @example null */
  span_id: string | null;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string | null;
}

export interface AlertReferenceDto {
  /**
   * Start of a fixed reference (inclusive), an ISO 8601 date-time
   * @format date-time
   * @maxLength 64
   * @example "2026-11-01T00:00:00.000Z"
   */
  from?: string;
  /**
   * `trailing`: the `seconds` right before the recent window; `fixed`: the baseline window [`from`, `to`)
   * @example "trailing"
   */
  kind: "trailing" | "fixed";
  /**
   * Length of a trailing reference, 60 s .. 366 days
   * @format int32
   * @min 60
   * @max 31622400
   * @example 86400
   */
  seconds?: number;
  /**
   * End of a fixed reference (exclusive), an ISO 8601 date-time after `from`
   * @format date-time
   * @maxLength 64
   * @example "2026-11-08T00:00:00.000Z"
   */
  to?: string;
}

export interface AlertReferenceResponse {
  /**
   * @format date-time
   * @example null
   */
  from: string | null;
  /** @example "trailing" */
  kind: "trailing" | "fixed";
  /**
   * A trailing reference's length
   * @format int64
   * @example 86400
   */
  seconds: number | null;
  /**
   * @format date-time
   * @example null
   */
  to: string | null;
}

export interface AlertRuleResponse {
  /** @example 0.05 */
  alpha: number;
  /** @example 0.2 */
  alpha_resolve: number;
  /**
   * Breaches in a row so far (while ok)
   * @format int64
   * @example 0
   */
  breaches: number;
  /**
   * Calm checks in a row so far (while firing)
   * @format int64
   * @example 0
   */
  calms: number;
  /**
   * @format int64
   * @example 300
   */
  check_seconds: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "" */
  description: string;
  /** @example true */
  enabled: boolean;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b01"
   */
  evaluator_id: string;
  /**
   * @format int64
   * @example 3
   */
  fire_after: number;
  /**
   * When the alert last fired
   * @format date-time
   * @example null
   */
  fired_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4b11"
   */
  id: string;
  /** @example "pass_rate" */
  kind: "pass_rate";
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  last_checked_at: string | null;
  /** The last check's evaluation; null before the first check and after a change of the statistics */
  last_evaluation: AlertEvaluationResponse | null;
  /** @example "helpfulness" */
  metric: string;
  /** @example 0.05 */
  min_drop: number;
  /**
   * @format int64
   * @example 100
   */
  min_samples: number;
  /** @example "helpfulness drop" */
  name: string;
  /**
   * @format int64
   * @example 3600
   */
  recent_seconds: number;
  reference: AlertReferenceResponse;
  /**
   * @format int64
   * @example 3
   */
  resolve_after: number;
  /**
   * When it last resolved
   * @format date-time
   * @example null
   */
  resolved_at: string | null;
  /**
   * `ok` or `firing`
   * @example "ok"
   */
  status: "ok" | "firing";
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface AlertRuleResponsePage {
  items: AlertRuleResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface AlertStateDto {
  /**
   * Breaches in a row so far (while ok)
   * @format int64
   * @example 1
   */
  breaches: number;
  /**
   * Calm checks in a row so far (while firing)
   * @format int64
   * @example 0
   */
  calms: number;
  /** @example "ok" */
  status: "ok" | "firing";
}

export interface AlertWindowEvidence {
  /**
   * Scoring errors in the window (not counted in trials)
   * @format int64
   * @example 2
   */
  errored: number;
  /**
   * Scores observed from (inclusive)
   * @format date-time
   * @example "2026-11-29T09:00:00.000Z"
   */
  from: string;
  /** The rate's Wilson interval (95%), null without a verdict */
  interval: IntervalDto | null;
  /**
   * Scores that passed
   * @format int64
   * @example 280
   */
  passes: number;
  /**
   * passes / trials, null without trials
   * @example 0.7
   */
  rate: number | null;
  /**
   * … to (exclusive)
   * @format date-time
   * @example "2026-11-29T10:00:00.000Z"
   */
  to: string;
  /**
   * Scores with a pass verdict (passed or failed)
   * @format int64
   * @example 400
   */
  trials: number;
}

export interface AnalysisPropertyDto {
  /** @example "Tokens of the question (cl100k_base)" */
  description: string;
  /**
   * row (filterable with the analysis query paths), column or version
   * @example "row"
   */
  level: "row" | "column" | "version";
  /** @example "question.tokens" */
  name: string;
  /** @example "integer" */
  type: "integer" | "number" | "string" | "boolean";
}

export interface AnalysisQueryRequest {
  /**
   * A filter in the query language (docs/query-language.md) over the row properties of GET /analysis/properties/{kind}, e.g. {"field": "question.tokens", "op": "gt", "value": 500}
   * @example {"field":"question.tokens","op":"gt","value":50}
   */
  filter?: Record<string, any>;
  /**
   * 1..1000, default 100
   * @min 1
   * @max 1000
   * @example 100
   */
  limit?: number;
  /**
   * @min 0
   * @max 10000000
   * @example 0
   */
  offset?: number;
  /**
   * @maxItems 5
   * @example [{"field":"question.tokens","direction":"desc"}]
   */
  sort?: {
    direction?: "asc" | "desc";
    /** @maxLength 1000 */
    field: string;
  }[];
}

export interface AnalysisRunResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example "efc67246-99cf-4379-9046-84c9213e480e" */
  id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string | null;
  /** @example ["text","annotation","visual"] */
  kinds: ("text" | "annotation" | "visual")[];
  /**
   * The columns and seed used
   * @example {"text_columns":["question","answer"],"label_columns":["topic"],"visual_column":"question","seed":42}
   */
  params: Record<string, any>;
  /**
   * {step, done, total} while running
   * @example null
   */
  progress: Record<string, any> | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /** @example "succeeded" */
  state: "queued" | "running" | "succeeded" | "failed";
  /** @example null */
  state_reason: string | null;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ApiKeyCreatedResponse {
  /**
   * @format date-time
   * @example "2026-11-24T08:00:00.000Z"
   */
  created_at: string;
  /**
   * The user the key acts for
   * @format uuid
   * @maxLength 36
   * @example "3c2d7f7a-9d1e-4b8a-8f0e-2a4b6c8d0e12"
   */
  created_by: string;
  /**
   * @format date-time
   * @example "2027-06-30T00:00:00.000Z"
   */
  expires_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "5b0f6a3e-2f4c-4d7e-9a51-0c8e2b7d1f44"
   */
  id: string;
  /**
   * The key, shown only in this answer: send it as `Authorization: Bearer <key>`
   * @example "ews_8f3a2c91d07b_Qm9vdHN0cmFwLWtleS1leGFtcGxlLW5vdC1yZWFsLTEyMzQ"
   */
  key: string;
  /**
   * The last call made with it (updated at most once a minute)
   * @format date-time
   * @example "2026-11-24T09:12:44.000Z"
   */
  last_used_at: string | null;
  /** @example "10.0.4.17" */
  last_used_ip: string | null;
  /** @example "github-actions" */
  name: string;
  /**
   * The key's first characters (`ews_<prefix>`), to recognise it in logs and settings
   * @example "ews_8f3a2c91d07b"
   */
  prefix: string;
  /**
   * @format date-time
   * @example null
   */
  revoked_at: string | null;
  /**
   * `revoked` (DELETE), `member_removed` or `user_deactivated`
   * @example null
   */
  revoked_reason: string | null;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /**
   * `active`, `expired` or `revoked`
   * @example "active"
   */
  status: "active" | "expired" | "revoked";
  /**
   * @format uuid
   * @maxLength 36
   * @example "0d6c1f0e-8a8b-4f57-b1e4-6d7b6a1c2e90"
   */
  workspace_id: string;
}

export interface ApiKeyResponse {
  /**
   * @format date-time
   * @example "2026-11-24T08:00:00.000Z"
   */
  created_at: string;
  /**
   * The user the key acts for
   * @format uuid
   * @maxLength 36
   * @example "3c2d7f7a-9d1e-4b8a-8f0e-2a4b6c8d0e12"
   */
  created_by: string;
  /**
   * @format date-time
   * @example "2027-06-30T00:00:00.000Z"
   */
  expires_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "5b0f6a3e-2f4c-4d7e-9a51-0c8e2b7d1f44"
   */
  id: string;
  /**
   * The last call made with it (updated at most once a minute)
   * @format date-time
   * @example "2026-11-24T09:12:44.000Z"
   */
  last_used_at: string | null;
  /** @example "10.0.4.17" */
  last_used_ip: string | null;
  /** @example "github-actions" */
  name: string;
  /**
   * The key's first characters (`ews_<prefix>`), to recognise it in logs and settings
   * @example "ews_8f3a2c91d07b"
   */
  prefix: string;
  /**
   * @format date-time
   * @example null
   */
  revoked_at: string | null;
  /**
   * `revoked` (DELETE), `member_removed` or `user_deactivated`
   * @example null
   */
  revoked_reason: string | null;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /**
   * `active`, `expired` or `revoked`
   * @example "active"
   */
  status: "active" | "expired" | "revoked";
  /**
   * @format uuid
   * @maxLength 36
   * @example "0d6c1f0e-8a8b-4f57-b1e4-6d7b6a1c2e90"
   */
  workspace_id: string;
}

export interface ApiKeyResponsePage {
  items: ApiKeyResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

/** @example {"dimension":"topic","value":"cancellation","row_ids":["6c861b83-60a8-4bcf-845d-126ac56874a4"],"version_id":"89fa3cc1-e563-4ad1-af4c-d5becdca17df","description":"What the customer is contacting support about"} */
export interface AssignDimensionRequest {
  /**
   * Describes the dimension when this call creates it
   * @maxLength 2000
   * @example "What the customer is contacting support about"
   */
  description?: string;
  /**
   * The dimension (axis of coverage), e.g. `topic`; created on first use
   * @maxLength 100
   * @example "topic"
   */
  dimension: string;
  /**
   * Rows to assign (1..1000); give this or `rule`
   * @maxItems 1000
   * @minItems 1
   * @example ["6c861b83-60a8-4bcf-845d-126ac56874a4"]
   */
  row_ids?: string[];
  /**
   * Assign every row of the version that matches this filter (docs/query-language.md)
   * @example {"field":"question","op":"contains","value":"refund"}
   */
  rule?: Record<string, any>;
  /**
   * The value to assign, e.g. `billing`; added to the dimension's values on first use
   * @minLength 1
   * @maxLength 200
   * @example "cancellation"
   */
  value: string;
  /**
   * The version `rule` is evaluated on and `row_ids` must belong to; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id?: string;
}

export interface AssignDimensionResponse {
  /**
   * Rows that now carry the value
   * @example 1
   */
  assigned: number;
  /**
   * The call created the dimension
   * @example false
   */
  created_dimension: boolean;
  /**
   * The call added the value to the dimension
   * @example false
   */
  created_value: boolean;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "topic" */
  dimension: string;
  /**
   * Of those, rows that carried another value of the dimension before
   * @example 1
   */
  reassigned: number;
  /** @example "cancellation" */
  value: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface AssignDimensionValueParams {
  assign: string;
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface AttachProjectTestPlanParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface AttachTestPlanRequest {
  /**
   * The test plan's id or name
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-release-plan"
   */
  test_plan: string;
  /**
   * The plan version to carry (default: its latest)
   * @min 1
   * @max 2147483647
   * @example 3
   */
  version?: number;
}

export interface AuditEntryResponse {
  /**
   * Dotted verb: dataset.created, dataset.updated, version.created, version.promoted, rows.staged, rows.committed, ...
   * @example "rows.committed"
   */
  action: string;
  /** @example "ada.lovelace@example.com" */
  actor_email: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  actor_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * What changed (row ids, counts, versions, before and after values)
   * @example {"version":3,"inserted":12,"updated":3,"deleted":1}
   */
  details: Record<string, any>;
  /** @example "4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d" */
  id: string;
  /** @example "3f0c2d4e-8b1a-4c5d-9e7f-6a2b1c0d9e8f" */
  request_id: string | null;
}

export interface AuditEventPageResponse {
  /** Newest first */
  items: AuditEventResponse[];
  /**
   * Send as `cursor` for the next (older) page; null on the last page
   * @format uuid
   * @maxLength 36
   * @example "4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
   */
  next_cursor: string | null;
}

export interface AuditEventResponse {
  /**
   * Dotted verb, `<record>.<what happened>`: member.role_changed, secret.revealed, api_key.created… (docs/audit.md)
   * @example "member.role_changed"
   */
  action: string;
  /** @example "ada.lovelace@example.com" */
  actor_email: string | null;
  /**
   * Who did it; null when the service did it itself (a retention sweep, the first admin at boot)
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  actor_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * What changed (names, roles before and after, counts); never a secret value. `api_key_id` when the call was made with an API key
   * @example {"from":"member","to":"admin"}
   */
  details: Record<string, any>;
  /**
   * @format uuid
   * @maxLength 36
   * @example "4d3c2b1a-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
   */
  id: string;
  /**
   * The request that did it (its X-Request-Id); null for background work
   * @example "3f0c2d4e-8b1a-4c5d-9e7f-6a2b1c0d9e8f"
   */
  request_id: string | null;
  /** @example "7decc0e4-66f7-48ce-95ab-9a5bb71185c6" */
  target_id: string | null;
  /**
   * The kind of record it was done to
   * @example "member"
   */
  target_type: string;
  /**
   * The workspace it happened in; null for the system's own events (users, logins, branding)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string | null;
}

export interface AuditRetentionResponse {
  /**
   * The service's default (AUDIT_RETENTION_DAYS); null keeps events
   * @format int64
   * @example null
   */
  default_retention_days: number | null;
  /**
   * What applies: the workspace's own, else the default; null keeps events
   * @format int64
   * @example 365
   */
  effective_retention_days: number | null;
  /**
   * The workspace's own setting; null when it follows the default
   * @format int64
   * @example 365
   */
  retention_days: number | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  updated_at: string | null;
  /**
   * Who set the workspace's own, and when; null without one
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  updated_by: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface AvailableMetric {
  /**
   * Whether the version's mapping provides every field the metric reads
   * @example true
   */
  available: boolean;
  /** @example "A judge checks the output is supported by the context" */
  description: string;
  /** @example "judged" */
  kind: "deterministic" | "judged";
  /**
   * Fields the mapping lacks (map them with POST .../map)
   * @example []
   */
  missing: ("input" | "expected_output" | "context")[];
  /** @example "faithfulness" */
  name: string;
  /** @example ["context"] */
  requires: ("input" | "expected_output" | "context")[];
}

export interface BackfillProgress {
  /** @example 52000 */
  spans_read: number;
  targets: EvaluatorTargetCounts;
  /**
   * Targets the backfill sampled, including those already scored by the same version
   * @example 520
   */
  targets_sampled: number;
}

export interface BackfillResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "0196b1c2-3d4e-7f50-8a61-b2c3d4e5f601" */
  evaluator_id: string;
  /**
   * The evaluator version it scores with (the current one when it was asked for)
   * @example 1
   */
  evaluator_version: number;
  /** @example null */
  failure: {
    code?: string;
    message?: string;
  } | null;
  /**
   * @format date-time
   * @example null
   */
  finished_at: string | null;
  /**
   * @format date-time
   * @example "2026-11-01T00:00:00.000Z"
   */
  from: string;
  /** @example "0196b1c2-3d4e-7f50-8a61-b2c3d4e5f602" */
  id: string;
  progress: BackfillProgress;
  /**
   * @format date-time
   * @example null
   */
  started_at: string | null;
  /** @example "queued" */
  state: "queued" | "running" | "succeeded" | "failed" | "cancelled";
  /**
   * @format date-time
   * @example "2026-11-08T00:00:00.000Z"
   */
  to: string;
}

export interface BackfillResponsePage {
  items: BackfillResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface BrandingResponse {
  /**
   * Highlight colour, `#RRGGBB` (upper-case).
   * @pattern ^#[0-9A-Fa-f]{6}$
   * @example "#F59E0B"
   */
  accent_color: string;
  /**
   * An https URL, or an inline data URL `data:image/(png|jpeg|svg+xml);base64,…` of at most 256 KiB decoded (the bytes must be that image type; SVG without script or event handlers). Null when not set.
   * @example "https://example.com/favicon.png"
   */
  favicon_url: string | null;
  /**
   * An https URL, or an inline data URL `data:image/(png|jpeg|svg+xml);base64,…` of at most 256 KiB decoded (the bytes must be that image type; SVG without script or event handlers).
   * @maxLength 349554
   * @example "https://example.com/logo.svg"
   */
  logo_url: string;
  /**
   * Main colour, `#RRGGBB` (upper-case).
   * @pattern ^#[0-9A-Fa-f]{6}$
   * @example "#1E3A8A"
   */
  primary_color: string;
  /**
   * Shown in the UI header and page titles.
   * @example "Evaluation Workspace"
   */
  product_name: string;
  /**
   * Where users get help: an https URL or `mailto:` address; null when not set.
   * @example "mailto:support@example.com"
   */
  support_url: string | null;
  /**
   * One line under the product name; null when not set.
   * @example "Prove your LLM application is good enough, release after release."
   */
  tagline: string | null;
  /**
   * When an admin last saved the branding; null while the built-in defaults apply.
   * @format date-time
   * @example null
   */
  updated_at: string | null;
  /**
   * 0 for the built-in defaults, then 1, 2, … on each PUT. The ETag header changes with it.
   * @example 0
   */
  version: number;
}

export interface BundleFile {
  /**
   * The file's UTF-8 text
   * @example "export * from './api';
   * "
   */
  content: string;
  /**
   * Path inside the bundle, `/`-separated
   * @example "src/client.ts"
   */
  path: string;
}

export interface BundleResponse {
  files: BundleFile[];
  /**
   * How to use the bundle
   * @example "Write each file at its path in a folder (e.g. src/ews/), then: import { EvaluationWorkspaceClient } from "./ews"."
   */
  instructions: string;
  /** @example "sdk" */
  kind: "sdk" | "examples";
  /** @example "typescript" */
  language: string;
  /** @example "0.1.0" */
  version: string;
}

export interface CancelOnlineBackfillParams {
  /**
   * The backfill's id
   * @format uuid
   * @maxLength 36
   */
  backfillId: string;
  cancel: string;
}

export interface CancelReviewJudgeRunParams {
  cancel: string;
  /**
   * The judge run's id
   * @format uuid
   * @maxLength 36
   */
  judgeRunId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface CancelRunParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface CatalogueMetric {
  /**
   * False for a custom op that is not active
   * @example true
   */
  available: boolean;
  /**
   * Whether a larger score is better (similarities) or a smaller one (latency, cost, length); null for judged metrics, whose scale their config sets
   * @example "higher"
   */
  better: "higher" | "lower" | null;
  /** @example "ROUGE-L F-measure of the output against the expected output" */
  description: string;
  /** @example "deterministic" */
  kind: "deterministic" | "judged" | "custom";
  /**
   * The newest version (metric configs and custom ops); null for built-ins
   * @format int64
   * @example null
   */
  latest_version: number | null;
  /**
   * The metric's name, as eval configs, defaults and runs refer to it
   * @example "rouge_l"
   */
  name: string;
  /**
   * JSON Schema of the parameters (built-in deterministic metrics and custom ops; configs carry theirs already set)
   * @example {"type":"object","properties":{"threshold":{"type":"number"}},"additionalProperties":false}
   */
  params_schema: Record<string, any> | null;
  /**
   * Canonical dataset fields the metric reads (map them on a dataset version)
   * @example ["expected_output"]
   */
  requires: ("input" | "expected_output" | "context")[];
  /**
   * `builtin` (the service's own), `metric_config` (the workspace's named config, newest version) or `custom_op` (a registered metric op)
   * @example "builtin"
   */
  source: "builtin" | "metric_config" | "custom_op";
}

export interface ChangeMemberRoleRequest {
  /** @example "admin" */
  role: "viewer" | "member" | "admin" | "owner";
}

export interface ChatMessageDto {
  /**
   * @maxLength 100000
   * @example "I forgot my password."
   */
  content: string;
  /** @example "user" */
  role: "system" | "user" | "assistant" | "tool";
}

export interface CheckSuggestion {
  /** @example "near_duplicates" */
  check: string;
  /** @example {"threshold":0.85} */
  params: Record<string, any>;
  /**
   * Why this check suits the schema
   * @example ""question" holds free text, where paraphrased copies creep in"
   */
  reason: string;
}

export interface ClaimNextReviewItemParams {
  next: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ClusterDto {
  /**
   * The members closest to the centroid
   * @example ["0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11"]
   */
  exemplar_row_ids: string[];
  /** @example 2 */
  id: number;
  /**
   * Its three most distinctive terms (class-based TF-IDF)
   * @example "password reset login"
   */
  name: string;
  /** @example 37 */
  size: number;
  /** @example [{"term":"password","weight":0.41},{"term":"reset","weight":0.33}] */
  terms: {
    term?: string;
    weight?: number;
  }[];
}

export interface ColumnMappingDto {
  /**
   * Column holding retrieved or supplied context
   * @example "context"
   */
  context?: string;
  /**
   * Column holding the reference answer
   * @example "answer"
   */
  expected_output?: string;
  /**
   * Column holding the input (prompt, question, conversation turn)
   * @example "question"
   */
  input?: string;
  /**
   * Columns carried along as metadata
   * @example ["topic","language"]
   */
  metadata?: string[];
  /**
   * Column grouping rows into conversations (multi-turn sessions)
   * @example "conversation_id"
   */
  session_id?: string;
}

export interface ColumnStatsDto {
  /**
   * Number of distinct non-null values
   * @example 211
   */
  distinct_count: number;
  /** @example null */
  max?: number | null;
  /**
   * @format int64
   * @example 388
   */
  max_length?: number | null;
  /** @example 74.6 */
  mean_length?: number | null;
  /**
   * Smallest number (numeric columns)
   * @example null
   */
  min?: number | null;
  /**
   * Shortest string, in characters (text columns)
   * @format int64
   * @example 12
   */
  min_length?: number | null;
  /** @example "question" */
  name: string;
  /** @example 0 */
  null_count: number;
  /**
   * Dominant JSON type of the non-null values; `mixed` when none has 90% of them; `null` when every value is null
   * @example "string"
   */
  type:
    | "string"
    | "integer"
    | "number"
    | "boolean"
    | "object"
    | "array"
    | "null"
    | "mixed";
  /**
   * Count of values per JSON type; rows without the column count as `null`
   * @example {"string":214}
   */
  types: Record<string, number>;
}

export interface CommitRowsRequest {
  /**
   * What the new version changes and why
   * @maxLength 2000
   * @example "Add billing-date questions, fix two answers"
   */
  message?: string;
  /**
   * Promote the new version to current at once (default false: it stays a candidate)
   * @example true
   */
  promote?: boolean;
}

export interface CommitStagedRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

/** @example {"base_validation_id":"6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c","candidate_validation_id":"7b1a4d2f-3c5e-4a9b-8d0f-2e3f4a5b6c7d"} */
export interface CompareJudgeValidationsRequest {
  /**
   * The validation of the judge to compare with (say, the rubric's current version)
   * @format uuid
   * @maxLength 36
   * @example "6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c"
   */
  base_validation_id: string;
  /**
   * The validation of the other judge (say, a new rubric version), on overlapping items
   * @format uuid
   * @maxLength 36
   * @example "7b1a4d2f-3c5e-4a9b-8d0f-2e3f4a5b6c7d"
   */
  candidate_validation_id: string;
}

/** @example {"true_positive":20,"false_positive":10,"true_negative":15,"false_negative":5,"items":50} */
export interface ConfusionMatrixResponse {
  /**
   * The judge failed what humans passed
   * @format int64
   * @example 5
   */
  false_negative: number;
  /**
   * The judge passed what humans failed
   * @format int64
   * @example 10
   */
  false_positive: number;
  /**
   * Items with both a judge verdict and a human label
   * @format int64
   * @example 50
   */
  items: number;
  /**
   * Both failed
   * @format int64
   * @example 15
   */
  true_negative: number;
  /**
   * Both passed
   * @format int64
   * @example 20
   */
  true_positive: number;
}

/** @example {"secret_id":"7571d304-22fc-477d-bce6-15c4e3b0f69d","scheme":"bearer"} */
export interface ConnectionAuthDto {
  /**
   * For `header`: the header name, e.g. x-api-key
   * @maxLength 100
   * @pattern ^[A-Za-z0-9-]{1,100}$
   * @example "x-api-key"
   */
  header?: string;
  /**
   * For `query`: the parameter name
   * @maxLength 100
   * @pattern ^[A-Za-z0-9_.-]{1,100}$
   * @example "api_key"
   */
  param?: string;
  /**
   * For `header`: text before the value, e.g. "Token "
   * @maxLength 50
   * @example "Token "
   */
  prefix?: string;
  /**
   * `bearer`: Authorization: Bearer <value>; `header`: <header>: <prefix><value>; `query`: ?<param>=<value>
   * @example "bearer"
   */
  scheme: "bearer" | "header" | "query";
  /**
   * The workspace secret whose value is sent (admins choose where a secret goes)
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string;
}

export interface ConnectionAuthResponse {
  /** @example "x-api-key" */
  header?: string;
  /** @example "api_key" */
  param?: string;
  /** @example "Token " */
  prefix?: string;
  /** @example "bearer" */
  scheme: "bearer" | "header" | "query";
  /**
   * The secret sent (its value never appears here)
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string;
}

export interface ConnectionResponse {
  /**
   * The adapter revision in force; 0 while the kind's default adapter is used
   * @example 2
   */
  adapter_revision: number;
  auth: ConnectionAuthResponse | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  http: HttpTransportResponse | null;
  /** @example "9535f71a-4c76-4544-92c7-d0117af05d92" */
  id: string;
  /** @example "http" */
  kind: "http" | "openai_chat" | "offline";
  /** @example 8 */
  max_concurrency: number;
  /** @example "production-api" */
  name: string;
  openai_chat: OpenAiChatTransportResponse | null;
  /** @example null */
  requests_per_second: number | null;
  retry: RetryPolicyResponse;
  /** @example "a92b7315-b960-467d-9b3d-45e8b02b3351" */
  sut_id: string;
  /** @example 30000 */
  timeout_ms: number;
  /** Where the SUT exports its own trace of each call, joined to a run's rows (docs/agents.md) */
  trace_link: TraceLinkResponse | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ConnectionTestErrorDto {
  /** @example "http_status" */
  code:
    | "timeout"
    | "network"
    | "http_status"
    | "response_not_json"
    | "extraction_failed"
    | "render_failed"
    | "cancelled";
  issues?: AdapterIssueDto[];
  /** @example "The SUT answered 503 Service Unavailable" */
  message: string;
}

/** @example {"row":{"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"},"mapping":{"input":"question","expected_output":"answer"}} */
export interface ConnectionTestRequest {
  /**
   * Earlier turns of the conversation, for multi-turn rows
   * @maxItems 200
   */
  history?: ChatMessageDto[];
  /** Which columns are input, expected_output and context (defaults: columns of those names) */
  mapping?: RowMappingDto;
  /**
   * The row's columns
   * @example {"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"}
   */
  row?: Record<string, any>;
}

export interface ConnectionTestResult {
  /** @example 2 */
  adapter_revision: number;
  /** @example 1 */
  attempts: number;
  /** @example 0.00041 */
  cost_usd: number | null;
  error: ConnectionTestErrorDto | null;
  /** @example {"sources":["kb/security/reset-password"]} */
  extras: Record<string, any>;
  /** @example 1040 */
  latency_ms: number;
  /**
   * True when the SUT answered 2xx and the output was extracted
   * @example true
   */
  ok: boolean;
  /** @example "Open Settings > Security and choose Reset password; the link expires after one hour." */
  output: string | null;
  request: RenderedRequestDto;
  /**
   * The start of the body when the call failed
   * @example null
   */
  response_excerpt: string | null;
  /**
   * @format int64
   * @example 200
   */
  status_code: number | null;
  /**
   * The tool calls and steps the answer shows (docs/suts.md: trajectories); null when it shows none
   * @example {"source":"response","steps":[{"type":"tool_call","name":"search_kb","arguments":{"query":"reset password"},"output":["kb/security/reset-password"],"call_id":"call_1"}]}
   */
  trajectory: Record<string, any> | null;
  usage: TokenUsageDto | null;
}

export interface ConventionCandidateDto {
  /** @example 0.92 */
  confidence: number;
  /** @example "openinference" */
  convention:
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  /** @example 1204 */
  spans: number;
}

export interface CorrectedIntervalResponse {
  /** @example 0.89 */
  high: number;
  /** @example 0.34 */
  low: number;
}

/** @example {"pass_rate":0.6,"observed":0.65,"interval":{"low":0.34,"high":0.89},"level":0.95,"method":"rogan_gladen_lang_reiczigel","clipped":"none","validation_id":"6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c","sensitivity":0.8333,"specificity":0.625,"reason":null} */
export interface CorrectedPassRateResponse {
  /**
   * `to_zero` / `to_one`: the estimate fell outside 0..1 and was set to its bound
   * @example "none"
   */
  clipped: "none" | "to_zero" | "to_one" | null;
  interval: CorrectedIntervalResponse | null;
  /** @example 0.95 */
  level: number;
  /** @example "rogan_gladen_lang_reiczigel" */
  method: "rogan_gladen_lang_reiczigel";
  /**
   * The pass rate as the judge gave it, over the same rows
   * @example 0.65
   */
  observed: number | null;
  /**
   * The corrected estimate; null with `reason` when the judge or the validation cannot give one
   * @example 0.6
   */
  pass_rate: number | null;
  /** @example null */
  reason: string | null;
  /** @example 0.8333 */
  sensitivity: number | null;
  /** @example 0.625 */
  specificity: number | null;
  /**
   * The validation (the newest of the config version the run used)
   * @format uuid
   * @maxLength 36
   * @example "6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c"
   */
  validation_id: string;
}

export interface CoverageDataset {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "faq-golden-set" */
  name: string;
  /** @example 214 */
  rows: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string | null;
  /** @example 3 */
  version_number: number;
  /**
   * `current` (the promoted version) or `latest` (none is promoted)
   * @example "current"
   */
  version_source: "current" | "latest";
}

export interface CoverageDimension {
  /** @example 5 */
  covered_values: number;
  /** @example "topic" */
  name: string;
  /** Values assigned in the data that the project's dimension does not list */
  other_values: CoverageValue[];
  /** @example 6 */
  total_values: number;
  /**
   * Rows with no value of this dimension
   * @example 13
   */
  unassigned_rows: number;
  values: CoverageValue[];
}

export interface CoverageGap {
  /** @example "topic" */
  dimension: string;
  /**
   * Rows still needed to reach min_rows
   * @example 1
   */
  missing: number;
  /** @example 0 */
  rows: number;
  /** @example "shipping" */
  value: string;
}

export interface CoveragePair {
  cells: CoveragePairCell[];
  /** @example 14 */
  covered_cells: number;
  /** @example ["topic","customer_persona"] */
  dimensions: string[];
  /** @example 18 */
  total_cells: number;
}

export interface CoveragePairCell {
  /** @example true */
  covered: boolean;
  /** @example 11 */
  rows: number;
  /** @example ["billing","new_customer"] */
  values: string[];
}

export interface CoverageValue {
  /**
   * rows >= min_rows
   * @example true
   */
  covered: boolean;
  /**
   * Rows assigned this value
   * @example 38
   */
  rows: number;
  /**
   * Share of the counted rows (0..1)
   * @example 0.18
   */
  share: number;
  /** @example "billing" */
  value: string;
}

/** @example {"request":{"body":{"question":"{{input}}","history":"{{history}}"},"headers":{"X-Request-Source":"evaluation"}},"response":{"language":"jsonpath","output":"$.answer","usage":{"prompt_tokens":"$.usage.prompt_tokens","completion_tokens":"$.usage.completion_tokens","total_tokens":"$.usage.total_tokens"},"extras":{"sources":"$.sources"}}} */
export interface CreateAdapterRequest {
  request: AdapterRequestDto;
  response: AdapterResponseMappingDto;
}

/** @example {"name":"helpfulness drop","metric":"helpfulness","recent_seconds":3600,"reference":{"kind":"trailing","seconds":86400},"min_samples":100,"min_drop":0.05} */
export interface CreateAlertRuleRequest {
  /**
   * A check breaches when the one-sided p-value is below it, 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * A check is calm when the p-value is at least this, above alpha, up to 1 (default 0.2)
   * @min 0.0002
   * @max 1
   * @example 0.2
   */
  alpha_resolve?: number;
  /**
   * How often the rule is checked, 10 s .. 1 day (default 300)
   * @format int32
   * @min 10
   * @max 86400
   * @example 300
   */
  check_seconds?: number;
  /**
   * @maxLength 2000
   * @example "Pages when helpfulness falls against the last day"
   */
  description?: string;
  /**
   * A disabled rule is not checked on its schedule (default true)
   * @example true
   */
  enabled?: boolean;
  /**
   * Breaches in a row that fire the alert, 1..100 (default 3)
   * @format int32
   * @min 1
   * @max 100
   * @example 3
   */
  fire_after?: number;
  /**
   * What is compared: `pass_rate`, the share of scores that passed (default)
   * @example "pass_rate"
   */
  kind?: "pass_rate";
  /**
   * The metric of the evaluator's scores the rule watches
   * @maxLength 200
   * @pattern ^[A-Za-z0-9_.:-]{1,200}$
   * @example "helpfulness"
   */
  metric: string;
  /**
   * The smallest drop of the pass rate (0..1) that can fire, however significant a smaller one (default 0.03)
   * @min 0
   * @max 1
   * @example 0.05
   */
  min_drop?: number;
  /**
   * Fewer scores with a verdict in either window give no verdict, 1..1,000,000 (default 100)
   * @format int32
   * @min 1
   * @max 1000000
   * @example 100
   */
  min_samples?: number;
  /**
   * 1..200 characters, unique among the evaluator's rules
   * @minLength 1
   * @maxLength 200
   * @example "helpfulness drop"
   */
  name: string;
  /**
   * Length of the recent window, 60 s .. 366 days (default 3600)
   * @format int32
   * @min 60
   * @max 31622400
   * @example 3600
   */
  recent_seconds?: number;
  /** The reference window (default: the trailing 24 hours before the recent window) */
  reference?: AlertReferenceDto;
  /**
   * Calm checks in a row that resolve it, 1..100 (default 3)
   * @format int32
   * @min 1
   * @max 100
   * @example 3
   */
  resolve_after?: number;
}

export interface CreateAnalysisRunRequest {
  /**
   * Analyses to compute (default all three)
   * @maxItems 3
   * @minItems 1
   * @example ["text","annotation","visual"]
   */
  kinds?: ("text" | "annotation" | "visual")[];
  /**
   * Label columns (default: columns with 2..20 repeating values); two or more are compared as annotators
   * @maxItems 20
   * @example ["topic"]
   */
  label_columns?: string[];
  /**
   * Seed of the projection and clustering (default 42)
   * @min 0
   * @max 2147483647
   * @example 42
   */
  seed?: number;
  /**
   * Text columns (default: the columns holding mostly text)
   * @maxItems 50
   * @example ["question","answer"]
   */
  text_columns?: string[];
  /**
   * The column the visual analysis embeds (default: the mapped input, else the longest text column)
   * @maxLength 256
   * @example "question"
   */
  visual_column?: string;
}

export interface CreateApiKeyParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface CreateApiKeyRequest {
  /**
   * When the key stops working (ISO 8601 date-time in the future); without it the key works until revoked
   * @format date-time
   * @maxLength 64
   * @example "2027-06-30T00:00:00Z"
   */
  expires_at?: string;
  /**
   * What the key is for, e.g. `github-actions` or `otel-collector`
   * @minLength 1
   * @maxLength 100
   * @pattern ^\S.{0,99}$
   * @example "github-actions"
   */
  name: string;
  /**
   * The key's role in the workspace: at most your own. It acts with the lower of this and your role at the time of each call.
   * @example "member"
   */
  role: "viewer" | "member" | "admin" | "owner";
}

export interface CreateBackfillRequest {
  /**
   * Targets whose spans started at or after this time
   * @maxLength 64
   * @example "2026-11-01T00:00:00Z"
   */
  from: string;
  /**
   * …and before this time (at most 366 days after `from`)
   * @maxLength 64
   * @example "2026-11-08T00:00:00Z"
   */
  to: string;
}

export interface CreateClusterRunRequest {
  /**
   * The text column to embed and cluster (default: the mapped input, else the longest text column)
   * @maxLength 256
   * @example "question"
   */
  column?: string;
  /**
   * Clusters wanted; default chosen by silhouette between 2 and 10
   * @min 2
   * @max 50
   * @example 6
   */
  k?: number;
  /**
   * The same seed gives the same clusters (default 42)
   * @min 0
   * @max 2147483647
   * @example 42
   */
  seed?: number;
}

export interface CreateConnectionAdapterParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

/** @example {"name":"production-api","kind":"http","http":{"url":"https://support-bot.example.com/v2/answer","method":"POST"},"auth":{"secret_id":"7571d304-22fc-477d-bce6-15c4e3b0f69d","scheme":"bearer"},"timeout_ms":30000,"max_concurrency":8,"retry":{"max_attempts":3}} */
export interface CreateConnectionRequest {
  /** The key to send, by secret reference; null removes it */
  auth?: ConnectionAuthDto | null;
  /** For kind http */
  http?: HttpTransportDto;
  /**
   * `http` (a JSON endpoint), `openai_chat` (an OpenAI-compatible chat completions API) or `offline` (outputs are uploaded to the run)
   * @example "http"
   */
  kind: "http" | "openai_chat" | "offline";
  /**
   * Calls a run keeps in flight at most, 1..256 (default 8)
   * @min 1
   * @max 256
   * @example 8
   */
  max_concurrency?: number;
  /**
   * Unique within the SUT, case-insensitively (1..200 characters)
   * @minLength 1
   * @maxLength 200
   * @example "production-api"
   */
  name: string;
  /** For kind openai_chat */
  openai_chat?: OpenAiChatTransportDto;
  /**
   * Calls a run starts per second at most, 0.01..10000; null for no limit (default)
   * @min 0.01
   * @max 10000
   * @example 5
   */
  requests_per_second?: number | null;
  retry?: RetryPolicyDto;
  /**
   * Per attempt, 100..600000 ms (default 30000)
   * @min 100
   * @max 600000
   * @example 30000
   */
  timeout_ms?: number;
  /** Join each call to the trace the SUT exports of it (docs/agents.md); null removes it */
  trace_link?: TraceLinkDto | null;
}

export interface CreateEmbeddingConfigRequest {
  /**
   * The API's base URL, e.g. https://api.openai.com/v1 (embeddings are POSTed to `{base_url}/embeddings`)
   * @format uri
   * @maxLength 2000
   * @example "https://api.openai.com/v1"
   */
  base_url: string;
  /**
   * Texts per request, 1..2048 (default 64)
   * @format int32
   * @min 1
   * @max 2048
   * @default 64
   * @example 64
   */
  batch_size?: number;
  /**
   * @maxLength 2000
   * @example "OpenAI small embeddings for clustering and semantic metrics"
   */
  description?: string;
  /**
   * Vector size to ask for (models that support it), 1..8192
   * @format int32
   * @min 1
   * @max 8192
   * @example 512
   */
  dimensions?: number;
  /**
   * Model name, e.g. text-embedding-3-small
   * @minLength 1
   * @maxLength 200
   * @example "text-embedding-3-small"
   */
  model: string;
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "openai-small"
   */
  name: string;
  /** @example "openai_compatible" */
  provider: "openai_compatible" | "azure_openai";
  /**
   * The workspace secret holding the API key
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string;
  /**
   * The workspace that will own the entry (the caller is admin or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"support-release-gate","description":"What a release of support-bot-v2 must pass","metrics":[{"config_name":"answer-correctness","config_version":2,"min_pass_rate":0.9},{"config_name":"faithfulness"},{"config_name":"latency","threshold":2500,"gating":false}],"default_judge_id":"e171b466-fde7-4636-a3d1-b73872eb9e36","pass_rule":{"row":"all","min_pass_rate":0.9,"errors_fail":true}} */
export interface CreateEvalConfigRequest {
  /**
   * The judge for judged metrics whose config names none
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  default_judge_id?: string | null;
  /**
   * @maxLength 2000
   * @example "What a release of support-bot-v2 must pass"
   */
  description?: string;
  /**
   * 1..50 metrics, each named once
   * @maxItems 50
   * @minItems 1
   */
  metrics: EvalMetricRefDto[];
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-release-gate"
   */
  name: string;
  pass_rule?: PassRuleDto;
  /**
   * The workspace that will own the entry (the caller is member or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateGroundTruthRequest {
  /**
   * Expected outputs, one per trace (at most 10000); a new ground-truth version replaces the whole set
   * @maxItems 10000
   * @minItems 1
   */
  items: GroundTruthItem[];
  /**
   * @maxLength 2000
   * @example "Refund conversations reviewed by the billing team"
   */
  message?: string;
}

export interface CreateInvitationParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface CreateInvitationRequest {
  /**
   * @format email
   * @maxLength 320
   * @example "grace.hopper@example.com"
   */
  email: string;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
}

export interface CreateInvitationResponse {
  /**
   * How the invitee accepts
   * @example "POST /auth/accept-invitation with {"token": "<token>", "password": "…"} (or with the invitee's bearer token)"
   */
  accept_path: string;
  /**
   * @format date-time
   * @example null
   */
  accepted_at: string | null;
  /** @example null */
  accepted_by: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "grace.hopper@example.com" */
  email: string;
  /**
   * @format date-time
   * @example "2025-05-20T09:30:00.000Z"
   */
  expires_at: string;
  /** @example "67dde1eb-57e4-4070-bf3f-db08d2f03590" */
  id: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  invited_by: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  last_sent_at: string;
  /**
   * @format date-time
   * @example null
   */
  revoked_at: string | null;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /** @example 1 */
  sent_count: number;
  /**
   * `expired` is a pending invitation past expires_at
   * @example "pending"
   */
  state: "pending" | "accepted" | "revoked" | "expired";
  /**
   * Shown once: give it to the invitee (the service sends no email)
   * @example "inv_example-invitation-token-not-a-real-one"
   */
  token: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"gpt-4o-mini-judge","description":"Grades answers for correctness and faithfulness","provider":"openai_compatible","base_url":"https://api.openai.com/v1","model":"gpt-4o-mini","parameters":{"temperature":0,"max_tokens":512},"json_mode":true,"timeout_ms":60000,"max_attempts":3,"max_concurrency":4,"secret_id":"7571d304-22fc-477d-bce6-15c4e3b0f69d"} */
export interface CreateJudgeRequest {
  /**
   * azure_openai: the API version (default 2024-10-21)
   * @maxLength 18
   * @pattern ^\d{4}-\d{2}-\d{2}(-preview)?$
   * @example "2024-10-21"
   */
  api_version?: string | null;
  /**
   * The API root: https://api.openai.com/v1 (openai_compatible), https://<resource>.openai.azure.com (azure_openai), https://api.anthropic.com (anthropic)
   * @format uri
   * @maxLength 2000
   * @example "https://api.openai.com/v1"
   */
  base_url: string;
  /**
   * @maxLength 2000
   * @example "Grades answers for correctness and faithfulness"
   */
  description?: string;
  /**
   * Ask for a JSON answer where the provider supports it (default true)
   * @example true
   */
  json_mode?: boolean;
  /**
   * Attempts in all on 429, 5xx and timeouts, 1..10 (default 3)
   * @min 1
   * @max 10
   * @example 3
   */
  max_attempts?: number;
  /**
   * Grading calls a run keeps in flight at most, 1..128 (default 4)
   * @min 1
   * @max 128
   * @example 4
   */
  max_concurrency?: number;
  /**
   * The model, or for azure_openai the deployment name
   * @minLength 1
   * @maxLength 200
   * @example "gpt-4o-mini"
   */
  model: string;
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "gpt-4o-mini-judge"
   */
  name: string;
  /**
   * Sent with every call: temperature, max_tokens, top_p, seed… (temperature 0 is advised for grading)
   * @example {"temperature":0,"max_tokens":512}
   */
  parameters?: Record<string, any>;
  /** @example "openai_compatible" */
  provider: "openai_compatible" | "azure_openai" | "anthropic";
  /**
   * The workspace secret holding the API key (admins); null removes it
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string | null;
  /**
   * Per attempt, 1000..600000 ms (default 60000)
   * @min 1000
   * @max 600000
   * @example 60000
   */
  timeout_ms?: number;
  /**
   * The workspace that will own the entry (the caller is member or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"metric":"answer-correctness","human":{"field":"human_verdict","positive":["pass"]},"by_dimension":"topic","confidence":0.95,"seed":1} */
export interface CreateJudgeValidationRequest {
  /**
   * A dimension of the rows to break the figures down by
   * @maxLength 64
   * @example "topic"
   */
  by_dimension?: string;
  /**
   * Confidence level of the intervals, 0.5..0.999 (default 0.95)
   * @min 0.5
   * @max 0.999
   * @example 0.95
   */
  confidence?: number;
  human: HumanLabelsSourceDto;
  /**
   * A judged metric of the run whose config version is validated
   * @maxLength 100
   * @example "answer-correctness"
   */
  metric: string;
  /**
   * Seed of the bootstrap intervals (default 1): the same labels and seed give the same figures
   * @min 0
   * @max 2147483647
   * @example 1
   */
  seed?: number;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"answer-correctness","kind":"judged","metric":"correctness","description":"Correctness against the reviewed answer, graded 1 to 5","judged":{"rubric":"Grade how well the answer matches the reference.\nQuestion: {{input}}\nAnswer: {{output}}\nReference: {{expected_output}}\n1 = wrong or missing, 5 = correct and complete.","scale":{"type":"numeric","min":1,"max":5},"pass_threshold":0.75,"judge_id":"e171b466-fde7-4636-a3d1-b73872eb9e36"}} */
export interface CreateMetricConfigRequest {
  /**
   * @maxLength 2000
   * @example "Correctness against the reviewed answer, graded 1 to 5"
   */
  description?: string;
  /** Judged metrics: rubric, scale, pass rule, judge */
  judged?: JudgedSpecDto;
  /**
   * `deterministic` (a built-in metric), `judged` (an LLM judge with a rubric) or `custom` (a registered op of kind metric)
   * @example "judged"
   */
  kind: "deterministic" | "judged" | "custom";
  /**
   * deterministic: exact_match, contains, regex, …; judged: llm_judge or correctness, answer_relevance, faithfulness, context_relevance, helpfulness; custom: the op's name
   * @minLength 1
   * @maxLength 100
   * @example "correctness"
   */
  metric: string;
  /**
   * Unique in the workspace (case-insensitive): 1..100 letters, digits or . _ : -
   * @maxLength 100
   * @example "answer-correctness"
   */
  name: string;
  /**
   * Parameters, checked against the metric's JSON Schema (GET /ops/{metric}/schema)
   * @example {"case_sensitive":false}
   */
  params?: Record<string, any>;
  /**
   * Deterministic and custom metrics: rows pass when the score reaches this (at most this for latency, cost, length); null for none
   * @example 0.6
   */
  threshold?: number | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateMetricConfigVersionParams {
  /** @maxLength 100 */
  configName: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

/** @example {"from_version":2,"description":"Stricter: passes from 4 of 5","judged":{"pass_threshold":0.8}} */
export interface CreateMetricConfigVersionRequest {
  /**
   * @maxLength 2000
   * @example "Correctness against the reviewed answer, graded 1 to 5"
   */
  description?: string;
  /**
   * The version to start from (default the newest)
   * @min 1
   * @max 2147483647
   * @example 2
   */
  from_version?: number;
  /** Judged metrics: rubric, scale, pass rule, judge */
  judged?: JudgedSpecDto;
  /**
   * Parameters, checked against the metric's JSON Schema (GET /ops/{metric}/schema)
   * @example {"case_sensitive":false}
   */
  params?: Record<string, any>;
  /**
   * Deterministic and custom metrics: rows pass when the score reaches this (at most this for latency, cost, length); null for none
   * @example 0.6
   */
  threshold?: number | null;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"ci-alerts","description":"Tell the release channel when a run fails","url":"https://hooks.example.com/ews","events":["run.failed","quality_check.failed"],"enabled":true} */
export interface CreateNotificationConfigRequest {
  /**
   * @maxLength 2000
   * @example "Tell the release channel when a run fails"
   */
  description?: string;
  /**
   * Default true
   * @example true
   */
  enabled?: boolean;
  /**
   * @maxItems 7
   * @minItems 1
   * @example ["run.failed","quality_check.failed"]
   */
  events: (
    | "run.succeeded"
    | "run.failed"
    | "run.cancelled"
    | "quality_check.failed"
    | "dataset.version_promoted"
    | "online_alert.firing"
    | "online_alert.resolved"
  )[];
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "ci-alerts"
   */
  name: string;
  /**
   * The workspace secret whose value signs deliveries; left out, the service creates one (`webhook-<name>`, 32 random bytes) you read with POST .../secrets/{id}/reveal
   * @format uuid
   * @maxLength 36
   * @example "a4155dda-ae8f-4bb5-8444-ab992e5aabc9"
   */
  secret_id?: string;
  /**
   * Where deliveries are POSTed (http or https)
   * @format uri
   * @maxLength 2000
   * @example "https://hooks.example.com/ews"
   */
  url: string;
  /**
   * The workspace that will own the entry (the caller is admin or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateOnlineAlertRuleParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface CreateOnlineEvaluatorRequest {
  budget?: EvaluatorBudgetDto;
  /**
   * The trace dataset whose landed spans are scored
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id: string;
  /**
   * @maxLength 2000
   * @example "Samples 10% of production answers for the helpfulness judge"
   */
  description?: string;
  /**
   * A filter in the query language (docs/query-language.md) over spans; null: every span
   * @example {"field":"kind","op":"eq","value":"llm"}
   */
  filter?: Record<string, any> | null;
  /**
   * The judge of judged metrics whose config names none
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string | null;
  /**
   * What one score is about: each matching span, each trace with a matching span, or each session
   * @example "trace"
   */
  level?: "span" | "trace" | "session";
  /** Where each metric input is read from the target's spans */
  mapping?: TargetMappingDto;
  /**
   * 1..20 metrics, each a metric config or a built-in
   * @maxItems 20
   * @minItems 1
   * @example [{"name":"helpfulness"}]
   */
  metrics?: EvaluatorMetricDto[];
  /**
   * @minLength 1
   * @maxLength 200
   * @example "support-bot helpfulness"
   */
  name: string;
  /**
   * A trace whose root span has not ended is complete this long after its newest span (a session: always), 1..86400 seconds (default 30)
   * @min 1
   * @max 86400
   * @example 30
   */
  quiet_seconds?: number;
  /** Where failing targets go: a review queue, a dataset, or both; null: nowhere */
  route?: EvaluatorRouteDto | null;
  /**
   * The share of targets scored, 0..1, decided by the trace id (OpenTelemetry's consistent sampling), so the same traces everywhere
   * @min 0
   * @max 1
   * @example 0.1
   */
  sampling_rate?: number;
  /**
   * `active` (default) scores what lands; `paused` takes nothing until resumed
   * @example "active"
   */
  state?: "active" | "paused";
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreatePartitionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface CreatePartitionRequest {
  /**
   * @maxLength 2000
   * @example "English billing questions"
   */
  description?: string;
  /**
   * Dimension -> accepted values
   * @example {"topic":["billing","returns_refunds"]}
   */
  dimension_values?: Record<string, string[]>;
  /**
   * A filter in the query language
   * @example {"field":"language","op":"eq","value":"en"}
   */
  filter?: Record<string, any>;
  /**
   * What `resolve` lists: `session` (rows grouped by the mapped session_id column; one row, one session without it), or `trace` and `span` for trace datasets
   * @default "session"
   * @example "session"
   */
  level?: "session" | "trace" | "span";
  /**
   * Unique within the version, 1..200 characters
   * @minLength 1
   * @maxLength 200
   * @example "billing-en"
   */
  name: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"support-bot-release","description":"Release gate of the support assistant","template":"customer-support-assistant","dimensions":[{"name":"topic","description":"What the customer is contacting support about.","values":[{"value":"billing","description":"Invoices, charges, failed payments, payment methods and taxes."},{"value":"account_access","description":"Login problems, password resets, two-factor authentication and locked accounts."}]}],"sut_ids":["a92b7315-b960-467d-9b3d-45e8b02b3351"],"dataset_ids":["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"]} */
export interface CreateProjectRequest {
  /**
   * Datasets of the workspace whose rows the project's coverage counts
   * @maxItems 100
   * @example ["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"]
   */
  dataset_ids?: string[];
  /**
   * @maxLength 2000
   * @example "Release gate of the support assistant"
   */
  description?: string;
  /**
   * The coverage dimensions: GET /templates/{name} `dimensions` as it is, or edited (at most 20)
   * @maxItems 20
   */
  dimensions?: DimensionDefinition[];
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-bot-release"
   */
  name: string;
  /**
   * SUTs of the workspace evaluated by this project
   * @maxItems 100
   * @example ["a92b7315-b960-467d-9b3d-45e8b02b3351"]
   */
  sut_ids?: string[];
  /**
   * A built-in template name (GET /templates); when `dimensions` is left out the template's list is used
   * @maxLength 100
   * @example "customer-support-assistant"
   */
  template?: string;
  /**
   * The workspace that will own the entry (the caller is member or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateRecommendationRequest {
  /**
   * Dataset quality checks to run (`exact_duplicates`, `pii`, …; at most 20)
   * @maxItems 20
   * @example ["exact_duplicates","pii"]
   */
  checks?: string[];
  /**
   * @maxLength 2000
   * @example "What every retrieval-backed support assistant should be tested for"
   */
  description?: string;
  /**
   * Dimensions to cover (snake_case names; at most 20)
   * @maxItems 20
   * @example ["topic","customer_persona"]
   */
  dimensions?: string[];
  /**
   * Metrics of the package (at most 50)
   * @maxItems 50
   */
  metrics: RecommendedMetricDto[];
  /**
   * @maxLength 100
   * @example "Support RAG essentials"
   */
  name: string;
  /**
   * The kind of application (snake_case), e.g. `rag_qa`
   * @maxLength 64
   * @pattern ^[a-z][a-z0-9_]{0,63}$
   * @example "rag_qa"
   */
  use_case: string;
  /**
   * The workspace that will own the recommendation (members)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"release-review","description":"What the release board reads","sections":[{"key":"summary","title":"Release summary","questions":["Is the release ready to ship?"]},{"key":"regressions"},{"key":"failure_examples"}]} */
export interface CreateReportConfigRequest {
  /**
   * @maxLength 2000
   * @example "What the release board reads"
   */
  description?: string;
  /**
   * Unique in the workspace (case-insensitive), 1..100 characters
   * @maxLength 100
   * @pattern \S
   * @example "release-review"
   */
  name: string;
  /**
   * The sections, in report order (1..6, each key once)
   * @maxItems 6
   * @minItems 1
   */
  sections: ReportConfigSectionDto[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateReportParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface CreateReportRequest {
  /**
   * The run to compare against in `regressions` (default: the previous run of the same SUT on the same dataset)
   * @format uuid
   * @maxLength 36
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  baseline_run_id?: string;
  /**
   * The report config choosing sections, order and questions (default: the workspace settings' default config, else every built-in section)
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  config_id?: string;
  /**
   * The judge that writes each section's narrative (default: the workspace settings' judge; none: the deterministic template)
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string;
  /**
   * Only these sections, in this order (default: the config's)
   * @maxItems 6
   * @minItems 1
   * @example ["summary","metrics_overview","regressions"]
   */
  sections?: (
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations"
  )[];
  /**
   * Write every narrative from the template even when a judge is configured
   * @example false
   */
  template_only?: boolean;
  /**
   * The report's title (default: "Report: <run name>")
   * @minLength 1
   * @maxLength 300
   * @example "support-bot-v2 release review"
   */
  title?: string;
}

export interface CreateReviewQueueRequest {
  /**
   * Who adjudicates besides admins: up to 100 user ids, each a member
   * @maxItems 100
   * @example []
   */
  adjudicators?: string[] | null;
  /**
   * @maxLength 2000
   * @example "Confirm the judge failures on refund questions"
   */
  description?: string;
  /**
   * How long a reviewer holds an item, 1..1440 minutes (default 15)
   * @min 1
   * @max 1440
   * @example 15
   */
  lease_minutes?: number;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Refund answers, week 12"
   */
  name: string;
  /**
   * Reviewers each item needs, 1..10 (default 1)
   * @min 1
   * @max 10
   * @example 2
   */
  overlap?: number;
  /**
   * Who reviews: null or absent for any member (role member or above), else up to 100 user ids, each a member
   * @maxItems 100
   * @example ["2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"]
   */
  reviewers?: string[] | null;
  rubric: RubricDto;
  /**
   * Whether reviewers and adjudicators see the run's verdicts and scores (a judge's label and
   * reason) beside a row's output. Off by default: labels given with a judge's verdict in view lean
   * towards it, and a judge validated against them looks better than it is.
   * @example false
   */
  show_verdicts?: boolean;
  source: ReviewSourceDto;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateRunGateVerdictParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface CreateRunJudgeValidationParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"support-bot-v2 nightly 2025-05-13","dataset_id":"6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c","version_id":"89fa3cc1-e563-4ad1-af4c-d5becdca17df","sut_id":"a92b7315-b960-467d-9b3d-45e8b02b3351","connection_id":"9535f71a-4c76-4544-92c7-d0117af05d92","eval_config_id":"fbe89949-95ca-4fae-9022-be8b4fd7304c","concurrency":8,"repetitions":1,"tags":["nightly","release-candidate"]} */
export interface CreateRunRequest {
  /**
   * Calls in flight at most (1..256); default and ceiling: the connection's max_concurrency
   * @min 1
   * @max 256
   * @example 8
   */
  concurrency?: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "9535f71a-4c76-4544-92c7-d0117af05d92"
   */
  connection_id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id: string;
  /**
   * The metrics, default judge and pass rule; or name `metrics`
   * @format uuid
   * @maxLength 36
   * @example "fbe89949-95ca-4fae-9022-be8b4fd7304c"
   */
  eval_config_id?: string;
  /**
   * The judge for judged metrics that name none
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string;
  /**
   * Metric names (configs or built-ins), resolved as GET .../metric-configs/resolved says, when there is no eval config
   * @maxItems 50
   * @minItems 1
   * @example ["answer-correctness","faithfulness","latency"]
   */
  metrics?: string[];
  /**
   * @maxLength 200
   * @example "support-bot-v2 nightly 2025-05-13"
   */
  name?: string;
  /**
   * Only the rows of this partition of the version
   * @format uuid
   * @maxLength 36
   * @example "e6c2feed-97c3-43e5-b733-96f1ee7aa5e0"
   */
  partition_id?: string;
  /**
   * Each row is sent this many times (1..10, default 1), e.g. to measure variance
   * @min 1
   * @max 10
   * @example 1
   */
  repetitions?: number;
  /** A deterministic sample of the rows */
  sample?: RunSampleDto;
  /**
   * @format uuid
   * @maxLength 36
   * @example "a92b7315-b960-467d-9b3d-45e8b02b3351"
   */
  sut_id: string;
  /**
   * @maxItems 20
   * @example ["nightly","release-candidate"]
   */
  tags?: string[];
  /** Score recorded traces instead of calling anything: `dataset_id` is a trace dataset and the connection is offline (docs/agents.md) */
  traces?: RecordedTracesDto;
  /**
   * Default: the dataset's current version, else its newest
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id?: string;
  /**
   * The workspace that runs it (members)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"faq-paraphrases","description":"Paraphrases the golden questions per task","kind":"template","columns":{"input":"How do I {{dim.task}} in {{seed.product}}?","expected_output":"{{seed.answer}}"},"dimensions":{"task":["reset a password","change plan"]},"dimension_columns":true} */
export interface CreateSdgAdapterRequest {
  /**
   * template: column -> template over {{seed.<column>}}, {{dim.<name>}}, {{index}}
   * @example {"input":"How do I {{dim.task}} in {{seed.product}}?","expected_output":"{{seed.answer}}"}
   */
  columns?: Record<string, string>;
  /**
   * llm: rows asked for per prompt, 1..20 (default 5)
   * @min 1
   * @max 20
   * @example 5
   */
  count?: number;
  /**
   * @maxLength 2000
   * @example "Paraphrases the golden questions per task"
   */
  description?: string;
  /**
   * Write each dimension's value as a column too (default true)
   * @example true
   */
  dimension_columns?: boolean;
  /**
   * Dimension -> values, combined with every seed row
   * @example {"task":["reset a password","change plan"]}
   */
  dimensions?: Record<string, string[]>;
  /**
   * llm: the judge connection that generates
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string;
  /**
   * `template`: rows rendered from templates over seed rows and dimension values; `llm`: a judge connection generates (or paraphrases) rows from a prompt
   * @example "template"
   */
  kind: "template" | "llm";
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "faq-paraphrases"
   */
  name: string;
  /**
   * llm: the columns each generated row must have
   * @maxItems 50
   * @minItems 1
   * @example ["question","answer"]
   */
  output_columns?: string[];
  /**
   * llm: the instruction, a template over {{seed.<column>}} and {{dim.<name>}}
   * @minLength 1
   * @maxLength 20000
   * @example "Write {{count}} questions a customer could ask about {{dim.task}}, each with the answer from: {{seed.answer}}"
   */
  prompt?: string;
  /**
   * The workspace that will own the entry (the caller is member or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateSecretParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface CreateSecretRequest {
  /**
   * @maxLength 1000
   * @example "Key of the judge and SUT calls of support-bot-v2"
   */
  description?: string;
  /**
   * How other records refer to it in the UI, e.g. `OPENAI_API_KEY`
   * @maxLength 100
   * @example "OPENAI_API_KEY"
   */
  name: string;
  /**
   * The secret itself; stored encrypted, returned only by reveal
   * @minLength 1
   * @maxLength 65536
   * @example "sk-test-0000example0000key0000"
   */
  value: string;
}

export interface CreateSutConnectionParams {
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface CreateSutRequest {
  /**
   * @maxLength 2000
   * @example "Support assistant with retrieval over the help centre"
   */
  description?: string;
  /**
   * Unique in the workspace, case-insensitively (1..200 characters)
   * @minLength 1
   * @maxLength 200
   * @example "support-bot-v2"
   */
  name: string;
  /**
   * Up to 20 tags of 1..64 letters, digits or . _ : / -
   * @maxItems 20
   * @example ["production","rag"]
   */
  tags?: string[];
  /**
   * The workspace that will own the system (members)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"support-release-plan","description":"The bar a support-bot release must clear","datasets":[{"dataset_id":"6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c","version_id":"89fa3cc1-e563-4ad1-af4c-d5becdca17df"}],"metrics":[{"name":"answer-correctness","threshold":{"operator":">=","value":0.8},"per_dimension":[{"dimension":"topic","value":"billing","threshold":{"operator":">=","value":0.9}}],"gating":true},{"name":"latency","threshold":{"operator":"<=","value":2500},"gating":false}],"release_rule":{"mode":"all_metrics","include_dimension_thresholds":true,"min_row_pass_rate":0.9},"message":"First plan for the May release"} */
export interface CreateTestPlanRequest {
  /**
   * Datasets (optionally a pinned version or a partition) the plan runs on (1..50)
   * @maxItems 50
   * @minItems 1
   */
  datasets: PlanDatasetDto[];
  /**
   * @maxLength 2000
   * @example "The bar a support-bot release must clear"
   */
  description?: string;
  /**
   * What version 1 is about
   * @maxLength 2000
   * @example "First plan for the May release"
   */
  message?: string;
  /**
   * Metrics with their thresholds (1..50, unique names)
   * @maxItems 50
   * @minItems 1
   */
  metrics: PlanMetricDto[];
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-release-plan"
   */
  name: string;
  /** When a release passes (default: every gating metric meets its threshold) */
  release_rule?: ReleaseRuleDto;
  /**
   * The workspace that will own the entry (the caller is member or above in it)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateTestPlanVersionParams {
  /** @maxLength 100 */
  ref: string;
  /**
   * The workspace the plan belongs to ({ref} may be a name, unique only in its workspace)
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

/** @example {"from_version":2,"metrics":[{"name":"answer-correctness","threshold":{"operator":">=","value":0.8},"per_dimension":[{"dimension":"topic","value":"billing","threshold":{"operator":">=","value":0.9}}],"gating":true},{"name":"latency","threshold":{"operator":"<=","value":2500},"gating":false}],"message":"Billing answers must reach 0.9"} */
export interface CreateTestPlanVersionRequest {
  /**
   * Datasets (optionally a pinned version or a partition) the plan runs on (1..50)
   * @maxItems 50
   * @minItems 1
   */
  datasets?: PlanDatasetDto[];
  /**
   * A new description of the plan
   * @maxLength 2000
   * @example "The bar a support-bot release must clear"
   */
  description?: string;
  /**
   * The version to start from (default the latest); what the body leaves out is copied from it
   * @min 1
   * @max 2147483647
   * @example 2
   */
  from_version?: number;
  /**
   * What this version is about
   * @maxLength 2000
   * @example "Billing answers must reach 0.9"
   */
  message?: string;
  /**
   * Metrics with their thresholds (1..50, unique names)
   * @maxItems 50
   * @minItems 1
   */
  metrics?: PlanMetricDto[];
  /** When a release passes (default: every gating metric meets its threshold) */
  release_rule?: ReleaseRuleDto;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","name":"langfuse-production","kind":"langfuse","url":"https://cloud.langfuse.com","secret_id":"7571d304-22fc-477d-bce6-15c4e3b0f69d","public_key_secret_id":"a4155dda-ae8f-4bb5-8444-ab992e5aabc9","page_size":100,"dataset_id":"f0eef60d-4b04-4046-aa3a-779fe13e072d"} */
export interface CreateTraceConnectionRequest {
  /**
   * The trace dataset landings from this connection go to (unless a landing names another)
   * @format uuid
   * @maxLength 36
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id?: string;
  /**
   * `otlp_file_url`: an OTLP/JSON, JSON Lines or OTLP/protobuf file at a URL; `langfuse`: a Langfuse-compatible public API; `phoenix`: a Phoenix-compatible REST API
   * @example "langfuse"
   */
  kind: "otlp_file_url" | "langfuse" | "phoenix";
  /**
   * @minLength 1
   * @maxLength 200
   * @example "langfuse-production"
   */
  name: string;
  /**
   * Records asked for per page from an API, 1..1000 (default 100)
   * @min 1
   * @max 1000
   * @example 100
   */
  page_size?: number;
  /**
   * phoenix: the project whose spans are read (default `default`)
   * @minLength 1
   * @maxLength 200
   * @example "default"
   */
  project?: string;
  /**
   * langfuse: workspace secret holding the public key (Basic auth is public key : secret key)
   * @format uuid
   * @maxLength 36
   * @example "a4155dda-ae8f-4bb5-8444-ab992e5aabc9"
   */
  public_key_secret_id?: string;
  /**
   * Workspace secret holding the bearer token (otlp_file_url, phoenix) or the Langfuse secret key
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string;
  /**
   * The file URL (otlp_file_url) or the API's base URL (langfuse, phoenix), http or https
   * @maxLength 2000
   * @pattern ^https?:\/\/\S+$
   * @example "https://cloud.langfuse.com"
   */
  url: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface CreateTraceFeedbackBatchParams {
  batch: string;
}

export interface CreateTraceFeedbackBatchRequest {
  /**
   * @maxItems 100
   * @minItems 1
   */
  items: FeedbackItem[];
  /**
   * The workspace, with a user's token (an API key's own workspace is used otherwise)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id?: string;
}

export interface CreateTraceFeedbackRequest {
  /**
   * Makes the post safe to retry: the same key with the same content answers the stored feedback again (1 .. 200 printable characters)
   * @minLength 1
   * @maxLength 200
   * @pattern ^[\x21-\x7E]+$
   * @example "fb-7f3c9a2e-0d41-4b8e-9a6c-2e5d1f0b7c34"
   */
  client_key?: string;
  /**
   * The end user's words, up to 4000 characters
   * @maxLength 4000
   * @example "The reset link in the answer had expired."
   */
  comment?: string;
  /**
   * A small object kept as it is (at most 50 members, 8 KiB as JSON)
   * @example {"channel":"web-widget","app_version":"3.14.0"}
   */
  metadata?: Record<string, any>;
  /**
   * What is judged (`thumbs`, `user_rating`, `resolved`): a letter or digit, then letters, digits and - _ . : /
   * @minLength 1
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9_.:/-]*$
   * @example "thumbs"
   */
  name: string;
  /**
   * One span of the trace: 16 hex characters, or a source's own id
   * @minLength 1
   * @maxLength 128
   * @example "00f067aa0ba902b7"
   */
  span_id?: string;
  /**
   * The trace: 32 hex characters as OpenTelemetry writes it (upper case is lowered), or a source's own id
   * @minLength 1
   * @maxLength 128
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id: string;
  /**
   * The end user's id in the application (not a user of this service)
   * @minLength 1
   * @maxLength 200
   * @example "customer-40912"
   */
  user_ref?: string;
  /**
   * A boolean (thumbs up: true), a finite number (a score) or a string of 1 .. 200 characters (a category)
   * @example false
   */
  value: number | boolean | string;
  /**
   * The workspace, with a user's token (an API key's own workspace is used otherwise)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id?: string;
}

export interface CreateTraceGroundTruthParams {
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface CreateUserRequest {
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Grace Hopper"
   */
  display_name: string;
  /**
   * @format email
   * @maxLength 320
   * @example "grace.hopper@example.com"
   */
  email: string;
  /**
   * Without one the user cannot log in until given a reset token (POST /users/{id}/reset-token).
   * @minLength 8
   * @maxLength 256
   * @example "correct-horse-battery-staple"
   */
  password?: string;
  /**
   * @default "user"
   * @example "user"
   */
  system_role?: "admin" | "user";
}

export interface CreateWorkspaceRequest {
  /**
   * @maxLength 2000
   * @example "Evaluations of the support assistant before each release"
   */
  description?: string;
  /**
   * 1..100 characters, trimmed; need not be unique
   * @minLength 1
   * @maxLength 100
   * @example "Customer support QA"
   */
  name: string;
}

export interface CreateWorkspaceUserParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface CreateWorkspaceUserRequest {
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Grace Hopper"
   */
  display_name: string;
  /**
   * @format email
   * @maxLength 320
   * @example "grace.hopper@example.com"
   */
  email: string;
  /**
   * Without one the user cannot log in until given a reset token (POST /users/{id}/reset-token).
   * @minLength 8
   * @maxLength 256
   * @example "correct-horse-battery-staple"
   */
  password?: string;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
}

export interface CustomOpDetailResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Share of toxic sentences in the answer, from the moderation model" */
  description: string;
  /** @example "https://ops.example.com/toxicity" */
  endpoint_url: string;
  /**
   * null: the protocol probe checks it
   * @example "https://ops.example.com/healthz"
   */
  health_url: string | null;
  /** @example "529836c2-8075-4340-b74d-dc1be3c9556a" */
  id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  last_checked_at: string | null;
  /** @example "toxicity-scorer" */
  name: string;
  /** The registered operations it serves */
  ops: RegistryOpView[];
  /** @example 1 */
  revision: number;
  /** Newest first */
  revisions: CustomOpRevisionDto[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string | null;
  /** @example "active" */
  state: "deploying" | "active" | "failed" | "stopped";
  /**
   * Why it is in this state (the failed check, who stopped it)
   * @example null
   */
  state_reason: string | null;
  /** @example 30000 */
  timeout_ms: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface CustomOpPublishResponse {
  custom_op: CustomOpDetailResponse;
  /**
   * The queued health check; the op's state moves to active or failed when it ends (read GET .../custom_ops/{name})
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string;
  /** The op registered under the same name */
  op: RegistryOpView;
}

export interface CustomOpRedeployResponse {
  custom_op: CustomOpDetailResponse;
  /** @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae" */
  job_id: string;
  /** @example 2 */
  revision: number;
}

export interface CustomOpRefDto {
  /** @example "toxicity-scorer" */
  name: string;
  /** @example "active" */
  state: "deploying" | "active" | "failed" | "stopped";
}

export interface CustomOpRevisionDto {
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  checked_at: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "https://ops.example.com/toxicity" */
  endpoint_url: string;
  /**
   * What the check saw: status_code, latency_ms, method, url
   * @example {"status_code":200,"latency_ms":84,"method":"GET","url":"https://ops.example.com/healthz"}
   */
  health: Record<string, any> | null;
  /** @example "https://ops.example.com/healthz" */
  health_url: string | null;
  /**
   * deploying, active, failed, or superseded by a later revision
   * @example "active"
   */
  outcome: "deploying" | "active" | "failed" | "superseded";
  /** @example null */
  reason: string | null;
  /** @example 1 */
  revision: number;
  /** @example 30000 */
  timeout_ms: number;
}

export interface CustomOpStopResponse {
  custom_op: CustomOpSummary;
  /**
   * The state before the stop
   * @example "active"
   */
  previous_state: "deploying" | "active" | "failed" | "stopped";
}

export interface CustomOpSummary {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Share of toxic sentences in the answer, from the moderation model" */
  description: string;
  /** @example "https://ops.example.com/toxicity" */
  endpoint_url: string;
  /**
   * null: the protocol probe checks it
   * @example "https://ops.example.com/healthz"
   */
  health_url: string | null;
  /** @example "529836c2-8075-4340-b74d-dc1be3c9556a" */
  id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  last_checked_at: string | null;
  /** @example "toxicity-scorer" */
  name: string;
  /** @example 1 */
  revision: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string | null;
  /** @example "active" */
  state: "deploying" | "active" | "failed" | "stopped";
  /**
   * Why it is in this state (the failed check, who stopped it)
   * @example null
   */
  state_reason: string | null;
  /** @example 30000 */
  timeout_ms: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface CustomOpsListResponse {
  items: CustomOpSummary[];
  /** @example 1 */
  page: number;
  /** @example 50 */
  page_size: number;
  /** @example 1 */
  total: number;
}

export interface DataOperationRunResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example null */
  error: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example "05e5fc47-409a-4408-b6bc-f9483b99e829" */
  id: string;
  /**
   * `quality_checks`
   * @example "quality_checks"
   */
  kind: string;
  /**
   * The checks and params asked for
   * @example {"checks":[{"check":"pii"},{"check":"near_duplicates","params":{"threshold":0.9}}]}
   */
  params: Record<string, any>;
  /** The verdict in full (when succeeded) */
  result: DatasetQualityVerdictResponse | null;
  /** @example "succeeded" */
  state: "running" | "succeeded" | "failed";
  /** @example "warn" */
  verdict: "pass" | "warn" | "fail" | null;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DataOperationRunResponsePage {
  items: DataOperationRunResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface DatasetClustersAvailability {
  /** @example true */
  available: boolean;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * The embedder the workspace uses
   * @example "local-char-ngram"
   */
  embedder: string;
  /** @example 50000 */
  max_rows: number;
  /**
   * Why not, when not
   * @example null
   */
  reason: string | null;
  /** @example 214 */
  rows: number;
  /** @example "question" */
  suggested_column: string | null;
  text_columns: TextColumnDto[];
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetClustersResult {
  clusters: ClusterDto[];
  /** @example "question" */
  column: string;
  /** @example "local-char-ngram" */
  embedder: string;
  /** @example 6 */
  k: number;
  points: VisualPointDto[];
  /**
   * pca or umap
   * @example "pca"
   */
  projection: string;
  /** @example "b780f90b-310d-41d8-a044-c965d12e0857" */
  run_id: string;
  /** @example 0.31 */
  silhouette: number | null;
}

export interface DatasetClustersRun {
  /** @example "question" */
  column: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "local-char-ngram" */
  embedder: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example "b780f90b-310d-41d8-a044-c965d12e0857" */
  id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string | null;
  /**
   * @format int64
   * @example 6
   */
  k_requested: number | null;
  /** @example null */
  progress: Record<string, any> | null;
  /** @example 42 */
  seed: number;
  /** @example "succeeded" */
  state: "queued" | "running" | "succeeded" | "failed";
  /** @example null */
  state_reason: string | null;
  /**
   * Once succeeded: the k chosen, its silhouette and the cluster count
   * @example {"k":6,"silhouette":0.31,"rows":214}
   */
  summary: {
    /** @format int64 */
    k?: number;
    /** @format int64 */
    rows?: number;
    silhouette?: number | null;
  } | null;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetDimensionsQueryResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  groups: DimensionGroupCount[];
  /**
   * Matching rows (with `_row_id` and `_dimensions`)
   * @example [{"_row_id":"0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en","_dimensions":{"topic":"account_access","customer_persona":"new_customer"}}]
   */
  items: Record<string, any>[];
  /** @example 20 */
  limit: number;
  /** @example 0 */
  offset: number;
  /**
   * Rows matching the dimension values and filter
   * @example 11
   */
  total: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetDimensionsResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  dimensions: DimensionSummary[];
  /** @example 214 */
  row_count: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetQualityVerdictResponse {
  checks: QualityCheckResultDto[];
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example 214 */
  rows_checked: number;
  /**
   * The data-operation run that produced the verdict
   * @example "05e5fc47-409a-4408-b6bc-f9483b99e829"
   */
  run_id: string;
  /**
   * fail when any check failed, else warn when any warned, else pass
   * @example "warn"
   */
  verdict: "pass" | "warn" | "fail";
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example 3 */
  version_number: number;
}

/** @example {"filter":{"and":[{"field":"language","op":"eq","value":"en"},{"field":"topic","op":"in","value":["billing","returns_refunds"]}]},"sort":[{"field":"topic","direction":"asc"}],"select":["question","answer","topic"],"limit":50,"offset":0,"include_total":true,"version_id":"89fa3cc1-e563-4ad1-af4c-d5becdca17df"} */
export interface DatasetQueryRequest {
  /**
   * `next_cursor` of the previous page of the same query
   * @maxLength 2000
   * @example "eyJvZmZzZXQiOjUwfQ"
   */
  cursor?: string;
  /**
   * A filter in the query language (docs/query-language.md): {"and": [...]}, {"or": [...]}, {"not": {...}}, or a predicate {"field": "column.path", "op": "eq|ne|lt|lte|gt|gte|in|contains|starts_with|is_null", "value": ...}; {"dimension": "topic", "op": ..., "value": ...} tests a dimension value
   * @example {"and":[{"field":"language","op":"eq","value":"en"},{"field":"topic","op":"in","value":["billing","returns_refunds"]}]}
   */
  filter?: Record<string, any>;
  /**
   * Count the matching rows, up to 10,000 (default true; false skips the count)
   * @example true
   */
  include_total?: boolean;
  /**
   * Rows per page, 1..1000
   * @min 1
   * @max 1000
   * @default 50
   * @example 50
   */
  limit?: number;
  /**
   * Rows to skip (use either offset or cursor)
   * @min 0
   * @max 100000000
   * @default 0
   * @example 0
   */
  offset?: number;
  /**
   * Columns to return (default: all); `_row_id` always comes back
   * @maxItems 200
   * @example ["question","answer","topic"]
   */
  select?: string[];
  /**
   * Sort keys, first wins; rows keep their dataset order after them
   * @maxItems 5
   * @example [{"field":"topic","direction":"asc"}]
   */
  sort?: {
    direction?: "asc" | "desc";
    /** @maxLength 1000 */
    field: string;
  }[];
  /**
   * The version to query; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id?: string;
}

export interface DatasetResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * The promoted version, if any
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  current_version_id: string | null;
  /** @example "Questions customers asked in April, with answers reviewed by the support team" */
  description: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  id: string;
  /**
   * `rows` (test cases) or `traces` (landed production traces)
   * @example "rows"
   */
  kind: "rows" | "traces";
  /** The newest version (null before the first) */
  latest_version: DatasetVersionResponse | null;
  /** @example "faq-golden-set" */
  name: string;
  /**
   * Row edits staged and not yet committed
   * @example 0
   */
  staged_edits: number;
  /** @example ["golden","faq"] */
  tags: string[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * Optimistic-concurrency counter (also in the ETag)
   * @example 5
   */
  version: number;
  /**
   * Number of versions
   * @example 3
   */
  version_count: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface DatasetResponsePage {
  items: DatasetResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface DatasetRetentionItem {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /**
   * The dataset's own setting (null: kept forever, whatever the workspace's)
   * @format int64
   * @example 7
   */
  retention_days: number | null;
}

export interface DatasetSelectableChecksResponse {
  checks: SelectableCheck[];
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetSummaryDto {
  /**
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  current_version_id: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  id: string;
  /** @example "rows" */
  kind: "rows" | "traces";
  /** @example "faq-golden-set" */
  name: string;
}

export interface DatasetTraceRetentionResponse {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /**
   * The retention that applies (null: kept forever)
   * @format int64
   * @example 7
   */
  effective_retention_days: number | null;
  /**
   * True when the dataset has no setting of its own and follows its workspace's
   * @example false
   */
  inherited: boolean;
  /**
   * The dataset's own setting; null with `inherited: false` keeps its spans forever
   * @format int64
   * @example 7
   */
  retention_days: number | null;
}

export interface DatasetVersionAvailableMetricsResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * The canonical fields mapped onto columns
   * @example {"input":"question","expected_output":"answer","context":"context"}
   */
  mapping: Record<string, any>;
  metrics: AvailableMetric[];
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DatasetVersionResponse {
  /**
   * SHA-256 over the version's rows (row id and content, in order): equal content, equal hash
   * @example "9f2c4a1be0d3c5f7a8b6e4d2c0a1f3e5b7d9c8a6f4e2d0b1c3a5e7f9d8b6c4a2"
   */
  content_sha256: string;
  /** What the commit changed, for versions made by a commit */
  changes?: VersionChangesDto;
  /**
   * Column names in order
   * @example ["question","answer","context","conversation_id","topic","language"]
   */
  columns: string[];
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  id: string;
  /** Canonical fields mapped onto columns (see POST .../map) */
  mapping: ColumnMappingDto;
  /** @example "April questions, reviewed" */
  message: string;
  /**
   * 1, 2, 3, ... per dataset
   * @example 3
   */
  number: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "ed0be736-a7bd-4869-9e2f-d6dbdd29b445"
   */
  parent_version_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  promoted_at: string | null;
  /**
   * @format date-time
   * @example null
   */
  retired_at: string | null;
  /** @example 214 */
  row_count: number;
  /**
   * How the version was made: an upload, committed row edits, rows generated by an SDG run, or landed traces
   * @example "commit"
   */
  source: "upload" | "commit" | "generated" | "landed";
  /**
   * `candidate` when created; `current` once promoted (one per dataset); `retired` once demoted
   * @example "current"
   */
  state: "candidate" | "current" | "retired";
  /** The uploaded file, for versions made by an upload */
  upload?: UploadInfoDto;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface DatasetVersionResponsePage {
  items: DatasetVersionResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface DeactivateUserParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface DeleteCustomOpParams {
  /** @maxLength 100 */
  name: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface DeleteDatasetParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface DeleteEvalConfigParams {
  /**
   * The eval config's id
   * @format uuid
   * @maxLength 36
   */
  evalConfigId: string;
}

export interface DeleteJudgeParams {
  /**
   * The judge's id
   * @format uuid
   * @maxLength 36
   */
  judgeId: string;
}

export interface DeleteMetricConfigVersionParams {
  /** @maxLength 100 */
  configName: string;
  /** @maxLength 32 */
  configVersion: string;
  /**
   * The workspace the config belongs to
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface DeleteNotificationConfigParams {
  /**
   * The notification config's id
   * @format uuid
   * @maxLength 36
   */
  notificationConfigId: string;
}

export interface DeleteOnlineAlertRuleParams {
  /**
   * The alert rule's id
   * @format uuid
   * @maxLength 36
   */
  alertRuleId: string;
}

export interface DeleteOnlineEvaluatorParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface DeletePartitionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The partition's id
   * @format uuid
   * @maxLength 36
   */
  partitionId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface DeleteRecommendationParams {
  /** @maxLength 100 */
  recommendationId: string;
  /**
   * The workspace whose recommendations (with the built-in ones) are read or changed
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface DeleteReportConfigParams {
  /**
   * The config's id
   * @format uuid
   * @maxLength 36
   */
  configId: string;
}

export interface DeleteReportPromptParams {
  /** @maxLength 100 */
  sectionKey: string;
  /**
   * The workspace
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface DeleteReportSectionParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
  /** @maxLength 100 */
  sectionKey: string;
}

export interface DeleteReviewQueueParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface DeleteRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface DeleteRowsRequest {
  /**
   * Ids of the rows to stage for deletion (1..1000)
   * @maxItems 1000
   * @minItems 1
   * @example ["69f1ff1c-e24a-4a1b-9b43-2656779f2185"]
   */
  row_ids: string[];
}

export interface DeleteSecretParams {
  /**
   * The secret's id
   * @format uuid
   * @maxLength 36
   */
  secretId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface DeleteSutConnectionParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface DeleteSutParams {
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface DeleteTraceDatasetRetentionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface DeleteTraceFeedbackParams {
  /**
   * The feedback's id
   * @format uuid
   * @maxLength 36
   */
  feedbackId: string;
}

export interface DeleteWorkspaceParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface DemoteDatasetVersionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface DetachProjectTestPlanParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface DetectConventionsRequest {
  /**
   * A sample: OTLP/JSON requests and/or span records, at most 10000
   * @maxItems 10000
   * @minItems 1
   * @example [{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-bot"}}]},"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"ChatCompletion","kind":3,"startTimeUnixNano":"1747145160000000000","endTimeUnixNano":"1747145161040000000","attributes":[{"key":"openinference.span.kind","value":{"stringValue":"LLM"}},{"key":"llm.model_name","value":{"stringValue":"gpt-4o-mini"}}]}]}]}]}]
   */
  records: Record<string, any>[];
  /**
   * Spans examined, 1..10000 (default 1000)
   * @min 1
   * @max 10000
   * @example 1000
   */
  sample?: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface DetectTraceConventionParams {
  detect: string;
}

export interface DetectTraceUploadConventionParams {
  detect: string;
  /**
   * The upload's id
   * @format uuid
   * @maxLength 36
   */
  uploadId: string;
}

export interface DetectUploadRequest {
  /**
   * Spans examined, 1..10000 (default 1000)
   * @min 1
   * @max 10000
   * @example 1000
   */
  sample?: number;
}

export interface DiffMetricSummaryDto {
  /** Judged metrics: the base run's pass rate over the diff's rows corrected for its judge (null without a validation of its config version) */
  base_corrected?: CorrectedPassRateResponse | null;
  /** @example 0.84 */
  base_mean: number | null;
  /** @example 0.91 */
  base_pass_rate: number | null;
  /** Judged metrics: the candidate's, corrected for its own judge's validation */
  candidate_corrected?: CorrectedPassRateResponse | null;
  /** @example 0.86 */
  candidate_mean: number | null;
  /** @example 0.93 */
  candidate_pass_rate: number | null;
  /** @example 0.02 */
  delta: number | null;
  /** @example 9 */
  improvements: number;
  /** @example "answer-correctness" */
  name: string;
  /** @example 4 */
  regressions: number;
}

export interface DiffRowDto {
  /** @example true */
  base_passed: boolean | null;
  /** @example false */
  candidate_passed: boolean | null;
  /** @example {"answer-correctness":{"base":0.75,"candidate":0.5,"delta":-0.25,"base_passed":true,"candidate_passed":false}} */
  metrics: Record<string, MetricDeltaDto>;
  /** @example true */
  output_changed: boolean;
  /** @example "6c861b83-60a8-4bcf-845d-126ac56874a4" */
  row_id: string;
  /** @example "regressed" */
  status:
    | "regressed"
    | "improved"
    | "unchanged"
    | "changed"
    | "new"
    | "missing";
}

export interface DiffSideDto {
  /** @example null */
  error: {
    code?: string;
    message?: string;
  } | null;
  /** @example 980 */
  latency_ms: number | null;
  /** @example "Settings > Plan > Cancel." */
  output: string | null;
  /** @example false */
  passed: boolean | null;
  /** @example {"answer-correctness":{"score":3,"normalized":0.5,"passed":false}} */
  scores: Record<string, any>;
  /** @example "done" */
  status: "pending" | "done" | "error";
}

export interface DiffStatisticsDto {
  /**
   * Significance level applied to p_adjusted
   * @example 0.05
   */
  alpha: number;
  /** The same per dimension value of the rows */
  by_dimension: DimensionComparisonDto[];
  /**
   * Level of the bootstrap intervals
   * @example 0.95
   */
  confidence: number;
  /** @example "holm" */
  correction: "holm";
  /**
   * Rows present in both runs (new and missing rows are not compared)
   * @example 214
   */
  matched_rows: number;
  /** @example [{"name":"answer-correctness","measure":"score","n":214,"status":"tested","base_mean":0.84,"candidate_mean":0.86,"mean_delta":0.02,"ci_low":-0.004,"ci_high":0.043,"test":"wilcoxon_signed_rank","method":"normal_approximation","statistic":1840,"p_value":0.11,"p_adjusted":0.33,"effect_size":{"name":"rank_biserial","value":0.21},"direction":"better","significant":false}] */
  metrics: PairedComparisonDto[];
  /** @example 10 */
  min_rows: number;
  /**
   * Row pass/fail under each run's pass rule
   * @example {"name":"row_verdict","measure":"verdict","n":214,"status":"tested","base_mean":0.91,"candidate_mean":0.93,"mean_delta":0.023,"ci_low":-0.009,"ci_high":0.056,"test":"mcnemar_exact","method":"exact","statistic":4,"p_value":0.27,"p_adjusted":0.54,"effect_size":{"name":"risk_difference","value":0.023},"direction":"better","significant":false}
   */
  row_verdict: PairedComparisonDto;
}

export interface DiffSummaryDto {
  /** @example 5 */
  changed: number;
  /** @example 9 */
  improved: number;
  metrics: DiffMetricSummaryDto[];
  /** @example 0 */
  missing: number;
  /** @example 0 */
  new: number;
  /** @example 4 */
  regressed: number;
  /** @example 214 */
  rows: number;
  /** @example 196 */
  unchanged: number;
}

export interface DimensionComparisonDto {
  /** @example "topic" */
  dimension: string;
  values: DimensionValueComparisonDto[];
}

export interface DimensionDefinition {
  /**
   * @maxLength 500
   * @example "What the customer is contacting support about."
   */
  description: string;
  /**
   * snake_case identifier, unique within the list.
   * @maxLength 64
   * @pattern ^[a-z][a-z0-9_]{0,63}$
   * @example "topic"
   */
  name: string;
  /**
   * @maxItems 50
   * @minItems 1
   */
  values: DimensionValueDefinition[];
}

export interface DimensionGroupCount {
  /** @example 11 */
  count: number;
  /**
   * The combination: dimension -> value (null when the row has none)
   * @example {"topic":"account_access","customer_persona":"new_customer"}
   */
  values: Record<string, string | null>;
}

export interface DimensionSummary {
  /**
   * Rows of the version with a value of this dimension
   * @example 201
   */
  assigned_rows: number;
  /** @example "What the customer is contacting support about" */
  description: string;
  /** @example "topic" */
  name: string;
  /**
   * Rows of the version without one
   * @example 13
   */
  unassigned_rows: number;
  values: DimensionValueCount[];
}

export interface DimensionThresholdDto {
  /**
   * A dimension name (snake_case)
   * @maxLength 64
   * @example "topic"
   */
  dimension: string;
  threshold: ThresholdDto;
  /**
   * One of the dimension's values
   * @maxLength 64
   * @example "billing"
   */
  value: string;
}

export interface DimensionThresholdResponse {
  /** @example "topic" */
  dimension: string;
  threshold: ThresholdResponse;
  /** @example "billing" */
  value: string;
}

export interface DimensionValueComparisonDto {
  /** @example [{"name":"answer-correctness","measure":"score","n":38,"status":"tested","base_mean":0.84,"candidate_mean":0.86,"mean_delta":0.02,"ci_low":-0.004,"ci_high":0.043,"test":"wilcoxon_signed_rank","method":"normal_approximation","statistic":1840,"p_value":0.11,"p_adjusted":0.33,"effect_size":{"name":"rank_biserial","value":0.21},"direction":"better","significant":false}] */
  metrics: PairedComparisonDto[];
  /** @example {"name":"row_verdict","measure":"verdict","n":38,"status":"tested","base_mean":0.91,"candidate_mean":0.93,"mean_delta":0.023,"ci_low":-0.009,"ci_high":0.056,"test":"mcnemar_exact","method":"exact","statistic":4,"p_value":0.27,"p_adjusted":0.54,"effect_size":{"name":"risk_difference","value":0.023},"direction":"better","significant":false} */
  row_verdict: PairedComparisonDto;
  /**
   * Matched rows with this value
   * @example 38
   */
  rows: number;
  /** @example "billing" */
  value: string | null;
}

export interface DimensionValueCount {
  /**
   * Rows of the version with this value
   * @example 38
   */
  count: number;
  /** @example "billing" */
  value: string;
}

export interface DimensionValueDefinition {
  /**
   * What a row with this value is about; guides people (and rules) assigning values.
   * @maxLength 500
   * @example "Invoices, charges, refunds and payment methods."
   */
  description: string;
  /**
   * snake_case identifier, unique within its dimension.
   * @maxLength 64
   * @pattern ^[a-z][a-z0-9_]{0,63}$
   * @example "billing"
   */
  value: string;
}

export interface DimensionValueEntry {
  /** @example 38 */
  count: number;
  /** @example "topic" */
  dimension: string;
  /**
   * Share of the version's rows, 0..1
   * @example 0.18
   */
  share: number;
  /** @example "billing" */
  value: string;
}

export interface DimensionValuesResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example 214 */
  row_count: number;
  values: DimensionValueEntry[];
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface DimensionsQueryRequest {
  /**
   * Dimension -> accepted values; a row matches when it has one of the values of every dimension named
   * @example {"topic":["account_access","billing"],"customer_persona":["new_customer"]}
   */
  dimensions?: Record<string, string[]>;
  /**
   * A further filter in the query language
   * @example {"field":"language","op":"eq","value":"en"}
   */
  filter?: Record<string, any>;
  /**
   * Dimensions to count the matching rows by (each combination of their values, `null` for none)
   * @maxItems 3
   * @example ["topic"]
   */
  group_by?: string[];
  /**
   * Matching rows to return (0 for counts only)
   * @min 0
   * @max 1000
   * @default 50
   * @example 20
   */
  limit?: number;
  /**
   * @min 0
   * @max 10000000
   * @example 0
   */
  offset?: number;
}

export interface DisagreementResponse {
  item: ReviewItemResponse;
  labels: ReviewLabelResponse[];
}

export interface DisagreementResponsePage {
  items: DisagreementResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface DiscardStagedRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface DownloadDatasetVersionFileParams {
  /**
   * Unix time after which the URL is refused
   * @maxLength 12
   * @pattern ^\d{1,12}$
   */
  expires: string;
  /** @maxLength 255 */
  filename: string;
  format: "csv" | "jsonl" | "parquet";
  /**
   * HMAC-SHA256 of the path, format and expiry
   * @maxLength 100
   */
  signature: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface DownloadExamplesParams {
  /** @maxLength 32 */
  version: string;
}

export interface DownloadReportContentParams {
  /** @maxLength 255 */
  filename: string;
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface DownloadReportExportParams {
  /**
   * The export's id
   * @format uuid
   * @maxLength 36
   */
  exportId: string;
  /** @maxLength 255 */
  filename: string;
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface DownloadRunParquetParams {
  /** @maxLength 255 */
  filename: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface DownloadSdkPackageParams {
  /** @maxLength 32 */
  version: string;
}

export interface DownloadSdkParams {
  /** @maxLength 32 */
  version: string;
}

export interface DroppedRecordsDto {
  /** @example 3 */
  count: number;
  /** @example "line 12" */
  example_source_ref: string;
  /** @example "missing_span_id" */
  reason:
    | "missing_trace_id"
    | "missing_span_id"
    | "invalid_id"
    | "missing_timestamps"
    | "end_before_start"
    | "malformed_record"
    | "unsupported_record"
    | "record_too_large"
    | "missing_trace_context"
    | "span_not_received"
    | "log_records_over_limit";
}

export interface EditReviewLabelParams {
  /**
   * The item's id
   * @format uuid
   * @maxLength 36
   */
  itemId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface EmbeddingConfig {
  /** @example "openai-small" */
  config_ref?: string;
  /**
   * @format int64
   * @example 512
   */
  dimensions?: number;
  /** @example "text-embedding-3-small" */
  model?: string;
  /** @example "remote" */
  provider: "local" | "remote";
}

/** @example {"provider":"remote","config_ref":"openai-small","model":"text-embedding-3-small","dimensions":512} */
export interface EmbeddingConfigRequest {
  /**
   * Name or id of the embedding config; required when provider is `remote`, refused when `local`
   * @minLength 1
   * @maxLength 200
   * @example "openai-small"
   */
  config_ref?: string;
  /**
   * Vector size, 1..8192
   * @format int32
   * @min 1
   * @max 8192
   * @example 512
   */
  dimensions?: number;
  /**
   * Model name, overriding the config's (e.g. `text-embedding-3-small`)
   * @maxLength 200
   * @pattern ^[A-Za-z0-9._:/@-]{1,200}$
   * @example "text-embedding-3-small"
   */
  model?: string;
  /**
   * `local`: the built-in embedder (no network, the default). `remote`: a config of GET /embedding-configs.
   * @example "remote"
   */
  provider: "local" | "remote";
}

export interface EmbeddingConfigResponse {
  /** @example "https://api.openai.com/v1" */
  base_url: string | null;
  /** @example 64 */
  batch_size: number;
  /**
   * True for the built-in local embedder
   * @example false
   */
  builtin: boolean;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "OpenAI small embeddings for clustering and semantic metrics" */
  description: string;
  /**
   * @format int64
   * @example 512
   */
  dimensions: number | null;
  /**
   * Null for the built-in local embedder
   * @format uuid
   * @maxLength 36
   * @example "6d206dd2-0e8b-4d3b-970b-0abf6cd1b2e0"
   */
  id: string | null;
  /**
   * Whether this is the workspace's embedding config (PUT /workspaces/{id}/embedding-config)
   * @example true
   */
  in_use: boolean;
  /** @example "text-embedding-3-small" */
  model: string;
  /** @example "openai-small" */
  name: string;
  /**
   * `local` (built in, no network) or a remote provider
   * @example "openai_compatible"
   */
  provider: "local" | "openai_compatible" | "azure_openai";
  /**
   * The secret holding the API key (never its value)
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface EmbeddingConfigResponsePage {
  items: EmbeddingConfigResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface EnrichmentFieldDto {
  /** @example "Cost of the trace in USD, from token usage and model prices" */
  description: string;
  /** @example "cost" */
  name: string;
  /** @example "number" */
  type: string;
}

/** @example {"value":0.4,"interval":{"low":0.138,"high":0.64},"reason":null} */
export interface EstimateFigureResponse {
  interval: IntervalResponse | null;
  /** @example null */
  reason: string | null;
  /** @example 0.4 */
  value: number | null;
}

export interface EvalConfigResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  default_judge_id: string | null;
  /** @example "What a release of support-bot-v2 must pass" */
  description: string;
  /** @example "fbe89949-95ca-4fae-9022-be8b4fd7304c" */
  id: string;
  metrics: EvalMetricRefResponse[];
  /** @example "support-release-gate" */
  name: string;
  pass_rule: PassRuleResponse;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface EvalConfigResponsePage {
  items: EvalConfigResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface EvalMetricRefDto {
  /**
   * A metric config of the workspace, or a built-in metric name (scored with its defaults)
   * @maxLength 100
   * @example "answer-correctness"
   */
  config_name: string;
  /**
   * Pin a version; left out or null takes the version in force when a run starts (GET .../metric-configs/resolved)
   * @format int32
   * @min 1
   * @max 2147483647
   * @example 2
   */
  config_version?: number | null;
  /**
   * Counts toward the row verdict (default true); false reports the metric only
   * @example true
   */
  gating?: boolean;
  /**
   * The run fails when fewer rows than this share (0..1) pass this metric
   * @min 0
   * @max 1
   * @example 0.9
   */
  min_pass_rate?: number | null;
  /**
   * Overrides the config's row pass threshold (deterministic and custom metrics)
   * @example 0.6
   */
  threshold?: number | null;
}

export interface EvalMetricRefResponse {
  /** @example "answer-correctness" */
  config_name: string;
  /**
   * @format int64
   * @example 2
   */
  config_version: number | null;
  /** @example true */
  gating: boolean;
  /** @example 0.9 */
  min_pass_rate: number | null;
  /** @example null */
  threshold: number | null;
}

export interface EvaluatorBudgetDto {
  /**
   * Judge cost per rolling day in USD, at most, priced from the tokens the judge reports; null: no limit
   * @min 0.01
   * @max 1000000
   * @example 5
   */
  cost_per_day_usd?: number | null;
  /**
   * Targets with judged metrics scored per rolling hour, at most (each calls every judged metric's judge once); null: no limit
   * @format int32
   * @min 1
   * @max 1000000
   * @example 600
   */
  judge_calls_per_hour?: number | null;
}

export interface EvaluatorMetricDto {
  /**
   * A metric config of the workspace or a built-in metric (`exact_match`, `answer_relevancy`, …)
   * @minLength 1
   * @maxLength 200
   * @example "helpfulness"
   */
  name: string;
  /**
   * Over the metric config's threshold: the score at which a target passes
   * @example null
   */
  threshold?: number | null;
}

export interface EvaluatorProgress {
  /**
   * The ordinal of the last span read from the dataset
   * @example 18234
   */
  cursor_ordinal: number;
  /** @example 18235 */
  spans_read: number;
  /**
   * Targets the filter matched and the sampling rate took, each once
   * @example 415
   */
  targets_sampled: number;
  /**
   * Traces whose root span was read (each trace once)
   * @example 4120
   */
  traces_seen: number;
}

export interface EvaluatorRouteDto {
  /**
   * A test-case dataset: failing targets become staged rows (input, output, trace_id, scores), committed by a member
   * @format uuid
   * @maxLength 36
   * @example null
   */
  dataset_id?: string | null;
  /**
   * The metric whose failure routes a target (null: any metric's)
   * @maxLength 200
   * @example "helpfulness"
   */
  metric?: string | null;
  /**
   * A review queue of kind traces (or sessions) over this dataset: failing targets become its items
   * @format uuid
   * @maxLength 36
   * @example null
   */
  review_queue_id?: string | null;
}

export interface EvaluatorSpecResponse {
  budget: EvaluatorBudgetDto;
  /** @example null */
  filter: Record<string, any> | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id: string | null;
  /** @example "trace" */
  level: "span" | "trace" | "session";
  /** The mapping as given (absent fields read their defaults) */
  mapping: TargetMappingDto;
  metrics: EvaluatorMetricDto[];
  /** @example 30 */
  quiet_seconds: number;
  route: EvaluatorRouteDto | null;
  /** @example 0.1 */
  sampling_rate: number;
}

export interface EvaluatorTargetCounts {
  /**
   * A metric could not score it and it was given up
   * @example 0
   */
  failed: number;
  /**
   * Sampled, waiting to be complete or to be scored
   * @example 3
   */
  pending: number;
  /** @example 412 */
  scored: number;
  /**
   * Not scored on purpose: over budget, superseded by a newer version, gone from the dataset
   * @example 0
   */
  skipped: number;
}

export interface EvaluatorTargetResponse {
  /** @example 1 */
  attempts: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example null
   */
  backfill_id: string | null;
  /**
   * Whether its end was seen (a trace's root span ended)
   * @example true
   */
  complete: boolean;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example 1 */
  evaluator_version: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  finished_at: string | null;
  /** @example "trace" */
  level: "span" | "trace" | "session";
  /** @example "continuous" */
  origin: "continuous" | "backfill";
  /**
   * Why it was skipped or failed, or why it waits
   * @example null
   */
  reason: string | null;
  /** @example null */
  session_id: string | null;
  /** @example null */
  span_id: string | null;
  /** @example "scored" */
  state: "pending" | "scored" | "skipped" | "failed";
  /**
   * The trace id, `trace_id/span_id` for a span, or the session id
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  target_key: string;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string | null;
}

export interface EvaluatorTargetResponsePage {
  items: EvaluatorTargetResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface EvaluatorVersionList {
  items: EvaluatorVersionResponse[];
}

export interface EvaluatorVersionResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  spec: EvaluatorSpecResponse;
  /** @example 1 */
  version: number;
}

export interface ExportAuditEventsParams {
  /**
   * Events with exactly this action, e.g. `member.role_changed`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action?: string;
  /**
   * Events whose action starts with this, e.g. `member.` or `api_key`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action_prefix?: string;
  /**
   * Events of this user (the actor's id)
   * @format uuid
   * @maxLength 36
   */
  actor_id?: string;
  /** `jsonl` (JSON Lines, one event a line) or `csv`; wins over the Accept header */
  format?: "jsonl" | "csv";
  /**
   * Events recorded at or after this instant (ISO 8601)
   * @maxLength 40
   */
  from?: string;
  /**
   * Events about this record (its id)
   * @maxLength 200
   */
  target_id?: string;
  /**
   * Events about records of this kind, e.g. `secret`, `member`, `dataset`
   * @maxLength 64
   * @pattern ^[a-z0-9_]+$
   */
  target_type?: string;
  /**
   * Events recorded before this instant (ISO 8601)
   * @maxLength 40
   */
  to?: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

/**
 * An ExportLogsServiceRequest, binary protobuf (opentelemetry-proto), optionally gzip-compressed (Content-Encoding: gzip); at most OTLP_MAX_BYTES (default 16 MiB) decompressed
 * @format binary
 * @maxLength 16777216
 */
export type ExportOtlpLogsPayload = File;

/**
 * An ExportTraceServiceRequest, binary protobuf (opentelemetry-proto), optionally gzip-compressed (Content-Encoding: gzip); at most OTLP_MAX_BYTES (default 16 MiB) decompressed
 * @format binary
 * @maxLength 16777216
 */
export type ExportOtlpTracesPayload = File;

export interface ExportReportParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface ExportReportRequest {
  /**
   * markdown, html or pdf (default: the workspace settings' default format)
   * @example "pdf"
   */
  format?: "markdown" | "html" | "pdf";
}

export interface ExportReviewLabelsParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ExportRunDiffParams {
  /**
   * Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * The run compared against (e.g. the last release)
   * @format uuid
   * @maxLength 36
   */
  base: string;
  /**
   * The run under review
   * @format uuid
   * @maxLength 36
   */
  candidate: string;
  /** csv (one line per row, a base/candidate/delta column triple per metric) or json (summary and every row); default csv */
  format?: "csv" | "json";
  /**
   * Rows per page, 1..1000 (default 100)
   * @min 1
   * @max 1000
   */
  limit?: number;
  /**
   * Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10)
   * @min 2
   * @max 10000
   * @example 10
   */
  min_rows?: number;
  /**
   * @min 0
   * @max 10000000
   */
  offset?: number;
  /** Only rows of this status */
  status?:
    | "regressed"
    | "improved"
    | "unchanged"
    | "changed"
    | "new"
    | "missing";
  /**
   * A score move smaller than this is no move (default 1e-9)
   * @min 0
   * @max 1000000
   */
  tolerance?: number;
}

export interface ExportSystemAuditEventsParams {
  /**
   * Events with exactly this action, e.g. `member.role_changed`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action?: string;
  /**
   * Events whose action starts with this, e.g. `member.` or `api_key`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action_prefix?: string;
  /**
   * Events of this user (the actor's id)
   * @format uuid
   * @maxLength 36
   */
  actor_id?: string;
  /** `jsonl` (JSON Lines, one event a line) or `csv`; wins over the Accept header */
  format?: "jsonl" | "csv";
  /**
   * Events recorded at or after this instant (ISO 8601)
   * @maxLength 40
   */
  from?: string;
  /**
   * Events about this record (its id)
   * @maxLength 200
   */
  target_id?: string;
  /**
   * Events about records of this kind, e.g. `secret`, `member`, `dataset`
   * @maxLength 64
   * @pattern ^[a-z0-9_]+$
   */
  target_type?: string;
  /**
   * Events recorded before this instant (ISO 8601)
   * @maxLength 40
   */
  to?: string;
}

export interface ExtractedOutputDto {
  /** @example 0.00041 */
  cost_usd: number | null;
  /** @example {"sources":["kb/security/reset-password"]} */
  extras: Record<string, any>;
  /** @example "Open Settings > Security and choose Reset password; the link expires after one hour." */
  output: string | null;
  /**
   * The tool calls and steps the answer shows (docs/suts.md: trajectories); null when it shows none
   * @example {"source":"response","steps":[{"type":"tool_call","name":"search_kb","arguments":{"query":"reset password"},"output":["kb/security/reset-password"],"call_id":"call_1"}]}
   */
  trajectory: Record<string, any> | null;
  usage: TokenUsageDto;
}

export interface FeedbackItem {
  /**
   * Makes the post safe to retry: the same key with the same content answers the stored feedback again (1 .. 200 printable characters)
   * @minLength 1
   * @maxLength 200
   * @pattern ^[\x21-\x7E]+$
   * @example "fb-7f3c9a2e-0d41-4b8e-9a6c-2e5d1f0b7c34"
   */
  client_key?: string;
  /**
   * The end user's words, up to 4000 characters
   * @maxLength 4000
   * @example "The reset link in the answer had expired."
   */
  comment?: string;
  /**
   * A small object kept as it is (at most 50 members, 8 KiB as JSON)
   * @example {"channel":"web-widget","app_version":"3.14.0"}
   */
  metadata?: Record<string, any>;
  /**
   * What is judged (`thumbs`, `user_rating`, `resolved`): a letter or digit, then letters, digits and - _ . : /
   * @minLength 1
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9_.:/-]*$
   * @example "thumbs"
   */
  name: string;
  /**
   * One span of the trace: 16 hex characters, or a source's own id
   * @minLength 1
   * @maxLength 128
   * @example "00f067aa0ba902b7"
   */
  span_id?: string;
  /**
   * The trace: 32 hex characters as OpenTelemetry writes it (upper case is lowered), or a source's own id
   * @minLength 1
   * @maxLength 128
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id: string;
  /**
   * The end user's id in the application (not a user of this service)
   * @minLength 1
   * @maxLength 200
   * @example "customer-40912"
   */
  user_ref?: string;
  /**
   * A boolean (thumbs up: true), a finite number (a score) or a string of 1 .. 200 characters (a category)
   * @example false
   */
  value: number | boolean | string;
}

export interface FeedbackSelectionDto {
  /**
   * Scores at most this
   * @example 2
   */
  max?: number;
  /**
   * Scores at least this
   * @example 1
   */
  min?: number;
  /**
   * The feedback's name (e.g. `thumbs`, `user_rating`)
   * @minLength 1
   * @maxLength 100
   * @example "thumbs"
   */
  name: string;
  /**
   * Equal to this value: a thumbs' boolean, a score, a category
   * @example false
   */
  value?: number | boolean | string;
}

export interface FieldAgreementResponse {
  /**
   * {value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it
   * @example {"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}
   */
  cohens_kappa: Record<string, any>;
  /** @example 7 */
  disagreements: number;
  /** @example "correct" */
  field: string;
  /**
   * {value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it
   * @example {"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}
   */
  fleiss_kappa: Record<string, any>;
  /**
   * By level of measurement: `nominal` for pass/fail and categorical, `interval` and `ordinal` for numeric
   * @example {"nominal":{"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}}
   */
  krippendorff_alpha: Record<string, any>;
  per_reviewer: ReviewerAgreementResponse[];
  /**
   * {value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it
   * @example {"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}
   */
  percent_agreement: Record<string, any>;
  /** @example 60 */
  rated_items: number;
  /** @example "pass_fail" */
  type: "pass_fail" | "categorical" | "numeric" | "free_text";
}

export interface FieldMappingDto {
  /**
   * Share of the sampled spans whose field was filled, 0..1
   * @example 0.97
   */
  coverage: number;
  /**
   * A canonical span field
   * @example "model"
   */
  field: string;
  /**
   * Source attributes that filled it
   * @example ["llm.model_name","gen_ai.request.model"]
   */
  source_attributes: string[];
  /** @example 812 */
  spans_mapped: number;
}

export interface FinalLabelResponse {
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  finalised_at: string;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52" */
  item_id: string;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60" */
  ref: string;
  /** @example 1 */
  rubric_version: number;
  /** @example null */
  run_id: string | null;
  /** @example "consensus" */
  source: "consensus" | "adjudication";
  /** @example {"correct":true,"tone":"warm","helpfulness":4} */
  values: Record<string, any>;
}

export interface FinalLabelResponsePage {
  items: FinalLabelResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface GateCheckDto {
  /**
   * Whether a failure fails the gate (a non-blocking failure is a warning)
   * @example true
   */
  blocking: boolean;
  /** @example null */
  ci_high: number | null;
  /** @example null */
  ci_low: number | null;
  /** @example "topic" */
  dimension: string | null;
  /**
   * run_state (the run succeeded), threshold (a metric's mean), dimension_threshold (its mean on one dimension value), release_rule (min_metrics_passing), metric_pass_rate (without a test plan: a metric's min_pass_rate of the run's pass rule), row_pass_rate, regression (against the baseline), judge_validity (the plan requires the judge's validation against human labels), corrected_pass_rate (for information: a validated judge's pass rate corrected for its errors, with its interval in ci_low..ci_high)
   * @example "dimension_threshold"
   */
  kind:
    | "run_state"
    | "threshold"
    | "dimension_threshold"
    | "release_rule"
    | "metric_pass_rate"
    | "row_pass_rate"
    | "regression"
    | "judge_validity"
    | "corrected_pass_rate";
  /**
   * Regressions: candidate - baseline over the matched rows, its 95% bootstrap interval and the paired test
   * @example null
   */
  mean_delta: number | null;
  /** @example "answer-correctness on topic=billing: mean 0.42 misses >= 0.9" */
  message: string;
  /**
   * The metric (`row_verdict` for the rows' pass/fail)
   * @example "answer-correctness"
   */
  metric: string | null;
  /**
   * The run's value (a mean, a pass rate, a count of metrics passing)
   * @example 0.42
   */
  observed: number | null;
  /** @example ">=" */
  operator: ">=" | "<=" | null;
  /** @example null */
  p_adjusted: number | null;
  /** @example null */
  p_value: number | null;
  /**
   * skipped: nothing to check (no rows of the value, too few rows to test)
   * @example "fail"
   */
  status: "pass" | "fail" | "skipped";
  /** @example 0.9 */
  threshold: number | null;
  /** @example "billing" */
  value: string | null;
}

export interface GateResponse {
  /** @example 0.05 */
  alpha: number;
  /** @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2" */
  baseline_run_id: string | null;
  /** Every check, in order: run state, thresholds (each metric, then its dimension values) and release rule, or the run's pass rule without a plan; row pass rate; regressions */
  checks: GateCheckDto[];
  /**
   * Blocking checks that failed
   * @example 1
   */
  failures: number;
  /**
   * The project whose plan judged the run; null when none was named or found
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  project_id: string | null;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /** The test plan version that judged the run; null: the run's own pass rule did (the project carries no plan, or no project links the run) */
  test_plan: GateTestPlanDto | null;
  /**
   * fail when any blocking check failed
   * @example "fail"
   */
  verdict: "pass" | "fail";
  /**
   * Non-blocking checks that failed
   * @example 0
   */
  warnings: number;
}

export interface GateTestPlanDto {
  /** @example "fff19340-5181-49eb-ab99-294933175b23" */
  id: string;
  /** @example "support-release-plan" */
  name: string;
  /** @example 2 */
  version: number;
}

export interface GateVerdictResponse {
  /** @example 0.05 */
  alpha: number;
  /**
   * The run compared with; null without a baseline (or when that run was deleted since)
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  baseline_run_id: string | null;
  /**
   * Blocking checks that failed
   * @example 0
   */
  failures: number;
  /** @example "5c3e9d1a-7b2f-4e8a-9c6d-0f1e2a3b4c5d" */
  id: string;
  /**
   * The label the verdict was recorded with (a branch such as `main`); null without one
   * @example "main"
   */
  label: string | null;
  /**
   * The minimum of matched rows asked for (null: the default, 10)
   * @format int64
   * @example null
   */
  min_rows: number | null;
  /** @example 8 */
  passed: number;
  /**
   * The project whose test plan judged the run; null when none did
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  project_id: string | null;
  /** @example "2025-05-13T14:05:12.000Z" */
  recorded_at: string;
  /**
   * Who recorded it (the user, or the creator of the API key used)
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  recorded_by: string | null;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /** @example 1 */
  skipped: number;
  /**
   * The test plan version that judged the run; all three null: the run's own pass rule did
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  test_plan_id: string | null;
  /** @example "support-release-plan" */
  test_plan_name: string | null;
  /**
   * @format int64
   * @example 2
   */
  test_plan_version: number | null;
  /** @example "pass" */
  verdict: "pass" | "fail";
  /**
   * Non-blocking checks that failed
   * @example 1
   */
  warnings: number;
}

export interface GetAnalysisRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetAnalysisSchemaParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetAnnotationAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetApiKeyParams {
  /**
   * The api key's id
   * @format uuid
   * @maxLength 36
   */
  apiKeyId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GetAuditRetentionParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GetClusterRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetClusterRunResultParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetClusteringAvailabilityParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetConnectionAdapterParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface GetCustomOpParams {
  /** @maxLength 100 */
  name: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GetDatasetDownloadUrlParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Lifetime of the URL in seconds, 10..604800 (default SIGNED_URL_TTL_SECONDS, 3600)
   * @min 10
   * @max 604800
   */
  expires_in?: number;
  /** @default "csv" */
  format?: "csv" | "jsonl" | "parquet";
  /**
   * The version to download; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   */
  version_id?: string;
}

export interface GetDatasetParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface GetDatasetSchemaParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version to describe; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   */
  version_id?: string;
}

export interface GetDatasetVersionDownloadUrlParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Lifetime of the URL in seconds, 10..604800 (default SIGNED_URL_TTL_SECONDS, 3600)
   * @min 10
   * @max 604800
   */
  expires_in?: number;
  /** @default "csv" */
  format?: "csv" | "jsonl" | "parquet";
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetDatasetVersionParams {
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetDatasetVersionResponse {
  /**
   * SHA-256 over the version's rows (row id and content, in order): equal content, equal hash
   * @example "9f2c4a1be0d3c5f7a8b6e4d2c0a1f3e5b7d9c8a6f4e2d0b1c3a5e7f9d8b6c4a2"
   */
  content_sha256: string;
  /** What the commit changed, for versions made by a commit */
  changes?: VersionChangesDto;
  /**
   * Column names in order
   * @example ["question","answer","context","conversation_id","topic","language"]
   */
  columns: string[];
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** The dataset the version belongs to */
  dataset: DatasetSummaryDto;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  id: string;
  /** Canonical fields mapped onto columns (see POST .../map) */
  mapping: ColumnMappingDto;
  /** @example "April questions, reviewed" */
  message: string;
  /**
   * 1, 2, 3, ... per dataset
   * @example 3
   */
  number: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "ed0be736-a7bd-4869-9e2f-d6dbdd29b445"
   */
  parent_version_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  promoted_at: string | null;
  /**
   * @format date-time
   * @example null
   */
  retired_at: string | null;
  /** @example 214 */
  row_count: number;
  /** Inferred column types and statistics */
  schema: ColumnStatsDto[];
  /**
   * How the version was made: an upload, committed row edits, rows generated by an SDG run, or landed traces
   * @example "commit"
   */
  source: "upload" | "commit" | "generated" | "landed";
  /**
   * `candidate` when created; `current` once promoted (one per dataset); `retired` once demoted
   * @example "current"
   */
  state: "candidate" | "current" | "retired";
  /** The uploaded file, for versions made by an upload */
  upload?: UploadInfoDto;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface GetEmbeddingConfigParams {
  /** @maxLength 100 */
  configRef: string;
  /**
   * The workspace whose configurations these are
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetEvalConfigParams {
  /**
   * The eval config's id
   * @format uuid
   * @maxLength 36
   */
  evalConfigId: string;
}

export interface GetJudgeParams {
  /**
   * The judge's id
   * @format uuid
   * @maxLength 36
   */
  judgeId: string;
}

export interface GetJudgeValidationComparisonParams {
  compare: string;
  /**
   * The workspace the config belongs to
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetJudgeValidationParams {
  /**
   * The validation's id
   * @format uuid
   * @maxLength 36
   */
  validationId: string;
}

export interface GetLatestClusterRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetLatestQualityVerdictParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetMetricConfigVersionParams {
  /** @maxLength 100 */
  configName: string;
  /** @maxLength 32 */
  configVersion: string;
  /**
   * The workspace the config belongs to
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetOnlineAlertRuleParams {
  /**
   * The alert rule's id
   * @format uuid
   * @maxLength 36
   */
  alertRuleId: string;
}

export interface GetOnlineBackfillParams {
  /**
   * The backfill's id
   * @format uuid
   * @maxLength 36
   */
  backfillId: string;
}

export interface GetOnlineEvaluatorParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface GetOpSchemaParams {
  /** @maxLength 100 */
  name: string;
  /**
   * A registered op's version (default the newest)
   * @min 1
   * @max 2147483647
   */
  version?: number;
  /**
   * The workspace whose operations to read
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetProjectCoverageParams {
  /**
   * A value is a gap when fewer rows than this cover it (1..100000, default 1)
   * @min 1
   * @max 100000
   */
  min_rows?: number;
  /**
   * Dimension pairs to cross, comma-separated `a:b` (at most 5), e.g. `topic:persona,topic:language`
   * @maxLength 701
   * @pattern ^[a-z][a-z0-9_:,]{0,700}$
   */
  pairs?: string;
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface GetProjectParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface GetProjectTrendParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface GetQualityCheckRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetRecommendationParams {
  /** @maxLength 100 */
  recommendationId: string;
  /**
   * The workspace whose recommendations (with the built-in ones) are read or changed
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetRegisteredOpParams {
  /** @maxLength 100 */
  name: string;
  /**
   * The workspace whose operations to read
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetReportConfigParams {
  /**
   * The config's id
   * @format uuid
   * @maxLength 36
   */
  configId: string;
}

export interface GetReportContentParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface GetReportContentUrlParams {
  /** markdown (default) or html */
  format?: "markdown" | "html";
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface GetReportDownloadUrlParams {
  /** The format (default: the workspace settings' default format for downloads, markdown for content URLs) */
  format?: "markdown" | "html" | "pdf";
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface GetReportParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface GetReportPromptParams {
  /** @maxLength 100 */
  sectionKey: string;
  /**
   * The workspace
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetReportSectionParams {
  /** @maxLength 100 */
  key: string;
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface GetReportSettingsParams {
  /**
   * The workspace
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetReviewAgreementParams {
  /**
   * Confidence level of the intervals, 0.5..0.999 (default 0.95)
   * @min 0.5
   * @max 0.999
   * @example 0.95
   */
  confidence?: number;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
  /**
   * Seed of the bootstrap intervals over items; absent: no intervals
   * @min 0
   * @max 2147483647
   * @example 42
   */
  seed?: number;
}

export interface GetReviewJudgeRunParams {
  /**
   * The judge run's id
   * @format uuid
   * @maxLength 36
   */
  judgeRunId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface GetReviewQueueParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface GetRunDiffParams {
  /**
   * Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * The run compared against (e.g. the last release)
   * @format uuid
   * @maxLength 36
   */
  base: string;
  /**
   * The run under review
   * @format uuid
   * @maxLength 36
   */
  candidate: string;
  /**
   * Rows per page, 1..1000 (default 100)
   * @min 1
   * @max 1000
   */
  limit?: number;
  /**
   * Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10)
   * @min 2
   * @max 10000
   * @example 10
   */
  min_rows?: number;
  /**
   * @min 0
   * @max 10000000
   */
  offset?: number;
  /** Only rows of this status */
  status?:
    | "regressed"
    | "improved"
    | "unchanged"
    | "changed"
    | "new"
    | "missing";
  /**
   * A score move smaller than this is no move (default 1e-9)
   * @min 0
   * @max 1000000
   */
  tolerance?: number;
}

export interface GetRunDiffRowImageParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  base: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  candidate: string;
  /**
   * The dataset row
   * @format uuid
   * @maxLength 36
   */
  row_id: string;
}

export interface GetRunDiffRowParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  base: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  candidate: string;
  /**
   * The dataset row
   * @format uuid
   * @maxLength 36
   */
  row_id: string;
}

export interface GetRunFailureAnalysisParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetRunGateParams {
  /**
   * Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * A run to compare against (the last release): the gate fails on a significant regression of a gating metric or the row verdict, overall or on a dimension value
   * @format uuid
   * @maxLength 36
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  baseline_run_id?: string;
  /** json (default), markdown (a pull-request comment) or junit (JUnit XML); wins over the Accept header (application/json, text/markdown, application/xml) */
  format?: "json" | "markdown" | "junit";
  /**
   * Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10)
   * @min 2
   * @max 10000
   * @example 10
   */
  min_rows?: number;
  /**
   * The project whose test plan judges the run (default: the one project with a test plan linking the run's SUT or dataset; without one, the run's own pass rule judges)
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  project_id?: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetRunParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetRunParquetUrlParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetRunQueueParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetRunResultsSummaryParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetRunSessionParams {
  /** @maxLength 1000 */
  parentId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetSdgAdapterParams {
  /**
   * The adapter's id
   * @format uuid
   * @maxLength 36
   */
  adapterId: string;
}

export interface GetSdgRunParams {
  /**
   * The adapter's id
   * @format uuid
   * @maxLength 36
   */
  adapterId: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetSecretParams {
  /**
   * The secret's id
   * @format uuid
   * @maxLength 36
   */
  secretId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GetSutParams {
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface GetTemplateParams {
  /** @maxLength 100 */
  name: string;
}

export interface GetTestPlanParams {
  /** @maxLength 100 */
  ref: string;
  /**
   * The workspace the plan belongs to ({ref} may be a name, unique only in its workspace)
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetTestPlanVersionParams {
  /** @maxLength 100 */
  ref: string;
  /** @maxLength 32 */
  version: string;
  /**
   * The workspace the plan belongs to ({ref} may be a name, unique only in its workspace)
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface GetTextAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetTraceDatasetRetentionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface GetTraceEnrichmentParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetTraceFeedbackParams {
  /**
   * The feedback's id
   * @format uuid
   * @maxLength 36
   */
  feedbackId: string;
}

export interface GetTraceGroundTruthParams {
  /**
   * A ground-truth version number (default: the newest)
   * @min 1
   * @max 2147483647
   */
  number?: number;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetTraceLandingRunParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface GetTraceLiveStreamParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface GetTraceRetentionParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GetTraceScoreAggregatesParams {
  aggregate: string;
  /**
   * `hour` or `day` (aligned to UTC midnight; at most 1000 in the window), or `none`: the whole window (default)
   * @default "none"
   */
  bucket?: "hour" | "day" | "none";
  /**
   * Only scores of this dataset of the workspace
   * @format uuid
   * @maxLength 36
   */
  dataset_id?: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "3f2a9c1e-7b4d-4e8a-9c61-0d5e2f7a8b90"
   */
  evaluator_id: string;
  /**
   * Only this version of the evaluator (default: every version, so a trace two versions scored counts twice)
   * @min 1
   * @max 1000000
   * @example 3
   */
  evaluator_version?: number;
  /**
   * The window's start (inclusive), by the traces' start time
   * @format date-time
   * @maxLength 64
   * @example "2026-11-01T00:00:00Z"
   */
  from: string;
  /** Split each bucket by the trace's service, its model, or each of its tags (a trace of two tags counts in both) */
  group_by?: "service" | "model" | "tag";
  /**
   * @maxLength 200
   * @example "helpfulness"
   */
  metric: string;
  /**
   * The window's end (exclusive)
   * @format date-time
   * @maxLength 64
   * @example "2026-11-08T00:00:00Z"
   */
  to: string;
  /**
   * The workspace, with a user's token (an API key's own workspace is used otherwise)
   * @format uuid
   * @maxLength 36
   */
  workspace_id?: string;
}

export interface GetTraceTopologyParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Only traces with this tag
   * @maxLength 100
   */
  tag?: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetUserParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface GetVisualAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface GetWorkspaceParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface GroundTruthExportDto {
  /**
   * The free-text rubric field holding each trace's expected output
   * @minLength 1
   * @maxLength 64
   * @example "expected_answer"
   */
  expected_output_field: string;
  /**
   * The ground truth's message (default: the queue's name)
   * @maxLength 2000
   * @example "Refund conversations confirmed in review"
   */
  message?: string;
}

export interface GroundTruthItem {
  /**
   * text or any JSON value
   * @example "Your refund was issued on 12 May and reaches your card within 5 business days."
   */
  expected_output: string | number | boolean | Record<string, any> | any[];
  /**
   * Labels of the expectation (e.g. `resolved`, `escalate`)
   * @example {"outcome":"resolved"}
   */
  labels?: Record<string, any>;
  /**
   * @maxLength 4000
   * @example "Checked against the billing system"
   */
  notes?: string;
  /**
   * A trace of the version
   * @minLength 1
   * @maxLength 200
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id: string;
}

export interface HttpTransportDto {
  /**
   * Static headers sent with every call (templated headers are the adapter's); put keys in `auth`, never here
   * @example {"X-Client":"evaluation-workspace"}
   */
  headers?: Record<string, string>;
  /**
   * @default "POST"
   * @example "POST"
   */
  method?: "POST" | "PUT" | "PATCH" | "GET";
  /**
   * The endpoint, http or https
   * @format uri
   * @maxLength 2000
   * @example "https://support-bot.example.com/v2/answer"
   */
  url: string;
}

export interface HttpTransportResponse {
  /** @example {} */
  headers: Record<string, string>;
  /** @example "POST" */
  method: "POST" | "PUT" | "PATCH" | "GET";
  /** @example "https://support-bot.example.com/v2/answer" */
  url: string;
}

export interface HumanAgreementResponse {
  fleiss_kappa: EstimateFigureResponse;
  /**
   * Items labelled by at least two reviewers
   * @format int64
   * @example 50
   */
  items: number;
  percent_agreement: EstimateFigureResponse;
  /**
   * @format int64
   * @example 3
   */
  reviewers: number;
}

export interface HumanLabelDto {
  /**
   * Each reviewer's label, when several reviewed the row (their agreement is the ceiling; at most 10)
   * @maxItems 10
   * @example ["pass","pass","fail"]
   */
  reviews?: (string | number | boolean)[];
  /**
   * A row of the run
   * @maxLength 200
   * @example "row-17"
   */
  row_id: string;
  /**
   * The final human label of the row
   * @example "pass"
   */
  value: string | number | boolean;
}

export interface HumanLabelsSourceDto {
  /**
   * A column of the rows' data holding the human label (e.g. `human_verdict`)
   * @maxLength 100
   * @example "human_verdict"
   */
  field?: string;
  /**
   * Labels per row (at most 10,000)
   * @maxItems 10000
   * @minItems 1
   */
  labels?: HumanLabelDto[];
  /**
   * The values meaning pass (compared as text, case-insensitively; at most 50). Without it: true,
   * `pass`, `passed`, `yes`, `true`, `1` pass and false, `fail`, `failed`, `no`, `false`, `0` fail;
   * a number on a numeric judge scale passes as the judge's threshold would pass it.
   * @maxItems 50
   * @minItems 1
   * @example ["pass","good"]
   */
  positive?: (string | number | boolean)[];
  /**
   * Other columns holding other reviewers' labels of the same rows (with `field`; at most 9)
   * @maxItems 9
   * @example ["reviewer_b"]
   */
  reviewer_fields?: string[];
}

export interface IngestCountsDto {
  /**
   * Spans already in the dataset (or twice in this source): not written again
   * @example 24
   */
  deduplicated: number;
  /**
   * Records that could not be normalised: see /drops
   * @example 3
   */
  dropped: number;
  /**
   * New spans written to the version
   * @example 1180
   */
  landed: number;
  /**
   * Spans acknowledged and not landed yet: only a live stream (`source.kind: otlp`) has any
   * @example 0
   */
  pending: number;
  /**
   * Spans and records read (received = landed + deduplicated + dropped + pending)
   * @example 1207
   */
  received: number;
}

export interface IngestSourceDto {
  /** @example null */
  connection_id: string | null;
  /**
   * `otlp`: the dataset's live stream of spans exported to POST /v1/traces (one run per dataset, running while it receives)
   * @example "upload"
   */
  kind: "upload" | "inline" | "connection" | "otlp";
  /** @example "1c2cf2f5-dcc2-4610-b190-6e541af34b2c" */
  upload_id: string | null;
}

export interface InsertRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface InsertRowsRequest {
  /**
   * Rows to stage for insertion (1..1000), each a JSON object of columns; a `_row_id` (UUID) is kept as the row's id, else one is assigned
   * @maxItems 1000
   * @minItems 1
   * @example [{"question":"Can I change my billing date?","answer":"Yes: Settings > Billing > Billing date, once per month.","topic":"billing","language":"en"}]
   */
  rows: Record<string, any>[];
}

export interface IntervalDto {
  /** @example -0.04 */
  high: number;
  /** @example -0.159 */
  low: number;
}

export interface IntervalResponse {
  /** @example 0.911 */
  high: number;
  /** @example 0.609 */
  low: number;
}

export interface InvitationResponse {
  /**
   * @format date-time
   * @example null
   */
  accepted_at: string | null;
  /** @example null */
  accepted_by: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "grace.hopper@example.com" */
  email: string;
  /**
   * @format date-time
   * @example "2025-05-20T09:30:00.000Z"
   */
  expires_at: string;
  /** @example "67dde1eb-57e4-4070-bf3f-db08d2f03590" */
  id: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  invited_by: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  last_sent_at: string;
  /**
   * @format date-time
   * @example null
   */
  revoked_at: string | null;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /** @example 1 */
  sent_count: number;
  /**
   * `expired` is a pending invitation past expires_at
   * @example "pending"
   */
  state: "pending" | "accepted" | "revoked" | "expired";
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface IssueResetTokenParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface IssueSsoTokenParams {
  /**
   * Google's account index; not used.
   * @maxLength 20
   * @example "0"
   */
  authuser?: string;
  /**
   * @maxLength 4096
   * @example "Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jx"
   */
  code?: string;
  /**
   * The provider's error code (`access_denied`, `login_required`…) when the login did not succeed.
   * @maxLength 200
   * @example "access_denied"
   */
  error?: string;
  /**
   * @maxLength 2000
   * @example "The user cancelled the login"
   */
  error_description?: string;
  /**
   * @maxLength 2000
   * @example "https://idp.example.com/errors/access_denied"
   */
  error_uri?: string;
  /**
   * Google's hosted domain; not used.
   * @maxLength 253
   * @example "example.com"
   */
  hd?: string;
  /**
   * The issuer that answered (RFC 9207); checked against the configured one.
   * @maxLength 2000
   * @example "https://idp.example.com/realms/evals"
   */
  iss?: string;
  /**
   * The prompt the provider showed (Google); not used.
   * @maxLength 200
   * @example "consent"
   */
  prompt?: string;
  /**
   * The scopes granted (Google); not used.
   * @maxLength 2000
   * @example "openid email profile"
   */
  scope?: string;
  /**
   * The provider's session (Keycloak, Entra ID); not used.
   * @maxLength 2000
   * @example "7d1f3c1e-2b0a-4a4e-9a1c-3f0b6e2d9c11"
   */
  session_state?: string;
  /**
   * @maxLength 512
   * @example "f0QvZ3NQb2NmR1hLbXVyUjZjZ2RfQ2hhbmdlTWU"
   */
  state?: string;
}

export interface JudgeConnectionResponse {
  /** @example null */
  api_version: string | null;
  /** @example "https://api.openai.com/v1" */
  base_url: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Grades answers for correctness and faithfulness" */
  description: string;
  /** @example "e171b466-fde7-4636-a3d1-b73872eb9e36" */
  id: string;
  /** @example true */
  json_mode: boolean;
  /** @example 3 */
  max_attempts: number;
  /** @example 4 */
  max_concurrency: number;
  /** @example "gpt-4o-mini" */
  model: string;
  /** @example "gpt-4o-mini-judge" */
  name: string;
  /** @example {"temperature":0,"max_tokens":512} */
  parameters: Record<string, any>;
  /** @example "openai_compatible" */
  provider: "openai_compatible" | "azure_openai" | "anthropic";
  /**
   * The secret holding the key (its value never appears here)
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id: string | null;
  /** @example 60000 */
  timeout_ms: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface JudgeConnectionResponsePage {
  items: JudgeConnectionResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface JudgeErrorDto {
  /**
   * timeout, network, http_status, malformed_response, unparseable_verdict, off_scale
   * @example "timeout"
   */
  code: string;
  /** @example "The judge did not answer within 60000 ms" */
  message: string;
}

export interface JudgePairResponse {
  /** @example {"topic":"billing"} */
  dimensions: Record<string, string | null>;
  /** @example false */
  human_passed: boolean | null;
  /** @example null */
  human_score: number | null;
  /**
   * The run row's id
   * @example "row-17"
   */
  item: string;
  /** @example null */
  judge_label: string | null;
  /** @example true */
  judge_passed: boolean | null;
  /** @example 4 */
  judge_score: number | null;
  /**
   * Each reviewer's verdict, when several labelled the item
   * @example [true,true]
   */
  reviews?: (boolean | null)[];
}

export interface JudgeRunFailure {
  /**
   * `no_final_labels`, `judge_unreachable`, `too_few_pairs`, `judge_gone`, `starter_not_member`, `cancelled`, …
   * @example "too_few_pairs"
   */
  code: string;
  /** @example "4 items have both a judge verdict and a final label; a validation needs at least 10" */
  message: string;
}

export interface JudgeRunItemError {
  /**
   * The judge call's failure: `timeout`, `http_error`, `malformed_response`, …
   * @example "http_error"
   */
  code: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52"
   */
  item_id: string;
  /** @example "the judge answered 503" */
  message: string;
}

export interface JudgeRunMetricConfigDto {
  /**
   * The metric config's name
   * @minLength 1
   * @maxLength 200
   * @example "answer-correctness"
   */
  name: string;
  /**
   * Its version; absent: the version in force (the workspace default's pin for that name, else the newest version)
   * @format int32
   * @min 1
   * @max 999999999
   * @example 2
   */
  version?: number;
}

export interface JudgeTestRequest {
  /**
   * @maxLength 20000
   * @example "Open Settings > Security and choose Reset password."
   */
  expected_output?: string;
  /**
   * @maxLength 20000
   * @example "How do I reset my password?"
   */
  input?: string;
  /**
   * @maxLength 20000
   * @example "Go to Settings > Security and click Reset password."
   */
  output?: string;
  /**
   * A rubric to try instead of the built-in probe; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}}
   * @minLength 1
   * @maxLength 20000
   * @example "Grade how well the answer matches the reference.
   * Question: {{input}}
   * Answer: {{output}}
   * Reference: {{expected_output}}
   * 1 = wrong or missing, 5 = correct and complete."
   */
  rubric?: string;
  scale?: ScaleDto;
}

export interface JudgeTestResult {
  /**
   * The judge's text answer (first 4000 characters)
   * @example "{"score": 4, "reason": "Same steps as the reference; omits that the link expires."}"
   */
  answer: string | null;
  /** @example 1 */
  attempts: number;
  error: JudgeErrorDto | null;
  /** @example 843 */
  latency_ms: number;
  /**
   * True when the judge answered and the answer parsed into a verdict on the scale
   * @example true
   */
  ok: boolean;
  /** @example null */
  response_excerpt: string | null;
  /**
   * @format int64
   * @example 200
   */
  status_code: number | null;
  usage: JudgeUsageDto;
  /** The parsed answer; null when there is none (see error) */
  verdict: VerdictDto | null;
}

export interface JudgeUsageDto {
  /**
   * @format int64
   * @example 41
   */
  completion_tokens: number | null;
  /**
   * @format int64
   * @example 182
   */
  prompt_tokens: number | null;
}

export interface JudgeValidationComparisonResponse {
  accuracy_base: RateFigureResponse;
  accuracy_candidate: RateFigureResponse;
  base: ValidationRefResponse;
  candidate: ValidationRefResponse;
  /**
   * Accuracy of the candidate − accuracy of the base
   * @example 0.12
   */
  difference: number | null;
  /**
   * Shared items whose human labels differ between the two: left out
   * @format int64
   * @example 0
   */
  human_label_conflicts: number;
  /**
   * Items compared: both verdicts and a human label
   * @format int64
   * @example 50
   */
  items: number;
  mcnemar: McNemarResponse;
  /**
   * Items the base judge got right and the candidate wrong
   * @format int64
   * @example 0
   */
  only_base_correct: number;
  /**
   * Items the candidate got right and the base wrong
   * @format int64
   * @example 6
   */
  only_candidate_correct: number;
  /**
   * Items both validations hold
   * @format int64
   * @example 50
   */
  shared_items: number;
  /**
   * Whether the difference is significant at 0.05
   * @example true
   */
  significant: boolean;
}

export interface JudgeValidationResponse {
  /** @example "answer-correctness" */
  config_name: string;
  /**
   * @format int64
   * @example 2
   */
  config_version: number;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c"
   */
  id: string;
  /**
   * Pairs kept with the validation
   * @format int64
   * @example 50
   */
  items: number;
  /**
   * The metric's name in the run
   * @example "answer-correctness"
   */
  metric: string;
  /**
   * The metric config version validated
   * @format uuid
   * @maxLength 36
   * @example "3f5a0983-0d67-4a7e-a129-973f816631f0"
   */
  metric_config_id: string;
  pairs: JudgePairResponse[];
  result: JudgeValidationResultResponse;
  /**
   * Seed of the bootstrap intervals: the same pairs and seed give the same figures
   * @format int64
   * @example 1
   */
  seed: number;
  source: JudgeValidationSourceResponse;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface JudgeValidationResultResponse {
  accuracy: RateFigureResponse;
  by_dimension: ValidityByDimensionResponse | null;
  confusion: ConfusionMatrixResponse;
  human_agreement: HumanAgreementResponse | null;
  /** Cohen's kappa of the judge against humans (percentile bootstrap interval, seeded) */
  kappa: EstimateFigureResponse;
  /**
   * Confidence level of every interval
   * @example 0.95
   */
  level: number;
  scores: ScoreValidityResponse | null;
  /** Specificity: of the items humans failed, the share the judge failed (Wilson interval) */
  true_negative_rate: RateFigureResponse;
  /** Sensitivity: of the items humans passed, the share the judge passed (Wilson interval) */
  true_positive_rate: RateFigureResponse;
}

export interface JudgeValidationSourceResponse {
  /**
   * The column of the rows (`field`) or the queue's rubric field (`review_queue`, `review_judge_run`)
   * @example "human_verdict"
   */
  field: string | null;
  /**
   * With `review_judge_run`: the judge run (GET /review-queues/{queue_id}/judge-runs/{judge_run_id})
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a61"
   */
  judge_run_id?: string;
  /**
   * `field`: a column of the run's rows held the human label; `labels`: the labels were handed in; `review_queue`: a review queue's final labels against a run's verdicts; `review_judge_run`: the judge was applied to a review queue's finally labelled items
   * @example "field"
   */
  kind: "field" | "labels" | "review_queue" | "review_judge_run";
  /**
   * With `review_queue` and `review_judge_run`: the review queue whose final labels were the human labels
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51"
   */
  queue_id?: string;
  /**
   * A row repeated in the run counts with its first repetition
   * @example "first"
   */
  repetition: "first";
  /**
   * With `review_queue` and `review_judge_run`: the queue's rubric version
   * @format int64
   * @example 1
   */
  rubric_version?: number;
  /**
   * The run whose judge verdicts were validated (null for `review_judge_run`: the judge was asked on the queue's items)
   * @format uuid
   * @maxLength 36
   * @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4"
   */
  run_id: string | null;
  /**
   * Rows with a judge verdict and no human label
   * @format int64
   * @example 0
   */
  unlabelled_rows: number;
  /**
   * Human labels of rows the run does not have
   * @format int64
   * @example 0
   */
  unmatched_labels: number;
}

export interface JudgeValidationSummary {
  /** @example "answer-correctness" */
  config_name: string;
  /**
   * @format int64
   * @example 2
   */
  config_version: number;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c"
   */
  id: string;
  /**
   * Pairs kept with the validation
   * @format int64
   * @example 50
   */
  items: number;
  /**
   * The metric's name in the run
   * @example "answer-correctness"
   */
  metric: string;
  /**
   * The metric config version validated
   * @format uuid
   * @maxLength 36
   * @example "3f5a0983-0d67-4a7e-a129-973f816631f0"
   */
  metric_config_id: string;
  result: JudgeValidationResultResponse;
  /**
   * Seed of the bootstrap intervals: the same pairs and seed give the same figures
   * @format int64
   * @example 1
   */
  seed: number;
  source: JudgeValidationSourceResponse;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface JudgeValidationSummaryPage {
  items: JudgeValidationSummary[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface JudgedSpecDto {
  /**
   * The judge that grades; default the eval config's default judge
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string | null;
  /**
   * Label scales: the labels that pass (default the first label)
   * @maxItems 20
   * @minItems 1
   * @example ["correct"]
   */
  pass_labels?: string[];
  /**
   * Numeric scales: rows pass when the normalised score (0..1) reaches this (default 0.75)
   * @min 0
   * @max 1
   * @example 0.75
   */
  pass_threshold?: number;
  /**
   * The grading prompt; placeholders {{input}}, {{output}}, {{expected_output}}, {{context}}, {{row.<column>}}. Default: the built-in rubric of the metric
   * @minLength 1
   * @maxLength 20000
   * @example "Grade how well the answer matches the reference.
   * Question: {{input}}
   * Answer: {{output}}
   * Reference: {{expected_output}}
   * 1 = wrong or missing, 5 = correct and complete."
   */
  rubric?: string;
  /** Default numeric 1..5 */
  scale?: ScaleDto;
}

export interface JudgedSpecResponse {
  /**
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id: string | null;
  /** @example null */
  pass_labels: string[] | null;
  /** @example 0.75 */
  pass_threshold: number | null;
  /**
   * @example "Grade how well the answer matches the reference.
   * Question: {{input}}
   * Answer: {{output}}
   * Reference: {{expected_output}}
   * 1 = wrong or missing, 5 = correct and complete."
   */
  rubric: string;
  scale: ScaleDto;
}

export interface LabelChange {
  /** @example "2025-05-13T14:05:12.000Z" */
  at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  by: string;
  /** @example {"correct":true,"tone":"warm","helpfulness":4} */
  values: Record<string, any>;
}

/** @example {"dataset_id":"f0eef60d-4b04-4046-aa3a-779fe13e072d","convention":"langfuse","max_records":20000,"message":"Langfuse traces of 13 May"} */
export interface LandFromConnectionRequest {
  /**
   * The convention to read attributes with; `auto` (default) picks it per span
   * @default "auto"
   * @example "auto"
   */
  convention?:
    | "auto"
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  /**
   * An existing trace dataset to add a version to
   * @format uuid
   * @maxLength 36
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id?: string;
  /**
   * Or a dataset by name: created (kind `traces`) when the workspace has none of this name
   * @minLength 1
   * @maxLength 200
   * @example "support-bot-production-traces"
   */
  dataset_name?: string;
  /**
   * Keep attributes no canonical field takes under `attributes` (default true); false drops them
   * @example true
   */
  keep_unmapped?: boolean;
  /**
   * Stop after this many records (default 100000)
   * @min 1
   * @max 1000000
   * @example 20000
   */
  max_records?: number;
  /**
   * The new version's message
   * @maxLength 2000
   * @example "Production traces of 13 May"
   */
  message?: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","dataset_name":"support-bot-production-traces","convention":"auto","records":[{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-bot"}}]},"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"ChatCompletion","kind":3,"startTimeUnixNano":"1747145160000000000","endTimeUnixNano":"1747145161040000000","attributes":[{"key":"openinference.span.kind","value":{"stringValue":"LLM"}},{"key":"llm.model_name","value":{"stringValue":"gpt-4o-mini"}}]}]}]}]}]} */
export interface LandInlineRequest {
  /**
   * The convention to read attributes with; `auto` (default) picks it per span
   * @default "auto"
   * @example "auto"
   */
  convention?:
    | "auto"
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  /**
   * An existing trace dataset to add a version to
   * @format uuid
   * @maxLength 36
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id?: string;
  /**
   * Or a dataset by name: created (kind `traces`) when the workspace has none of this name
   * @minLength 1
   * @maxLength 200
   * @example "support-bot-production-traces"
   */
  dataset_name?: string;
  /**
   * Keep attributes no canonical field takes under `attributes` (default true); false drops them
   * @example true
   */
  keep_unmapped?: boolean;
  /**
   * The new version's message
   * @maxLength 2000
   * @example "Production traces of 13 May"
   */
  message?: string;
  /**
   * OTLP/JSON ExportTraceServiceRequest objects and/or span records (OpenTelemetry, Phoenix, Langfuse or plain `trace_id`/`span_id` records), at most 10000
   * @maxItems 10000
   * @minItems 1
   * @example [{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"support-bot"}}]},"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"ChatCompletion","kind":3,"startTimeUnixNano":"1747145160000000000","endTimeUnixNano":"1747145161040000000","attributes":[{"key":"openinference.span.kind","value":{"stringValue":"LLM"}},{"key":"llm.model_name","value":{"stringValue":"gpt-4o-mini"}}]}]}]}]}]
   */
  records: Record<string, any>[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface LandInlineTracesParams {
  inline: string;
}

export interface LandTracesFromConnectionParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
}

/** @example {"workspace_id":"8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b","upload_id":"1c2cf2f5-dcc2-4610-b190-6e541af34b2c","dataset_id":"f0eef60d-4b04-4046-aa3a-779fe13e072d","convention":"auto","keep_unmapped":true,"message":"Production traces of 13 May"} */
export interface LandTracesRequest {
  /**
   * ... or pull from this connection (exactly one of the two)
   * @format uuid
   * @maxLength 36
   * @example "9890244a-b700-49c4-ac22-d5dfb3c2ffde"
   */
  connection_id?: string;
  /**
   * The convention to read attributes with; `auto` (default) picks it per span
   * @default "auto"
   * @example "auto"
   */
  convention?:
    | "auto"
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  /**
   * An existing trace dataset to add a version to
   * @format uuid
   * @maxLength 36
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id?: string;
  /**
   * Or a dataset by name: created (kind `traces`) when the workspace has none of this name
   * @minLength 1
   * @maxLength 200
   * @example "support-bot-production-traces"
   */
  dataset_name?: string;
  /**
   * Keep attributes no canonical field takes under `attributes` (default true); false drops them
   * @example true
   */
  keep_unmapped?: boolean;
  /**
   * connection: stop after this many records (default 100000)
   * @min 1
   * @max 1000000
   * @example 100000
   */
  max_records?: number;
  /**
   * The new version's message
   * @maxLength 2000
   * @example "Production traces of 13 May"
   */
  message?: string;
  /**
   * Land this upload (POST /traces/uploads) ...
   * @format uuid
   * @maxLength 36
   * @example "1c2cf2f5-dcc2-4610-b190-6e541af34b2c"
   */
  upload_id?: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface LatencyStatsDto {
  /** @example 1040 */
  p50: number;
  /** @example 2310 */
  p95: number;
  /** @example 2710 */
  p99: number;
  /** @example 4120 */
  max: number;
  /** @example 1180 */
  mean: number;
}

export interface LeasedItemResponse {
  item: ReviewItemResponse;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  lease_expires_at: string;
  /** The rubric version to label under */
  rubric: RubricVersionResponse;
}

export interface ListAnalysisRunsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListApiKeysParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Case-insensitive substring of the name
   * @maxLength 100
   */
  q?: string;
  /**
   * `active` (default), `expired`, `revoked` or `all`
   * @default "active"
   */
  status?: "active" | "expired" | "revoked" | "all";
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListAuditEventsParams {
  /**
   * Events with exactly this action, e.g. `member.role_changed`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action?: string;
  /**
   * Events whose action starts with this, e.g. `member.` or `api_key`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action_prefix?: string;
  /**
   * Events of this user (the actor's id)
   * @format uuid
   * @maxLength 36
   */
  actor_id?: string;
  /**
   * The `next_cursor` of the page before: the events older than its last
   * @format uuid
   * @maxLength 36
   */
  cursor?: string;
  /**
   * Events recorded at or after this instant (ISO 8601)
   * @maxLength 40
   */
  from?: string;
  /**
   * Events at most (newest first), 1..200
   * @min 1
   * @max 200
   * @default 50
   */
  limit?: number;
  /**
   * Events about this record (its id)
   * @maxLength 200
   */
  target_id?: string;
  /**
   * Events about records of this kind, e.g. `secret`, `member`, `dataset`
   * @maxLength 64
   * @pattern ^[a-z0-9_]+$
   */
  target_type?: string;
  /**
   * Events recorded before this instant (ISO 8601)
   * @maxLength 40
   */
  to?: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListAvailableMetricsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListAvailablePartitionMetricsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The partition's id
   * @format uuid
   * @maxLength 36
   */
  partitionId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListAvailableQualityChecksParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version the checks would run on; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   */
  version_id?: string;
}

export interface ListCustomOpsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?: "deploying" | "active" | "failed" | "stopped";
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListDatasetAuditEntriesParams {
  /**
   * Only entries older than this instant (ISO 8601), to page back
   * @maxLength 64
   * @pattern ^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$
   */
  before?: string;
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Entries at most (newest first), 1..500
   * @min 1
   * @max 500
   * @default 100
   */
  limit: number;
}

export interface ListDatasetSnapshotsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface ListDatasetVersionsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?: "candidate" | "current" | "retired";
}

export interface ListDatasetsParams {
  kind?: "rows" | "traces";
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Case-insensitive substring of the name
   * @maxLength 200
   */
  q?: string;
  /** @default "-created_at" */
  sort?:
    | "name"
    | "-name"
    | "created_at"
    | "-created_at"
    | "updated_at"
    | "-updated_at";
  /**
   * Only datasets carrying this tag
   * @maxLength 64
   */
  tag?: string;
  /**
   * Only datasets of this workspace; without it, datasets of every workspace you belong to
   * @format uuid
   * @maxLength 36
   */
  workspace_id?: string;
}

export interface ListDimensionValuesParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Only this dimension (default: every dimension)
   * @maxLength 100
   */
  dimension?: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListDimensionsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListEmbeddingConfigsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The workspace whose configurations to list
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListEvalConfigsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Names containing this text (case-insensitive)
   * @maxLength 100
   */
  q?: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListInvitationsParams {
  state?: "pending" | "accepted" | "revoked" | "expired";
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListJudgeValidationsParams {
  /** @maxLength 100 */
  configName: string;
  /** @maxLength 32 */
  configVersion: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The workspace the metric config belongs to
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListJudgesParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  provider?: "openai_compatible" | "azure_openai" | "anthropic";
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListLatestQualityVerdictsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface ListMembersParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListMetricConfigDefaultVersionsParams {
  /** @maxLength 200 */
  metricName: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListMetricConfigDefaultsParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListMetricConfigsParams {
  kind?: "deterministic" | "judged" | "custom";
  /**
   * Only configs of this metric (e.g. bleu, llm_judge, or a custom op)
   * @maxLength 100
   */
  metric?: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Names containing this text (case-insensitive)
   * @maxLength 100
   */
  q?: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListMetricsParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListNotificationConfigsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The workspace whose webhooks to list
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListOnlineAlertEventsParams {
  /**
   * The alert rule's id
   * @format uuid
   * @maxLength 36
   */
  alertRuleId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
}

export interface ListOnlineAlertRulesParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
}

export interface ListOnlineBackfillsParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
}

export interface ListOnlineEvaluatorTargetsParams {
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196b1c2-3d4e-7f50-8a61-b2c3d4e5f602"
   */
  backfill_id?: string;
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?: "pending" | "scored" | "skipped" | "failed";
  /**
   * @maxLength 256
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id?: string;
  /**
   * @min 1
   * @max 1000000
   * @example 1
   */
  version?: number;
}

export interface ListOnlineEvaluatorVersionsParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface ListOnlineEvaluatorsParams {
  /**
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id?: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?: "active" | "paused";
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ListOpsParams {
  /**
   * The workspace whose operations to read
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListPartitionsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListProjectsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Projects whose name contains this text (case-insensitive)
   * @maxLength 100
   */
  q?: string;
  /** `name`, `created_at` or `updated_at`, `-` for descending (default `name`) */
  sort?:
    | "name"
    | "-name"
    | "created_at"
    | "-created_at"
    | "updated_at"
    | "-updated_at";
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListQualityCheckRunsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListQualityCheckSuggestionsParams {
  /**
   * The dataset to suggest checks for
   * @format uuid
   * @maxLength 36
   */
  dataset_id: string;
  /**
   * Its version; default: the current version, else the newest
   * @format uuid
   * @maxLength 36
   */
  version_id?: string;
}

export interface ListRecommendationsParams {
  /** `builtin`, `workspace` or both (default) */
  source?: "builtin" | "workspace";
  /**
   * Only this use case (`rag_qa`, `customer_support`, …)
   * @maxLength 64
   */
  use_case?: string;
  /**
   * The workspace whose recommendations (with the built-in ones) are read or changed
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListRegisteredOpsParams {
  kind?: "metric" | "check" | "enrichment" | "transform";
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  source?: "builtin" | "workspace";
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListReportConfigsParams {
  /**
   * The workspace
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListReportPartitionMetricsParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListReportPartitionsParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListReportPromptsParams {
  /**
   * The workspace
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListReportQuestionsParams {
  /**
   * Answer for this report config's sections and questions (default: the workspace settings' default config)
   * @format uuid
   * @maxLength 36
   */
  config_id?: string;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListReportsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Only the reports of this run
   * @format uuid
   * @maxLength 36
   */
  run_id?: string;
  /**
   * The workspace whose reports to list
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListResolvedMetricConfigsParams {
  /**
   * Resolve as a run with this eval config would
   * @format uuid
   * @maxLength 36
   */
  eval_config_id?: string;
  /**
   * Only this metric
   * @maxLength 100
   */
  metric?: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListReviewDisagreementsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ListReviewFinalLabelsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ListReviewItemsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
  state?: "pending" | "final" | "disagreement";
}

export interface ListReviewJudgeRunsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ListReviewQueuesParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?: "open" | "closed";
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListReviewRubricVersionsParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ListRunEventsParams {
  /**
   * Only events after this `seq` (poll with the last one you saw)
   * @format int64
   * @min 0
   * @max 9007199254740991
   * @example 42
   */
  after?: number;
  /**
   * 1..1000, default 500
   * @min 1
   * @max 1000
   */
  limit?: number;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListRunGateVerdictsParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListRunsParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  dataset_id?: string;
  /**
   * Only runs with a gate verdict recorded with this label (a branch such as `main`)
   * @maxLength 64
   * @example "main"
   */
  gate_label?: string;
  /** Only runs whose newest recorded gate verdict (of `gate_label`, when given) is this: with `pass`, the first is the last good run (`--baseline latest`) */
  gate_verdict?: "pass" | "fail";
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Only runs of this project's linked SUTs or datasets (the runs its trend reads)
   * @format uuid
   * @maxLength 36
   */
  project_id?: string;
  state?:
    | "queued"
    | "running"
    | "awaiting_upload"
    | "succeeded"
    | "failed"
    | "cancelled";
  /**
   * @format uuid
   * @maxLength 36
   */
  sut_id?: string;
  /** @maxLength 64 */
  tag?: string;
  /**
   * Runs of this workspace; without it, of every workspace you belong to
   * @format uuid
   * @maxLength 36
   */
  workspace_id?: string;
}

export interface ListSdgAdaptersParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListSecretsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Case-insensitive substring of the name
   * @maxLength 100
   */
  q?: string;
  /** @default "name" */
  sort?: "name" | "-name" | "created_at" | "-created_at";
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListStagedRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface ListSutConnectionsParams {
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface ListSutRunsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  state?:
    | "queued"
    | "running"
    | "awaiting_upload"
    | "succeeded"
    | "failed"
    | "cancelled";
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface ListSutsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Only systems whose name contains this text (case-insensitive)
   * @maxLength 200
   */
  q?: string;
  /**
   * Only systems carrying this tag
   * @maxLength 50
   */
  tag?: string;
  /**
   * The workspace whose systems to list
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListSystemAuditEventsParams {
  /**
   * Events with exactly this action, e.g. `member.role_changed`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action?: string;
  /**
   * Events whose action starts with this, e.g. `member.` or `api_key`
   * @maxLength 100
   * @pattern ^[a-z0-9_.]+$
   */
  action_prefix?: string;
  /**
   * Events of this user (the actor's id)
   * @format uuid
   * @maxLength 36
   */
  actor_id?: string;
  /**
   * The `next_cursor` of the page before: the events older than its last
   * @format uuid
   * @maxLength 36
   */
  cursor?: string;
  /**
   * Events recorded at or after this instant (ISO 8601)
   * @maxLength 40
   */
  from?: string;
  /**
   * Events at most (newest first), 1..200
   * @min 1
   * @max 200
   * @default 50
   */
  limit?: number;
  /**
   * Events about this record (its id)
   * @maxLength 200
   */
  target_id?: string;
  /**
   * Events about records of this kind, e.g. `secret`, `member`, `dataset`
   * @maxLength 64
   * @pattern ^[a-z0-9_]+$
   */
  target_type?: string;
  /**
   * Events recorded before this instant (ISO 8601)
   * @maxLength 40
   */
  to?: string;
}

export interface ListTestPlanVersionsParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /** @maxLength 100 */
  ref: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListTestPlansParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Plans whose name contains this text (case-insensitive)
   * @maxLength 100
   */
  q?: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListTraceConnectionsParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ListTraceEnrichmentResultsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Only traces with end-user feedback of this name (POST /traces/feedback)
   * @maxLength 100
   */
  feedback_name?: string;
  /**
   * Only traces with feedback equal to this value (`false`: a thumbs down; a number: that score; text: that category)
   * @maxLength 200
   */
  feedback_value?: string;
  /** true: only traces with an error span; false: only those without */
  has_error?: "true" | "false";
  /**
   * @min 1
   * @max 1000
   * @default 100
   */
  limit?: number;
  loop_detected?: "true" | "false";
  /** @min 0 */
  max_duration_ms?: number;
  /** @min 0 */
  min_cost?: number;
  /** @min 0 */
  min_duration_ms?: number;
  /**
   * A model any LLM span of the trace used
   * @maxLength 200
   */
  model?: string;
  /**
   * @min 0
   * @max 10000000
   * @default 0
   */
  offset?: number;
  /** @default "asc" */
  order?: "asc" | "desc";
  /**
   * Only traces scored by the evaluator of this name (online evaluation: each metric's newest score)
   * @maxLength 200
   */
  score_evaluator?: string;
  /** Only traces with a score of at most this */
  score_max?: number;
  /**
   * Only traces with a score of this metric
   * @maxLength 200
   */
  score_metric?: string;
  /** Only traces with a score that passed (`true`) or failed (`false`) */
  score_passed?: "true" | "false";
  /** @maxLength 200 */
  session_id?: string;
  /** @default "start_time" */
  sort?:
    | "duration_ms"
    | "cost"
    | "tokens_total"
    | "error_count"
    | "span_count"
    | "start_time"
    | "trace_id";
  /**
   * Only traces with this tag
   * @maxLength 100
   */
  tag?: string;
  /** @maxLength 200 */
  trace_id?: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListTraceFeedbackParams {
  /**
   * Posted at or after this instant
   * @format date-time
   * @maxLength 64
   */
  created_after?: string;
  /**
   * Posted before this instant
   * @format date-time
   * @maxLength 64
   */
  created_before?: string;
  /** Scores at most this */
  max_value?: number;
  /** Scores at least this */
  min_value?: number;
  /** @maxLength 100 */
  name?: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /** `-created_at` (default, newest first) or `created_at` */
  sort?: "created_at" | "-created_at";
  /** @maxLength 128 */
  span_id?: string;
  /** @maxLength 128 */
  trace_id?: string;
  /** @maxLength 200 */
  user_ref?: string;
  /**
   * Equal to this value: `true`/`false` match thumbs, a number matches scores, any text matches categories
   * @maxLength 200
   */
  value?: string;
  /**
   * The workspace, with a user's token (an API key's own workspace is used otherwise)
   * @format uuid
   * @maxLength 36
   */
  workspace_id?: string;
}

export interface ListTraceLandingRunDropsParams {
  /**
   * @min 1
   * @max 1000
   * @default 100
   */
  limit?: number;
  /**
   * @min 0
   * @max 10000000
   * @default 0
   */
  offset?: number;
  /** Only drops of this reason */
  reason?:
    | "missing_trace_id"
    | "missing_span_id"
    | "invalid_id"
    | "missing_timestamps"
    | "end_before_start"
    | "malformed_record"
    | "unsupported_record"
    | "record_too_large"
    | "missing_trace_context"
    | "span_not_received"
    | "log_records_over_limit";
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface ListTraceScoresParams {
  /**
   * Only scores of this dataset of the workspace
   * @format uuid
   * @maxLength 36
   */
  dataset_id?: string;
  /**
   * @format uuid
   * @maxLength 36
   */
  evaluator_id?: string;
  /** @maxLength 200 */
  evaluator_name?: string;
  /** `true`: only records whose metric could not score; `false`: only the others */
  has_error?: "true" | "false";
  /** Scores at most this */
  max_score?: number;
  /** @maxLength 200 */
  metric?: string;
  /** Scores at least this */
  min_score?: number;
  /**
   * Traces that started at or after this instant
   * @format date-time
   * @maxLength 64
   */
  observed_after?: string;
  /**
   * Traces that started before this instant
   * @format date-time
   * @maxLength 64
   */
  observed_before?: string;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /** `true`: only passes; `false`: only failures (scores without a verdict match neither) */
  passed?: "true" | "false";
  /** @maxLength 128 */
  session_id?: string;
  /** @maxLength 128 */
  trace_id?: string;
  /**
   * The workspace, with a user's token (an API key's own workspace is used otherwise)
   * @format uuid
   * @maxLength 36
   */
  workspace_id?: string;
}

export interface ListTraceSpanChildrenParams {
  /**
   * `next_cursor` of the previous page of the same read
   * @maxLength 1024
   */
  cursor?: string;
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * @min 1
   * @max 1000
   * @default 200
   */
  limit?: number;
  /**
   * The span whose children are read; without it, the trace's roots (spans without a parent, or whose parent is not in the trace)
   * @minLength 1
   * @maxLength 128
   * @example "00f067aa0ba902b7"
   */
  parent_span_id?: string;
  /**
   * The trace (as landed: OTLP hex ids lower-cased)
   * @minLength 1
   * @maxLength 128
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListTraceSpansByDepthParams {
  /**
   * `next_cursor` of the previous page of the same read
   * @maxLength 1024
   */
  cursor?: string;
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * @min 1
   * @max 1000
   * @default 200
   */
  limit?: number;
  /**
   * The deepest level answered: 1 is the roots, 2 their children ...
   * @min 1
   * @max 1000
   * @example 2
   */
  max_depth: number;
  /**
   * The trace (as landed: OTLP hex ids lower-cased)
   * @minLength 1
   * @maxLength 128
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  trace_id: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListTraceTagsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Only this tag
   * @maxLength 100
   */
  tag?: string;
  /**
   * Only the tags of this trace
   * @maxLength 200
   */
  trace_id?: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListTraceVersionDropsParams {
  /**
   * @min 1
   * @max 1000
   * @default 100
   */
  limit?: number;
  /**
   * @min 0
   * @max 10000000
   * @default 0
   */
  offset?: number;
  /** Only drops of this reason */
  reason?:
    | "missing_trace_id"
    | "missing_span_id"
    | "invalid_id"
    | "missing_timestamps"
    | "end_before_start"
    | "malformed_record"
    | "unsupported_record"
    | "record_too_large"
    | "missing_trace_context"
    | "span_not_received"
    | "log_records_over_limit";
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface ListUserCandidatesParams {
  /**
   * @min 1
   * @max 50
   * @default 20
   */
  limit?: number;
  /**
   * Case-insensitive substring of the email or display name
   * @maxLength 200
   */
  q?: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ListUserMembershipsParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface ListUsersParams {
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Case-insensitive substring of the email or display name
   * @maxLength 200
   */
  q?: string;
  /** @default "email" */
  sort?:
    | "created_at"
    | "-created_at"
    | "email"
    | "-email"
    | "display_name"
    | "-display_name";
  status?: "active" | "deactivated";
  system_role?: "admin" | "user";
}

export interface ListWorkspacesParams {
  /** System admins see every workspace; `mine=true` restricts to their memberships */
  mine?: boolean;
  /**
   * 1-based page number
   * @min 1
   * @default 1
   */
  page?: number;
  /**
   * @min 1
   * @max 200
   * @default 50
   */
  page_size?: number;
  /**
   * Case-insensitive substring of the name
   * @maxLength 200
   */
  q?: string;
  /** @default "name" */
  sort?: "name" | "-name" | "created_at" | "-created_at";
}

export interface LiveResponse {
  /**
   * Always `ok` when the process answers.
   * @example "ok"
   */
  status: "ok";
  /**
   * Seconds since the process started.
   * @example 86400
   */
  uptime_seconds: number;
  /**
   * Service version (package.json).
   * @example "0.1.0"
   */
  version: string;
}

export interface MapDatasetVersionFieldsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface MapVersionRequest {
  /**
   * @minLength 1
   * @maxLength 256
   * @example "context"
   */
  context?: string;
  /**
   * @minLength 1
   * @maxLength 256
   * @example "answer"
   */
  expected_output?: string;
  /**
   * @minLength 1
   * @maxLength 256
   * @example "question"
   */
  input?: string;
  /**
   * @maxItems 200
   * @example ["topic","language"]
   */
  metadata?: string[];
  /**
   * @minLength 1
   * @maxLength 256
   * @example "conversation_id"
   */
  session_id?: string;
}

export interface McNemarResponse {
  /**
   * Items exactly one judge got right
   * @format int64
   * @example 6
   */
  informative: number;
  /** @example "exact" */
  method: "exact";
  /** @example 0.031 */
  p_value: number;
  /**
   * The smaller of the two counts of items exactly one judge got right
   * @example 0
   */
  statistic: number;
  /**
   * McNemar's exact test, two-sided
   * @example "mcnemar_exact"
   */
  test: "mcnemar_exact";
}

export interface MeResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format date-time
   * @example null
   */
  deactivated_at: string | null;
  /** @example "Ada Lovelace" */
  display_name: string;
  /** @example "ada.lovelace@example.com" */
  email: string;
  /**
   * Whether a password is set (a user created without one logs in after redeeming a reset token)
   * @example true
   */
  has_password: boolean;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  last_login_at: string | null;
  memberships: UserMembershipResponse[];
  /** @example "active" */
  status: "active" | "deactivated";
  /** @example "user" */
  system_role: "admin" | "user";
  /**
   * When the token used for this call expires (absent when answering accept-invitation without a token).
   * @format date-time
   * @example "2025-05-13T15:05:12.000Z"
   */
  token_expires_at?: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * Increments on every change; the ETag derives from it
   * @example 3
   */
  version: number;
}

export interface MetricConfigResolution {
  /** @example "answer-correctness" */
  config_name: string | null;
  /**
   * @format int64
   * @example 2
   */
  config_version: number | null;
  /** @example "judged" */
  kind: "deterministic" | "judged" | "custom";
  /**
   * The metric computed (a built-in metric, llm_judge, or a custom op)
   * @example "correctness"
   */
  metric: string;
  /**
   * The metric as runs and eval configs name it
   * @example "correctness"
   */
  metric_name: string;
  /** @example {} */
  params: Record<string, any>;
  /**
   * Why, in a sentence
   * @example "The workspace pins answer-correctness version 2 for correctness"
   */
  reason: string;
  /**
   * What decided: the eval config's pin, the workspace default, the config's newest version, the built-in defaults, or a custom op's empty parameters
   * @example "workspace_default"
   */
  source:
    | "eval_config"
    | "workspace_default"
    | "latest_version"
    | "builtin"
    | "op_defaults";
  /** @example null */
  threshold: number | null;
}

export interface MetricConfigResolutionListResponse {
  /**
   * @format uuid
   * @maxLength 36
   * @example "fbe89949-95ca-4fae-9022-be8b4fd7304c"
   */
  eval_config_id: string | null;
  items: MetricConfigResolution[];
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface MetricConfigResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Correctness against the reviewed answer, graded 1 to 5" */
  description: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  first_used_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  first_used_by_run: string | null;
  /**
   * True once a run used this version: it can no longer be changed or deleted
   * @example true
   */
  frozen: boolean;
  /** @example "3f5a0983-0d67-4a7e-a129-973f816631f0" */
  id: string;
  /**
   * Whether this is the newest version of the name
   * @example true
   */
  is_latest: boolean;
  judged: JudgedSpecResponse | null;
  /** @example "judged" */
  kind: "deterministic" | "judged" | "custom";
  /** @example "correctness" */
  metric: string;
  /** @example "answer-correctness" */
  name: string;
  /** @example {} */
  params: Record<string, any>;
  /** @example null */
  threshold: number | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * 1, 2, …
   * @example 2
   */
  version: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface MetricConfigSummary {
  /**
   * The newest version's description
   * @example "Correctness against the reviewed answer, graded 1 to 5"
   */
  description: string;
  /**
   * Versions runs have used (frozen)
   * @example [1,2]
   */
  frozen_versions: number[];
  /** @example "judged" */
  kind: "deterministic" | "judged" | "custom";
  /** @example 2 */
  latest_version: number;
  /** @example "correctness" */
  metric: string;
  /** @example "answer-correctness" */
  name: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * Versions the name has
   * @example 2
   */
  version_count: number;
}

export interface MetricConfigSummaryPage {
  items: MetricConfigSummary[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface MetricDefaultEntryDto {
  /**
   * The config in force for it; null clears the pin (back to the newest version or the built-in defaults)
   * @maxLength 100
   * @example "answer-correctness"
   */
  config_name: string | null;
  /**
   * A version to pin; left out or null follows the config's newest version
   * @format int32
   * @min 1
   * @max 2147483647
   * @example 2
   */
  config_version?: number | null;
  /**
   * The metric being pinned: a built-in metric (bleu, correctness…), a custom metric op, or a metric config name
   * @minLength 1
   * @maxLength 100
   * @example "correctness"
   */
  metric_name: string;
  /**
   * Why (kept in the history)
   * @maxLength 500
   * @example "Pin version 2 for the May release"
   */
  note?: string;
}

export interface MetricDeltaDto {
  /** @example 0.75 */
  base: number | null;
  /** @example true */
  base_passed: boolean | null;
  /** @example 0.5 */
  candidate: number | null;
  /** @example false */
  candidate_passed: boolean | null;
  /** @example -0.25 */
  delta: number | null;
}

export interface MoveProjectParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface MoveProjectRequest {
  /**
   * The workspace that receives the project (you must be an admin there and in the current one)
   * @format uuid
   * @maxLength 36
   * @example "c76382bf-32c5-4ecd-b7b0-686fa9ee9fa3"
   */
  workspace_id: string;
}

export interface NotReadyProblem {
  /** @example {"database":{"status":"down","latency_ms":2000,"error":"the database did not answer within 2 s"},"queue":{"status":"up","latency_ms":1}} */
  checks: Record<string, ReadinessCheck>;
  /** @example "Not ready: database is down (the database did not answer within 2 s)" */
  detail: string;
  /** @example "service_unavailable" */
  error_code: string;
  /**
   * Correlates with the X-Request-Id header and the server logs.
   * @example "3f0c2d4e-8b1a-4c5d-9e7f-6a2b1c0d9e8f"
   */
  request_id?: string;
  /** @example 503 */
  status: number;
  /** @example "Service unavailable" */
  title: string;
  /** @example "/problems/service-unavailable" */
  type: string;
}

export interface NotificationConfigResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Tell the release channel when a run fails" */
  description: string;
  /** @example true */
  enabled: boolean;
  /** @example ["run.failed","quality_check.failed"] */
  events: (
    | "run.succeeded"
    | "run.failed"
    | "run.cancelled"
    | "quality_check.failed"
    | "dataset.version_promoted"
    | "online_alert.firing"
    | "online_alert.resolved"
  )[];
  /** @example "6e2d5c3d-61f8-4620-b504-e65050e19b29" */
  id: string;
  /** @example "ci-alerts" */
  name: string;
  /**
   * Whether this call created that secret
   * @example true
   */
  secret_created?: boolean;
  /**
   * The workspace secret that signs deliveries (its value never appears here)
   * @example "a4155dda-ae8f-4bb5-8444-ab992e5aabc9"
   */
  secret_id: string;
  signing: WebhookSigningDto;
  /** @example "https://hooks.example.com/ews" */
  url: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface NotificationConfigResponsePage {
  items: NotificationConfigResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface OnlineEvaluatorResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "" */
  description: string;
  /** @example "0196b1c2-3d4e-7f50-8a61-b2c3d4e5f601" */
  id: string;
  /** @example "support-bot helpfulness" */
  name: string;
  progress: EvaluatorProgress;
  spec: EvaluatorSpecResponse;
  /** @example "active" */
  state: "active" | "paused";
  /**
   * `judge_unreachable`: the judge did not answer, targets wait (pending) and are tried again;
   * `budget_exhausted`: targets are skipped until the budget's window frees; `misconfigured`: a
   * metric, judge, custom op or secret it names is gone, nothing is taken until the evaluator is changed
   * @example "ok"
   */
  status: "ok" | "judge_unreachable" | "budget_exhausted" | "misconfigured";
  /** @example null */
  status_detail: string | null;
  /**
   * @format date-time
   * @example null
   */
  status_since: string | null;
  /** The current version's targets by state */
  targets: EvaluatorTargetCounts;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * The current version: what new targets are scored by
   * @example 1
   */
  version: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface OnlineEvaluatorResponsePage {
  items: OnlineEvaluatorResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface OpCatalogue {
  kinds: OpCatalogueKinds;
  /** @example 23 */
  total: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface OpCatalogueEntry {
  /** @example "Share of toxic sentences in the answer, from the moderation model" */
  description: string;
  /** @example "toxicity-scorer" */
  name: string;
  /** @example "workspace" */
  source: "builtin" | "workspace";
  /** @example 1 */
  version: number;
}

export interface OpCatalogueKinds {
  check: OpCatalogueEntry[];
  enrichment: OpCatalogueEntry[];
  metric: OpCatalogueEntry[];
  transform: OpCatalogueEntry[];
}

export interface OpSchemaResponse {
  /**
   * The JSON Schema dialect
   * @example "http://json-schema.org/draft-07/schema#"
   */
  dialect: string;
  /** @example "metric" */
  kind: "metric" | "check" | "enrichment" | "transform";
  /** @example "rouge_l" */
  name: string;
  /** @example {"type":"object","properties":{"threshold":{"type":"number"}},"additionalProperties":false} */
  schema: Record<string, any>;
  /** @example 1 */
  version: number;
}

export interface OpenAiChatTransportDto {
  /**
   * The API root, e.g. https://api.openai.com/v1 (`/chat/completions` is appended)
   * @format uri
   * @maxLength 2000
   * @example "https://api.openai.com/v1"
   */
  base_url: string;
  /** @example {"OpenAI-Organization":"org-example"} */
  headers?: Record<string, string>;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "gpt-4o-mini"
   */
  model: string;
  /**
   * Sent in every body: temperature, max_tokens, top_p, seed, stop, response_format…
   * @example {"temperature":0,"max_tokens":512}
   */
  parameters?: Record<string, any>;
}

export interface OpenAiChatTransportResponse {
  /** @example "https://api.openai.com/v1" */
  base_url: string;
  /** @example {} */
  headers: Record<string, string>;
  /** @example "gpt-4o-mini" */
  model: string;
  /** @example {"temperature":0} */
  parameters: Record<string, any>;
}

export interface OtlpExportResponse {
  partialSuccess?: OtlpPartialSuccess;
}

export interface OtlpLogsExportResponse {
  partialSuccess?: OtlpLogsPartialSuccess;
}

export interface OtlpLogsPartialSuccess {
  /**
   * Why, with where to read the rejected records and their payloads
   * @example "1 log record rejected: missing_trace_context (1); the first, log record 3: the log record has no trace id: only records correlated to a span are kept. GET /traces/runs/{run_id}/drops lists them with their payloads"
   */
  errorMessage: string;
  /**
   * Log records the service rejected (an int64, as a string in the OTLP JSON mapping)
   * @example "1"
   */
  rejectedLogRecords: string;
}

export interface OtlpPartialSuccess {
  /**
   * Why, with where to read the rejected spans and their payloads
   * @example "2 spans rejected: invalid_id (2); the first, request 1, span 4: span_id is not 16 hex characters. GET /traces/runs/{run_id}/drops lists them with their payloads"
   */
  errorMessage: string;
  /**
   * Spans the service rejected (an int64, as a string in the OTLP JSON mapping)
   * @example "2"
   */
  rejectedSpans: string;
}

export interface PairedComparisonDto {
  /** @example 0.84 */
  base_mean: number | null;
  /** @example 0.86 */
  candidate_mean: number | null;
  /** @example 0.043 */
  ci_high: number | null;
  /**
   * 95% paired-bootstrap percentile interval of mean_delta (2,000 resamples, seeded by the run ids)
   * @example -0.004
   */
  ci_low: number | null;
  /**
   * Which way the candidate moved by the metric's better direction (`none`: balanced); null when not tested
   * @example "better"
   */
  direction: "better" | "worse" | "none" | null;
  /**
   * `rank_biserial` (matched pairs, -1..1) for scores, `risk_difference` (change in pass rate) for verdicts
   * @example {"name":"rank_biserial","value":0.21}
   */
  effect_size: {
    name?: "rank_biserial" | "risk_difference";
    value?: number;
  } | null;
  /**
   * Mean of candidate - base over the pairs (of 0/1 verdicts: the change in pass rate)
   * @example 0.02
   */
  mean_delta: number | null;
  /**
   * `verdict`: pass/fail per row (metrics that score only 0 or 1, and the row verdict); `score`: the score on the metric's reported scale
   * @example "score"
   */
  measure: "score" | "verdict";
  /** @example "normal_approximation" */
  method: "exact" | "normal_approximation" | null;
  /**
   * Matched rows with a value in both runs
   * @example 214
   */
  n: number;
  /**
   * The metric, or `row_verdict`
   * @example "answer-correctness"
   */
  name: string;
  /**
   * Holm-adjusted within its family (the overall comparisons, or every by-dimension one)
   * @example 0.33
   */
  p_adjusted: number | null;
  /**
   * Two-sided, unadjusted
   * @example 0.11
   */
  p_value: number | null;
  /**
   * p_adjusted <= alpha; null when not tested
   * @example false
   */
  significant: boolean | null;
  /**
   * Wilcoxon: the smaller signed-rank sum; McNemar: the smaller discordant count
   * @example 1840
   */
  statistic: number | null;
  /**
   * `too_few_rows`: fewer pairs than `min_rows`, so no interval, test or verdict
   * @example "tested"
   */
  status: "tested" | "too_few_rows";
  /** @example "wilcoxon_signed_rank" */
  test: "wilcoxon_signed_rank" | "mcnemar_exact";
}

export interface PartitionAvailableMetricsResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * The canonical fields mapped onto columns
   * @example {"input":"question","expected_output":"answer","context":"context"}
   */
  mapping: Record<string, any>;
  metrics: AvailableMetric[];
  /** @example "e6c2feed-97c3-43e5-b733-96f1ee7aa5e0" */
  partition_id: string;
  /**
   * Rows of the partition
   * @example 41
   */
  row_count: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface PartitionResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "English billing questions" */
  description: string;
  /** @example {"topic":["billing","returns_refunds"]} */
  dimension_values: Record<string, string[]>;
  /** @example {"field":"language","op":"eq","value":"en"} */
  filter: Record<string, any> | null;
  /** @example "e6c2feed-97c3-43e5-b733-96f1ee7aa5e0" */
  id: string;
  /** @example "session" */
  level: "session" | "trace" | "span";
  /** @example "billing-en" */
  name: string;
  /**
   * Rows the partition holds now (dimension assignments may change it)
   * @example 41
   */
  row_count: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface PassRuleDto {
  /**
   * Rows whose SUT call failed count as failed (default true) or are left out of the rate
   * @example true
   */
  errors_fail?: boolean;
  /**
   * The run passes when at least this share of rows pass (default 1) and each metric meets its min_pass_rate
   * @min 0
   * @max 1
   * @example 0.9
   */
  min_pass_rate?: number;
  /**
   * A row passes when `all` its gating metrics pass (default) or when `any` does
   * @example "all"
   */
  row?: "all" | "any";
}

export interface PassRuleResponse {
  /** @example true */
  errors_fail: boolean;
  /** @example 0.9 */
  min_pass_rate: number;
  /** @example "all" */
  row: "all" | "any";
}

export interface PlanDatasetDto {
  /**
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id: string;
  /**
   * Run only a partition of the dataset (one of its versions' partitions)
   * @format uuid
   * @maxLength 36
   * @example "e6c2feed-97c3-43e5-b733-96f1ee7aa5e0"
   */
  partition_id?: string;
  /**
   * Pin a version of the dataset (default: its current, else latest, version when a run starts)
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id?: string;
}

export interface PlanDatasetResponse {
  /**
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example null
   */
  partition_id: string | null;
  /**
   * A pinned version, or null for the dataset's current (else latest) version
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id: string | null;
}

export interface PlanMetricDto {
  /**
   * Counts toward the release rule (default true); false: reported only
   * @example true
   */
  gating?: boolean;
  /**
   * The metric as runs name it (`exact_match`, a metric config name, `faithfulness`, …)
   * @maxLength 100
   * @example "answer-correctness"
   */
  name: string;
  /**
   * Thresholds for the rows of one dimension value (at most 100)
   * @maxItems 100
   */
  per_dimension?: DimensionThresholdDto[];
  threshold: ThresholdDto;
  /** Judged metrics: the gate requires the judge's validation against human labels */
  validation?: PlanValidationDto;
}

export interface PlanMetricResponse {
  /** @example true */
  gating: boolean;
  /** @example "answer-correctness" */
  name: string;
  per_dimension: DimensionThresholdResponse[];
  threshold: ThresholdResponse;
  /** Present when the gate requires the judge's validation */
  validation?: PlanValidationResponse;
}

/** @example {"min_kappa_lower":0.6,"on_failure":"fail"} */
export interface PlanValidationDto {
  /**
   * The lower bound of the validation's kappa interval must reach this (-1..1)
   * @min -1
   * @max 1
   * @example 0.6
   */
  min_kappa_lower?: number;
  /**
   * The lower bounds of both the true positive and the true negative rate intervals must reach this (0..1)
   * @min 0
   * @max 1
   * @example 0.8
   */
  min_rates_lower?: number;
  /**
   * `fail`: an unvalidated or poorly validated judge fails the gate; `warn`: a warning
   * @example "fail"
   */
  on_failure: "fail" | "warn";
}

export interface PlanValidationResponse {
  /** @example 0.6 */
  min_kappa_lower: number | null;
  /** @example null */
  min_rates_lower: number | null;
  /** @example "fail" */
  on_failure: "fail" | "warn";
}

export interface PresignedUrlResponse {
  /**
   * Hash of the version's content (the same for every format)
   * @example "9f2c4a1be0d3c5f7a8b6e4d2c0a1f3e5b7d9c8a6f4e2d0b1c3a5e7f9d8b6c4a2"
   */
  content_sha256: string;
  /**
   * @format date-time
   * @example "2025-05-20T09:30:00.000Z"
   */
  expires_at: string;
  /** @example "faq-golden-set-v3.csv" */
  filename: string;
  /** @example "csv" */
  format: "csv" | "jsonl" | "parquet";
  /** @example "GET" */
  method: "GET";
  /**
   * GET this URL without a bearer token until `expires_at`
   * @example "https://eval.example.com/datasets/files/6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c/89fa3cc1-e563-4ad1-af4c-d5becdca17df?format=csv&expires=1747733400&signature=3b1f…"
   */
  url: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface ProblemFieldError {
  /** @example "email" */
  field: string;
  /** @example "email must be an email" */
  message: string;
}

export interface ProblemResponse {
  /** @example "email must be an email" */
  detail: string;
  /**
   * Stable machine-readable code; see docs/errors.md
   * @example "validation_failed"
   */
  error_code: string;
  /**
   * On validation_failed (and metric_params_invalid): one {field, message} per offending field. On the other codes whose description says "`errors` lists each problem" (project_dimensions_invalid, test_plan_invalid, rubric_invalid, report_content_invalid, …): one line per problem
   * @example [{"field":"email","message":"email must be an email"}]
   */
  errors?: (ProblemFieldError | string)[];
  /**
   * Correlates with the X-Request-Id header and the server logs
   * @example "3f0c2d4e-8b1a-4c5d-9e7f-6a2b1c0d9e8f"
   */
  request_id?: string;
  /** @example 400 */
  status: number;
  /** @example "Validation failed" */
  title: string;
  /** @example "/problems/validation-failed" */
  type: string;
}

export interface ProjectCoverageResponse {
  /**
   * Covered values / all values over every dimension (null when the project has no dimensions)
   * @example 0.83
   */
  coverage_ratio: number | null;
  datasets: CoverageDataset[];
  dimensions: CoverageDimension[];
  /** Values with fewer than min_rows rows, fewest first */
  gaps: CoverageGap[];
  /** @example 1 */
  min_rows: number;
  pairs: CoveragePair[];
  /** @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010" */
  project_id: string;
  /** @example 214 */
  total_rows: number;
}

export interface ProjectCreateResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example ["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"] */
  dataset_ids: string[];
  /** @example "Release gate of the support assistant" */
  description: string;
  /**
   * `template` (a template's list as it is), `template_edited`, `custom` (no template) or `none`
   * @example "template_edited"
   */
  dimension_source: "template" | "template_edited" | "custom" | "none";
  /** The coverage dimensions with their values */
  dimensions: DimensionDefinition[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  id: string;
  /** @example "support-bot-release" */
  name: string;
  /** @example ["a92b7315-b960-467d-9b3d-45e8b02b3351"] */
  sut_ids: string[];
  /**
   * The template the project was created from, if any
   * @example "customer-support-assistant"
   */
  template: string | null;
  test_plan: ProjectTestPlanRef | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ProjectListItem {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example 1 */
  dataset_count: number;
  /** @example "Release gate of the support assistant" */
  description: string;
  /** @example 2 */
  dimension_count: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  id: string;
  /** @example "support-bot-release" */
  name: string;
  /** @example 1 */
  sut_count: number;
  /** @example "customer-support-assistant" */
  template: string | null;
  test_plan: ProjectTestPlanRef | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ProjectListItemPage {
  items: ProjectListItem[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface ProjectPatchResponse {
  /** @example ["description","dataset_ids"] */
  changed: string[];
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example ["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"] */
  dataset_ids: string[];
  /** @example "Release gate of the support assistant" */
  description: string;
  /** The coverage dimensions with their values */
  dimensions: DimensionDefinition[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  id: string;
  /** @example "support-bot-release" */
  name: string;
  /** @example ["a92b7315-b960-467d-9b3d-45e8b02b3351"] */
  sut_ids: string[];
  /**
   * The template the project was created from, if any
   * @example "customer-support-assistant"
   */
  template: string | null;
  test_plan: ProjectTestPlanRef | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ProjectResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example ["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"] */
  dataset_ids: string[];
  /** @example "Release gate of the support assistant" */
  description: string;
  /** The coverage dimensions with their values */
  dimensions: DimensionDefinition[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  id: string;
  /** @example "support-bot-release" */
  name: string;
  /** @example ["a92b7315-b960-467d-9b3d-45e8b02b3351"] */
  sut_ids: string[];
  /**
   * The template the project was created from, if any
   * @example "customer-support-assistant"
   */
  template: string | null;
  test_plan: ProjectTestPlanRef | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ProjectTestPlanRef {
  /**
   * @format uuid
   * @maxLength 36
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  id: string;
  /**
   * The plan's newest version (newer than `version` means an update is available)
   * @example 3
   */
  latest_version: number;
  /** @example "support-release-plan" */
  name: string;
  /**
   * The version number the project carries
   * @example 3
   */
  version: number;
}

export interface ProjectTrendResponse {
  /**
   * @format date-time
   * @example "2025-04-01T00:00:00.000Z"
   */
  from: string | null;
  /** @example "topic" */
  group_by: string | null;
  /** @example "week" */
  interval: "run" | "day" | "week";
  /** @example ["answer-correctness","latency"] */
  metrics: string[];
  /** @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010" */
  project_id: string;
  runs: TrendRun[];
  series: TrendSeries[];
  /**
   * @format date-time
   * @example "2025-06-01T00:00:00.000Z"
   */
  to: string | null;
}

export interface PromoteDatasetVersionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface PromoteTraceVersionParams {
  promote: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface PublishCustomOpParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface PublishCustomOpRequest {
  /**
   * @maxLength 2000
   * @example "Share of toxic sentences in the answer, from the moderation model"
   */
  description?: string;
  /**
   * Where the service POSTs batches: {op, params, items} -> {results} (docs/ops.md)
   * @format uri
   * @maxLength 2000
   * @example "https://ops.example.com/toxicity"
   */
  endpoint_url: string;
  /**
   * Checked with GET on each deploy (2xx = healthy); default: an empty batch POSTed to endpoint_url must answer {results: []}
   * @format uri
   * @maxLength 2000
   * @example "https://ops.example.com/healthz"
   */
  health_url?: string;
  /** @example "metric" */
  kind: "metric" | "check" | "enrichment" | "transform";
  /**
   * Unique in the workspace and not a built-in op's name; registering a name again adds a version
   * @maxLength 64
   * @example "toxicity-scorer"
   */
  name: string;
  /**
   * JSON Schema (draft-07) of the op's parameters; its root must be an object schema. Default: an object with no properties allowed
   * @example {"type":"object","properties":{"min_length":{"type":"integer","format":"int32","minimum":1,"maximum":100000}},"additionalProperties":false}
   */
  params_schema?: Record<string, any>;
  /**
   * A workspace secret sent as `Authorization: Bearer <value>` (admins choose where secrets go)
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string | null;
  /**
   * Per call, 100..300000 ms (default 30000)
   * @min 100
   * @max 300000
   * @example 30000
   */
  timeout_ms?: number;
}

export interface PutAuditRetentionRequest {
  /**
   * Days the workspace keeps its audit events (30..36500); null follows the service's default (AUDIT_RETENTION_DAYS)
   * @format int32
   * @min 30
   * @max 36500
   * @example 365
   */
  retention_days: number | null;
}

export interface PutSectionPromptRequest {
  /**
   * The prompt (1..20,000 characters); placeholders: {{run_name}}, {{sut_name}}, {{dataset_name}}, {{section_title}}, {{questions}}, {{data}}
   * @maxLength 20000
   * @pattern \S
   * @example "Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}} for the release board. Use only the figures given.
   *
   * Questions to answer:
   * {{questions}}
   *
   * Figures (JSON):
   * {{data}}"
   */
  prompt: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

/** @example {"window_seconds":900,"max_spans":50000} */
export interface PutTraceLiveSettingsRequest {
  /**
   * Spans a head version takes before it is sealed (1 .. 10,000,000; default 100,000)
   * @min 1
   * @max 10000000
   * @example 50000
   */
  max_spans?: number;
  /**
   * Seconds a head version takes spans before it is sealed and the next one opens (10 s .. 30 days; default 3600)
   * @min 10
   * @max 2592000
   * @example 900
   */
  window_seconds?: number;
}

/** @example {"retention_days":30} */
export interface PutTraceRetentionRequest {
  /**
   * Days trace data is kept (1 .. 3650); null keeps it forever
   * @format int32
   * @min 1
   * @max 3650
   * @example 30
   */
  retention_days: number | null;
}

export interface PutTraceTagsRequest {
  /**
   * `add` (default) adds the tags to each trace; `replace` makes them each trace's only tags (an empty list clears them)
   * @default "add"
   * @example "replace"
   */
  mode?: "add" | "replace";
  /**
   * Tags: 1..100 characters of letters, digits, `-`, `_`, `.`, `:` or `/` (at most 50)
   * @maxItems 50
   * @example []
   */
  tags: string[];
  /**
   * Traces of the version (at most 1000)
   * @maxItems 1000
   * @minItems 1
   * @example ["4bf92f3577b34da6a3ce929d0e0e4736","5b8efff798038103d269b633813fc60c"]
   */
  trace_ids: string[];
}

export interface QualityCheckParamDto {
  /**
   * Default value
   * @example 0.85
   */
  default: number | string | boolean | string[] | null;
  /** @example "Jaccard similarity at or above which two texts are near duplicates" */
  description: string;
  /** @example "number" */
  type: "number" | "string" | "boolean" | "string[]";
}

export interface QualityCheckResultDto {
  /**
   * affected_rows / rows checked
   * @example 0.0093
   */
  affected_ratio: number;
  /** @example 2 */
  affected_rows: number;
  /** @example "near_duplicates" */
  check: string;
  findings: QualityFindingDto[];
  /** @example "warn" */
  status: "pass" | "warn" | "fail" | "skipped";
  /** @example "2 rows are near duplicates of another" */
  summary: string;
}

export interface QualityFindingDto {
  /** @example "question" */
  column?: string;
  /** @example {"similarity":0.91} */
  detail?: Record<string, any>;
  /** @example "Near duplicates (similarity 0.91)" */
  message: string;
  /**
   * Rows the finding is about
   * @example ["0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","69f1ff1c-e24a-4a1b-9b43-2656779f2185"]
   */
  row_ids: string[];
}

export interface QueryAnnotationAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface QueryDatasetParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface QueryDatasetVersionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface QueryDimensionsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface QueryResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * Matching rows: `_row_id` and the selected columns
   * @example [{"_row_id":"0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"}]
   */
  items: Record<string, any>[];
  /** @example 50 */
  limit: number;
  /**
   * Pass as `cursor` for the next page; null on the last page. Versions are immutable, so pages stay stable.
   * @example "eyJvZmZzZXQiOjUwfQ"
   */
  next_cursor: string | null;
  /** @example 0 */
  offset: number;
  /**
   * Rows matching the filter, counted up to 10,000 (absent when include_total is false)
   * @example 57
   */
  total?: number;
  /**
   * True when more than 10,000 rows match: `total` is then 10,000
   * @example false
   */
  total_capped?: boolean;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example 3 */
  version_number: number;
}

export interface QueryRunResultsParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface QueryRunTableParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface QueryTextAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface QueryVisualAnalysisParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface QuestionItem {
  /**
   * Stable within the schema: `<section>.<n>`
   * @example "summary.1"
   */
  id: string;
  /**
   * `builtin` (from the run's metrics and dimensions) or `config` (added by the report config)
   * @example "builtin"
   */
  source: "builtin" | "config";
  /** @example "Did the run pass its pass rule?" */
  text: string;
}

export interface QuestionSchemaResponse {
  /**
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  config_id: string | null;
  /**
   * The dimensions of the run's rows
   * @example ["topic","customer_persona"]
   */
  dimensions: string[];
  /**
   * An earlier run of the same SUT on the same dataset exists to compare with
   * @example true
   */
  has_baseline: boolean;
  /**
   * The run's metrics
   * @example ["answer-correctness","faithfulness","latency"]
   */
  metrics: string[];
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  sections: QuestionSection[];
}

export interface QuestionSection {
  /** @example "summary" */
  key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  questions: QuestionItem[];
  /** @example "Summary" */
  title: string;
}

export interface QueuedRunDto {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "support-bot-v2 nightly 2025-05-13" */
  name: string;
  /**
   * 1 for the next to start; null while running
   * @format int64
   * @example null
   */
  position: number | null;
  progress: RunProgressDto;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /** @example "running" */
  state: "queued" | "running";
}

/** @example {"value":0.8,"successes":20,"trials":25,"interval":{"low":0.609,"high":0.911},"reason":null} */
export interface RateFigureResponse {
  interval: IntervalResponse | null;
  /**
   * Why there is no value (no item of the kind)
   * @example null
   */
  reason: string | null;
  /**
   * @format int64
   * @example 20
   */
  successes: number;
  /**
   * @format int64
   * @example 25
   */
  trials: number;
  /** @example 0.8 */
  value: number | null;
}

export interface ReactivateUserParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface ReadinessCheck {
  /**
   * Why the dependency is down; absent when it is up.
   * @example "the database did not answer within 2 s"
   */
  error?: string;
  /**
   * How long the probe took, in milliseconds (the bound when it timed out).
   * @example 2000
   */
  latency_ms: number;
  /**
   * `up` when the dependency answered within the bound, else `down`.
   * @example "down"
   */
  status: "up" | "down";
}

export interface ReadyResponse {
  /**
   * One entry per registered dependency (`database`, `queue`, …).
   * @example {"database":{"status":"up","latency_ms":2},"queue":{"status":"up","latency_ms":1}}
   */
  checks: Record<string, ReadinessCheck>;
  /**
   * Always `ready` on a 200 answer; a dependency that is down makes the answer 503.
   * @example "ready"
   */
  status: "ready";
}

export interface RecommendationDefinition {
  /**
   * Dataset quality checks to run (`exact_duplicates`, `pii`, …; at most 20)
   * @maxItems 20
   * @example ["exact_duplicates","pii"]
   */
  checks?: string[];
  /**
   * @maxLength 2000
   * @example "What every retrieval-backed support assistant should be tested for"
   */
  description?: string;
  /**
   * Dimensions to cover (snake_case names; at most 20)
   * @maxItems 20
   * @example ["topic","customer_persona"]
   */
  dimensions?: string[];
  /**
   * Metrics of the package (at most 50)
   * @maxItems 50
   */
  metrics: RecommendedMetricDto[];
  /**
   * @maxLength 100
   * @example "Support RAG essentials"
   */
  name: string;
  /**
   * The kind of application (snake_case), e.g. `rag_qa`
   * @maxLength 64
   * @pattern ^[a-z][a-z0-9_]{0,63}$
   * @example "rag_qa"
   */
  use_case: string;
}

export interface RecommendedCheckResponse {
  /**
   * The quality check id (POST …/quality-checks:run)
   * @example "pii"
   */
  id: string;
  /**
   * Why the check matters for the use case
   * @example "Support transcripts carry e-mail addresses and phone numbers"
   */
  reason: string;
}

export interface RecommendedMetricDto {
  /**
   * @maxLength 500
   * @example "Answers stay within the retrieved help-centre articles"
   */
  description?: string;
  /** @example "judged" */
  kind: "deterministic" | "judged";
  /**
   * The metric as runs name it
   * @maxLength 100
   * @example "faithfulness"
   */
  name: string;
  /** A starting pass rule (omit for an informative metric) */
  threshold?: ThresholdDto;
}

export interface RecommendedMetricResponse {
  /** @example "Answers stay within the retrieved help-centre articles" */
  description: string;
  /** @example "judged" */
  kind: "deterministic" | "judged";
  /** @example "faithfulness" */
  name: string;
  threshold: ThresholdResponse | null;
}

export interface RecomputeEnrichmentRequest {
  /**
   * Model -> USD per 1M input and output tokens, over the built-in table (matched by model prefix)
   * @example {"my-finetune":{"input_per_1m":0.3,"output_per_1m":1.2}}
   */
  prices?: Record<
    string,
    {
      /** @min 0 */
      input_per_1m: number;
      /** @min 0 */
      output_per_1m: number;
    }
  >;
}

export interface RecomputeTraceEnrichmentParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  recompute: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface RecordGateRequest {
  /**
   * Significance level of the paired tests, after Holm's correction: 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * A run to compare against (the last release): the gate fails on a significant regression of a gating metric or the row verdict, overall or on a dimension value
   * @format uuid
   * @maxLength 36
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  baseline_run_id?: string;
  /**
   * The line of runs the verdict belongs to, e.g. the branch `main` (1..64 letters, digits or . _ : / -); `--baseline latest --baseline-label main` finds the newest run whose verdict with this label passed
   * @maxLength 64
   * @example "main"
   */
  label?: string;
  /**
   * Fewer matched rows than this: `too_few_rows`, no test (2..10000, default 10)
   * @min 2
   * @max 10000
   * @example 10
   */
  min_rows?: number;
  /**
   * The project whose test plan judges the run (default: the one project with a test plan linking the run's SUT or dataset; without one, the run's own pass rule judges)
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  project_id?: string;
}

export interface RecordedGateResponse {
  /** @example 0.05 */
  alpha: number;
  /** @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2" */
  baseline_run_id: string | null;
  /** Every check, in order: run state, thresholds (each metric, then its dimension values) and release rule, or the run's pass rule without a plan; row pass rate; regressions */
  checks: GateCheckDto[];
  /**
   * Blocking checks that failed
   * @example 1
   */
  failures: number;
  /**
   * The project whose plan judged the run; null when none was named or found
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  project_id: string | null;
  record: GateVerdictResponse;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /** The test plan version that judged the run; null: the run's own pass rule did (the project carries no plan, or no project links the run) */
  test_plan: GateTestPlanDto | null;
  /**
   * fail when any blocking check failed
   * @example "fail"
   */
  verdict: "pass" | "fail";
  /**
   * Non-blocking checks that failed
   * @example 0
   */
  warnings: number;
}

/** @example {"level":"trace","mapping":{"output":{"pick":"last_root","field":"output"}}} */
export interface RecordedTracesDto {
  /**
   * Each trace (default) or each session of the trace dataset version is a row
   * @example "trace"
   */
  level?: "trace" | "session";
  /** Where input, output, context, expected output and tool calls are read from the spans (as online evaluators read them) */
  mapping?: TargetMappingDto;
}

export interface RedeployCustomOpParams {
  /** @maxLength 100 */
  name: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface RedeployCustomOpRequest {
  /**
   * @maxLength 2000
   * @example "Share of toxic sentences in the answer, from the moderation model v2"
   */
  description?: string;
  /**
   * @format uri
   * @maxLength 2000
   * @example "https://ops.example.com/toxicity"
   */
  endpoint_url?: string;
  /**
   * '' returns to the protocol probe
   * @format uri
   * @maxLength 2000
   * @example "https://ops.example.com/healthz"
   */
  health_url?: string;
  /**
   * A new parameter schema: registers a new version of the op of the same name
   * @example {"type":"object","properties":{"min_length":{"type":"integer","format":"int32","minimum":1,"maximum":100000}},"additionalProperties":false}
   */
  params_schema?: Record<string, any>;
  /**
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string | null;
  /**
   * @min 100
   * @max 300000
   * @example 45000
   */
  timeout_ms?: number;
}

export interface RegenerateReportParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface RegenerateReportRequest {
  /**
   * Rebuild with this judge instead of the one that built the report
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string;
  /**
   * Keep sections edited through PUT content as they are (default true); false rebuilds them too
   * @example true
   */
  keep_edits?: boolean;
  /**
   * The sections to have, in order (default: the report's current sections; name a deleted one to bring it back)
   * @maxItems 6
   * @minItems 1
   * @example ["summary","metrics_overview","regressions"]
   */
  sections?: (
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations"
  )[];
  /**
   * Write every narrative from the template
   * @example false
   */
  template_only?: boolean;
}

export interface RegisterOpBody {
  /**
   * The custom op (by name) whose endpoint serves this operation; it receives {op: <name>, params, items}
   * @maxLength 64
   * @example "toxicity-scorer"
   */
  custom_op: string;
  /**
   * @maxLength 2000
   * @example "Share of toxic sentences in the answer, from the moderation model"
   */
  description?: string;
  /** @example "metric" */
  kind: "metric" | "check" | "enrichment" | "transform";
  /**
   * Unique in the workspace and not a built-in op's name; registering a name again adds a version
   * @maxLength 64
   * @example "toxicity-scorer"
   */
  name: string;
  /**
   * JSON Schema (draft-07) of the op's parameters; its root must be an object schema. Default: an object with no properties allowed
   * @example {"type":"object","properties":{"min_length":{"type":"integer","format":"int32","minimum":1,"maximum":100000}},"additionalProperties":false}
   */
  params_schema?: Record<string, any>;
}

export interface RegisterOpRequest {
  /**
   * The custom op (by name) whose endpoint serves this operation; it receives {op: <name>, params, items}
   * @maxLength 64
   * @example "toxicity-scorer"
   */
  custom_op: string;
  /**
   * @maxLength 2000
   * @example "Share of toxic sentences in the answer, from the moderation model"
   */
  description?: string;
  /** @example "metric" */
  kind: "metric" | "check" | "enrichment" | "transform";
  /**
   * Unique in the workspace and not a built-in op's name; registering a name again adds a version
   * @maxLength 64
   * @example "toxicity-scorer"
   */
  name: string;
  /**
   * JSON Schema (draft-07) of the op's parameters; its root must be an object schema. Default: an object with no properties allowed
   * @example {"type":"object","properties":{"min_length":{"type":"integer","format":"int32","minimum":1,"maximum":100000}},"additionalProperties":false}
   */
  params_schema?: Record<string, any>;
  /**
   * The workspace that registers the op (admins)
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface RegisterWorkspaceOpParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface RegistryListResponse {
  items: RegistryOpView[];
  /** @example 1 */
  page: number;
  /** @example 50 */
  page_size: number;
  /** @example 23 */
  total: number;
}

export interface RegistryOpView {
  /**
   * Whether runs can use it now (its custom op is active)
   * @example true
   */
  available: boolean;
  /** The custom op serving it (null for built-ins) */
  custom_op: CustomOpRefDto | null;
  /** @example "Share of toxic sentences in the answer, from the moderation model" */
  description: string;
  /** @example "metric" */
  kind: "metric" | "check" | "enrichment" | "transform";
  /** @example "toxicity-scorer" */
  name: string;
  /**
   * JSON Schema (draft-07) of the parameters; they are checked against it wherever the op is used
   * @example {"type":"object","properties":{},"additionalProperties":false}
   */
  params_schema: Record<string, any>;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  registered_at: string | null;
  /**
   * `builtin` (the service's own) or `workspace` (registered, served by a custom op)
   * @example "workspace"
   */
  source: "builtin" | "workspace";
  /** @example null */
  unavailable_reason: string | null;
  /**
   * Registered ops: the newest version; built-ins: 1
   * @example 1
   */
  version: number;
  /**
   * Versions registered under the name
   * @example 1
   */
  version_count: number;
}

export interface ReleaseReviewLeaseParams {
  /**
   * The item's id
   * @format uuid
   * @maxLength 36
   */
  itemId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

/** @example {"mode":"all_metrics","include_dimension_thresholds":true,"min_row_pass_rate":0.9} */
export interface ReleaseRuleDto {
  /**
   * Per-dimension thresholds must hold too (default true)
   * @example true
   */
  include_dimension_thresholds?: boolean;
  /**
   * Required with mode `min_metrics_passing`; at most the number of gating metrics
   * @min 1
   * @max 50
   * @example 2
   */
  min_metrics_passing?: number;
  /**
   * The run's row pass rate must reach this share, 0..1 (default: no such rule)
   * @min 0
   * @max 1
   * @example 0.9
   */
  min_row_pass_rate?: number;
  /**
   * `all_metrics` (default): every gating metric meets its threshold; `min_metrics_passing`: at least `min_metrics_passing` do
   * @example "all_metrics"
   */
  mode?: "all_metrics" | "min_metrics_passing";
}

export interface ReleaseRuleResponse {
  /** @example true */
  include_dimension_thresholds: boolean;
  /**
   * @format int64
   * @example null
   */
  min_metrics_passing: number | null;
  /** @example 0.9 */
  min_row_pass_rate: number | null;
  /** @example "all_metrics" */
  mode: "all_metrics" | "min_metrics_passing";
}

export interface RemoveMemberParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface RenderedRequestDto {
  /**
   * The JSON body, any JSON value
   * @example {"question":"How do I reset my password?","history":[]}
   */
  body?: string | number | boolean | Record<string, any> | any[];
  /**
   * Secrets show as ***
   * @example {"content-type":"application/json","authorization":"Bearer ***"}
   */
  headers: Record<string, string>;
  /** @example "POST" */
  method: string;
  /**
   * Secrets in the URL show as ***
   * @example "https://support-bot.example.com/v2/answer"
   */
  url: string;
}

export interface ReplaceEvalConfigParams {
  /**
   * The eval config's id
   * @format uuid
   * @maxLength 36
   */
  evalConfigId: string;
}

/** @example {"name":"support-release-gate","description":"What a release of support-bot-v2 must pass","metrics":[{"config_name":"answer-correctness","config_version":2,"min_pass_rate":0.9},{"config_name":"faithfulness"},{"config_name":"latency","threshold":2500,"gating":false}],"default_judge_id":"e171b466-fde7-4636-a3d1-b73872eb9e36","pass_rule":{"row":"all","min_pass_rate":0.95,"errors_fail":true}} */
export interface ReplaceEvalConfigRequest {
  /**
   * The judge for judged metrics whose config names none
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  default_judge_id?: string | null;
  /**
   * @maxLength 2000
   * @example "What a release of support-bot-v2 must pass"
   */
  description?: string;
  /**
   * 1..50 metrics, each named once
   * @maxItems 50
   * @minItems 1
   */
  metrics: EvalMetricRefDto[];
  /**
   * Unique in the workspace, case-insensitively
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-release-gate"
   */
  name: string;
  pass_rule?: PassRuleDto;
}

export interface ReplaceMetricConfigVersionParams {
  /** @maxLength 100 */
  configName: string;
  /** @maxLength 32 */
  configVersion: string;
  /**
   * The workspace the config belongs to
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ReplaceProjectTestPlanParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface ReplaceRecommendationParams {
  /** @maxLength 100 */
  recommendationId: string;
  /**
   * The workspace whose recommendations (with the built-in ones) are read or changed
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface ReplaceReportPromptParams {
  /** @maxLength 100 */
  sectionKey: string;
}

export interface ReportConfigResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "What the release board reads" */
  description: string;
  /** @example "15115010-2486-4f4c-a504-6dd7adf2f0b4" */
  id: string;
  /**
   * The workspace settings name this config as the default
   * @example true
   */
  is_default: boolean;
  /** @example "release-review" */
  name: string;
  /**
   * Section keys in report order
   * @example ["summary","regressions","failure_examples"]
   */
  section_keys: string[];
  sections: ReportConfigSectionResponse[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReportConfigSectionDto {
  /**
   * A built-in section
   * @example "summary"
   */
  key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  /**
   * Questions the section should answer beside the built-in ones (up to 20, each up to 500 characters)
   * @maxItems 20
   * @example ["Is the release ready to ship?"]
   */
  questions?: string[];
  /**
   * Its title in reports (default: the built-in title)
   * @minLength 1
   * @maxLength 200
   * @example "Release summary"
   */
  title?: string;
}

export interface ReportConfigSectionResponse {
  /** @example "summary" */
  key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  /**
   * The config's extra questions
   * @example ["Is the release ready to ship?"]
   */
  questions: string[];
  /** @example "Release summary" */
  title: string;
}

export interface ReportConfigSummary {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "What the release board reads" */
  description: string;
  /** @example "15115010-2486-4f4c-a504-6dd7adf2f0b4" */
  id: string;
  /**
   * The workspace settings name this config as the default
   * @example true
   */
  is_default: boolean;
  /** @example "release-review" */
  name: string;
  /**
   * Section keys in report order
   * @example ["summary","regressions","failure_examples"]
   */
  section_keys: string[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReportContentResponse {
  /**
   * The whole report as one Markdown document
   * @example "# support-bot-v2 release review
   *
   * ## Summary
   *
   * The run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out."
   */
  markdown: string;
  /** @example "43488329-2fac-4156-acc1-c4e948966c8d" */
  report_id: string;
  sections: ReportSectionContent[];
  /** @example "support-bot-v2 release review" */
  title: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example 1 */
  version: number;
}

export interface ReportContentUrlResponse {
  /** @example "text/markdown; charset=utf-8" */
  content_type: string;
  /**
   * @format date-time
   * @example "2025-05-20T09:30:00.000Z"
   */
  expires_at: string;
  /** @example "markdown" */
  format: "markdown" | "html";
  /** @example "43488329-2fac-4156-acc1-c4e948966c8d" */
  report_id: string;
  /**
   * A signed URL the service serves without a token until `expires_at`
   * @example "https://eval.example.com/reports/files/43488329-2fac-4156-acc1-c4e948966c8d/content?format=markdown&expires=1747733400&signature=9c4e…"
   */
  url: string;
}

export interface ReportDownloadResponse {
  /** @example "application/pdf" */
  content_type: string;
  /**
   * When the file was rendered
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format date-time
   * @example "2025-05-20T09:30:00.000Z"
   */
  expires_at: string;
  /**
   * The stored export the URL serves
   * @example "c3141298-a7ee-4566-bfb7-3da25f5af77a"
   */
  export_id: string;
  /** @example "support-bot-v2-release-review.pdf" */
  filename: string;
  /** @example "pdf" */
  format: "markdown" | "html" | "pdf";
  /** @example "GET" */
  method: string;
  /** @example "43488329-2fac-4156-acc1-c4e948966c8d" */
  report_id: string;
  /** @example 48211 */
  size_bytes: number;
  /**
   * A signed URL the service serves without a token until `expires_at`
   * @example "https://eval.example.com/reports/files/43488329-2fac-4156-acc1-c4e948966c8d/exports/c3141298-a7ee-4566-bfb7-3da25f5af77a?expires=1747733400&signature=51af…"
   */
  url: string;
}

export interface ReportResponse {
  /**
   * The earlier run `regressions` compares against
   * @format uuid
   * @maxLength 36
   * @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2"
   */
  baseline_run_id: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  config_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * Sections changed through PUT content
   * @example 0
   */
  edited_sections: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  generated_at: string;
  /** @example "43488329-2fac-4156-acc1-c4e948966c8d" */
  id: string;
  /**
   * The judge that wrote narratives (null: every narrative from the template)
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id: string | null;
  /**
   * Sections whose narrative the judge wrote
   * @example 3
   */
  judge_sections: number;
  /**
   * The run the report is built from
   * @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4"
   */
  run_id: string;
  /**
   * Section keys in order
   * @example ["summary","metrics_overview","regressions"]
   */
  section_keys: string[];
  sections: ReportSectionContent[];
  /** @example "support-bot-v2 release review" */
  title: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * Increases with every change (edit, delete, regenerate)
   * @example 1
   */
  version: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReportSectionContent {
  /**
   * The figures behind the section, computed from the run's results
   * @example {"rows":214,"passed_rows":199,"pass_rate":0.93,"passed":true}
   */
  data: Record<string, any>;
  /**
   * Changed through PUT content since it was generated
   * @example false
   */
  edited: boolean;
  /**
   * @format date-time
   * @example null
   */
  edited_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example null
   */
  edited_by: string | null;
  /**
   * `judge`: the narrative came from the workspace's judge; `template`: from the deterministic template
   * @example "judge"
   */
  generated_by: "judge" | "template";
  /**
   * Why the judge's narrative was not used (the call failed); null otherwise
   * @example null
   */
  judge_error: string | null;
  /** @example "summary" */
  key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  /**
   * Heading, narrative and figures as Markdown
   * @example "## Summary
   *
   * The run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out."
   */
  markdown: string;
  /**
   * The questions the section answers
   * @example ["Did the run pass its pass rule?"]
   */
  questions: string[];
  /** @example "Summary" */
  title: string;
}

export interface ReportSectionPromptResponse {
  /**
   * The built-in prompt (what DELETE falls back to)
   * @example "Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}}. …"
   */
  builtin_prompt: string;
  /** @example ["{{run_name}}","{{sut_name}}","{{dataset_name}}","{{section_title}}","{{questions}}","{{data}}"] */
  placeholders: string[];
  /**
   * The prompt in effect
   * @example "Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}} for the release board. Use only the figures given.
   *
   * Questions to answer:
   * {{questions}}
   *
   * Figures (JSON):
   * {{data}}"
   */
  prompt: string;
  /** @example "summary" */
  section_key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  /**
   * `builtin`, or `custom` when the workspace replaced it
   * @example "custom"
   */
  source: "builtin" | "custom";
  /** @example "Summary" */
  title: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  updated_by: string | null;
}

export interface ReportSettingsResponse {
  /**
   * Sections whose prompt the workspace replaced
   * @example ["summary"]
   */
  custom_prompts: string[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  default_config_id: string | null;
  /** @example "pdf" */
  default_format: "markdown" | "html" | "pdf";
  /** @example ["markdown","html","pdf"] */
  formats: ("markdown" | "html" | "pdf")[];
  /**
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  updated_by: string | null;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReportSummary {
  /**
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  config_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * Sections changed through PUT content
   * @example 0
   */
  edited_sections: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  generated_at: string;
  /** @example "43488329-2fac-4156-acc1-c4e948966c8d" */
  id: string;
  /**
   * Sections whose narrative the judge wrote
   * @example 3
   */
  judge_sections: number;
  /**
   * The run the report is built from
   * @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4"
   */
  run_id: string;
  /**
   * Section keys in order
   * @example ["summary","metrics_overview","regressions"]
   */
  section_keys: string[];
  /** @example "support-bot-v2 release review" */
  title: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReportSummaryPage {
  items: ReportSummary[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface RerunParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface RerunRequest {
  /**
   * `all` rows again, only rows whose call failed (`errors`), or rows that errored or failed the pass rule (`failed`); default all
   * @example "errors"
   */
  mode?: "all" | "errors" | "failed";
}

export interface ResendInvitationParams {
  /**
   * The invitation's id
   * @format uuid
   * @maxLength 36
   */
  invitationId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ResetPasswordRequest {
  /**
   * @minLength 8
   * @maxLength 256
   * @example "a-new-and-longer-passphrase"
   */
  password: string;
}

export interface ResetTokenResponse {
  /**
   * @format date-time
   * @example "2025-05-13T15:05:12.000Z"
   */
  expires_at: string;
  /**
   * Shown once. Redeem with POST /auth/token {"grant_type": "reset_token", "reset_token", "new_password"}.
   * @example "rst_example-reset-token-not-a-real-one"
   */
  reset_token: string;
  /**
   * How to redeem the token
   * @example "POST /auth/token with {"grant_type": "reset_token", "reset_token": "<this token>", "new_password": "<8 to 256 characters>"}; it works once"
   */
  usage: string;
  /** @example "7decc0e4-66f7-48ce-95ab-9a5bb71185c6" */
  user_id: string;
}

export interface ResetUserPasswordParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface ResolvePartitionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Include each member's rows in full (default false: ids only)
   * @default false
   */
  include_rows: boolean;
  /**
   * Members per page, 1..1000
   * @min 1
   * @max 1000
   * @default 100
   */
  limit: number;
  /**
   * @min 0
   * @max 10000000
   * @default 0
   */
  offset: number;
  /**
   * The partition's id
   * @format uuid
   * @maxLength 36
   */
  partitionId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface RetryPolicyDto {
  /**
   * Default 500; doubles per attempt with full jitter
   * @min 0
   * @max 60000
   * @example 500
   */
  initial_backoff_ms?: number;
  /**
   * Calls in all, the first included (1..10, default 3)
   * @min 1
   * @max 10
   * @example 3
   */
  max_attempts?: number;
  /**
   * Default 10000; also caps Retry-After
   * @min 0
   * @max 300000
   * @example 10000
   */
  max_backoff_ms?: number;
  /**
   * Default 408, 409, 425, 429, 500, 502, 503, 504
   * @maxItems 50
   * @example [408,429,500,502,503,504]
   */
  retry_on_status?: number[];
  /**
   * Default true
   * @example true
   */
  retry_on_timeout?: boolean;
}

export interface RetryPolicyResponse {
  /** @example 500 */
  initial_backoff_ms: number;
  /** @example 3 */
  max_attempts: number;
  /** @example 10000 */
  max_backoff_ms: number;
  /** @example [408,429,500,502,503,504] */
  retry_on_status: number[];
  /** @example true */
  retry_on_timeout: boolean;
}

export interface RevealSecretParams {
  /**
   * The secret's id
   * @format uuid
   * @maxLength 36
   */
  secretId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface ReviewExportRequest {
  /**
   * With `dataset_name`: create the dataset when the workspace has none of that name (default false)
   * @example true
   */
  create_dataset?: boolean;
  /**
   * The test-case dataset the labelled items go to as new rows of a new candidate version. Absent (dataset-version and run sources): the label columns are added to the source dataset's rows, in its next version
   * @minLength 1
   * @maxLength 200
   * @example "confirmed production failures"
   */
  dataset_name?: string;
  /** A traces queue: the final labels as the trace version's next ground truth (its newest ground truth's items, the queue's label winning for each trace it labelled), instead of a dataset */
  ground_truth?: GroundTruthExportDto;
}

export interface ReviewExportResponse {
  /**
   * Final labels already in the dataset from an earlier export
   * @example 0
   */
  already_exported: number;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * With `ground_truth`: the number of the trace version's new ground truth (dataset_id and version_id are the trace dataset and version)
   * @format int64
   * @example 2
   */
  ground_truth_number?: number;
  /**
   * In place: final labels of rows the source dataset's newest version no longer has; with `ground_truth`: traces labelled without an expected output (and none earlier), left out
   * @example []
   */
  missing_rows: string[];
  /**
   * Rows written
   * @example 12
   */
  rows: number;
  /**
   * The new candidate version, or null when every final label was exported before
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id: string | null;
  /**
   * @format int64
   * @example 2
   */
  version_number: number | null;
}

export interface ReviewItemCounts {
  /** @example 5 */
  disagreement: number;
  /** @example 15 */
  final: number;
  /** @example 40 */
  pending: number;
  /** @example 60 */
  total: number;
}

export interface ReviewItemResponse {
  /**
   * What a reviewer needs: for a row its input, expected output, output and the run's verdicts; for a trace its spans
   * @example {"input":"How do I get a refund?"}
   */
  context: Record<string, any>;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example null */
  final_label: Record<string, any> | null;
  /** @example "consensus" */
  final_source: "consensus" | "adjudication" | null;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52" */
  id: string;
  /**
   * Labels given so far
   * @example 1
   */
  labelled: number;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51" */
  queue_id: string;
  /**
   * The row id, trace id or session id in the source
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a60"
   */
  ref: string;
  /**
   * The run's id for a run source, else null
   * @example null
   */
  run_id: string | null;
  /** @example "pending" */
  state: "pending" | "final" | "disagreement";
}

export interface ReviewItemResponsePage {
  items: ReviewItemResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface ReviewJudgeRunResponse {
  /** @example 0.95 */
  confidence: number;
  /** @example "answer-correctness" */
  config_name: string;
  /**
   * @format int64
   * @example 2
   */
  config_version: number;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * The first 20 items the judge could not grade
   * @example []
   */
  errors: JudgeRunItemError[];
  /** @example null */
  failure: JudgeRunFailure | null;
  /**
   * The rubric field whose final labels are the human verdicts
   * @example "correct"
   */
  field: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /**
   * Items the judge gave a verdict on
   * @format int64
   * @example 46
   */
  graded: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a61"
   */
  id: string;
  /**
   * Finally labelled items taken (at most 2,000, the first in queue order)
   * @format int64
   * @example 48
   */
  items: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string | null;
  /**
   * The judged metric config version applied
   * @format uuid
   * @maxLength 36
   * @example "3f5a0983-0d67-4a7e-a129-973f816631f0"
   */
  metric_config_id: string;
  /** @example null */
  positive: string[] | null;
  /**
   * `{done, total}` items graded so far, while it runs
   * @example null
   */
  progress: Record<string, any> | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51"
   */
  queue_id: string;
  /**
   * The queue's rubric version when the run was asked for
   * @format int64
   * @example 1
   */
  rubric_version: number;
  /**
   * @format int64
   * @example 7
   */
  seed: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /** @example "succeeded" */
  state: "queued" | "running" | "succeeded" | "failed" | "cancelled";
  /**
   * Items the judge could not grade (its call failed or its answer held no verdict)
   * @format int64
   * @example 2
   */
  ungraded: number;
  /**
   * Items whose final label has no value of the field (an optional field left empty)
   * @format int64
   * @example 0
   */
  unlabelled: number;
  /**
   * The judge validation recorded, once succeeded (GET /judge-validations/{validation_id})
   * @format uuid
   * @maxLength 36
   * @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a62"
   */
  validation_id: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface ReviewJudgeRunResponsePage {
  items: ReviewJudgeRunResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface ReviewLabelResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** Every earlier value of the label, oldest first, with who changed it and when */
  history: LabelChange[];
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a53" */
  id: string;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a52" */
  item_id: string;
  /** @example "label" */
  kind: "label" | "skip";
  /** @example null */
  reason: string | null;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  reviewer_id: string;
  /** @example 1 */
  rubric_version: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example {"correct":true,"tone":"warm","helpfulness":4} */
  values: Record<string, any> | null;
}

export interface ReviewQueueResponse {
  /** @example [] */
  adjudicators: string[];
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Confirm the judge failures on refund questions" */
  description: string;
  /** @example "0196a7b3-5c2d-7e4f-8a9b-0c1d2e3f4a51" */
  id: string;
  items: ReviewItemCounts;
  /** @example 15 */
  lease_minutes: number;
  /** @example "Refund answers, week 12" */
  name: string;
  /** @example 2 */
  overlap: number;
  /** @example ["2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"] */
  reviewers: string[] | null;
  rubric: RubricVersionResponse;
  /**
   * Whether item contexts carry the run's verdicts and scores (`passed`, `scores`)
   * @example false
   */
  show_verdicts: boolean;
  source: ReviewSourceDto;
  /** @example "open" */
  state: "open" | "closed";
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface ReviewQueueResponsePage {
  items: ReviewQueueResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface ReviewSourceDto {
  /**
   * The run id (`run`) or the dataset version id (the others)
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  id: string;
  /**
   * `run`: rows of a run; `dataset_version`: rows of a dataset version; `traces` / `sessions`: traces or sessions of a trace dataset version
   * @example "dataset_version"
   */
  kind: "run" | "dataset_version" | "traces" | "sessions";
}

export interface ReviewerAgreementResponse {
  /** @example 60 */
  labelled: number;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  reviewer_id: string;
  /**
   * {value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it
   * @example {"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}
   */
  with_final: Record<string, any>;
  /**
   * {value, interval: {low, high, confidence, resamples, undefined_resamples} | null, reason}: value null with the reason when the data do not define it
   * @example {"value":0.62,"interval":{"low":0.41,"high":0.8},"reason":null}
   */
  with_others: Record<string, any>;
}

export interface RevokeApiKeyParams {
  /**
   * The api key's id
   * @format uuid
   * @maxLength 36
   */
  apiKeyId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface RevokeInvitationParams {
  /**
   * The invitation's id
   * @format uuid
   * @maxLength 36
   */
  invitationId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface RowMappingDto {
  /**
   * Column holding retrieved context (default `context`)
   * @maxLength 500
   * @example "context"
   */
  context?: string;
  /**
   * Column holding the reference answer (default `expected_output`)
   * @maxLength 500
   * @example "answer"
   */
  expected_output?: string;
  /**
   * Column holding the input (default `input`)
   * @maxLength 500
   * @example "question"
   */
  input?: string;
}

export interface RowOperationResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example 1 */
  deleted: number;
  /** @example 12 */
  inserted: number;
  /**
   * Rows in the new version
   * @example 214
   */
  row_count: number;
  /** @example 3 */
  updated: number;
  /** The version the commit created */
  version: DatasetVersionResponse;
}

/** @example {"filter":{"and":[{"field":"language","op":"eq","value":"en"},{"field":"topic","op":"in","value":["billing","returns_refunds"]}]},"sort":[{"field":"topic","direction":"asc"}],"select":["question","answer","topic"],"limit":50,"offset":0,"include_total":true} */
export interface RowQueryRequest {
  /**
   * `next_cursor` of the previous page of the same query
   * @maxLength 2000
   * @example "eyJvZmZzZXQiOjUwfQ"
   */
  cursor?: string;
  /**
   * A filter in the query language (docs/query-language.md): {"and": [...]}, {"or": [...]}, {"not": {...}}, or a predicate {"field": "column.path", "op": "eq|ne|lt|lte|gt|gte|in|contains|starts_with|is_null", "value": ...}; {"dimension": "topic", "op": ..., "value": ...} tests a dimension value
   * @example {"and":[{"field":"language","op":"eq","value":"en"},{"field":"topic","op":"in","value":["billing","returns_refunds"]}]}
   */
  filter?: Record<string, any>;
  /**
   * Count the matching rows, up to 10,000 (default true; false skips the count)
   * @example true
   */
  include_total?: boolean;
  /**
   * Rows per page, 1..1000
   * @min 1
   * @max 1000
   * @default 50
   * @example 50
   */
  limit?: number;
  /**
   * Rows to skip (use either offset or cursor)
   * @min 0
   * @max 100000000
   * @default 0
   * @example 0
   */
  offset?: number;
  /**
   * Columns to return (default: all); `_row_id` always comes back
   * @maxItems 200
   * @example ["question","answer","topic"]
   */
  select?: string[];
  /**
   * Sort keys, first wins; rows keep their dataset order after them
   * @maxItems 5
   * @example [{"field":"topic","direction":"asc"}]
   */
  sort?: {
    direction?: "asc" | "desc";
    /** @maxLength 1000 */
    field: string;
  }[];
}

export interface RubricDto {
  /**
   * 1..20 fields, at least one required
   * @maxItems 20
   * @minItems 1
   * @example [{"name":"correct","type":"pass_fail","required":true},{"name":"tone","type":"categorical","required":false,"options":["curt","neutral","warm"]},{"name":"helpfulness","type":"numeric","required":false,"min":1,"max":5},{"name":"note","type":"free_text","required":false}]
   */
  fields: RubricFieldDto[];
}

export interface RubricFieldDto {
  /**
   * @maxLength 1000
   * @example "Does the answer state the right facts?"
   */
  description?: string;
  /**
   * numeric: the highest score (an integer above min)
   * @min -1000
   * @max 1000
   * @example 5
   */
  max?: number;
  /**
   * numeric: the lowest score (an integer)
   * @min -1000
   * @max 1000
   * @example 1
   */
  min?: number;
  /**
   * 1..64 letters, digits or underscores, starting with a letter
   * @maxLength 64
   * @pattern ^[A-Za-z][A-Za-z0-9_]{0,63}$
   * @example "correct"
   */
  name: string;
  /**
   * categorical: 2..50 distinct options, in their order
   * @maxItems 50
   * @minItems 2
   * @example ["curt","neutral","warm"]
   */
  options?: string[];
  /**
   * Whether every label must give it (default false); final labels agree on every required field
   * @example true
   */
  required?: boolean;
  /** @example "pass_fail" */
  type: "pass_fail" | "categorical" | "numeric" | "free_text";
}

export interface RubricFieldResponse {
  /** @example "Does the answer state the right facts?" */
  description?: string;
  /** @example 5 */
  max?: number;
  /** @example 1 */
  min?: number;
  /** @example "correct" */
  name: string;
  /** @example ["curt","neutral","warm"] */
  options?: string[];
  /** @example true */
  required: boolean;
  /** @example "pass_fail" */
  type: "pass_fail" | "categorical" | "numeric" | "free_text";
}

export interface RubricVersionList {
  items: RubricVersionResponse[];
}

export interface RubricVersionResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example [{"name":"correct","type":"pass_fail","required":true},{"name":"tone","type":"categorical","required":false,"options":["curt","neutral","warm"]},{"name":"helpfulness","type":"numeric","required":false,"min":1,"max":5},{"name":"note","type":"free_text","required":false}] */
  fields: RubricFieldResponse[];
  /** @example 1 */
  version: number;
}

export interface RunDiffResponse {
  /** @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2" */
  base_run_id: string;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  candidate_run_id: string;
  /** @example 100 */
  limit: number;
  /**
   * Metrics compared (those of either run)
   * @example ["answer-correctness","faithfulness","latency"]
   */
  metrics: string[];
  /** @example 0 */
  offset: number;
  /** Regressions first, then improvements, changes, new, missing, unchanged */
  rows: DiffRowDto[];
  /** Whether the changes are real, over every matched row (not only this page) */
  statistics: DiffStatisticsDto;
  summary: DiffSummaryDto;
  /**
   * Rows matching `status` (all rows without it)
   * @example 214
   */
  total: number;
}

export interface RunDiffRowResponse {
  /** The first repetition of the row in each run; null when the run does not have the row */
  base: DiffSideDto | null;
  /** @example "27e1b0d8-e509-43eb-a23c-37b7a89187e2" */
  base_run_id: string;
  candidate: DiffSideDto | null;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  candidate_run_id: string;
  /** @example "Settings > Plan > Cancel; the plan stays active until the end of the billing period." */
  expected_output: string | null;
  /** @example "How do I cancel my plan?" */
  input: string | null;
  /** @example {"answer-correctness":{"base":0.75,"candidate":0.5,"delta":-0.25,"base_passed":true,"candidate_passed":false}} */
  metrics: Record<string, MetricDeltaDto>;
  /**
   * The dataset row (from the candidate run, else the base)
   * @example {"question":"How do I cancel my plan?","answer":"Settings > Plan > Cancel; the plan stays active until the end of the billing period.","topic":"cancellation","language":"en"}
   */
  row: Record<string, any>;
  /** @example "6c861b83-60a8-4bcf-845d-126ac56874a4" */
  row_id: string;
  /** @example "regressed" */
  status:
    | "regressed"
    | "improved"
    | "unchanged"
    | "changed"
    | "new"
    | "missing";
}

export interface RunEventResponse {
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  at: string;
  /** @example {"from":"running","to":"succeeded","reason":null,"passed":true,"pass_rate":0.93} */
  data: Record<string, any>;
  /**
   * Increasing within the run (the service's event counter, so not consecutive): pass the last one as `after`
   * @format int64
   * @min 1
   * @example 1042
   */
  seq: number;
  /**
   * state_changed, progress, row_error, judge_error, upload_received, rerun_started
   * @example "state_changed"
   */
  type: string;
}

export interface RunFailuresDto {
  /**
   * Rows whose score of this metric failed; absent: rows whose verdict failed
   * @maxLength 200
   * @example "faithfulness"
   */
  metric?: string;
}

export interface RunItemResultDto {
  /** @example 0.00041 */
  cost_usd: number | null;
  /** @example {"topic":"account_access"} */
  dimensions: Record<string, string>;
  /** @example null */
  error: {
    code?: string;
    message?: string;
  } | null;
  /** @example {"sources":["kb/security/reset-password"]} */
  extras: Record<string, any> | null;
  /** @example 1040 */
  latency_ms: number | null;
  /** @example "Open Settings > Security and choose Reset password; the link expires after one hour." */
  output: string | null;
  /** @example true */
  passed: boolean | null;
  /** @example 1 */
  repetition: number;
  /**
   * The dataset row as the run saw it
   * @example {"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"}
   */
  row: Record<string, any>;
  /** @example "0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11" */
  row_id: string;
  /**
   * metric -> {score, passed, normalized, label, reason, detail, error}
   * @example {"answer-correctness":{"score":5,"normalized":1,"passed":true,"label":null,"reason":"Same steps as the reference, and adds the expiry."},"latency":{"score":1040,"passed":true}}
   */
  scores: Record<string, any>;
  /** @example null */
  session_id: string | null;
  /**
   * pending (not called yet), done (answered), error (the call failed)
   * @example "done"
   */
  status: "pending" | "done" | "error";
  /**
   * The W3C trace id the call carried, when the run linked it to the SUT's own trace
   * @example null
   */
  trace_id: string | null;
  /**
   * What the agent did: the tool calls and steps its answer (or its trace) showed; null when none was read
   * @example {"source":"response","steps":[{"type":"tool_call","name":"search_kb","arguments":{"query":"reset password"},"output":["kb/security/reset-password"],"call_id":"call_1"}]}
   */
  trajectory: Record<string, any> | null;
  /**
   * @format int64
   * @example null
   */
  turn: number | null;
  /** @example {"prompt_tokens":412,"completion_tokens":38,"total_tokens":450} */
  usage: Record<string, any> | null;
}

export interface RunMetricView {
  /** @example "answer-correctness" */
  config_name: string | null;
  /**
   * @format int64
   * @example 2
   */
  config_version: number | null;
  /** @example true */
  gating: boolean;
  /**
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id: string | null;
  /** @example "judged" */
  kind: "deterministic" | "judged" | "custom";
  /** @example "correctness" */
  metric: string;
  /** @example 0.9 */
  min_pass_rate: number | null;
  /** @example "answer-correctness" */
  name: string;
  /**
   * How it was chosen: eval_config, workspace_default, latest_version, builtin, op_defaults
   * @example "eval_config"
   */
  source: string;
  /** @example null */
  threshold: number | null;
}

export interface RunOnlineAlertCheckParams {
  /**
   * The alert rule's id
   * @format uuid
   * @maxLength 36
   */
  alertRuleId: string;
  check: string;
}

export interface RunProgressDto {
  /**
   * Items answered by the SUT
   * @example 212
   */
  completed: number;
  /**
   * Items whose call failed
   * @example 2
   */
  errored: number;
  /** @example 0 */
  pending: number;
  /**
   * 0..100
   * @example 100
   */
  percent: number;
  /** @example 214 */
  total: number;
}

export interface RunQualityChecksParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  run: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface RunQualityChecksRequest {
  /**
   * Checks to run, each `{ "check": id, "params": {...} }`; default: every applicable check with default params
   * @maxItems 14
   * @example [{"check":"pii"},{"check":"near_duplicates","params":{"threshold":0.9}}]
   */
  checks?: {
    check:
      | "exact_duplicates"
      | "near_duplicates"
      | "empty_fields"
      | "pii"
      | "length_outliers"
      | "language_mismatch"
      | "label_leakage";
    params?: Record<string, any>;
  }[];
}

export interface RunQueueResponse {
  /**
   * Runs waiting for an offline upload
   * @example 0
   */
  awaiting_upload: number;
  running: QueuedRunDto[];
  waiting: QueuedRunDto[];
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface RunResponse {
  /** @example 2 */
  adapter_revision: number;
  /** @example false */
  cancel_requested: boolean;
  /** @example 8 */
  concurrency: number;
  /** @example "9535f71a-4c76-4544-92c7-d0117af05d92" */
  connection_id: string;
  /**
   * offline runs wait for PUT /runs/{id}/upload
   * @example "http"
   */
  connection_kind: "http" | "openai_chat" | "offline";
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fbe89949-95ca-4fae-9022-be8b4fd7304c"
   */
  eval_config_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string | null;
  metrics: RunMetricView[];
  /** @example "support-bot-v2 nightly 2025-05-13" */
  name: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "e6c2feed-97c3-43e5-b733-96f1ee7aa5e0"
   */
  partition_id: string | null;
  /** @example {"row":"all","min_pass_rate":0.9,"errors_fail":true} */
  pass_rule: {
    errors_fail?: boolean;
    min_pass_rate?: number;
    row?: "all" | "any";
  };
  /**
   * The verdict under the pass rule once the run succeeded
   * @example true
   */
  passed: boolean | null;
  progress: RunProgressDto;
  /** @example 1 */
  repetitions: number;
  rerun_mode: "all" | "errors" | "failed" | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example null
   */
  rerun_of: string | null;
  sample: RunSampleDto | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /**
   * queued, running, awaiting_upload (offline), succeeded, failed, cancelled
   * @example "succeeded"
   */
  state:
    | "queued"
    | "running"
    | "awaiting_upload"
    | "succeeded"
    | "failed"
    | "cancelled";
  /** @example null */
  state_reason: string | null;
  /**
   * Set once the run ended: per metric aggregates, pass rate, latency, cost (GET .../results for breakdowns)
   * @example {"rows":214,"completed":212,"errored":2,"passed_rows":199,"failed_rows":15,"pass_rate":0.93,"passed":true,"reasons":[],"latency_ms":{"mean":1180,"p50":1040,"p90":1890,"p99":2710},"cost_usd_total":0.84}
   */
  summary: Record<string, any> | null;
  /** @example "a92b7315-b960-467d-9b3d-45e8b02b3351" */
  sut_id: string;
  /** @example ["nightly","release-candidate"] */
  tags: string[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface RunResponsePage {
  items: RunResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface RunResultsQueryRequest {
  /**
   * A filter in the dataset query language (docs/query-language.md) over each result:
   * `row.<column>`, `output`, `status` (done, error, pending), `passed`, `latency_ms`,
   * `cost_usd`, `scores.<metric>.score`, `scores.<metric>.passed`, `error.code`, `session_id`,
   * `turn`, `repetition`, `dimensions.<name>`
   * @example {"and":[{"field":"passed","op":"eq","value":false},{"field":"dimensions.topic","op":"eq","value":"billing"}]}
   */
  filter?: Record<string, any>;
  /**
   * 1..1000, default 50
   * @min 1
   * @max 1000
   * @example 50
   */
  limit?: number;
  /**
   * @min 0
   * @max 10000000
   * @example 0
   */
  offset?: number;
  /**
   * Sort keys over the same fields, first wins; results keep dataset order after them
   * @maxItems 5
   * @example [{"field":"latency_ms","direction":"desc"}]
   */
  sort?: {
    direction?: "asc" | "desc";
    /** @maxLength 1000 */
    field: string;
  }[];
}

export interface RunResultsQueryResponse {
  items: RunItemResultDto[];
  /** @example 50 */
  limit: number;
  /** @example 0 */
  offset: number;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /** @example 15 */
  total: number;
}

export interface RunSampleDto {
  /**
   * The same seed draws the same rows (default 0)
   * @min 0
   * @max 2147483647
   * @example 7
   */
  seed?: number;
  /**
   * Rows to draw (at most the rows there are)
   * @min 1
   * @max 1000000
   * @example 100
   */
  size: number;
}

export interface RunSessionResponse {
  /**
   * True when every turn with a verdict passed; null when none has one
   * @example true
   */
  passed: boolean | null;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  run_id: string;
  /** @example "conv-0193" */
  session_id: string;
  /** Turns in order (every repetition of the conversation, repetition then turn) */
  turns: RunSessionTurnDto[];
}

export interface RunSessionTurnDto {
  /** @example 0.00041 */
  cost_usd: number | null;
  /** @example {"topic":"account_access"} */
  dimensions: Record<string, string>;
  /** @example null */
  error: {
    code?: string;
    message?: string;
  } | null;
  /** @example {"sources":["kb/security/reset-password"]} */
  extras: Record<string, any> | null;
  /** @example 1040 */
  latency_ms: number | null;
  /** @example "Open Settings > Security and choose Reset password; the link expires after one hour." */
  output: string | null;
  /** @example true */
  passed: boolean | null;
  /** @example 1 */
  repetition: number;
  /**
   * The dataset row as the run saw it
   * @example {"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"}
   */
  row: Record<string, any>;
  /** @example "0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11" */
  row_id: string;
  /**
   * metric -> {score, passed, normalized, label, reason, detail, error}
   * @example {"answer-correctness":{"score":5,"normalized":1,"passed":true,"label":null,"reason":"Same steps as the reference, and adds the expiry."},"latency":{"score":1040,"passed":true}}
   */
  scores: Record<string, any>;
  /** @example null */
  session_id: string | null;
  /**
   * pending (not called yet), done (answered), error (the call failed)
   * @example "done"
   */
  status: "pending" | "done" | "error";
  /**
   * The W3C trace id the call carried, when the run linked it to the SUT's own trace
   * @example null
   */
  trace_id: string | null;
  /**
   * What the agent did: the tool calls and steps its answer (or its trace) showed; null when none was read
   * @example {"source":"response","steps":[{"type":"tool_call","name":"search_kb","arguments":{"query":"reset password"},"output":["kb/security/reset-password"],"call_id":"call_1"}]}
   */
  trajectory: Record<string, any> | null;
  /**
   * @format int64
   * @example null
   */
  turn: number | null;
  /** @example {"prompt_tokens":412,"completion_tokens":38,"total_tokens":450} */
  usage: Record<string, any> | null;
}

export interface SampleDto {
  /**
   * The same seed over the same rows takes the same rows
   * @min 0
   * @max 2147483647
   * @example 42
   */
  seed: number;
  /**
   * How many of the matching rows to take, 1..1000
   * @min 1
   * @max 1000
   * @example 60
   */
  size: number;
}

/** @example {"type":"numeric","min":1,"max":5} */
export interface ScaleDto {
  /**
   * @maxItems 20
   * @minItems 2
   * @example ["correct","partially_correct","incorrect"]
   */
  labels?: string[];
  /**
   * @min -1000
   * @max 1000
   * @example 5
   */
  max?: number;
  /**
   * @min -1000
   * @max 1000
   * @example 1
   */
  min?: number;
  /**
   * label -> score; default evenly spaced from 1 (first label) to 0 (last)
   * @example {"correct":1,"partially_correct":0.5,"incorrect":0}
   */
  scores?: Record<string, number>;
  /**
   * `numeric` ({min, max}) or `labels` ({labels, scores?})
   * @example "numeric"
   */
  type: "numeric" | "labels";
}

export interface SchemaResponse {
  columns: ColumnStatsDto[];
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  mapping: ColumnMappingDto;
  /** @example 214 */
  row_count: number;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example 3 */
  version_number: number;
}

export interface ScoreInterval {
  /** @example 0.71 */
  high: number;
  /** @example 0.52 */
  low: number;
}

export interface ScoreValidityResponse {
  /**
   * @format int64
   * @example 50
   */
  items: number;
  /** Mean |judge − human| in the scale's units */
  mean_absolute_error: EstimateFigureResponse;
  /** Spearman's rank correlation (ties averaged) */
  spearman: EstimateFigureResponse;
}

export interface SdgAdapterResponse {
  /** @example {"input":"How do I {{dim.task}} in {{seed.product}}?","expected_output":"{{seed.answer}}"} */
  columns: Record<string, string> | null;
  /**
   * @format int64
   * @example null
   */
  count: number | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Paraphrases the golden questions per task" */
  description: string;
  /** @example true */
  dimension_columns: boolean;
  /** @example {"task":["reset a password","change plan"]} */
  dimensions: Record<string, string[]>;
  /** @example "c3ebed4f-a227-4ee3-a299-c84e18aecb04" */
  id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example null
   */
  judge_id: string | null;
  /** @example "template" */
  kind: "template" | "llm";
  /** @example "faq-paraphrases" */
  name: string;
  /** @example null */
  output_columns: string[] | null;
  /** @example null */
  prompt: string | null;
  /** The latest runs, newest first (up to 5) */
  recent_runs: SdgRunResponse[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface SdgAdapterResponsePage {
  items: SdgAdapterResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface SdgRunResponse {
  /** @example "c3ebed4f-a227-4ee3-a299-c84e18aecb04" */
  adapter_id: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /**
   * Candidates left out (a seed column missing, an LLM row without the columns asked for)
   * @example 4
   */
  dropped: number;
  /**
   * The first reasons rows were dropped or a call failed
   * @example ["seed row 17 has no column product"]
   */
  errors: string[];
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example 428 */
  generated: number;
  /** @example "de9ce042-6ae0-40e2-8f9f-b99d76e2b4ca" */
  id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae"
   */
  job_id: string | null;
  /** @example "succeeded" */
  state: "queued" | "running" | "succeeded" | "failed";
  /** @example null */
  state_reason: string | null;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  target_dataset_id: string;
  /**
   * The candidate version made, once succeeded
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id: string | null;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface SdgSeedDto {
  /**
   * Seed rows come from this dataset (its current version, or `version_id`)
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id: string;
  /**
   * Seed rows used at most, in dataset order (1..1000, default 100)
   * @min 1
   * @max 1000
   * @example 100
   */
  limit?: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df"
   */
  version_id?: string;
}

export interface SdkVersionInfo {
  /**
   * Files in the examples bundle
   * @example 6
   */
  example_files: number;
  /**
   * GET this for the examples bundle
   * @example "/examples/versions/0.1.0/download"
   */
  examples_download: string;
  /**
   * What generated the client from the OpenAPI document
   * @example "swagger-typescript-api"
   */
  generator: string;
  /**
   * The client's language
   * @example "typescript"
   */
  language: string;
  /**
   * Operations the client covers
   * @example 251
   */
  operations: number;
  /**
   * GET this for the SDK bundle
   * @example "/sdk/versions/0.1.0/download"
   */
  sdk_download: string;
  /**
   * Files in the SDK bundle
   * @example 3
   */
  sdk_files: number;
  /**
   * The version to pass to the download operations
   * @example "0.1.0"
   */
  version: string;
}

export interface SdkVersionsResponse {
  /**
   * The newest version (`latest` is accepted for it in the download paths)
   * @example "0.1.0"
   */
  latest: string;
  versions: SdkVersionInfo[];
}

export interface SealTraceLiveStreamParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  seal: string;
}

export interface SectionEdit {
  /**
   * The section to change
   * @example "summary"
   */
  key:
    | "summary"
    | "metrics_overview"
    | "results_by_dimension"
    | "regressions"
    | "failure_examples"
    | "recommendations";
  /**
   * Its new Markdown (at most 100,000 characters)
   * @maxLength 100000
   * @example "## Summary
   *
   * The run passed its pass rule: 199 of 214 rows (93%) passed, above the 90% the release needs. Two calls timed out."
   */
  markdown: string;
  /**
   * A new title
   * @minLength 1
   * @maxLength 300
   * @example "Release summary"
   */
  title?: string;
}

export interface SelectableCheck {
  /**
   * Whether the check applies to this version's columns and mapping
   * @example true
   */
  applicable: boolean;
  /**
   * Columns the check would read
   * @example ["question"]
   */
  columns: string[];
  /** @example "Rows whose text is nearly the same" */
  description: string;
  /**
   * Check id, e.g. `near_duplicates`
   * @example "near_duplicates"
   */
  id: string;
  /** @example "Near duplicates" */
  name: string;
  params: Record<string, QualityCheckParamDto>;
  /**
   * Why it applies or not
   * @example "compares the text of "question""
   */
  reason: string;
}

/**
 * A JSON-RPC 2.0 message of the Model Context Protocol
 * @example {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compare_runs","arguments":{"base_run_id":"27e1b0d8-e509-43eb-a23c-37b7a89187e2","candidate_run_id":"cab22811-9604-4326-bc9d-ff3c6d2bd1d4"}}}
 */
export interface SendMcpMessagePayload {
  /** Responses: the JSON-RPC error (code, message, data) */
  error?: Record<string, any>;
  /** Request id (absent in notifications) */
  id?: string | number;
  jsonrpc: "2.0";
  /**
   * Requests and notifications: the method
   * @maxLength 200
   */
  method?: string;
  /** Requests: the method's parameters */
  params?: Record<string, any>;
  /** Responses: the result */
  result?: Record<string, any>;
}

export interface SessionPartition {
  /** @example "session" */
  level: "session";
  /**
   * Rows of the session, in dataset order
   * @example ["0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","6c861b83-60a8-4bcf-845d-126ac56874a4"]
   */
  row_ids: string[];
  /** @example [{"_row_id":"0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","question":"How do I reset my password?","conversation_id":"conv-0193"}] */
  rows?: Record<string, any>[];
  /**
   * The session id (the mapped session_id column's value, or the row id of a single-row session)
   * @example "conv-0193"
   */
  session_id: string;
}

export interface SetAuditRetentionParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface SetMetricConfigDefaultsParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface SetMetricDefaultsRequest {
  /**
   * 1..50 pins, one per metric
   * @maxItems 50
   * @minItems 1
   */
  defaults: MetricDefaultEntryDto[];
}

export interface SetTraceDatasetRetentionParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface SetTraceLiveStreamParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface SetTraceRetentionParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface SetWorkspaceEmbeddingConfigParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface SkipItemRequest {
  /**
   * @maxLength 1000
   * @example "Not my language"
   */
  reason?: string;
}

export interface SkipReviewItemParams {
  /**
   * The item's id
   * @format uuid
   * @maxLength 36
   */
  itemId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
  skip: string;
}

export interface SnapshotResponse {
  /** @example "9f2c4a1be0d3c5f7a8b6e4d2c0a1f3e5b7d9c8a6f4e2d0b1c3a5e7f9d8b6c4a2" */
  content_sha256: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * Formats the snapshot downloads as (GET .../download-url?format=)
   * @example ["csv","jsonl","parquet"]
   */
  formats: ("csv" | "jsonl" | "parquet")[];
  /** @example 214 */
  row_count: number;
  /** @example "current" */
  state: "candidate" | "current" | "retired";
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
  /** @example 3 */
  version_number: number;
}

export interface SpanFieldRefDto {
  /**
   * A dotted path into the span: `output`, `input`, `retrieved_documents`, `attributes.answer`
   * @minLength 1
   * @maxLength 500
   * @example "output"
   */
  field: string;
  /**
   * Only spans of this kind (llm, chain, agent, tool, retriever…)
   * @maxLength 50
   * @example null
   */
  kind?: string | null;
  /**
   * Only spans of this name
   * @maxLength 500
   * @example null
   */
  name?: string | null;
  /**
   * Which spans: the first or last root (in time order), the first or last span, or all of them
   * @example "last_root"
   */
  pick: "first_root" | "last_root" | "first" | "last" | "all";
}

export interface SpanPartition {
  /** @example "span" */
  level: "span";
  /** @example "0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11" */
  row_id: string;
  /** @example "00f067aa0ba902b7" */
  span_id: string;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string;
}

export interface SpanTreeItem {
  /**
   * Spans directly under this one: read them with `parent_span_id` set to its `span_id`
   * @example 3
   */
  child_count: number;
  /**
   * Its level, 1 for a root (null in a read of children)
   * @format int64
   * @example 1
   */
  depth: number | null;
  /**
   * The landed span: the canonical fields of docs/traces.md and its kept `attributes`
   * @example {"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","name":"support-agent","kind":"agent"}
   */
  span: Record<string, any>;
}

export interface SpanTreePage {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** Children in start order (then span id); by depth: level by level, each in start order */
  items: SpanTreeItem[];
  /**
   * Pass as `cursor` for the next page; null on the last page. Versions do not change, so pages stay stable.
   * @example null
   */
  next_cursor: string | null;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string;
}

export interface SsoLogoutResponse {
  /**
   * The identity provider's RP-initiated logout URL, for the browser to open so the provider's
   * own session ends too; null when the provider offers none or single sign-on is not configured.
   * @example "https://idp.example.com/session/end?client_id=evals&post_logout_redirect_uri=https%3A%2F%2Fevals.example.com%2F"
   */
  end_session_url: string | null;
  /**
   * Always true: the token of this call is revoked.
   * @example true
   */
  logged_out: boolean;
}

export interface StagedEditResponse {
  /**
   * Number of the newest version when the edit was staged
   * @example 3
   */
  base_version: number;
  /** @example "update" */
  op: "insert" | "update" | "delete";
  /**
   * The row as it will be (null for a deletion)
   * @example {"question":"How do I cancel my plan?","answer":"Settings > Plan > Cancel; the plan stays active until the end of the billing period.","topic":"cancellation","language":"en"}
   */
  row: Record<string, any> | null;
  /** @example "6c861b83-60a8-4bcf-845d-126ac56874a4" */
  row_id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  staged_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  staged_by: string | null;
  /** @example "ada.lovelace@example.com" */
  staged_by_email: string | null;
}

export interface StartAnalysisRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface StartClusterRunParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface StartOnlineBackfillParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface StartReviewJudgeRunParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

/** @example {"metric_config":{"name":"answer-correctness"},"field":"correct","seed":7} */
export interface StartReviewJudgeRunRequest {
  /**
   * Confidence level of the validation's intervals, 0.5..0.999 (default 0.95)
   * @min 0.5
   * @max 0.999
   * @example 0.95
   */
  confidence?: number;
  /**
   * The rubric field whose final labels are the human verdicts: pass/fail, categorical (with `positive`) or numeric
   * @maxLength 64
   * @pattern ^[A-Za-z_][A-Za-z0-9_]{0,63}$
   * @example "correct"
   */
  field: string;
  metric_config: JudgeRunMetricConfigDto;
  /**
   * The values meaning pass, compared as text case-insensitively (at most 50): required for a
   * categorical field (some of its options); for a numeric field, the scores that pass (without
   * it, a score passes when its place on the field's scale reaches the judge's pass threshold)
   * @maxLength 200
   * @maxItems 50
   * @minItems 1
   * @example ["warm","neutral"]
   */
  positive?: string[];
  /**
   * Seed of the validation's bootstrap intervals (default 1)
   * @format int32
   * @min 0
   * @max 2147483647
   * @example 7
   */
  seed?: number;
}

export interface StartSdgRunParams {
  /**
   * The adapter's id
   * @format uuid
   * @maxLength 36
   */
  adapterId: string;
}

export interface StartSdgRunRequest {
  /**
   * Rows generated at most (1..10000, default 1000)
   * @min 1
   * @max 10000
   * @example 500
   */
  max_rows?: number;
  /**
   * The new version's message
   * @maxLength 2000
   * @example "Paraphrased questions for the May release"
   */
  message?: string;
  seed?: SdgSeedDto;
  /**
   * The dataset that gets the generated rows as a new candidate version (the newest version's rows plus them)
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  target_dataset_id: string;
}

export interface StartSsoLoginParams {
  /**
   * Where the browser goes after the login, its token in the URL's fragment
   * (`#access_token=…&token_type=bearer&expires_in=…&expires_at=…`); its origin must be one
   * SSO_RETURN_ORIGINS lists. Without it the callback answers the token as JSON.
   * @format uri
   * @maxLength 2000
   * @example "https://evals.example.com/app/signed-in"
   */
  return_to?: string;
}

export interface StopCustomOpParams {
  /** @maxLength 100 */
  name: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface StopCustomOpRequest {
  /**
   * Why it is stopped (kept with the state)
   * @maxLength 500
   * @example "The moderation model is being replaced"
   */
  reason?: string;
}

export interface StreamRunEventsParams {
  /**
   * Only events after this `seq` (poll with the last one you saw)
   * @format int64
   * @min 0
   * @max 9007199254740991
   * @example 42
   */
  after?: number;
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface SubmitLabelRequest {
  /**
   * Field name → value: pass_fail true/false, categorical one option, numeric an integer in the scale, free_text text
   * @example {"correct":true,"tone":"warm","helpfulness":4}
   */
  values: Record<string, any>;
}

export interface SubmitReviewLabelParams {
  /**
   * The item's id
   * @format uuid
   * @maxLength 36
   */
  itemId: string;
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface SuggestedMetric {
  /**
   * What it measures and why it matters for this use case.
   * @example "Answers stay within the retrieved help-centre articles"
   */
  description: string;
  /**
   * `deterministic` metrics are computed; `judged` ones are graded by an LLM judge with a rubric.
   * @example "judged"
   */
  kind: "deterministic" | "judged";
  /**
   * Metric name as the metric catalogue knows it (e.g. `faithfulness`, `rouge_l`, `latency_p95_ms`).
   * @example "faithfulness"
   */
  name: string;
  /** A starting pass rule; null when the metric is informative only */
  threshold?: SuggestedThreshold | null;
}

export interface SuggestedThreshold {
  /** @example ">=" */
  operator: ">=" | "<=";
  /** @example 0.8 */
  value: number;
}

export interface SuggestionResponse {
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  suggestions: CheckSuggestion[];
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface SutResponse {
  /**
   * Connections the system has
   * @example 2
   */
  connection_count: number;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "Support assistant with retrieval over the help centre" */
  description: string;
  /** @example "a92b7315-b960-467d-9b3d-45e8b02b3351" */
  id: string;
  /** @example "support-bot-v2" */
  name: string;
  /** @example ["production","rag"] */
  tags: string[];
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface SutResponsePage {
  items: SutResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface SutTemplateConnectionDto {
  /**
   * Where the key goes ({scheme, header?, prefix?, param?}); add your secret_id
   * @example {"scheme":"bearer"}
   */
  auth: Record<string, any> | null;
  /**
   * For kind http: {url, method, headers}
   * @example null
   */
  http?: Record<string, any> | null;
  /** @example "openai_chat" */
  kind: "http" | "openai_chat" | "offline";
  /** @example 4 */
  max_concurrency: number;
  /**
   * For kind openai_chat: {base_url, model, parameters, headers}
   * @example {"base_url":"https://api.openai.com/v1","model":"gpt-4o-mini","parameters":{"temperature":0},"headers":{}}
   */
  openai_chat?: Record<string, any> | null;
  /** @example null */
  requests_per_second: number | null;
  /** @example {"max_attempts":3,"initial_backoff_ms":500,"max_backoff_ms":10000,"retry_on_status":[408,409,425,429,500,502,503,504],"retry_on_timeout":true} */
  retry: Record<string, any>;
  /** @example 60000 */
  timeout_ms: number;
}

export interface SutTemplateDto {
  adapter: CreateAdapterRequest;
  connection: SutTemplateConnectionDto;
  /** @example "Any /chat/completions endpoint: OpenAI, vLLM, Ollama, LiteLLM, OpenRouter… The earlier turns of a session are sent as history." */
  description: string;
  /** @example "openai_chat" */
  id: string;
  /** @example "OpenAI-compatible chat" */
  name: string;
  /**
   * Which dataset columns the adapter reads
   * @example "Map the column with the user message to input; expected_output is used by the metrics, not sent."
   */
  row_mapping_hint: string;
}

export interface SutTemplateList {
  items: SutTemplateDto[];
  /** @example 3 */
  total: number;
}

export interface SweepTraceRetentionParams {
  sweep: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface SweptDataset {
  /**
   * Spans that started before this were deleted
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  cutoff: string;
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** @example 7 */
  retention_days: number;
  /**
   * Scores of online evaluation on traces that started before the cutoff
   * @example 240
   */
  scores_deleted: number;
  /** @example 1180 */
  spans_deleted: number;
  /**
   * Versions whose rows (and statistics) changed
   * @example 2
   */
  versions_updated: number;
}

export interface TagTracesParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

export interface TargetMappingDto {
  /** Default: the documents of every retriever span */
  context?: SpanFieldRefDto | null;
  /** Default: none (production traces rarely carry one) */
  expected_output?: SpanFieldRefDto | null;
  /** Default: the first root span's input */
  input?: SpanFieldRefDto | null;
  /** Default: the last root span's output */
  output?: SpanFieldRefDto | null;
  /** Default: the tool calls of every span */
  tool_calls?: SpanFieldRefDto | null;
}

export interface TemplateDetail {
  /** @example "A chat assistant answering customer questions from a help centre" */
  description: string;
  /** The coverage dimensions, each with its values. Project creation accepts this list as it is, or edited. */
  dimensions: DimensionDefinition[];
  /** @example "customer-support-assistant" */
  name: string;
  suggested_metrics: SuggestedMetric[];
  /** @example "Customer-support assistant" */
  title: string;
  /** @example "customer_support" */
  use_case: string;
}

export interface TemplateSummary {
  /** @example "A chat assistant answering customer questions from a help centre" */
  description: string;
  /** @example 6 */
  dimension_count: number;
  /**
   * Identifier to pass to GET /templates/{name}.
   * @example "customer-support-assistant"
   */
  name: string;
  /** @example "Customer-support assistant" */
  title: string;
  /**
   * The kind of application: `customer_support`, `rag_qa`, `summarisation`, `code_assistant`, `agentic_workflow`, …
   * @example "customer_support"
   */
  use_case: string;
}

export interface TestJudgeParams {
  /**
   * The judge's id
   * @format uuid
   * @maxLength 36
   */
  judgeId: string;
}

export interface TestPackageRecommendation {
  /**
   * Built-ins are read-only
   * @example true
   */
  builtin: boolean;
  checks: RecommendedCheckResponse[];
  /**
   * @format date-time
   * @example null
   */
  created_at: string | null;
  /** @example "Metrics, checks and dimensions for a support assistant" */
  description: string;
  /** @example ["topic","customer_persona","intent"] */
  dimensions: string[];
  /**
   * `builtin-<template>` for built-ins, a UUID for a workspace's own
   * @example "builtin-customer-support-assistant"
   */
  id: string;
  metrics: RecommendedMetricResponse[];
  /** @example "Customer-support assistant" */
  name: string;
  /**
   * The template a built-in is derived from
   * @example "customer-support-assistant"
   */
  template: string | null;
  /**
   * @format date-time
   * @example null
   */
  updated_at: string | null;
  /** @example "customer_support" */
  use_case: string;
  /**
   * null for built-ins
   * @format uuid
   * @maxLength 36
   * @example null
   */
  workspace_id: string | null;
}

export interface TestPlanDetailResponse {
  /**
   * When this version was created
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  datasets: PlanDatasetResponse[];
  /** @example "The bar a support-bot release must clear" */
  description: string;
  /**
   * The plan's id
   * @format uuid
   * @maxLength 36
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  id: string;
  /**
   * Whether this is the plan's newest version
   * @example true
   */
  is_latest: boolean;
  /**
   * The plan's newest version
   * @example 3
   */
  latest_version: number;
  /** @example "Billing answers must reach 0.9" */
  message: string;
  metrics: PlanMetricResponse[];
  /** @example "support-release-plan" */
  name: string;
  /** Projects of the workspace carrying any version of this plan */
  projects: TestPlanProjectRef[];
  release_rule: ReleaseRuleResponse;
  /**
   * This version's number
   * @example 3
   */
  version: number;
  /**
   * This version's id
   * @format uuid
   * @maxLength 36
   * @example "2fc1aebf-8f1f-498c-9a27-c8829fb02bc3"
   */
  version_id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface TestPlanProjectRef {
  /**
   * @format uuid
   * @maxLength 36
   * @example "9b8a0353-a1c1-46e3-a5d1-685e862c1010"
   */
  id: string;
  /** @example "support-bot-release" */
  name: string;
  /**
   * The plan version the project carries
   * @example 3
   */
  version: number;
}

export interface TestPlanResponse {
  /**
   * When this version was created
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  datasets: PlanDatasetResponse[];
  /** @example "The bar a support-bot release must clear" */
  description: string;
  /**
   * The plan's id
   * @format uuid
   * @maxLength 36
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  id: string;
  /**
   * The plan's newest version
   * @example 3
   */
  latest_version: number;
  /** @example "Billing answers must reach 0.9" */
  message: string;
  metrics: PlanMetricResponse[];
  /** @example "support-release-plan" */
  name: string;
  release_rule: ReleaseRuleResponse;
  /**
   * This version's number
   * @example 3
   */
  version: number;
  /**
   * This version's id
   * @format uuid
   * @maxLength 36
   * @example "2fc1aebf-8f1f-498c-9a27-c8829fb02bc3"
   */
  version_id: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface TestPlanSummaryResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * Datasets of the latest version
   * @example 1
   */
  dataset_count: number;
  /** @example "The bar a support-bot release must clear" */
  description: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  id: string;
  /** @example 3 */
  latest_version: number;
  /**
   * Metrics of the latest version
   * @example 2
   */
  metric_count: number;
  /** @example "support-release-plan" */
  name: string;
  /**
   * Projects carrying the plan
   * @example 1
   */
  project_count: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface TestPlanSummaryResponsePage {
  items: TestPlanSummaryResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface TestPlanVersionPage {
  items: TestPlanVersionSummary[];
  /** @example 3 */
  latest_version: number;
  /** @example "support-release-plan" */
  name: string;
  /** @example 1 */
  page: number;
  /** @example 50 */
  page_size: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "fff19340-5181-49eb-ab99-294933175b23"
   */
  test_plan_id: string;
  /** @example 3 */
  total: number;
}

export interface TestPlanVersionSummary {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example 1 */
  dataset_count: number;
  /** @example "Billing answers must reach 0.9" */
  message: string;
  /** @example 2 */
  metric_count: number;
  /** @example 3 */
  version: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2fc1aebf-8f1f-498c-9a27-c8829fb02bc3"
   */
  version_id: string;
}

export interface TestSutConnectionParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface TextAnalysisResult {
  /**
   * Per text column: lengths in characters, words and tokens (cl100k_base) with histograms, languages, vocabulary, top terms, readability, empty and near-empty rates
   * @example [{"name":"question","tokens":{"mean":14.2,"p95":31},"languages":{"en":0.97,"de":0.03}}]
   */
  columns: Record<string, any>[];
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  computed_at: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example 214 */
  rows: number;
  /** @example "efc67246-99cf-4379-9046-84c9213e480e" */
  run_id: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface TextColumnDto {
  /** @example "question" */
  name: string;
  /**
   * Rows with a non-empty value
   * @example 214
   */
  non_empty: number;
}

export interface ThresholdDto {
  /**
   * `>=`: the mean score must be at least `value`; `<=`: at most (latency, cost)
   * @example ">="
   */
  operator: ">=" | "<=";
  /**
   * @min -1000000000000
   * @max 1000000000000
   * @example 0.8
   */
  value: number;
}

export interface ThresholdResponse {
  /** @example ">=" */
  operator: ">=" | "<=";
  /** @example 0.8 */
  value: number;
}

/** @example {"grant_type":"password","email":"ada.lovelace@example.com","password":"correct-horse-battery-staple"} */
export interface TokenRequest {
  /**
   * Ignored; accepted because OAuth2 clients send it.
   * @maxLength 200
   * @example "swagger-ui"
   */
  client_id?: string;
  /**
   * Ignored; accepted because OAuth2 clients send it.
   * @maxLength 200
   * @example "not-used"
   */
  client_secret?: string;
  /**
   * @format email
   * @maxLength 320
   * @example "ada.lovelace@example.com"
   */
  email?: string;
  /**
   * `password` (default) or `reset_token`
   * @example "password"
   */
  grant_type?: "password" | "reset_token";
  /**
   * @minLength 8
   * @maxLength 256
   * @example "a-new-and-longer-passphrase"
   */
  new_password?: string;
  /**
   * @maxLength 256
   * @example "correct-horse-battery-staple"
   */
  password?: string;
  /**
   * From POST /users/{user_id}/reset-token
   * @maxLength 200
   * @example "rst_example-reset-token-not-a-real-one"
   */
  reset_token?: string;
  /**
   * Ignored; accepted because OAuth2 clients send it.
   * @maxLength 1000
   * @example "profile"
   */
  scope?: string;
  /**
   * OAuth2 form name for the email
   * @maxLength 320
   * @example "ada.lovelace@example.com"
   */
  username?: string;
}

export interface TokenResponse {
  /**
   * Send as `Authorization: Bearer <access_token>`
   * @example "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIyZjRlNmE4Yy0xYjNkLTRmNWUtOGE3Yy05ZTBiMWQyYzNmNGEifQ.example-signature"
   */
  access_token: string;
  /**
   * @format date-time
   * @example "2025-05-13T15:05:12.000Z"
   */
  expires_at: string;
  /**
   * Seconds until the token expires
   * @example 3600
   */
  expires_in: number;
  /** @example "bearer" */
  token_type: "bearer";
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  user_id: string;
}

export interface TokenUsageDto {
  /** @example 38 */
  completion_tokens: number | null;
  /** @example 412 */
  prompt_tokens: number | null;
  /** @example 450 */
  total_tokens: number | null;
}

export interface TopologyEdgeDto {
  /** @example 412 */
  calls: number;
  /** @example 0.0073 */
  error_rate: number;
  /** @example 3 */
  errors: number;
  latency_ms: LatencyStatsDto;
  /** @example "agent:support-bot" */
  source: string;
  /** @example "llm:gpt-4o-mini" */
  target: string;
}

export interface TopologyGraph {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  edges: TopologyEdgeDto[];
  nodes: TopologyNodeDto[];
  /**
   * Spans whose parent is not in the version (treated as roots)
   * @example 0
   */
  orphan_spans: number;
  /** @example [{"id":"agent:support-bot","calls":96}] */
  roots: Record<string, any>[];
  /** @example 1180 */
  span_count: number;
  /** @example 96 */
  trace_count: number;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string;
}

export interface TopologyNodeDto {
  /** @example 412 */
  calls: number;
  /** @example 0.0073 */
  error_rate: number;
  /** @example 3 */
  errors: number;
  /** @example "llm:gpt-4o-mini" */
  id: string;
  /** @example "llm" */
  kind: string;
  latency_ms: LatencyStatsDto;
  /** @example "gpt-4o-mini" */
  name: string;
  /**
   * Distinct service.name values of the component's spans
   * @example ["support-bot"]
   */
  service_names: string[];
}

export interface TraceConventionDetectionResponse {
  candidates: ConventionCandidateDto[];
  /**
   * 0..1 (see docs/traces.md)
   * @example 0.92
   */
  confidence: number;
  /**
   * The convention most spans follow
   * @example "openinference"
   */
  convention:
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  dropped_records: DroppedRecordsDto[];
  field_mappings: FieldMappingDto[];
  /**
   * Spans examined
   * @example 1000
   */
  sampled: number;
  /**
   * Spans read from the sample
   * @example 1204
   */
  span_count: number;
  unmapped_attributes: UnmappedAttributeDto[];
  /**
   * The upload examined, for :detect on an upload
   * @example "1c2cf2f5-dcc2-4610-b190-6e541af34b2c"
   */
  upload_id?: string;
  /** @example ["3 records had no span id and were left out"] */
  warnings: string[];
}

export interface TraceCurrentVersionResponse {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** @example 4 */
  number: number;
  /**
   * The version that was current before (null if none)
   * @example "d6a0f5e2-3c1b-4e7a-9f8d-2b4c6e8a0f13"
   */
  previous_version_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  promoted_at: string;
  /** @example "current" */
  state: string;
  /**
   * The dataset's current version now
   * @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d"
   */
  version_id: string;
}

export interface TraceDropRecordResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "The record has a trace id but no span id" */
  detail: string;
  /** @example "8ba5910e-dce7-4905-95d8-741cfacb7b9b" */
  id: string;
  /**
   * Order among the run's drops, from 1
   * @example 1
   */
  ordinal: number;
  /**
   * the original record, as received
   * @example {"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","name":"retrieve"}
   */
  payload: string | number | boolean | Record<string, any> | any[] | null;
  /** @example "missing_span_id" */
  reason:
    | "missing_trace_id"
    | "missing_span_id"
    | "invalid_id"
    | "missing_timestamps"
    | "end_before_start"
    | "malformed_record"
    | "unsupported_record"
    | "record_too_large"
    | "missing_trace_context"
    | "span_not_received"
    | "log_records_over_limit";
  /** @example "d92aed34-d835-4276-b59e-0b2a492cade7" */
  run_id: string;
  /**
   * Where the record was in the source: `line 12`, `record 3, span 2`
   * @example "line 12"
   */
  source_ref: string;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string | null;
}

export interface TraceEnrichmentStatusResponse {
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** @example null */
  error?: Record<string, any> | null;
  fields: EnrichmentFieldDto[];
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example null */
  prices?: Record<string, any> | null;
  /**
   * traces_done / traces_total, 0..1
   * @example 1
   */
  progress: number;
  /** @example "d92aed34-d835-4276-b59e-0b2a492cade7" */
  run_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /**
   * `not_started` until a landing or a recompute queued one
   * @example "succeeded"
   */
  state:
    | "not_started"
    | "queued"
    | "running"
    | "succeeded"
    | "failed"
    | "cancelled";
  /** @example 96 */
  traces_done: number;
  /** @example 96 */
  traces_total: number;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string;
}

export interface TraceFeedbackBatchItem {
  /**
   * The conflict's error code
   * @example null
   */
  error_code: string | null;
  feedback: TraceFeedbackResponse | null;
  /**
   * @min 0
   * @example 0
   */
  index: number;
  /**
   * `created`, `replayed` (stored before under its client_key) or `conflict` (its client_key holds other content)
   * @example "created"
   */
  outcome: "created" | "replayed" | "conflict";
  /**
   * 201, 200 or 409: what POST /traces/feedback would have answered
   * @example 201
   */
  status: number;
}

export interface TraceFeedbackBatchResponse {
  items: TraceFeedbackBatchItem[];
}

export interface TraceFeedbackResponse {
  /** @example "fb-7f3c9a2e-0d41-4b8e-9a6c-2e5d1f0b7c34" */
  client_key: string | null;
  /** @example "The reset link in the answer had expired." */
  comment: string | null;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * The user whose token or API key posted it
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  created_by: string | null;
  /** @example "e3a1c5d7-2b4f-4a6e-8c0d-1f3b5d7e9a2c" */
  id: string;
  /** @example {"channel":"web-widget"} */
  metadata: Record<string, any>;
  /** @example "thumbs" */
  name: string;
  /**
   * True when this answers a retry: the feedback was already stored under its client_key
   * @example false
   */
  replayed: boolean;
  /** @example "00f067aa0ba902b7" */
  span_id: string | null;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string;
  /** @example "customer-40912" */
  user_ref: string | null;
  /** @example false */
  value: number | boolean | string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TraceFeedbackResponsePage {
  items: TraceFeedbackResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface TraceGroundTruthResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** @example "35ba2ad3-e467-445e-87dd-49b42320a300" */
  id: string;
  /** @example 48 */
  item_count: number;
  items: GroundTruthItem[];
  /** @example "Refund conversations reviewed by the billing team" */
  message: string;
  /**
   * 1, 2, 3, ... per trace version
   * @example 2
   */
  number: number;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string;
  /**
   * Every ground-truth version of this trace version, newest first
   * @example [2,1]
   */
  versions: number[];
}

export interface TraceGroundTruthVersionResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /** @example "35ba2ad3-e467-445e-87dd-49b42320a300" */
  id: string;
  /** @example 48 */
  item_count: number;
  /** @example "Refund conversations reviewed by the billing team" */
  message: string;
  /**
   * 1, 2, 3, ... per trace version
   * @example 2
   */
  number: number;
  /** @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d" */
  version_id: string;
}

export interface TraceIngestRunDropsResponse {
  /** @example {"missing_span_id":3} */
  by_reason: Record<string, number>;
  items: TraceDropRecordResponse[];
  /** @example 100 */
  limit: number;
  /** @example 0 */
  offset: number;
  /** @example "d92aed34-d835-4276-b59e-0b2a492cade7" */
  run_id: string;
  /**
   * Drops of the run (all pages)
   * @example 3
   */
  total: number;
}

export interface TraceIngestRunResponse {
  /** @example "auto" */
  convention:
    | "auto"
    | "openinference"
    | "genai"
    | "openllmetry"
    | "langfuse"
    | "plain_otel";
  /**
   * Normalised spans (landed or deduplicated) by the convention that mapped them
   * @example {"openinference":1180,"plain_otel":24}
   */
  conventions: Record<string, number>;
  counts: IngestCountsDto;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /**
   * The trace dataset written to (null until the landing resolved it)
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id: string | null;
  /**
   * Drops by reason
   * @example {"missing_span_id":3}
   */
  drop_reasons: Record<string, number>;
  /** @example null */
  error?: Record<string, any> | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  finished_at: string | null;
  /** @example "d92aed34-d835-4276-b59e-0b2a492cade7" */
  id: string;
  /** @example "fc7b3a5d-aa83-4122-8a09-9989bf9cc2ae" */
  job_id: string | null;
  /** @example true */
  keep_unmapped: boolean;
  source: IngestSourceDto;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  started_at: string | null;
  /** @example "succeeded" */
  state: "queued" | "running" | "succeeded" | "failed" | "cancelled";
  /**
   * Traces in the version the landing wrote (0 when nothing new landed)
   * @example 96
   */
  traces: number;
  /**
   * The version the landing created (null while running, or when nothing new landed)
   * @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d"
   */
  version_id: string | null;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

/** @example {"dataset":"support-bot-ci","wait_ms":15000,"settle_ms":1000} */
export interface TraceLinkDto {
  /**
   * The trace dataset the SUT's exporter sends its spans to (its `x-ews-dataset`), 1..200 characters
   * @minLength 1
   * @maxLength 200
   * @example "support-bot-ci"
   */
  dataset: string;
  /**
   * The trace counts as landed once its entry span has and nothing new has for this long, 0..60000 ms (default 1000)
   * @min 0
   * @max 60000
   * @example 1000
   */
  settle_ms?: number;
  /**
   * How long after each answer a run waits at most for the trace, 0..300000 ms (default 15000)
   * @min 0
   * @max 300000
   * @example 15000
   */
  wait_ms?: number;
}

export interface TraceLinkResponse {
  /** @example "support-bot-ci" */
  dataset: string;
  /** @example 1000 */
  settle_ms: number;
  /** @example 15000 */
  wait_ms: number;
}

export interface TraceLiveStreamResponse {
  /**
   * When the stream began (its first span or setting); null before
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string | null;
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  head_opened_at: string | null;
  /**
   * When the head is sealed by time (opened + window), unless it fills first
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  head_seals_at: string | null;
  /**
   * Spans landed in the head so far
   * @example 1180
   */
  head_spans: number;
  /**
   * The open head version spans land in (a candidate that grows); null between a seal and the next span
   * @example "c126235b-f123-4f0a-83b8-ae22e7b83c4d"
   */
  head_version_id: string | null;
  /** @example 7 */
  head_version_number: number | null;
  /**
   * The stream's ingest run (GET /traces/runs/{run_id}: counts, drops); null until the first span or setting
   * @example "d92aed34-d835-4276-b59e-0b2a492cade7"
   */
  ingest_run_id: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  last_landed_at: string | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  last_received_at: string | null;
  /** @example 100000 */
  max_spans: number;
  /**
   * Spans acknowledged to exporters and not landed yet
   * @example 0
   */
  pending_spans: number;
  /** @example 3600 */
  window_seconds: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TracePartition {
  /** @example "trace" */
  level: "trace";
  /**
   * Span rows of the trace, in start order
   * @example ["0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11"]
   */
  row_ids: string[];
  /** @example [{"_row_id":"0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","span_id":"00f067aa0ba902b7","name":"ChatCompletion"}] */
  rows?: Record<string, any>[];
  /** @example "conv-0193" */
  session_id: string | null;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string;
}

export interface TraceRetentionResponse {
  datasets: DatasetRetentionItem[];
  /**
   * The workspace's default for trace datasets, uploads and landing payloads (null: kept forever)
   * @format int64
   * @example 30
   */
  retention_days: number | null;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TraceRetentionSweepResponse {
  datasets: SweptDataset[];
  /**
   * End users' feedback on traces (POST /traces/feedback) posted before the workspace's retention
   * @example 4
   */
  feedback_deleted: number;
  /**
   * Inline landing bodies and dropped records' payloads cleared (their counts and reasons stay)
   * @example 12
   */
  payloads_cleared: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  swept_at: string;
  /**
   * Trace uploads (and their files under DATA_DIR/trace-uploads) older than the workspace's retention
   * @example 3
   */
  uploads_deleted: number;
}

export interface TraceScoreAggregateResponse {
  /** @example "day" */
  bucket: "hour" | "day" | "none";
  /** The buckets that hold scores, by start then group (null last) */
  buckets: TraceScoreBucket[];
  /** @example "3f2a9c1e-7b4d-4e8a-9c61-0d5e2f7a8b90" */
  evaluator_id: string;
  /**
   * @format date-time
   * @example "2026-11-01T00:00:00.000Z"
   */
  from: string;
  /** @example "service" */
  group_by: "service" | "model" | "tag" | null;
  /** @example "helpfulness" */
  metric: string;
  /**
   * @format date-time
   * @example "2026-11-08T00:00:00.000Z"
   */
  to: string;
}

export interface TraceScoreBucket {
  /**
   * The bucket's end (exclusive)
   * @format date-time
   * @example "2026-11-02T00:00:00.000Z"
   */
  end: string;
  /**
   * Records whose metric could not score
   * @example 3
   */
  errored: number;
  /** @example 43 */
  failed: number;
  /**
   * The service, model or tag of this group; null for traces without one, and when not grouped
   * @example "support-bot"
   */
  group: string | null;
  /**
   * The mean score; null without scores
   * @example 0.61
   */
  mean: number | null;
  /** Student's t 95% interval of the mean (null below two scores) */
  mean_interval: ScoreInterval | null;
  /**
   * Score records (errors included)
   * @example 120
   */
  n: number;
  /**
   * passed / (passed + failed); null without a verdict
   * @example 0.6325
   */
  pass_rate: number | null;
  /** Wilson's 95% score interval of the pass rate */
  pass_rate_interval: ScoreInterval | null;
  /** @example 74 */
  passed: number;
  /**
   * Records with a score
   * @example 117
   */
  scored: number;
  /**
   * The scores' sample standard deviation (null below two scores)
   * @example 0.22
   */
  sd: number | null;
  /**
   * The bucket's start: a whole hour or day (UTC), or the window's start with `bucket=none`
   * @format date-time
   * @example "2026-11-01T00:00:00.000Z"
   */
  start: string;
}

export interface TraceScoreResponse {
  /**
   * What scoring cost (a judge's tokens at its model's price)
   * @example 0.00021
   */
  cost_usd: number | null;
  /**
   * The trace dataset the scored spans landed in
   * @example "f0eef60d-4b04-4046-aa3a-779fe13e072d"
   */
  dataset_id: string;
  /** @example null */
  detail: Record<string, any> | null;
  /**
   * Why the metric could not score the target (then `score` and `passed` are null)
   * @example null
   */
  error: string | null;
  /** @example "3f2a9c1e-7b4d-4e8a-9c61-0d5e2f7a8b90" */
  evaluator_id: string;
  /** @example "answer-quality" */
  evaluator_name: string;
  /** @example 3 */
  evaluator_version: number;
  /** @example "a41c6e07-58d2-4f0b-9e3a-6c1d2b7f8e90" */
  id: string;
  /** @example "partially_helpful" */
  label: string | null;
  /**
   * What was scored: one span, a whole trace or a session
   * @example "trace"
   */
  level: "span" | "trace" | "session";
  /** @example "helpfulness" */
  metric: string;
  /** @example "gpt-4o-mini" */
  model: string | null;
  /**
   * When the scored trace started: windows, aggregates and retention go by it
   * @format date-time
   * @example "2025-05-13T14:06:00.000Z"
   */
  observed_at: string;
  /**
   * Whether the score passed the metric's threshold (null without a verdict)
   * @example false
   */
  passed: boolean | null;
  /**
   * The judge's reasoning, when the metric gives one
   * @example "The answer names the setting but not where to find it."
   */
  reason: string | null;
  /**
   * The metric's score (null when it could not score: see `error`)
   * @example 0.4
   */
  score: number | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  scored_at: string;
  /** @example "support-bot" */
  service_name: string | null;
  /** @example "session-8812" */
  session_id: string | null;
  /** @example null */
  span_id: string | null;
  /**
   * The scored target's key (the trace id for a trace, `trace_id/span_id` for a span, the session id for a session)
   * @example "4bf92f3577b34da6a3ce929d0e0e4736"
   */
  target_key: string;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string | null;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TraceScoreResponsePage {
  items: TraceScoreResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface TraceSourceConnectionResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "f0eef60d-4b04-4046-aa3a-779fe13e072d" */
  dataset_id: string | null;
  /** @example "9890244a-b700-49c4-ac22-d5dfb3c2ffde" */
  id: string;
  /** @example "langfuse" */
  kind: "otlp_file_url" | "langfuse" | "phoenix";
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  last_landed_at: string | null;
  /** @example "langfuse-production" */
  name: string;
  /** @example 100 */
  page_size: number;
  /** @example null */
  project: string | null;
  /** @example "a4155dda-ae8f-4bb5-8444-ab992e5aabc9" */
  public_key_secret_id: string | null;
  /** @example "7571d304-22fc-477d-bce6-15c4e3b0f69d" */
  secret_id: string | null;
  /** @example "https://cloud.langfuse.com" */
  url: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TraceTagResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "escalated" */
  tag: string;
  /** @example "4bf92f3577b34da6a3ce929d0e0e4736" */
  trace_id: string;
}

export interface TraceUploadResponse {
  /** @example "b7e2c1d0f4a3958e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6" */
  sha256: string;
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "traces-2025-05-13.jsonl" */
  filename: string;
  /**
   * What the file holds, from its first bytes: otlp_json, otlp_protobuf, jsonl or json
   * @example "jsonl"
   */
  format: string;
  /** @example "1c2cf2f5-dcc2-4610-b190-6e541af34b2c" */
  id: string;
  /** @example 1843221 */
  size_bytes: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface TrendPoint {
  /**
   * The run's creation time, or the start of the day or week
   * @example "2025-05-12T00:00:00.000Z"
   */
  at: string;
  /**
   * Rows scored
   * @example 426
   */
  count: number;
  /** @example 1 */
  max: number;
  /**
   * Mean score over the scored rows
   * @example 0.86
   */
  mean: number;
  /** @example 0.25 */
  min: number;
  /**
   * Share of rows with a verdict that passed (null when none has one)
   * @example 0.92
   */
  pass_rate: number | null;
  /** @example ["27e1b0d8-e509-43eb-a23c-37b7a89187e2","cab22811-9604-4326-bc9d-ff3c6d2bd1d4"] */
  run_ids: string[];
}

export interface TrendRequest {
  /**
   * Runs created at or after this time
   * @format date-time
   * @maxLength 64
   * @example "2025-04-01T00:00:00.000Z"
   */
  from?: string;
  /**
   * A project dimension: one series per value (rows without a value are `null`)
   * @maxLength 64
   * @example "topic"
   */
  group_by?: string;
  /**
   * `run` (default): one point per run; `day` or `week`: runs pooled per UTC day or ISO week
   * @example "week"
   */
  interval?: "run" | "day" | "week";
  /**
   * Metric names to plot (default: every metric the runs scored; at most 20)
   * @maxItems 20
   * @minItems 1
   * @example ["answer-correctness","latency"]
   */
  metrics?: string[];
  /**
   * Run states included (default every state but `cancelled`)
   * @maxItems 6
   * @example ["succeeded","failed"]
   */
  states?: (
    | "queued"
    | "running"
    | "awaiting_upload"
    | "succeeded"
    | "failed"
    | "cancelled"
  )[];
  /**
   * Runs created before this time
   * @format date-time
   * @maxLength 64
   * @example "2025-06-01T00:00:00.000Z"
   */
  to?: string;
}

export interface TrendRun {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /** @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4" */
  id: string;
  /** @example "support-bot-v2 nightly 2025-05-13" */
  name: string;
  /** @example "succeeded" */
  state: string;
  /** @example "a92b7315-b960-467d-9b3d-45e8b02b3351" */
  sut_id: string;
}

export interface TrendSeries {
  /**
   * The `group_by` value (null: rows without one, or no grouping)
   * @example "billing"
   */
  group: string | null;
  /** @example "answer-correctness" */
  metric: string;
  points: TrendPoint[];
}

export interface UnmappedAttributeDto {
  /** @example ["acme-eu","acme-us"] */
  examples: string[];
  /**
   * `kept` under `attributes` of the landed span, or `dropped` (over the size limit, or keep_unmapped false)
   * @example "kept"
   */
  fate: "kept" | "dropped";
  /** @example "app.tenant_id" */
  key: string;
  /**
   * Spans carrying it
   * @example 1204
   */
  spans: number;
  /** @example 0 */
  spans_dropped: number;
}

export interface UntagTracesParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
  /**
   * Remove this tag (from `trace_id`, or from every trace of the version)
   * @minLength 1
   * @maxLength 100
   */
  tag?: string;
  /**
   * Remove tags of this trace (all its tags, or only `tag`)
   * @minLength 1
   * @maxLength 200
   */
  trace_id?: string;
  /**
   * The version's id
   * @format uuid
   * @maxLength 36
   */
  versionId: string;
}

/** @example {"min_drop":0.1,"fire_after":2} */
export interface UpdateAlertRuleRequest {
  /**
   * A check breaches when the one-sided p-value is below it, 0.0001..0.5 (default 0.05)
   * @min 0.0001
   * @max 0.5
   * @example 0.05
   */
  alpha?: number;
  /**
   * A check is calm when the p-value is at least this, above alpha, up to 1 (default 0.2)
   * @min 0.0002
   * @max 1
   * @example 0.2
   */
  alpha_resolve?: number;
  /**
   * How often the rule is checked, 10 s .. 1 day (default 300)
   * @format int32
   * @min 10
   * @max 86400
   * @example 300
   */
  check_seconds?: number;
  /**
   * @maxLength 2000
   * @example "Pages when helpfulness falls against the last day"
   */
  description?: string;
  /**
   * A disabled rule is not checked on its schedule (default true)
   * @example true
   */
  enabled?: boolean;
  /**
   * Breaches in a row that fire the alert, 1..100 (default 3)
   * @format int32
   * @min 1
   * @max 100
   * @example 3
   */
  fire_after?: number;
  /**
   * What is compared: `pass_rate`, the share of scores that passed (default)
   * @example "pass_rate"
   */
  kind?: "pass_rate";
  /**
   * The metric of the evaluator's scores the rule watches
   * @maxLength 200
   * @pattern ^[A-Za-z0-9_.:-]{1,200}$
   * @example "helpfulness"
   */
  metric?: string;
  /**
   * The smallest drop of the pass rate (0..1) that can fire, however significant a smaller one (default 0.03)
   * @min 0
   * @max 1
   * @example 0.05
   */
  min_drop?: number;
  /**
   * Fewer scores with a verdict in either window give no verdict, 1..1,000,000 (default 100)
   * @format int32
   * @min 1
   * @max 1000000
   * @example 100
   */
  min_samples?: number;
  /**
   * 1..200 characters, unique among the evaluator's rules
   * @minLength 1
   * @maxLength 200
   * @example "helpfulness drop"
   */
  name?: string;
  /**
   * Length of the recent window, 60 s .. 366 days (default 3600)
   * @format int32
   * @min 60
   * @max 31622400
   * @example 3600
   */
  recent_seconds?: number;
  /** The reference window (default: the trailing 24 hours before the recent window) */
  reference?: AlertReferenceDto;
  /**
   * Calm checks in a row that resolve it, 1..100 (default 3)
   * @format int32
   * @min 1
   * @max 100
   * @example 3
   */
  resolve_after?: number;
}

export interface UpdateBrandingRequest {
  /**
   * `#RRGGBB`.
   * @maxLength 7
   * @pattern ^#[0-9A-Fa-f]{6}$
   * @example "#F97316"
   */
  accent_color: string;
  /**
   * An https URL, or an inline data URL `data:image/(png|jpeg|svg+xml);base64,…` of at most 256 KiB decoded (the bytes must be that image type; SVG without script or event handlers).
   * @maxLength 349554
   * @example "https://example.com/favicon.png"
   */
  favicon_url?: string | null;
  /**
   * An https URL, or an inline data URL `data:image/(png|jpeg|svg+xml);base64,…` of at most 256 KiB decoded (the bytes must be that image type; SVG without script or event handlers).
   * @maxLength 349554
   * @example "https://example.com/logo.svg"
   */
  logo_url: string;
  /**
   * `#RRGGBB`.
   * @maxLength 7
   * @pattern ^#[0-9A-Fa-f]{6}$
   * @example "#0F766E"
   */
  primary_color: string;
  /**
   * 1-80 characters.
   * @maxLength 80
   * @pattern \S
   * @example "Acme Eval"
   */
  product_name: string;
  /**
   * An https URL or `mailto:` address.
   * @maxLength 2048
   * @example "https://help.example.com"
   */
  support_url?: string | null;
  /**
   * Up to 200 characters.
   * @maxLength 200
   * @example "Every release measured before it ships."
   */
  tagline?: string | null;
}

/** @example {"timeout_ms":45000,"max_concurrency":4,"requests_per_second":2} */
export interface UpdateConnectionRequest {
  /** The key to send, by secret reference; null removes it */
  auth?: ConnectionAuthDto | null;
  /** For kind http */
  http?: HttpTransportDto;
  /**
   * Calls a run keeps in flight at most, 1..256 (default 8)
   * @min 1
   * @max 256
   * @example 8
   */
  max_concurrency?: number;
  /**
   * Unique within the SUT, case-insensitively
   * @minLength 1
   * @maxLength 200
   * @example "production-api"
   */
  name?: string;
  /** For kind openai_chat */
  openai_chat?: OpenAiChatTransportDto;
  /**
   * Calls a run starts per second at most, 0.01..10000; null for no limit (default)
   * @min 0.01
   * @max 10000
   * @example 5
   */
  requests_per_second?: number | null;
  retry?: RetryPolicyDto;
  /**
   * Per attempt, 100..600000 ms (default 30000)
   * @min 100
   * @max 600000
   * @example 30000
   */
  timeout_ms?: number;
  /** Join each call to the trace the SUT exports of it (docs/agents.md); null removes it */
  trace_link?: TraceLinkDto | null;
}

export interface UpdateDatasetParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface UpdateDatasetRequest {
  /**
   * Send `""` to clear it
   * @maxLength 2000
   * @example "Questions customers asked in April, with answers reviewed by the support team"
   */
  description?: string;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "faq-golden-set"
   */
  name?: string;
  /**
   * Replaces the tags (up to 20)
   * @maxItems 20
   * @example ["golden","faq"]
   */
  tags?: string[];
}

export interface UpdateJudgeParams {
  /**
   * The judge's id
   * @format uuid
   * @maxLength 36
   */
  judgeId: string;
}

/** @example {"model":"gpt-4o","parameters":{"temperature":0,"max_tokens":1024},"max_concurrency":8} */
export interface UpdateJudgeRequest {
  /**
   * azure_openai: the API version (default 2024-10-21)
   * @maxLength 18
   * @pattern ^\d{4}-\d{2}-\d{2}(-preview)?$
   * @example "2024-10-21"
   */
  api_version?: string | null;
  /**
   * @format uri
   * @maxLength 2000
   * @example "https://api.openai.com/v1"
   */
  base_url?: string;
  /**
   * @maxLength 2000
   * @example "Grades answers for correctness and faithfulness"
   */
  description?: string;
  /**
   * Ask for a JSON answer where the provider supports it (default true)
   * @example true
   */
  json_mode?: boolean;
  /**
   * Attempts in all on 429, 5xx and timeouts, 1..10 (default 3)
   * @min 1
   * @max 10
   * @example 3
   */
  max_attempts?: number;
  /**
   * Grading calls a run keeps in flight at most, 1..128 (default 4)
   * @min 1
   * @max 128
   * @example 4
   */
  max_concurrency?: number;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "gpt-4o"
   */
  model?: string;
  /**
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "gpt-4o-mini-judge"
   */
  name?: string;
  /**
   * Sent with every call: temperature, max_tokens, top_p, seed… (temperature 0 is advised for grading)
   * @example {"temperature":0,"max_tokens":512}
   */
  parameters?: Record<string, any>;
  /**
   * The workspace secret holding the API key (admins); null removes it
   * @format uuid
   * @maxLength 36
   * @example "7571d304-22fc-477d-bce6-15c4e3b0f69d"
   */
  secret_id?: string | null;
  /**
   * Per attempt, 1000..600000 ms (default 60000)
   * @min 1000
   * @max 600000
   * @example 60000
   */
  timeout_ms?: number;
}

export interface UpdateMemberRoleParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

/** @example {"description":"Correctness against the reviewed answer, graded 1 to 5","judged":{"rubric":"Grade how well the answer matches the reference.\nQuestion: {{input}}\nAnswer: {{output}}\nReference: {{expected_output}}\n1 = wrong or missing, 5 = correct and complete.","scale":{"type":"numeric","min":1,"max":5},"pass_threshold":0.75,"judge_id":"e171b466-fde7-4636-a3d1-b73872eb9e36"}} */
export interface UpdateMetricConfigRequest {
  /**
   * @maxLength 2000
   * @example "Correctness against the reviewed answer, graded 1 to 5"
   */
  description?: string;
  /** Judged metrics: rubric, scale, pass rule, judge */
  judged?: JudgedSpecDto;
  /**
   * Parameters, checked against the metric's JSON Schema (GET /ops/{metric}/schema)
   * @example {"case_sensitive":false}
   */
  params?: Record<string, any>;
  /**
   * Deterministic and custom metrics: rows pass when the score reaches this (at most this for latency, cost, length); null for none
   * @example 0.6
   */
  threshold?: number | null;
}

export interface UpdateOnlineAlertRuleParams {
  /**
   * The alert rule's id
   * @format uuid
   * @maxLength 36
   */
  alertRuleId: string;
}

export interface UpdateOnlineEvaluatorParams {
  /**
   * The evaluator's id
   * @format uuid
   * @maxLength 36
   */
  evaluatorId: string;
}

export interface UpdateOnlineEvaluatorRequest {
  budget?: EvaluatorBudgetDto;
  /**
   * @maxLength 2000
   * @example "Samples 10% of production answers for the helpfulness judge"
   */
  description?: string;
  /**
   * A filter in the query language (docs/query-language.md) over spans; null: every span
   * @example {"field":"kind","op":"eq","value":"llm"}
   */
  filter?: Record<string, any> | null;
  /**
   * The judge of judged metrics whose config names none
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string | null;
  /**
   * What one score is about: each matching span, each trace with a matching span, or each session
   * @example "trace"
   */
  level?: "span" | "trace" | "session";
  /** Where each metric input is read from the target's spans */
  mapping?: TargetMappingDto;
  /**
   * 1..20 metrics, each a metric config or a built-in
   * @maxItems 20
   * @minItems 1
   * @example [{"name":"helpfulness"}]
   */
  metrics?: EvaluatorMetricDto[];
  /**
   * @minLength 1
   * @maxLength 200
   * @example "support-bot helpfulness"
   */
  name?: string;
  /**
   * A trace whose root span has not ended is complete this long after its newest span (a session: always), 1..86400 seconds (default 30)
   * @min 1
   * @max 86400
   * @example 30
   */
  quiet_seconds?: number;
  /** Where failing targets go: a review queue, a dataset, or both; null: nowhere */
  route?: EvaluatorRouteDto | null;
  /**
   * The share of targets scored, 0..1, decided by the trace id (OpenTelemetry's consistent sampling), so the same traces everywhere
   * @min 0
   * @max 1
   * @example 0.1
   */
  sampling_rate?: number;
  /**
   * `paused` stops taking and scoring targets (those taken stay pending); `active` resumes where it stopped
   * @example "paused"
   */
  state?: "active" | "paused";
}

export interface UpdateProjectParams {
  /**
   * The project's id
   * @format uuid
   * @maxLength 36
   */
  projectId: string;
}

export interface UpdateProjectRequest {
  /**
   * Replaces the linked datasets
   * @maxItems 100
   * @example ["6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c","f0eef60d-4b04-4046-aa3a-779fe13e072d"]
   */
  dataset_ids?: string[];
  /**
   * @maxLength 2000
   * @example "Release gate of the support assistant, with order lookups"
   */
  description?: string;
  /**
   * Replaces the whole dimension list
   * @maxItems 20
   */
  dimensions?: DimensionDefinition[];
  /**
   * @maxLength 100
   * @pattern ^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$
   * @example "support-bot-release"
   */
  name?: string;
  /**
   * Replaces the linked SUTs
   * @maxItems 100
   * @example ["a92b7315-b960-467d-9b3d-45e8b02b3351"]
   */
  sut_ids?: string[];
}

export interface UpdateReportContentParams {
  /**
   * The report's id
   * @format uuid
   * @maxLength 36
   */
  reportId: string;
}

export interface UpdateReportContentRequest {
  /**
   * The sections to change; the others stay as they are
   * @maxItems 6
   */
  sections: SectionEdit[];
  /**
   * A new report title
   * @minLength 1
   * @maxLength 300
   * @example "support-bot-v2 release review"
   */
  title?: string;
}

export interface UpdateReportSettingsRequest {
  /**
   * The config new reports use when the request names none (null: every built-in section)
   * @format uuid
   * @maxLength 36
   * @example "15115010-2486-4f4c-a504-6dd7adf2f0b4"
   */
  default_config_id?: string | null;
  /**
   * The format of exports and downloads that name none; one of formats
   * @example "pdf"
   */
  default_format?: "markdown" | "html" | "pdf";
  /**
   * Formats exports and downloads may use (1..3)
   * @maxItems 3
   * @minItems 1
   * @example ["markdown","html","pdf"]
   */
  formats?: ("markdown" | "html" | "pdf")[];
  /**
   * The judge that writes narratives (null: the deterministic template)
   * @format uuid
   * @maxLength 36
   * @example "e171b466-fde7-4636-a3d1-b73872eb9e36"
   */
  judge_id?: string | null;
  /**
   * @format uuid
   * @maxLength 36
   * @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"
   */
  workspace_id: string;
}

export interface UpdateReviewQueueParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface UpdateReviewQueueRequest {
  /**
   * @maxItems 100
   * @example []
   */
  adjudicators?: string[] | null;
  /**
   * @maxLength 2000
   * @example "Confirm the judge failures on refund questions"
   */
  description?: string;
  /**
   * @min 1
   * @max 1440
   * @example 15
   */
  lease_minutes?: number;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Refund answers, week 12"
   */
  name?: string;
  /**
   * @min 1
   * @max 10
   * @example 2
   */
  overlap?: number;
  /**
   * @maxItems 100
   * @example ["2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"]
   */
  reviewers?: string[] | null;
  /** A new rubric: the queue's next rubric version (labels keep the version they were given under) */
  rubric?: RubricDto;
  /**
   * Whether reviewers see the run's verdicts and scores beside a row's output
   * @example false
   */
  show_verdicts?: boolean;
  /**
   * `closed` stops leases, labels and new items; `open` resumes
   * @example "open"
   */
  state?: "open" | "closed";
}

export interface UpdateRowsParams {
  /**
   * The dataset's id
   * @format uuid
   * @maxLength 36
   */
  datasetId: string;
}

export interface UpdateRowsRequest {
  /**
   * @default "merge"
   * @example "merge"
   */
  mode?: "merge" | "replace";
  /**
   * Row id -> new values (1..1000 rows). With `merge` (default) the given columns replace theirs and the others stay; with `replace` the object becomes the whole row
   * @example {"6c861b83-60a8-4bcf-845d-126ac56874a4":{"answer":"Settings > Plan > Cancel; the plan stays active until the end of the billing period."}}
   */
  rows: Record<string, Record<string, any>>;
}

export interface UpdateSecretParams {
  /**
   * The secret's id
   * @format uuid
   * @maxLength 36
   */
  secretId: string;
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface UpdateSecretRequest {
  /**
   * @maxLength 1000
   * @example "Rotated key of the support-bot-v2 calls"
   */
  description?: string;
  /**
   * @maxLength 100
   * @example "OPENAI_API_KEY"
   */
  name?: string;
  /**
   * A new value replaces the old one
   * @minLength 1
   * @maxLength 65536
   * @example "sk-test-0000example0000key0000"
   */
  value?: string;
}

export interface UpdateSutConnectionParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface UpdateSutParams {
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

/** @example {"name":"support-bot-v2","description":"Support assistant with retrieval over the help centre and order lookups","tags":["production","rag"]} */
export interface UpdateSutRequest {
  /**
   * Send `""` to clear it
   * @maxLength 2000
   * @example "Questions customers asked in April, with answers reviewed by the support team"
   */
  description?: string;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "faq-golden-set"
   */
  name?: string;
  /**
   * Replaces the tags (up to 20)
   * @maxItems 20
   * @example ["golden","faq"]
   */
  tags?: string[];
}

export interface UpdateUserParams {
  /**
   * The user's id
   * @format uuid
   * @maxLength 36
   */
  userId: string;
}

export interface UpdateUserRequest {
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Grace B. Hopper"
   */
  display_name?: string;
  /**
   * @format email
   * @maxLength 320
   * @example "grace.hopper@example.com"
   */
  email?: string;
  /** @example "user" */
  system_role?: "admin" | "user";
}

export interface UpdateWorkspaceParams {
  /**
   * The workspace's id
   * @format uuid
   * @maxLength 36
   */
  workspaceId: string;
}

export interface UpdateWorkspaceRequest {
  /**
   * Send `""` to clear it
   * @maxLength 2000
   * @example "Evaluations of the support assistant and its retrieval"
   */
  description?: string;
  /**
   * @minLength 1
   * @maxLength 100
   * @example "Customer support QA"
   */
  name?: string;
}

export interface UploadDatasetForm {
  /**
   * Add the file as a new version of this dataset instead of creating one
   * @format uuid
   * @maxLength 36
   * @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c"
   */
  dataset_id?: string;
  /**
   * CSV field delimiter, one character (default `,`)
   * @maxLength 1
   * @pattern ^[^\r\n"]$
   * @example ","
   */
  delimiter?: string;
  /**
   * @maxLength 2000
   * @example "Questions customers asked in April, with answers reviewed by the support team"
   */
  description?: string;
  /**
   * The file: CSV (with a header line), JSON (an array of objects), JSON Lines or Parquet; at most `UPLOAD_MAX_BYTES` (default 1 GiB)
   * @format binary
   * @maxLength 1073741824
   */
  file: File;
  /**
   * The file's format; by default taken from the file name's extension (.csv, .json, .jsonl or .ndjson, .parquet)
   * @example "csv"
   */
  format?: "csv" | "json" | "jsonl" | "parquet";
  /**
   * Message of the version the upload creates
   * @maxLength 2000
   * @example "April questions, reviewed"
   */
  message?: string;
  /**
   * Name of the new dataset (1..200 characters, unique in the workspace); defaults to the file name without its extension
   * @minLength 1
   * @maxLength 200
   * @example "faq-golden-set"
   */
  name?: string;
  /**
   * Tags: a JSON array or a comma-separated list
   * @maxItems 20
   * @example ["golden","faq"]
   */
  tags?: string[];
}

export interface UploadDatasetParams {
  /**
   * The workspace that will own the dataset (members and above)
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface UploadInfoDto {
  /** @example 48213 */
  bytes: number;
  /** @example "faq-golden-set.csv" */
  filename: string;
  /** @example "csv" */
  format: "csv" | "json" | "jsonl" | "parquet";
}

export interface UploadOutputsRequest {
  /**
   * Score now (default true); false keeps the run awaiting more uploads
   * @example true
   */
  complete?: boolean;
  /**
   * 1..10000 outputs per request (send more in several requests); rows never uploaded are recorded as errors when scoring starts
   * @maxItems 10000
   * @minItems 1
   */
  results: UploadedOutputDto[];
}

export interface UploadRunOutputsParams {
  /**
   * The run's id
   * @format uuid
   * @maxLength 36
   */
  runId: string;
}

export interface UploadTraceFileParams {
  /**
   * @format uuid
   * @maxLength 36
   */
  workspace_id: string;
}

export interface UploadTracesForm {
  /**
   * The trace file: OTLP/JSON, JSON Lines, a JSON array of span records, or OTLP/protobuf (.pb); at most `UPLOAD_MAX_BYTES` (default 1 GiB, the bound stated), larger is 413
   * @format binary
   * @maxLength 1073741824
   */
  file: File;
}

export interface UploadedErrorDto {
  /**
   * @maxLength 100
   * @example "timeout"
   */
  code: string;
  /**
   * @maxLength 10000
   * @example "The assistant did not answer within 30 s"
   */
  message: string;
}

/** @example {"row_id":"0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11","output":"Open Settings > Security and choose Reset password; the link expires after one hour.","latency_ms":1040,"usage":{"prompt_tokens":412,"completion_tokens":38,"total_tokens":450},"cost_usd":0.00041,"extras":{"sources":["kb/security/reset-password"]}} */
export interface UploadedOutputDto {
  /**
   * @min 0
   * @example 0.00041
   */
  cost_usd?: number | null;
  /** Why the system gave no output for this row */
  error?: UploadedErrorDto;
  /**
   * Fields kept with the result (e.g. retrieved contexts)
   * @example {"sources":["kb/security/reset-password"]}
   */
  extras?: Record<string, any>;
  /**
   * @min 0
   * @example 1040
   */
  latency_ms?: number | null;
  /**
   * What the system answered; null with `error` for a row it failed on
   * @maxLength 1000000
   * @example "Open Settings > Security and choose Reset password; the link expires after one hour."
   */
  output: string | null;
  /**
   * The dataset row (its `_row_id`) this output answers; every repetition of the row takes it
   * @format uuid
   * @maxLength 36
   * @example "0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11"
   */
  row_id: string;
  /** @example {"prompt_tokens":412,"completion_tokens":38,"total_tokens":450} */
  usage?: {
    completion_tokens?: number;
    prompt_tokens?: number;
    total_tokens?: number;
  };
}

export interface UsagePathsDto {
  /**
   * @maxLength 500
   * @example "$.usage.completion_tokens"
   */
  completion_tokens?: string;
  /**
   * @maxLength 500
   * @example "$.usage.prompt_tokens"
   */
  prompt_tokens?: string;
  /**
   * @maxLength 500
   * @example "$.usage.total_tokens"
   */
  total_tokens?: string;
}

export interface UserMembershipResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  joined_at: string;
  /** @example "owner" */
  role: "viewer" | "member" | "admin" | "owner";
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
  /** @example "Customer support QA" */
  workspace_name: string;
}

export interface UserResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /**
   * @format date-time
   * @example null
   */
  deactivated_at: string | null;
  /** @example "Ada Lovelace" */
  display_name: string;
  /** @example "ada.lovelace@example.com" */
  email: string;
  /**
   * Whether a password is set (a user created without one logs in after redeeming a reset token)
   * @example true
   */
  has_password: boolean;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  id: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  last_login_at: string | null;
  /** @example "active" */
  status: "active" | "deactivated";
  /** @example "user" */
  system_role: "admin" | "user";
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /**
   * Increments on every change; the ETag derives from it
   * @example 3
   */
  version: number;
}

export interface UserResponsePage {
  items: UserResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

/** @example {"row":{"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"},"mapping":{"input":"question","expected_output":"answer"},"adapter":{"request":{"body":{"question":"{{input}}","history":"{{history}}"},"headers":{"X-Request-Source":"evaluation"}},"response":{"language":"jsonpath","output":"$.answer","usage":{"prompt_tokens":"$.usage.prompt_tokens","completion_tokens":"$.usage.completion_tokens","total_tokens":"$.usage.total_tokens"},"extras":{"sources":"$.sources"}}},"response":{"answer":"Open Settings > Security and choose Reset password; the link expires after one hour.","sources":["kb/security/reset-password"],"usage":{"prompt_tokens":412,"completion_tokens":38,"total_tokens":450}}} */
export interface ValidateAdapterRequest {
  /** The adapter to check; default: the connection's adapter in force */
  adapter?: CreateAdapterRequest;
  /**
   * Earlier turns of the conversation, for multi-turn rows
   * @maxItems 200
   */
  history?: ChatMessageDto[];
  /** Which columns are input, expected_output and context (defaults: columns of those names) */
  mapping?: RowMappingDto;
  /**
   * Any JSON value (or a string for a non-JSON answer)
   * @example {"answer":"Open Settings > Security and choose Reset password; the link expires after one hour.","sources":["kb/security/reset-password"],"usage":{"prompt_tokens":412,"completion_tokens":38,"total_tokens":450}}
   */
  response?: string | number | boolean | Record<string, any> | any[];
  /**
   * The row's columns
   * @example {"question":"How do I reset my password?","answer":"Open Settings > Security and choose Reset password.","topic":"account_access","language":"en"}
   */
  row?: Record<string, any>;
}

export interface ValidateConnectionAdapterParams {
  /**
   * The connection's id
   * @format uuid
   * @maxLength 36
   */
  connectionId: string;
  /**
   * The sut's id
   * @format uuid
   * @maxLength 36
   */
  sutId: string;
}

export interface ValidateJudgeWithQueueRequest {
  /**
   * A dimension of the rows to break the figures down by
   * @maxLength 64
   * @example "topic"
   */
  by_dimension?: string;
  /**
   * Confidence level of the intervals, 0.5..0.999 (default 0.95)
   * @min 0.5
   * @max 0.999
   * @example 0.95
   */
  confidence?: number;
  /**
   * The rubric field holding the human verdict: pass_fail, categorical or numeric
   * @maxLength 64
   * @example "correct"
   */
  field: string;
  /**
   * A judged metric of the run whose judge is validated
   * @maxLength 100
   * @example "grader"
   */
  metric: string;
  /**
   * The values of the field meaning pass (compared as text, case-insensitively; at most 50); without it, true and pass words pass, and a number on a numeric judge scale passes as the judge's threshold would
   * @maxItems 50
   * @minItems 1
   * @example ["warm"]
   */
  positive?: (string | number | boolean)[];
  /**
   * The run judged (a dataset-version queue names it; a run queue defaults to its run). It must be over the queue's dataset version
   * @format uuid
   * @maxLength 36
   * @example "cab22811-9604-4326-bc9d-ff3c6d2bd1d4"
   */
  run_id?: string;
  /**
   * Seed of the bootstrap intervals (default 1): the same labels and seed give the same figures
   * @min 0
   * @max 2147483647
   * @example 1
   */
  seed?: number;
}

export interface ValidateJudgeWithReviewQueueParams {
  /**
   * The queue's id
   * @format uuid
   * @maxLength 36
   */
  queueId: string;
}

export interface ValidationRefResponse {
  /** @example "answer-correctness" */
  config_name: string;
  /**
   * @format int64
   * @example 2
   */
  config_version: number;
  /**
   * @format uuid
   * @maxLength 36
   * @example "6a0f3c1e-2b4d-4f8a-9c7e-1d2e3f4a5b6c"
   */
  id: string;
}

export interface ValidityByDimensionResponse {
  /** @example "topic" */
  dimension: string;
  groups: ValidityGroupResponse[];
}

export interface ValidityGroupResponse {
  accuracy: RateFigureResponse;
  confusion: ConfusionMatrixResponse;
  kappa: EstimateFigureResponse;
  true_negative_rate: RateFigureResponse;
  true_positive_rate: RateFigureResponse;
  /**
   * The dimension value (`(none)` for rows without one)
   * @example "billing"
   */
  value: string;
}

export interface VerdictDto {
  /** @example null */
  label: string | null;
  /**
   * The score mapped to [0, 1]
   * @example 0.75
   */
  normalized: number;
  /** @example "Same steps as the reference; omits that the link expires." */
  reason: string | null;
  /** @example 4 */
  score: number;
}

export interface VerifyRequest {
  /**
   * The bearer token to check
   * @minLength 1
   * @maxLength 4096
   * @example "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIyZjRlNmE4Yy0xYjNkLTRmNWUtOGE3Yy05ZTBiMWQyYzNmNGEifQ.example-signature"
   */
  token: string;
}

export interface VerifyResponse {
  /**
   * Always true: an invalid token is a 401
   * @example true
   */
  active: boolean;
  /** @example "Ada Lovelace" */
  display_name: string;
  /** @example "ada.lovelace@example.com" */
  email: string;
  /**
   * @format date-time
   * @example "2025-05-13T15:05:12.000Z"
   */
  expires_at: string;
  memberships: UserMembershipResponse[];
  /** @example "user" */
  system_role: "admin" | "user";
  /** @example "64a841c7-c213-4bde-b6f6-4549729dc851" */
  token_id: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  user_id: string;
}

export interface VersionChangesDto {
  /** @example 1 */
  deleted: number;
  /** @example 12 */
  inserted: number;
  /** @example 3 */
  updated: number;
}

export interface VisualAnalysisResult {
  clusters: VisualClusterDto[];
  /**
   * The column embedded
   * @example "question"
   */
  column: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:07:04.000Z"
   */
  computed_at: string;
  /** @example "6f1c2e0a-2b4d-4c1e-9a7b-0d3e5f6a7b8c" */
  dataset_id: string;
  /**
   * The workspace's embedder used
   * @example "local-char-ngram"
   */
  embedder: string;
  points: VisualPointDto[];
  /**
   * pca or umap
   * @example "pca"
   */
  projection: string;
  /** @example "efc67246-99cf-4379-9046-84c9213e480e" */
  run_id: string;
  /** @example "89fa3cc1-e563-4ad1-af4c-d5becdca17df" */
  version_id: string;
}

export interface VisualClusterDto {
  /** @example 2 */
  id: number;
  /** @example "password reset login" */
  name: string;
  /** @example 37 */
  size: number;
}

export interface VisualPointDto {
  /** @example 2 */
  cluster: number;
  /** @example "0b8e6f3c-0f0e-4f7e-9a43-2d7c7c0e8a11" */
  row_id: string;
  /** @example 0.42 */
  x: number;
  /** @example -1.17 */
  y: number;
}

export interface WebhookSigningDto {
  /** @example "HMAC-SHA256" */
  algorithm: "HMAC-SHA256";
  /**
   * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the secret's value>`
   * @example "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">"
   */
  format: string;
  /**
   * The request header that carries the signature
   * @example "X-EWS-Signature"
   */
  header: string;
}

export interface WorkspaceListItem {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "Evaluations of the support assistant before each release" */
  description: string;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  id: string;
  /** @example 4 */
  member_count: number;
  /** @example "Customer support QA" */
  name: string;
  /** @example "owner" */
  role: "viewer" | "member" | "admin" | "owner" | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
}

export interface WorkspaceListItemPage {
  items: WorkspaceListItem[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface WorkspaceMemberResponse {
  /**
   * Who added the member (null when unknown, e.g. that user was deleted)
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  added_by: string | null;
  /** @example "Grace Hopper" */
  display_name: string;
  /** @example "grace.hopper@example.com" */
  email: string;
  /**
   * When the user became a member
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  joined_at: string;
  /**
   * Only when POST /workspaces/{id}/users created the user without a password: a one-time token,
   * shown once, that the user redeems at POST /auth/token (grant_type=reset_token) to set a password
   * @example "rst_example-reset-token-not-a-real-one"
   */
  reset_token?: string;
  /**
   * When `reset_token` stops working
   * @format date-time
   * @example "2025-05-13T15:05:12.000Z"
   */
  reset_token_expires_at?: string;
  /** @example "member" */
  role: "viewer" | "member" | "admin" | "owner";
  /** @example "7decc0e4-66f7-48ce-95ab-9a5bb71185c6" */
  user_id: string;
  /** @example "active" */
  user_status: "active" | "deactivated";
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface WorkspaceMetricCatalogue {
  metrics: CatalogueMetric[];
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface WorkspaceMetricConfigDefault {
  /** @example "answer-correctness" */
  config_name: string | null;
  /**
   * null: follows the config's newest version
   * @format int64
   * @example 2
   */
  config_version: number | null;
  /** @example "correctness" */
  metric_name: string;
  /** @example "Pin version 2 for the May release" */
  note: string;
  /**
   * 1, 2, … per metric
   * @example 3
   */
  revision: number;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  set_at: string;
  /**
   * @format uuid
   * @maxLength 36
   * @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a"
   */
  set_by: string | null;
}

export interface WorkspaceMetricConfigDefaultListResponse {
  /** The pins in force (cleared ones are left out; their history keeps them) */
  items: WorkspaceMetricConfigDefault[];
  /** @example 1 */
  total: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface WorkspaceMetricConfigDefaultVersionsResponse {
  /** Newest first; the first is in force */
  items: WorkspaceMetricConfigDefault[];
  /** @example "correctness" */
  metric_name: string;
  /** @example 3 */
  total: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface WorkspaceResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "Evaluations of the support assistant before each release" */
  description: string;
  embedding_config: EmbeddingConfig;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  id: string;
  /** @example 4 */
  member_count: number;
  /** @example "Customer support QA" */
  name: string;
  /**
   * The caller's role; null for a system admin who is not a member
   * @example "owner"
   */
  role: "viewer" | "member" | "admin" | "owner" | null;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example 2 */
  version: number;
}

export interface WorkspaceSecretResponse {
  /**
   * @format date-time
   * @example "2025-05-12T09:30:00.000Z"
   */
  created_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  created_by: string | null;
  /** @example "Key of the judge and SUT calls of support-bot-v2" */
  description: string;
  /** @example "7571d304-22fc-477d-bce6-15c4e3b0f69d" */
  id: string;
  /**
   * @format date-time
   * @example null
   */
  last_revealed_at: string | null;
  /** @example "OPENAI_API_KEY" */
  name: string;
  /**
   * @format date-time
   * @example "2025-05-13T14:05:12.000Z"
   */
  updated_at: string;
  /** @example "2f4e6a8c-1b3d-4f5e-8a7c-9e0b1d2c3f4a" */
  updated_by: string | null;
  /** @example 1 */
  version: number;
  /** @example "8b1f3c2e-4d5a-4e6f-9a7b-1c2d3e4f5a6b" */
  workspace_id: string;
}

export interface WorkspaceSecretResponsePage {
  items: WorkspaceSecretResponse[];
  /**
   * @min 1
   * @example 1
   */
  page: number;
  /**
   * @min 1
   * @max 200
   * @example 50
   */
  page_size: number;
  /**
   * Number of items matching the filters, across all pages
   * @example 42
   */
  total: number;
}

export interface WorkspaceSecretRevealResponse {
  /** @example "7571d304-22fc-477d-bce6-15c4e3b0f69d" */
  id: string;
  /** @example "OPENAI_API_KEY" */
  name: string;
  /** @example "sk-test-0000example0000key0000" */
  value: string;
}

export interface WorkspaceUserCandidateResponse {
  /** @example "Grace Hopper" */
  display_name: string;
  /** @example "grace.hopper@example.com" */
  email: string;
  /** @example "7decc0e4-66f7-48ce-95ab-9a5bb71185c6" */
  id: string;
}

export type QueryParamsType = Record<string | number, any>;
export type ResponseFormat = "arrayBuffer" | "blob" | "formData" | "json" | "text";

export interface FullRequestParams extends Omit<RequestInit, "body"> {
  /** set parameter to `true` for call `securityWorker` for this request */
  secure?: boolean;
  /** request path */
  path: string;
  /** content type of request body */
  type?: ContentType;
  /** query params */
  query?: QueryParamsType;
  /** format of response (i.e. response.json() -> format: "json") */
  format?: ResponseFormat;
  /** request body */
  body?: unknown;
  /** base url */
  baseUrl?: string;
  /** request cancellation token */
  cancelToken?: CancelToken;
}

export type RequestParams = Omit<
  FullRequestParams,
  "body" | "method" | "query" | "path"
>;

export interface ApiConfig<SecurityDataType = unknown> {
  baseUrl?: string;
  baseApiParams?: Omit<RequestParams, "baseUrl" | "cancelToken" | "signal">;
  securityWorker?: (
    securityData: SecurityDataType | null,
  ) => Promise<RequestParams | void> | RequestParams | void;
  customFetch?: typeof fetch;
}

export interface HttpResponse<D extends unknown, E extends unknown = unknown>
  extends Response {
  data: D;
  error: E;
}

type CancelToken = Symbol | string | number;

export enum ContentType {
  Json = "application/json",
  JsonApi = "application/vnd.api+json",
  FormData = "multipart/form-data",
  UrlEncoded = "application/x-www-form-urlencoded",
  Text = "text/plain",
}

export class HttpClient<SecurityDataType = unknown> {
  public baseUrl: string = "/";
  private securityData: SecurityDataType | null = null;
  private securityWorker?: ApiConfig<SecurityDataType>["securityWorker"];
  private abortControllers = new Map<CancelToken, AbortController>();
  private customFetch = (...fetchParams: Parameters<typeof fetch>) =>
    fetch(...fetchParams);

  private baseApiParams: RequestParams = {
    credentials: "same-origin",
    headers: {},
    redirect: "follow",
    referrerPolicy: "no-referrer",
  };

  constructor(apiConfig: ApiConfig<SecurityDataType> = {}) {
    Object.assign(this, apiConfig);
  }

  public setSecurityData = (data: SecurityDataType | null) => {
    this.securityData = data;
  };

  protected encodeQueryParam(key: string, value: any) {
    const encodedKey = encodeURIComponent(key);
    return `${encodedKey}=${encodeURIComponent(typeof value === "number" ? value : `${value}`)}`;
  }

  protected addQueryParam(query: QueryParamsType, key: string) {
    return this.encodeQueryParam(key, query[key]);
  }

  protected addArrayQueryParam(query: QueryParamsType, key: string) {
    const value = query[key];
    return value.map((v: any) => this.encodeQueryParam(key, v)).join("&");
  }

  protected toQueryString(rawQuery?: QueryParamsType): string {
    const query = rawQuery || {};
    const keys = Object.keys(query).filter(
      (key) => "undefined" !== typeof query[key],
    );
    return keys
      .map((key) =>
        Array.isArray(query[key])
          ? this.addArrayQueryParam(query, key)
          : this.addQueryParam(query, key),
      )
      .join("&");
  }

  protected addQueryParams(rawQuery?: QueryParamsType): string {
    const queryString = this.toQueryString(rawQuery);
    return queryString ? `?${queryString}` : "";
  }

  private contentFormatters: Record<ContentType, (input: any) => any> = {
    [ContentType.Json]: (input: any) =>
      input !== null && (typeof input === "object" || typeof input === "string")
        ? JSON.stringify(input)
        : input,
    [ContentType.JsonApi]: (input: any) =>
      input !== null && (typeof input === "object" || typeof input === "string")
        ? JSON.stringify(input)
        : input,
    [ContentType.Text]: (input: any) =>
      input !== null && typeof input !== "string"
        ? JSON.stringify(input)
        : input,
    [ContentType.FormData]: (input: any) => {
      if (input instanceof FormData) {
        return input;
      }

      return Object.keys(input || {}).reduce((formData, key) => {
        const property = input[key];
        formData.append(
          key,
          property instanceof Blob
            ? property
            : typeof property === "object" && property !== null
              ? JSON.stringify(property)
              : `${property}`,
        );
        return formData;
      }, new FormData());
    },
    [ContentType.UrlEncoded]: (input: any) => this.toQueryString(input),
  };

  protected mergeRequestParams(
    params1: RequestParams,
    params2?: RequestParams,
  ): RequestParams {
    return {
      ...this.baseApiParams,
      ...params1,
      ...(params2 || {}),
      headers: {
        ...(this.baseApiParams.headers || {}),
        ...(params1.headers || {}),
        ...((params2 && params2.headers) || {}),
      },
    };
  }

  protected createAbortSignal = (
    cancelToken: CancelToken,
  ): AbortSignal | undefined => {
    if (this.abortControllers.has(cancelToken)) {
      const abortController = this.abortControllers.get(cancelToken);
      if (abortController) {
        return abortController.signal;
      }
      return void 0;
    }

    const abortController = new AbortController();
    this.abortControllers.set(cancelToken, abortController);
    return abortController.signal;
  };

  public abortRequest = (cancelToken: CancelToken) => {
    const abortController = this.abortControllers.get(cancelToken);

    if (abortController) {
      abortController.abort();
      this.abortControllers.delete(cancelToken);
    }
  };

  public request = async <T = any, E = any>({
    body,
    secure,
    path,
    type,
    query,
    format,
    baseUrl,
    cancelToken,
    ...params
  }: FullRequestParams): Promise<T> => {
    const secureParams =
      ((typeof secure === "boolean" ? secure : this.baseApiParams.secure) &&
        this.securityWorker &&
        (await this.securityWorker(this.securityData))) ||
      {};
    const requestParams = this.mergeRequestParams(params, secureParams);
    const queryString = query && this.toQueryString(query);
    const payloadFormatter = this.contentFormatters[type || ContentType.Json];
    const responseFormat = format || requestParams.format;

    return this.customFetch(
      `${baseUrl || this.baseUrl || ""}${path}${queryString ? `?${queryString}` : ""}`,
      {
        ...requestParams,
        headers: {
          ...(requestParams.headers || {}),
          ...(type && type !== ContentType.FormData
            ? { "Content-Type": type }
            : {}),
        },
        signal:
          (cancelToken
            ? this.createAbortSignal(cancelToken)
            : requestParams.signal) || null,
        body:
          typeof body === "undefined" || body === null
            ? null
            : payloadFormatter(body),
      },
    ).then(async (response) => {
      const r = response as HttpResponse<T, E>;
      r.data = null as unknown as T;
      r.error = null as unknown as E;

      const responseToParse = responseFormat ? response.clone() : response;
      const data = !responseFormat
        ? r
        : await (responseToParse[responseFormat]() as Promise<any>)
            .then((data) => {
              if (r.ok) {
                r.data = data;
              } else {
                r.error = data;
              }
              return r;
            })
            .catch((e) => {
              r.error = e;
              return r;
            });

      if (cancelToken) {
        this.abortControllers.delete(cancelToken);
      }

      if (!response.ok) throw data;
      return data.data;
    });
  };
}

/**
 * @title Evaluation Workspace Service
 * @version 0.1.0
 * @baseUrl /
 * @contact
 *
 * Keep test datasets, run your LLM application over them, score outputs with metrics and judges, compare runs, ingest traces and publish reports. Errors are application/problem+json (RFC 9457) with an error_code; see docs/errors.md.
 */
export class EvaluationWorkspaceClient<
  SecurityDataType extends unknown,
> extends HttpClient<SecurityDataType> {
  live = {
    /**
     * @description Answers while the process is up; does not touch the database (use it as the liveness probe).
     *
     * @tags status
     * @name GetLiveness
     * @summary Answers while the process is up; does not touch the database (use it as the liveness probe)
     * @request GET:/live
     * @response `200` `LiveResponse` The process is up
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     */
    getLiveness: (params: RequestParams = {}) =>
      this.request<LiveResponse, ProblemResponse>({
        path: `/live`,
        method: "GET",
        format: "json",
        ...params,
      }),
  };
  ready = {
    /**
     * @description Answers 200 when every dependency (the database, the queue) answers within 3 s; otherwise 503 problem+json naming the failing checks (use it as the readiness probe).
     *
     * @tags status
     * @name GetReadiness
     * @summary Answers 200 when every dependency (the database, the queue) answers within 3 s; otherwise 503 problem+json naming the failing checks (use it as the readiness probe)
     * @request GET:/ready
     * @response `200` `ReadyResponse` Every dependency answered
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `NotReadyProblem` A dependency is down; `checks` says which, Retry-After when to ask again
     */
    getReadiness: (params: RequestParams = {}) =>
      this.request<ReadyResponse, ProblemResponse | NotReadyProblem>({
        path: `/ready`,
        method: "GET",
        format: "json",
        ...params,
      }),
  };
  branding = {
    /**
     * @description The product name, colours and logo the UI shows. Carries a strong ETag; send it back as If-None-Match to get 304 with an empty body while nothing changed.
     *
     * @tags branding
     * @name GetBranding
     * @summary The product name, colours and logo the UI shows
     * @request GET:/branding
     * @response `200` `BrandingResponse` The current branding
     * @response `304` `void` Not modified: your copy (If-None-Match) is current; empty body
     * @response `400` `ProblemResponse` validation_failed: If-None-Match is longer than 1024 characters
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getBranding: (params: RequestParams = {}) =>
      this.request<BrandingResponse, void | ProblemResponse>({
        path: `/branding`,
        method: "GET",
        format: "json",
        ...params,
      }),

    /**
     * @description Replace the branding (system admins). Send the ETag you read as If-Match to avoid overwriting someone else's change (412 when it is stale).
     *
     * @tags branding
     * @name ReplaceBranding
     * @summary Replace the branding (system admins)
     * @request PUT:/branding
     * @secure
     * @response `200` `BrandingResponse` The saved branding
     * @response `400` `ProblemResponse` A field is missing or invalid; `errors` lists each one
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `412` `ProblemResponse` If-Match does not name the current branding
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceBranding: (
      data: UpdateBrandingRequest,
      params: RequestParams = {},
    ) =>
      this.request<BrandingResponse, ProblemResponse>({
        path: `/branding`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  templates = {
    /**
     * @description One template with its full dimension list; pass `dimensions` (as it is, or edited) to project creation.
     *
     * @tags templates
     * @name GetTemplate
     * @summary One template with its full dimension list; pass `dimensions` (as it is, or edited) to project creation
     * @request GET:/templates/{name}
     * @secure
     * @response `200` `TemplateDetail` The template with its dimensions and suggested metrics
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `404` `ProblemResponse` No such template; `detail` and `available` list the names that exist (error_code template_not_found)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTemplate: ({ name }: GetTemplateParams, params: RequestParams = {}) =>
      this.request<TemplateDetail, ProblemResponse>({
        path: `/templates/${name}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The built-in project templates (customer support, RAG, summarisation, code, agents, …).
     *
     * @tags templates
     * @name ListTemplates
     * @summary The built-in project templates (customer support, RAG, summarisation, code, agents, …)
     * @request GET:/templates
     * @secure
     * @response `200` `(TemplateSummary)[]` Every built-in template
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTemplates: (params: RequestParams = {}) =>
      this.request<TemplateSummary[], ProblemResponse>({
        path: `/templates`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  auth = {
    /**
     * @description Accepts an invitation. A new account is created with the given password; an existing account proves itself with its bearer token or its password. Answers who you are now.
     *
     * @tags invitations
     * @name AcceptInvitation
     * @summary Accepts an invitation
     * @request POST:/auth/accept-invitation
     * @response `200` `MeResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Unknown token, or the existing account was not proven
     * @response `403` `ProblemResponse` Expired, revoked or used invitation, or a token of another user
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` auth_busy: too many passwords being checked at once (only without a bearer token); see Retry-After; rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    acceptInvitation: (
      data: AcceptInvitationRequest,
      params: RequestParams = {},
    ) =>
      this.request<MeResponse, ProblemResponse>({
        path: `/auth/accept-invitation`,
        method: "POST",
        body: data,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Who the token belongs to, with the caller's workspace memberships. With an API key: its creator, in the key's workspace only, at the key's effective role.
     *
     * @tags auth
     * @name GetCurrentUser
     * @summary Who the token belongs to, with the caller's workspace memberships
     * @request GET:/auth/me
     * @secure
     * @response `200` `MeResponse`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getCurrentUser: (params: RequestParams = {}) =>
      this.request<MeResponse, ProblemResponse>({
        path: `/auth/me`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Where the identity provider sends the browser back. Proves the login (state against the cookie, the code traded with the PKCE verifier, the ID token's signature, issuer, audience and nonce), provisions the account and its mapped roles, and issues a bearer token: as JSON, or, when the login named `return_to`, by a redirect there with the token in the URL's fragment.
     *
     * @tags auth
     * @name IssueSsoToken
     * @summary Where the identity provider sends the browser back
     * @request GET:/auth/sso/callback
     * @response `200` `TokenResponse` The session token (never cached)
     * @response `303` `void` To the return_to address, the token in its fragment
     * @response `400` `ProblemResponse` validation_failed, sso_state_invalid
     * @response `401` `ProblemResponse` sso_denied, sso_login_failed, account_deactivated
     * @response `403` `ProblemResponse` sso_identity_unusable
     * @response `404` `ProblemResponse` sso_not_configured
     * @response `409` `ProblemResponse` sso_account_exists, sso_identity_conflict
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `502` `ProblemResponse` sso_provider_unavailable
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    issueSsoToken: (
      query: IssueSsoTokenParams = {},
      params: RequestParams = {},
    ) =>
      this.request<TokenResponse, void | ProblemResponse>({
        path: `/auth/sso/callback`,
        method: "GET",
        query: query,
        format: "json",
        ...params,
      }),

    /**
     * @description Trade credentials for a bearer token (JSON, or the OAuth2 password form that Swagger UI's Authorize button sends). After LOGIN_MAX_FAILURES failures for one email from one address, attempts are answered 429 rate_limited; when too many logins are being checked at once, 429 auth_busy. Both carry Retry-After.
     *
     * @tags auth
     * @name IssueToken
     * @summary Trade credentials for a bearer token (JSON, or the OAuth2 password form that Swagger UI's Authorize button sends)
     * @request POST:/auth/token
     * @response `200` `TokenResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Wrong email or password, deactivated account, or bad reset token
     * @response `403` `ProblemResponse` sso_required: accounts of this e-mail domain sign in through single sign-on (GET /auth/sso/login)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limited: too many failed logins; auth_busy: too many logins being checked at once. See Retry-After; rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    issueToken: (data: TokenRequest, params: RequestParams = {}) =>
      this.request<TokenResponse, ProblemResponse>({
        path: `/auth/token`,
        method: "POST",
        body: data,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Revokes the token used for this call; it stops working at once.
     *
     * @tags auth
     * @name Logout
     * @summary Revokes the token used for this call; it stops working at once
     * @request POST:/auth/logout
     * @secure
     * @response `204` `void` Logged out
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: any authenticated user (a user's token, not an API key)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    logout: (params: RequestParams = {}) =>
      this.request<void, ProblemResponse>({
        path: `/auth/logout`,
        method: "POST",
        secure: true,
        ...params,
      }),

    /**
     * @description Ends the session of this token at once (as POST /auth/logout does) and answers the identity provider's logout URL, for the browser to open so the provider's session ends too.
     *
     * @tags auth
     * @name LogoutSso
     * @summary Ends the session of this token at once (as POST /auth/logout does) and answers the identity provider's logout URL, for the browser to open so the provider's session ends too
     * @request POST:/auth/sso/logout
     * @secure
     * @response `200` `SsoLogoutResponse`
     * @response `400` `ProblemResponse` malformed_json: a body was sent (none is taken) and is not JSON
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: any authenticated user (a user's token, not an API key)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    logoutSso: (params: RequestParams = {}) =>
      this.request<SsoLogoutResponse, ProblemResponse>({
        path: `/auth/sso/logout`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Starts single sign-on: a redirect to the identity provider's authorization endpoint (code flow, PKCE S256, state and nonce), with a sealed, HTTP-only cookie the callback needs within 10 minutes. Open it in a browser.
     *
     * @tags auth
     * @name StartSsoLogin
     * @summary Starts single sign-on: a redirect to the identity provider's authorization endpoint (code flow, PKCE S256, state and nonce), with a sealed, HTTP-only cookie the callback needs within 10 minutes
     * @request GET:/auth/sso/login
     * @response `302` `void` To the identity provider (Location); sets the login's cookie
     * @response `400` `ProblemResponse` validation_failed, sso_return_not_allowed
     * @response `404` `ProblemResponse` sso_not_configured
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `502` `ProblemResponse` sso_provider_unavailable
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startSsoLogin: (
      query: StartSsoLoginParams = {},
      params: RequestParams = {},
    ) =>
      this.request<any, void | ProblemResponse>({
        path: `/auth/sso/login`,
        method: "GET",
        query: query,
        ...params,
      }),
  };
  internal = {
    /**
     * @description For internal services (a gateway): is this token live, and whose is it? 401 when not.
     *
     * @tags auth
     * @name VerifyToken
     * @summary For internal services (a gateway): is this token live, and whose is it? 401 when not
     * @request POST:/internal/auth/verify
     * @response `200` `VerifyResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` The token is not live
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    verifyToken: (data: VerifyRequest, params: RequestParams = {}) =>
      this.request<VerifyResponse, ProblemResponse>({
        path: `/internal/auth/verify`,
        method: "POST",
        body: data,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  users = {
    /**
     * @description Creates a user (system admins). Without a password, hand the user a reset token.
     *
     * @tags users
     * @name CreateUser
     * @summary Creates a user (system admins)
     * @request POST:/users
     * @secure
     * @response `201` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `409` `ProblemResponse` email_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createUser: (data: CreateUserRequest, params: RequestParams = {}) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deactivates the user and revokes every token they hold (system admins).
     *
     * @tags users
     * @name DeactivateUser
     * @summary Deactivates the user and revokes every token they hold (system admins)
     * @request POST:/users/{user_id}/deactivate
     * @secure
     * @response `200` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `409` `ProblemResponse` self_deactivation or last_admin
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deactivateUser: (
      { userId }: DeactivateUserParams,
      params: RequestParams = {},
    ) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users/${userId}/deactivate`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A user (system admins, or the user itself). Carries an ETag for If-Match on PATCH.
     *
     * @tags users
     * @name GetUser
     * @summary A user (system admins, or the user itself)
     * @request GET:/users/{user_id}
     * @secure
     * @response `200` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin, or the user named by {user_id} (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getUser: ({ userId }: GetUserParams, params: RequestParams = {}) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users/${userId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Issues a one-time, expiring reset token, shown once (system admins).
     *
     * @tags users
     * @name IssueResetToken
     * @summary Issues a one-time, expiring reset token, shown once (system admins)
     * @request POST:/users/{user_id}/reset-token
     * @secure
     * @response `200` `ResetTokenResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    issueResetToken: (
      { userId }: IssueResetTokenParams,
      params: RequestParams = {},
    ) =>
      this.request<ResetTokenResponse, ProblemResponse>({
        path: `/users/${userId}/reset-token`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspaces the user belongs to, with roles (system admins, or the user itself).
     *
     * @tags users
     * @name ListUserMemberships
     * @summary The workspaces the user belongs to, with roles (system admins, or the user itself)
     * @request GET:/users/{user_id}/memberships
     * @secure
     * @response `200` `(UserMembershipResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin, or the user named by {user_id} (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listUserMemberships: (
      { userId }: ListUserMembershipsParams,
      params: RequestParams = {},
    ) =>
      this.request<UserMembershipResponse[], ProblemResponse>({
        path: `/users/${userId}/memberships`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Users of the service, filtered and sorted (system admins).
     *
     * @tags users
     * @name ListUsers
     * @summary Users of the service, filtered and sorted (system admins)
     * @request GET:/users
     * @secure
     * @response `200` `UserResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listUsers: (query: ListUsersParams = {}, params: RequestParams = {}) =>
      this.request<UserResponsePage, ProblemResponse>({
        path: `/users`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Lets a deactivated user log in again (system admins).
     *
     * @tags users
     * @name ReactivateUser
     * @summary Lets a deactivated user log in again (system admins)
     * @request POST:/users/{user_id}/reactivate
     * @secure
     * @response `200` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    reactivateUser: (
      { userId }: ReactivateUserParams,
      params: RequestParams = {},
    ) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users/${userId}/reactivate`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets a new password and revokes every token of the user (system admins).
     *
     * @tags users
     * @name ResetUserPassword
     * @summary Sets a new password and revokes every token of the user (system admins)
     * @request POST:/users/{user_id}/reset-password
     * @secure
     * @response `200` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    resetUserPassword: (
      { userId }: ResetUserPasswordParams,
      data: ResetPasswordRequest,
      params: RequestParams = {},
    ) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users/${userId}/reset-password`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes email, display name or system role (system admins). Send If-Match to avoid overwriting.
     *
     * @tags users
     * @name UpdateUser
     * @summary Changes email, display name or system role (system admins)
     * @request PATCH:/users/{user_id}
     * @secure
     * @response `200` `UserResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `404` `ProblemResponse`
     * @response `409` `ProblemResponse` email_taken, or last_admin when demoting the last active admin
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateUser: (
      { userId }: UpdateUserParams,
      data: UpdateUserRequest,
      params: RequestParams = {},
    ) =>
      this.request<UserResponse, ProblemResponse>({
        path: `/users/${userId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  workspaces = {
    /**
     * @description Adds an existing user by id or email (admins; only owners grant owner).
     *
     * @tags workspaces
     * @name AddMember
     * @summary Adds an existing user by id or email (admins; only owners grant owner)
     * @request POST:/workspaces/{workspace_id}/members
     * @secure
     * @response `201` `WorkspaceMemberResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` already_member or user_deactivated
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    addMember: (
      { workspaceId }: AddMemberParams,
      data: AddMemberRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMemberResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/members`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates a key that acts for you in this workspace, with a role no higher than yours and an optional expiry (any member, with a user's token). The key is in this answer only: send it as `Authorization: Bearer <key>`. Audited as api_key.created.
     *
     * @tags api-keys
     * @name CreateApiKey
     * @summary Creates a key that acts for you in this workspace, with a role no higher than yours and an optional expiry (any member, with a user's token)
     * @request POST:/workspaces/{workspace_id}/api-keys
     * @secure
     * @response `201` `ApiKeyCreatedResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id} (a user's token, not an API key)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` api_key_limit_reached
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createApiKey: (
      { workspaceId }: CreateApiKeyParams,
      data: CreateApiKeyRequest,
      params: RequestParams = {},
    ) =>
      this.request<ApiKeyCreatedResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/api-keys`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Invites an email with a role (admins; owners for the owner role). The token is shown once.
     *
     * @tags invitations
     * @name CreateInvitation
     * @summary Invites an email with a role (admins; owners for the owner role)
     * @request POST:/workspaces/{workspace_id}/invitations
     * @secure
     * @response `201` `CreateInvitationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` already_member or invitation_pending
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createInvitation: (
      { workspaceId }: CreateInvitationParams,
      data: CreateInvitationRequest,
      params: RequestParams = {},
    ) =>
      this.request<CreateInvitationResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/invitations`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The next version of a config (members): what the body leaves out is copied from `from_version` (default the newest).
     *
     * @tags metric configs
     * @name CreateMetricConfigVersion
     * @summary The next version of a config (members): what the body leaves out is copied from `from_version` (default the newest)
     * @request POST:/workspaces/{workspace_id}/metric-configs/{config_name}/versions
     * @secure
     * @response `201` `MetricConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createMetricConfigVersion: (
      { workspaceId, configName }: CreateMetricConfigVersionParams,
      data: CreateMetricConfigVersionRequest,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/metric-configs/${configName}/versions`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Stores a secret, encrypted at rest (admins).
     *
     * @tags secrets
     * @name CreateSecret
     * @summary Stores a secret, encrypted at rest (admins)
     * @request POST:/workspaces/{workspace_id}/secrets
     * @secure
     * @response `201` `WorkspaceSecretResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` secret_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createSecret: (
      { workspaceId }: CreateSecretParams,
      data: CreateSecretRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceSecretResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates a workspace; the caller becomes its owner.
     *
     * @tags workspaces
     * @name CreateWorkspace
     * @summary Creates a workspace; the caller becomes its owner
     * @request POST:/workspaces
     * @secure
     * @response `201` `WorkspaceResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: any authenticated user (a user's token, not an API key)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createWorkspace: (
      data: CreateWorkspaceRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceResponse, ProblemResponse>({
        path: `/workspaces`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates a user straight into the workspace (admins).
     *
     * @tags workspaces
     * @name CreateWorkspaceUser
     * @summary Creates a user straight into the workspace (admins)
     * @request POST:/workspaces/{workspace_id}/users
     * @secure
     * @response `201` `WorkspaceMemberResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` email_taken: add the existing user as a member instead
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createWorkspaceUser: (
      { workspaceId }: CreateWorkspaceUserParams,
      data: CreateWorkspaceUserRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMemberResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/users`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a stopped op with its revisions and the ops it serves (admins).
     *
     * @tags ops
     * @name DeleteCustomOp
     * @summary Deletes a stopped op with its revisions and the ops it serves (admins)
     * @request DELETE:/workspaces/{workspace_id}/custom_ops/{name}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` custom_op_not_stopped, custom_op_in_use
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteCustomOp: (
      { workspaceId, name }: DeleteCustomOpParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops/${name}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Deletes the secret (admins).
     *
     * @tags secrets
     * @name DeleteSecret
     * @summary Deletes the secret (admins)
     * @request DELETE:/workspaces/{workspace_id}/secrets/{secret_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteSecret: (
      { workspaceId, secretId }: DeleteSecretParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets/${secretId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Deletes the workspace and everything in it (owners).
     *
     * @tags workspaces
     * @name DeleteWorkspace
     * @summary Deletes the workspace and everything in it (owners)
     * @request DELETE:/workspaces/{workspace_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: owner or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteWorkspace: (
      { workspaceId }: DeleteWorkspaceParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/workspaces/${workspaceId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Every audit event of the workspace the filters match, streamed as JSON Lines or CSV (admins). Audited as audit_log.exported.
     *
     * @tags audit
     * @name ExportAuditEvents
     * @summary Every audit event of the workspace the filters match, streamed as JSON Lines or CSV (admins)
     * @request GET:/workspaces/{workspace_id}/audit-events/export
     * @secure
     * @response `200` `string` The events, newest first: JSON Lines (`format=jsonl`, the default) or CSV (`format=csv`)
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportAuditEvents: (
      { workspaceId, ...query }: ExportAuditEventsParams,
      params: RequestParams = {},
    ) =>
      this.request<string, ProblemResponse>({
        path: `/workspaces/${workspaceId}/audit-events/export`,
        method: "GET",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description One key's metadata (its creator, or an admin).
     *
     * @tags api-keys
     * @name GetApiKey
     * @summary One key's metadata (its creator, or an admin)
     * @request GET:/workspaces/{workspace_id}/api-keys/{api_key_id}
     * @secure
     * @response `200` `ApiKeyResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getApiKey: (
      { workspaceId, apiKeyId }: GetApiKeyParams,
      params: RequestParams = {},
    ) =>
      this.request<ApiKeyResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/api-keys/${apiKeyId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description How long the workspace keeps its audit events: its own setting, the service's default and what applies (admins).
     *
     * @tags audit
     * @name GetAuditRetention
     * @summary How long the workspace keeps its audit events: its own setting, the service's default and what applies (admins)
     * @request GET:/workspaces/{workspace_id}/audit-retention
     * @secure
     * @response `200` `AuditRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getAuditRetention: (
      { workspaceId }: GetAuditRetentionParams,
      params: RequestParams = {},
    ) =>
      this.request<AuditRetentionResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/audit-retention`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One custom op with its revisions (newest first) and the ops it serves (viewers).
     *
     * @tags ops
     * @name GetCustomOp
     * @summary One custom op with its revisions (newest first) and the ops it serves (viewers)
     * @request GET:/workspaces/{workspace_id}/custom_ops/{name}
     * @secure
     * @response `200` `CustomOpDetailResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getCustomOp: (
      { workspaceId, name }: GetCustomOpParams,
      params: RequestParams = {},
    ) =>
      this.request<CustomOpDetailResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops/${name}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A secret's metadata (members), with an ETag for If-Match on PATCH.
     *
     * @tags secrets
     * @name GetSecret
     * @summary A secret's metadata (members), with an ETag for If-Match on PATCH
     * @request GET:/workspaces/{workspace_id}/secrets/{secret_id}
     * @secure
     * @response `200` `WorkspaceSecretResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getSecret: (
      { workspaceId, secretId }: GetSecretParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceSecretResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets/${secretId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's trace retention: its default and the datasets with their own (viewers).
     *
     * @tags traces
     * @name GetTraceRetention
     * @summary The workspace's trace retention: its default and the datasets with their own (viewers)
     * @request GET:/workspaces/{workspace_id}/trace-retention
     * @secure
     * @response `200` `TraceRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceRetention: (
      { workspaceId }: GetTraceRetentionParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceRetentionResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/trace-retention`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A workspace with the caller's role; carries an ETag for If-Match on PATCH.
     *
     * @tags workspaces
     * @name GetWorkspace
     * @summary A workspace with the caller's role; carries an ETag for If-Match on PATCH
     * @request GET:/workspaces/{workspace_id}
     * @secure
     * @response `200` `WorkspaceResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getWorkspace: (
      { workspaceId }: GetWorkspaceParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Keys of the workspace (admins: all of them; other members: their own), newest first; never the keys themselves.
     *
     * @tags api-keys
     * @name ListApiKeys
     * @summary Keys of the workspace (admins: all of them; other members: their own), newest first; never the keys themselves
     * @request GET:/workspaces/{workspace_id}/api-keys
     * @secure
     * @response `200` `ApiKeyResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listApiKeys: (
      { workspaceId, ...query }: ListApiKeysParams,
      params: RequestParams = {},
    ) =>
      this.request<ApiKeyResponsePage, ProblemResponse>({
        path: `/workspaces/${workspaceId}/api-keys`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's audit events, newest first, filtered by actor, action (or its prefix), target and time, a page at a time by cursor (admins).
     *
     * @tags audit
     * @name ListAuditEvents
     * @summary The workspace's audit events, newest first, filtered by actor, action (or its prefix), target and time, a page at a time by cursor (admins)
     * @request GET:/workspaces/{workspace_id}/audit-events
     * @secure
     * @response `200` `AuditEventPageResponse`
     * @response `400` `ProblemResponse` validation_failed, audit_cursor_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listAuditEvents: (
      { workspaceId, ...query }: ListAuditEventsParams,
      params: RequestParams = {},
    ) =>
      this.request<AuditEventPageResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/audit-events`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's custom ops with their state (viewers).
     *
     * @tags ops
     * @name ListCustomOps
     * @summary The workspace's custom ops with their state (viewers)
     * @request GET:/workspaces/{workspace_id}/custom_ops
     * @secure
     * @response `200` `CustomOpsListResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listCustomOps: (
      { workspaceId, ...query }: ListCustomOpsParams,
      params: RequestParams = {},
    ) =>
      this.request<CustomOpsListResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's invitations, newest first (admins).
     *
     * @tags invitations
     * @name ListInvitations
     * @summary The workspace's invitations, newest first (admins)
     * @request GET:/workspaces/{workspace_id}/invitations
     * @secure
     * @response `200` `(InvitationResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listInvitations: (
      { workspaceId, ...query }: ListInvitationsParams,
      params: RequestParams = {},
    ) =>
      this.request<InvitationResponse[], ProblemResponse>({
        path: `/workspaces/${workspaceId}/invitations`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Members with their roles.
     *
     * @tags workspaces
     * @name ListMembers
     * @summary Members with their roles
     * @request GET:/workspaces/{workspace_id}/members
     * @secure
     * @response `200` `(WorkspaceMemberResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listMembers: (
      { workspaceId }: ListMembersParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMemberResponse[], ProblemResponse>({
        path: `/workspaces/${workspaceId}/members`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's pinned default config per metric (viewers).
     *
     * @tags metric configs
     * @name ListMetricConfigDefaults
     * @summary The workspace's pinned default config per metric (viewers)
     * @request GET:/workspaces/{workspace_id}/metric-config-defaults
     * @secure
     * @response `200` `WorkspaceMetricConfigDefaultListResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listMetricConfigDefaults: (
      { workspaceId }: ListMetricConfigDefaultsParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMetricConfigDefaultListResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/metric-config-defaults`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every revision of one metric's default, newest first (viewers).
     *
     * @tags metric configs
     * @name ListMetricConfigDefaultVersions
     * @summary Every revision of one metric's default, newest first (viewers)
     * @request GET:/workspaces/{workspace_id}/metric-config-defaults/{metric_name}/versions
     * @secure
     * @response `200` `WorkspaceMetricConfigDefaultVersionsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listMetricConfigDefaultVersions: (
      { workspaceId, metricName }: ListMetricConfigDefaultVersionsParams,
      params: RequestParams = {},
    ) =>
      this.request<
        WorkspaceMetricConfigDefaultVersionsResponse,
        ProblemResponse
      >({
        path: `/workspaces/${workspaceId}/metric-config-defaults/${metricName}/versions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The metrics the workspace can score runs with, what each needs from a dataset, and its parameter schema (viewers).
     *
     * @tags metrics
     * @name ListMetrics
     * @summary The metrics the workspace can score runs with, what each needs from a dataset, and its parameter schema (viewers)
     * @request GET:/workspaces/{workspace_id}/metrics
     * @secure
     * @response `200` `WorkspaceMetricCatalogue`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listMetrics: (
      { workspaceId }: ListMetricsParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMetricCatalogue, ProblemResponse>({
        path: `/workspaces/${workspaceId}/metrics`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Which config version is in force for each metric, and why (for an eval config when given) (viewers).
     *
     * @tags metric configs
     * @name ListResolvedMetricConfigs
     * @summary Which config version is in force for each metric, and why (for an eval config when given) (viewers)
     * @request GET:/workspaces/{workspace_id}/metric-configs/resolved
     * @secure
     * @response `200` `MetricConfigResolutionListResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listResolvedMetricConfigs: (
      { workspaceId, ...query }: ListResolvedMetricConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigResolutionListResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/metric-configs/resolved`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Secret metadata (members; never values).
     *
     * @tags secrets
     * @name ListSecrets
     * @summary Secret metadata (members; never values)
     * @request GET:/workspaces/{workspace_id}/secrets
     * @secure
     * @response `200` `WorkspaceSecretResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSecrets: (
      { workspaceId, ...query }: ListSecretsParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceSecretResponsePage, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Active users who are not members yet, to pick from when adding (admins).
     *
     * @tags workspaces
     * @name ListUserCandidates
     * @summary Active users who are not members yet, to pick from when adding (admins)
     * @request GET:/workspaces/{workspace_id}/user-candidates
     * @secure
     * @response `200` `(WorkspaceUserCandidateResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listUserCandidates: (
      { workspaceId, ...query }: ListUserCandidatesParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceUserCandidateResponse[], ProblemResponse>({
        path: `/workspaces/${workspaceId}/user-candidates`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The caller's workspaces (system admins: all, or `mine=true`).
     *
     * @tags workspaces
     * @name ListWorkspaces
     * @summary The caller's workspaces (system admins: all, or `mine=true`)
     * @request GET:/workspaces
     * @secure
     * @response `200` `WorkspaceListItemPage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listWorkspaces: (
      query: ListWorkspacesParams = {},
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceListItemPage, ProblemResponse>({
        path: `/workspaces`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Publishes an op backed by the workspace's HTTP endpoint (admins): it starts `deploying` and a queued health check makes it `active` or `failed`.
     *
     * @tags ops
     * @name PublishCustomOp
     * @summary Publishes an op backed by the workspace's HTTP endpoint (admins): it starts `deploying` and a queued health check makes it `active` or `failed`
     * @request POST:/workspaces/{workspace_id}/custom_ops
     * @secure
     * @response `201` `CustomOpPublishResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` custom_op_name_taken, op_name_reserved
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    publishCustomOp: (
      { workspaceId }: PublishCustomOpParams,
      data: PublishCustomOpRequest,
      params: RequestParams = {},
    ) =>
      this.request<CustomOpPublishResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Redeploys (admins): a new revision, health checked again.
     *
     * @tags ops
     * @name RedeployCustomOp
     * @summary Redeploys (admins): a new revision, health checked again
     * @request PATCH:/workspaces/{workspace_id}/custom_ops/{name}
     * @secure
     * @response `200` `CustomOpRedeployResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    redeployCustomOp: (
      { workspaceId, name }: RedeployCustomOpParams,
      data: RedeployCustomOpRequest,
      params: RequestParams = {},
    ) =>
      this.request<CustomOpRedeployResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops/${name}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Registers an op served by one of the workspace's custom ops (admins); POST /ops with workspace_id in the body does the same.
     *
     * @tags ops
     * @name RegisterWorkspaceOp
     * @summary Registers an op served by one of the workspace's custom ops (admins); POST /ops with workspace_id in the body does the same
     * @request POST:/workspaces/{workspace_id}/ops
     * @secure
     * @response `201` `RegistryOpView`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` op_name_reserved, op_kind_change
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    registerWorkspaceOp: (
      { workspaceId }: RegisterWorkspaceOpParams,
      data: RegisterOpBody,
      params: RequestParams = {},
    ) =>
      this.request<RegistryOpView, ProblemResponse>({
        path: `/workspaces/${workspaceId}/ops`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Removes a member (admins), or leaves (any member removing themselves). The last owner stays.
     *
     * @tags workspaces
     * @name RemoveMember
     * @summary Removes a member (admins), or leaves (any member removing themselves)
     * @request DELETE:/workspaces/{workspace_id}/members/{user_id}
     * @secure
     * @response `204` `void` Removed
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` last_owner
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    removeMember: (
      { workspaceId, userId }: RemoveMemberParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/workspaces/${workspaceId}/members/${userId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Issues a new token and expiry for a pending or expired invitation (admins); the old token stops working.
     *
     * @tags invitations
     * @name ResendInvitation
     * @summary Issues a new token and expiry for a pending or expired invitation (admins); the old token stops working
     * @request POST:/workspaces/{workspace_id}/invitations/{invitation_id}/resend
     * @secure
     * @response `200` `CreateInvitationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` invitation_not_pending
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    resendInvitation: (
      { workspaceId, invitationId }: ResendInvitationParams,
      params: RequestParams = {},
    ) =>
      this.request<CreateInvitationResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/invitations/${invitationId}/resend`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Returns the value (admins). Audited as secret.revealed.
     *
     * @tags secrets
     * @name RevealSecret
     * @summary Returns the value (admins)
     * @request POST:/workspaces/{workspace_id}/secrets/{secret_id}/reveal
     * @secure
     * @response `200` `WorkspaceSecretRevealResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` secret_undecryptable
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    revealSecret: (
      { workspaceId, secretId }: RevealSecretParams,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceSecretRevealResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets/${secretId}/reveal`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Revokes the key at once (its creator, or an admin); it answers 401 from the next call. Audited as api_key.revoked.
     *
     * @tags api-keys
     * @name RevokeApiKey
     * @summary Revokes the key at once (its creator, or an admin); it answers 401 from the next call
     * @request DELETE:/workspaces/{workspace_id}/api-keys/{api_key_id}
     * @secure
     * @response `204` `void` Revoked (or already revoked)
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    revokeApiKey: (
      { workspaceId, apiKeyId }: RevokeApiKeyParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/workspaces/${workspaceId}/api-keys/${apiKeyId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Revokes a pending or expired invitation (admins).
     *
     * @tags invitations
     * @name RevokeInvitation
     * @summary Revokes a pending or expired invitation (admins)
     * @request POST:/workspaces/{workspace_id}/invitations/{invitation_id}/revoke
     * @secure
     * @response `200` `InvitationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` invitation_not_pending
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    revokeInvitation: (
      { workspaceId, invitationId }: RevokeInvitationParams,
      params: RequestParams = {},
    ) =>
      this.request<InvitationResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/invitations/${invitationId}/revoke`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets how many days the workspace keeps its audit events (30 to 36500); null follows the service's default (admins). Audited as audit_retention.updated.
     *
     * @tags audit
     * @name SetAuditRetention
     * @summary Sets how many days the workspace keeps its audit events (30 to 36500); null follows the service's default (admins)
     * @request PUT:/workspaces/{workspace_id}/audit-retention
     * @secure
     * @response `200` `AuditRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setAuditRetention: (
      { workspaceId }: SetAuditRetentionParams,
      data: PutAuditRetentionRequest,
      params: RequestParams = {},
    ) =>
      this.request<AuditRetentionResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/audit-retention`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Pins (or, with config_name null, clears) the default config of metrics (admins); each change is a revision.
     *
     * @tags metric configs
     * @name SetMetricConfigDefaults
     * @summary Pins (or, with config_name null, clears) the default config of metrics (admins); each change is a revision
     * @request POST:/workspaces/{workspace_id}/metric-config-defaults
     * @secure
     * @response `201` `WorkspaceMetricConfigDefaultListResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setMetricConfigDefaults: (
      { workspaceId }: SetMetricConfigDefaultsParams,
      data: SetMetricDefaultsRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMetricConfigDefaultListResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/metric-config-defaults`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets how many days the workspace keeps trace data (spans of datasets without their own setting, uploads, landing payloads); null keeps it forever (admins).
     *
     * @tags traces
     * @name SetTraceRetention
     * @summary Sets how many days the workspace keeps trace data (spans of datasets without their own setting, uploads, landing payloads); null keeps it forever (admins)
     * @request PUT:/workspaces/{workspace_id}/trace-retention
     * @secure
     * @response `200` `TraceRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setTraceRetention: (
      { workspaceId }: SetTraceRetentionParams,
      data: PutTraceRetentionRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceRetentionResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/trace-retention`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description How the workspace embeds text for clustering and similarity (admins). `local` needs no network. Honours If-Match.
     *
     * @tags workspaces
     * @name SetWorkspaceEmbeddingConfig
     * @summary How the workspace embeds text for clustering and similarity (admins)
     * @request PUT:/workspaces/{workspace_id}/embedding-config
     * @secure
     * @response `200` `WorkspaceResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setWorkspaceEmbeddingConfig: (
      { workspaceId }: SetWorkspaceEmbeddingConfigParams,
      data: EmbeddingConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/embedding-config`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Stops the op (admins): runs can no longer use it; the reason is kept.
     *
     * @tags ops
     * @name StopCustomOp
     * @summary Stops the op (admins): runs can no longer use it; the reason is kept
     * @request PATCH:/workspaces/{workspace_id}/custom_ops/{name}/stop
     * @secure
     * @response `200` `CustomOpStopResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    stopCustomOp: (
      { workspaceId, name }: StopCustomOpParams,
      data: StopCustomOpRequest,
      params: RequestParams = {},
    ) =>
      this.request<CustomOpStopResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/custom_ops/${name}/stop`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Removes the workspace's expired trace data now, as the hourly sweep does, and says what went (admins).
     *
     * @tags traces
     * @name SweepTraceRetention
     * @summary Removes the workspace's expired trace data now, as the hourly sweep does, and says what went (admins)
     * @request POST:/workspaces/{workspace_id}/trace-retention:sweep
     * @secure
     * @response `200` `TraceRetentionSweepResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    sweepTraceRetention: (
      { workspaceId, sweep }: SweepTraceRetentionParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceRetentionSweepResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/trace-retention${sweep}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes a member's role (admins; owners for anything touching the owner role).
     *
     * @tags workspaces
     * @name UpdateMemberRole
     * @summary Changes a member's role (admins; owners for anything touching the owner role)
     * @request PATCH:/workspaces/{workspace_id}/members/{user_id}
     * @secure
     * @response `200` `WorkspaceMemberResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` last_owner
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateMemberRole: (
      { workspaceId, userId }: UpdateMemberRoleParams,
      data: ChangeMemberRoleRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceMemberResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/members/${userId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Renames, re-describes or replaces the value (admins).
     *
     * @tags secrets
     * @name UpdateSecret
     * @summary Renames, re-describes or replaces the value (admins)
     * @request PATCH:/workspaces/{workspace_id}/secrets/{secret_id}
     * @secure
     * @response `200` `WorkspaceSecretResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` secret_name_taken
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateSecret: (
      { workspaceId, secretId }: UpdateSecretParams,
      data: UpdateSecretRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceSecretResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}/secrets/${secretId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Renames or re-describes the workspace (admins). Send If-Match to avoid overwriting.
     *
     * @tags workspaces
     * @name UpdateWorkspace
     * @summary Renames or re-describes the workspace (admins)
     * @request PATCH:/workspaces/{workspace_id}
     * @secure
     * @response `200` `WorkspaceResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace {workspace_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateWorkspace: (
      { workspaceId }: UpdateWorkspaceParams,
      data: UpdateWorkspaceRequest,
      params: RequestParams = {},
    ) =>
      this.request<WorkspaceResponse, ProblemResponse>({
        path: `/workspaces/${workspaceId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  datasets = {
    /**
     * @description Assigns a dimension value to rows given by id or by a rule in the query language (members); creates the dimension and value on first use.
     *
     * @tags dataset dimensions
     * @name AssignDimensionValue
     * @summary Assigns a dimension value to rows given by id or by a rule in the query language (members); creates the dimension and value on first use
     * @request POST:/datasets/{dataset_id}/dimensions:assign
     * @secure
     * @response `201` `AssignDimensionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    assignDimensionValue: (
      { datasetId, assign }: AssignDimensionValueParams,
      data: AssignDimensionRequest,
      params: RequestParams = {},
    ) =>
      this.request<AssignDimensionResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/dimensions${assign}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Turns every staged edit into a new immutable version, in one transaction.
     *
     * @tags datasets
     * @name CommitStagedRows
     * @summary Turns every staged edit into a new immutable version, in one transaction
     * @request POST:/datasets/{dataset_id}/rows/commit
     * @secure
     * @response `200` `RowOperationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` nothing_to_commit, stale_edits
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    commitStagedRows: (
      { datasetId }: CommitStagedRowsParams,
      data: CommitRowsRequest,
      params: RequestParams = {},
    ) =>
      this.request<RowOperationResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/rows/commit`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Saves a slice of the version by dimension values and/or a filter (members).
     *
     * @tags dataset dimensions
     * @name CreatePartition
     * @summary Saves a slice of the version by dimension values and/or a filter (members)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/partitions
     * @secure
     * @response `201` `PartitionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` partition_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createPartition: (
      { datasetId, versionId }: CreatePartitionParams,
      data: CreatePartitionRequest,
      params: RequestParams = {},
    ) =>
      this.request<PartitionResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/partitions`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes the dataset with every version, row, dimension and partition (admins).
     *
     * @tags datasets
     * @name DeleteDataset
     * @summary Deletes the dataset with every version, row, dimension and partition (admins)
     * @request DELETE:/datasets/{dataset_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteDataset: (
      { datasetId }: DeleteDatasetParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/datasets/${datasetId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Deletes a partition (members).
     *
     * @tags dataset dimensions
     * @name DeletePartition
     * @summary Deletes a partition (members)
     * @request DELETE:/datasets/{dataset_id}/versions/{version_id}/partitions/{partition_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deletePartition: (
      { datasetId, versionId, partitionId }: DeletePartitionParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/partitions/${partitionId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Stages rows for deletion by id; answers the ids staged.
     *
     * @tags datasets
     * @name DeleteRows
     * @summary Stages rows for deletion by id; answers the ids staged
     * @request POST:/datasets/{dataset_id}/rows/delete
     * @secure
     * @response `200` `(string)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` row_edit_conflict
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteRows: (
      { datasetId }: DeleteRowsParams,
      data: DeleteRowsRequest,
      params: RequestParams = {},
    ) =>
      this.request<string[], ProblemResponse>({
        path: `/datasets/${datasetId}/rows/delete`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Retires the version (members); a retired version stays readable and can be promoted again.
     *
     * @tags dataset versions
     * @name DemoteDatasetVersion
     * @summary Retires the version (members); a retired version stays readable and can be promoted again
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/demote
     * @secure
     * @response `200` `DatasetVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` version_state_conflict: already retired
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    demoteDatasetVersion: (
      { datasetId, versionId }: DemoteDatasetVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetVersionResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/demote`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Discards every staged edit (members).
     *
     * @tags datasets
     * @name DiscardStagedRows
     * @summary Discards every staged edit (members)
     * @request DELETE:/datasets/{dataset_id}/rows/staged
     * @secure
     * @response `204` `void` Discarded
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    discardStagedRows: (
      { datasetId }: DiscardStagedRowsParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/datasets/${datasetId}/rows/staged`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One analysis run with its state and progress (viewers).
     *
     * @tags analysis
     * @name GetAnalysisRun
     * @summary One analysis run with its state and progress (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis-runs/{run_id}
     * @secure
     * @response `200` `AnalysisRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getAnalysisRun: (
      { datasetId, versionId, runId }: GetAnalysisRunParams,
      params: RequestParams = {},
    ) =>
      this.request<AnalysisRunResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis-runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description What the analyses see in the version (viewers): text and label columns, the column embedded, row properties per analysis, the latest runs.
     *
     * @tags analysis
     * @name GetAnalysisSchema
     * @summary What the analyses see in the version (viewers): text and label columns, the column embedded, row properties per analysis, the latest runs
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis/schema
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getAnalysisSchema: (
      { datasetId, versionId }: GetAnalysisSchemaParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/schema`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Label distributions per label column, overall and per dimension value, and agreement (Cohen's or Fleiss' kappa) between columns labelling the same rows (viewers).
     *
     * @tags analysis
     * @name GetAnnotationAnalysis
     * @summary Label distributions per label column, overall and per dimension value, and agreement (Cohen's or Fleiss' kappa) between columns labelling the same rows (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis/annotation
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getAnnotationAnalysis: (
      { datasetId, versionId }: GetAnnotationAnalysisParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/annotation`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Whether the version can be clustered, and why not (viewers).
     *
     * @tags analysis
     * @name GetClusteringAvailability
     * @summary Whether the version can be clustered, and why not (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/cluster-runs/availability
     * @secure
     * @response `200` `DatasetClustersAvailability`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getClusteringAvailability: (
      { datasetId, versionId }: GetClusteringAvailabilityParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetClustersAvailability, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/cluster-runs/availability`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One cluster run with its state (viewers).
     *
     * @tags analysis
     * @name GetClusterRun
     * @summary One cluster run with its state (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/cluster-runs/{run_id}
     * @secure
     * @response `200` `DatasetClustersRun`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getClusterRun: (
      { datasetId, versionId, runId }: GetClusterRunParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetClustersRun, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/cluster-runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The clusters (sizes, names, terms, exemplar rows) and every row's 2-D point (viewers).
     *
     * @tags analysis
     * @name GetClusterRunResult
     * @summary The clusters (sizes, names, terms, exemplar rows) and every row's 2-D point (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/cluster-runs/{run_id}/result
     * @secure
     * @response `200` `DatasetClustersResult`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` cluster_run_not_finished
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getClusterRunResult: (
      { datasetId, versionId, runId }: GetClusterRunResultParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetClustersResult, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/cluster-runs/${runId}/result`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A dataset with its newest version (viewers); carries an ETag for If-Match on PATCH.
     *
     * @tags datasets
     * @name GetDataset
     * @summary A dataset with its newest version (viewers); carries an ETag for If-Match on PATCH
     * @request GET:/datasets/{dataset_id}
     * @secure
     * @response `200` `DatasetResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getDataset: ({ datasetId }: GetDatasetParams, params: RequestParams = {}) =>
      this.request<DatasetResponse, ProblemResponse>({
        path: `/datasets/${datasetId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A signed, expiring URL that downloads a version as CSV, JSON Lines or Parquet without a token (viewers).
     *
     * @tags datasets
     * @name GetDatasetDownloadUrl
     * @summary A signed, expiring URL that downloads a version as CSV, JSON Lines or Parquet without a token (viewers)
     * @request GET:/datasets/{dataset_id}/download-url
     * @secure
     * @response `200` `PresignedUrlResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getDatasetDownloadUrl: (
      { datasetId, ...query }: GetDatasetDownloadUrlParams,
      params: RequestParams = {},
    ) =>
      this.request<PresignedUrlResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/download-url`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Inferred column types and statistics of a version (viewers).
     *
     * @tags datasets
     * @name GetDatasetSchema
     * @summary Inferred column types and statistics of a version (viewers)
     * @request GET:/datasets/{dataset_id}/schema
     * @secure
     * @response `200` `SchemaResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getDatasetSchema: (
      { datasetId, ...query }: GetDatasetSchemaParams,
      params: RequestParams = {},
    ) =>
      this.request<SchemaResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/schema`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A signed, expiring URL that downloads the version as CSV, JSON Lines or Parquet without a token (viewers).
     *
     * @tags dataset versions
     * @name GetDatasetVersionDownloadUrl
     * @summary A signed, expiring URL that downloads the version as CSV, JSON Lines or Parquet without a token (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/download
     * @secure
     * @response `200` `PresignedUrlResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getDatasetVersionDownloadUrl: (
      { datasetId, versionId, ...query }: GetDatasetVersionDownloadUrlParams,
      params: RequestParams = {},
    ) =>
      this.request<PresignedUrlResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/download`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The newest cluster run of the version, or null (viewers).
     *
     * @tags analysis
     * @name GetLatestClusterRun
     * @summary The newest cluster run of the version, or null (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/cluster-runs/latest
     * @secure
     * @response `200` `(DatasetClustersRun | null)` The newest run, or null when there is none
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getLatestClusterRun: (
      { datasetId, versionId }: GetLatestClusterRunParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetClustersRun | null, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/cluster-runs/latest`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The newest verdict on the version (viewers); 404 no_quality_run before the first run.
     *
     * @tags dataset quality
     * @name GetLatestQualityVerdict
     * @summary The newest verdict on the version (viewers); 404 no_quality_run before the first run
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/quality-checks
     * @secure
     * @response `200` `DatasetQualityVerdictResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getLatestQualityVerdict: (
      { datasetId, versionId }: GetLatestQualityVerdictParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetQualityVerdictResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/quality-checks`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One data-operation run (viewers).
     *
     * @tags dataset quality
     * @name GetQualityCheckRun
     * @summary One data-operation run (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/quality-checks/runs/{run_id}
     * @secure
     * @response `200` `DataOperationRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getQualityCheckRun: (
      { datasetId, versionId, runId }: GetQualityCheckRunParams,
      params: RequestParams = {},
    ) =>
      this.request<DataOperationRunResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/quality-checks/runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Per text column: lengths in characters, words and tokens, languages, vocabulary, top terms, readability, empty rates, with histograms (viewers).
     *
     * @tags analysis
     * @name GetTextAnalysis
     * @summary Per text column: lengths in characters, words and tokens, languages, vocabulary, top terms, readability, empty rates, with histograms (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis/text
     * @secure
     * @response `200` `TextAnalysisResult`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTextAnalysis: (
      { datasetId, versionId }: GetTextAnalysisParams,
      params: RequestParams = {},
    ) =>
      this.request<TextAnalysisResult, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/text`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Progress of the version's per-trace enrichment (computed after each landing and on recompute) and the fields it derives (viewers).
     *
     * @tags traces
     * @name GetTraceEnrichment
     * @summary Progress of the version's per-trace enrichment (computed after each landing and on recompute) and the fields it derives (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/trace-enrichment
     * @secure
     * @response `200` `TraceEnrichmentStatusResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceEnrichment: (
      { datasetId, versionId }: GetTraceEnrichmentParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceEnrichmentStatusResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-enrichment`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The graph of components (agents, tools, LLM calls, retrievers) from parent-child spans, with call counts, error rates and latency percentiles per node and edge (viewers).
     *
     * @tags traces
     * @name GetTraceTopology
     * @summary The graph of components (agents, tools, LLM calls, retrievers) from parent-child spans, with call counts, error rates and latency percentiles per node and edge (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/topology
     * @secure
     * @response `200` `TopologyGraph`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceTopology: (
      { datasetId, versionId, ...query }: GetTraceTopologyParams,
      params: RequestParams = {},
    ) =>
      this.request<TopologyGraph, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/topology`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A 2-D map of the rows' embeddings with cluster ids, for a scatter plot (viewers).
     *
     * @tags analysis
     * @name GetVisualAnalysis
     * @summary A 2-D map of the rows' embeddings with cluster ids, for a scatter plot (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis/visual
     * @secure
     * @response `200` `VisualAnalysisResult`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getVisualAnalysis: (
      { datasetId, versionId }: GetVisualAnalysisParams,
      params: RequestParams = {},
    ) =>
      this.request<VisualAnalysisResult, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/visual`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Stages rows for insertion (1..1000); answers them with their `_row_id`.
     *
     * @tags datasets
     * @name InsertRows
     * @summary Stages rows for insertion (1..1000); answers them with their `_row_id`
     * @request POST:/datasets/{dataset_id}/rows/insert
     * @secure
     * @response `200` `(Record<string,any>)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` row_exists, row_edit_conflict
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    insertRows: (
      { datasetId }: InsertRowsParams,
      data: InsertRowsRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>[], ProblemResponse>({
        path: `/datasets/${datasetId}/rows/insert`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The version's analysis runs, newest first (viewers).
     *
     * @tags analysis
     * @name ListAnalysisRuns
     * @summary The version's analysis runs, newest first (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/analysis-runs
     * @secure
     * @response `200` `(AnalysisRunResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listAnalysisRuns: (
      { datasetId, versionId }: ListAnalysisRunsParams,
      params: RequestParams = {},
    ) =>
      this.request<AnalysisRunResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis-runs`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The built-in metrics the version's mapping supports, and what the others lack (viewers).
     *
     * @tags dataset dimensions
     * @name ListAvailableMetrics
     * @summary The built-in metrics the version's mapping supports, and what the others lack (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/available-metrics
     * @secure
     * @response `200` `DatasetVersionAvailableMetricsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listAvailableMetrics: (
      { datasetId, versionId }: ListAvailableMetricsParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetVersionAvailableMetricsResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/available-metrics`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The metrics the partition can be scored with (viewers).
     *
     * @tags dataset dimensions
     * @name ListAvailablePartitionMetrics
     * @summary The metrics the partition can be scored with (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/partitions/{partition_id}/available-metrics
     * @secure
     * @response `200` `PartitionAvailableMetricsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listAvailablePartitionMetrics: (
      {
        datasetId,
        versionId,
        partitionId,
      }: ListAvailablePartitionMetricsParams,
      params: RequestParams = {},
    ) =>
      this.request<PartitionAvailableMetricsResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/partitions/${partitionId}/available-metrics`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The quality checks, each with whether it applies to the version's columns and why (viewers).
     *
     * @tags dataset quality
     * @name ListAvailableQualityChecks
     * @summary The quality checks, each with whether it applies to the version's columns and why (viewers)
     * @request GET:/datasets/{dataset_id}/available-checks
     * @secure
     * @response `200` `DatasetSelectableChecksResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listAvailableQualityChecks: (
      { datasetId, ...query }: ListAvailableQualityChecksParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetSelectableChecksResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/available-checks`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Who changed what and when, newest first (viewers): uploads, edits staged and committed, promotions, mappings.
     *
     * @tags datasets
     * @name ListDatasetAuditEntries
     * @summary Who changed what and when, newest first (viewers): uploads, edits staged and committed, promotions, mappings
     * @request GET:/datasets/{dataset_id}/audit
     * @secure
     * @response `200` `(AuditEntryResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDatasetAuditEntries: (
      { datasetId, ...query }: ListDatasetAuditEntriesParams,
      params: RequestParams = {},
    ) =>
      this.request<AuditEntryResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/audit`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Datasets of a workspace (viewers), or of every workspace you belong to when `workspace_id` is left out.
     *
     * @tags datasets
     * @name ListDatasets
     * @summary Datasets of a workspace (viewers), or of every workspace you belong to when `workspace_id` is left out
     * @request GET:/datasets
     * @secure
     * @response `200` `DatasetResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDatasets: (
      query: ListDatasetsParams = {},
      params: RequestParams = {},
    ) =>
      this.request<DatasetResponsePage, ProblemResponse>({
        path: `/datasets`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The materialised content of every version: row count, content hash and download formats (viewers).
     *
     * @tags datasets
     * @name ListDatasetSnapshots
     * @summary The materialised content of every version: row count, content hash and download formats (viewers)
     * @request GET:/datasets/{dataset_id}/snapshots
     * @secure
     * @response `200` `(SnapshotResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDatasetSnapshots: (
      { datasetId }: ListDatasetSnapshotsParams,
      params: RequestParams = {},
    ) =>
      this.request<SnapshotResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/snapshots`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Versions, newest first (viewers).
     *
     * @tags datasets
     * @name ListDatasetVersions
     * @summary Versions, newest first (viewers)
     * @request GET:/datasets/{dataset_id}/versions
     * @secure
     * @response `200` `DatasetVersionResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDatasetVersions: (
      { datasetId, ...query }: ListDatasetVersionsParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetVersionResponsePage, ProblemResponse>({
        path: `/datasets/${datasetId}/versions`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every dimension with its values and how many of the version's rows carry each (viewers).
     *
     * @tags dataset dimensions
     * @name ListDimensions
     * @summary Every dimension with its values and how many of the version's rows carry each (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/dimensions
     * @secure
     * @response `200` `DatasetDimensionsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDimensions: (
      { datasetId, versionId }: ListDimensionsParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetDimensionsResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/dimensions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description (dimension, value) pairs with row counts and shares (viewers).
     *
     * @tags dataset dimensions
     * @name ListDimensionValues
     * @summary (dimension, value) pairs with row counts and shares (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/dimensions/values
     * @secure
     * @response `200` `DimensionValuesResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listDimensionValues: (
      { datasetId, versionId, ...query }: ListDimensionValuesParams,
      params: RequestParams = {},
    ) =>
      this.request<DimensionValuesResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/dimensions/values`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The newest verdict of every version that has been checked, newest version first (viewers).
     *
     * @tags dataset quality
     * @name ListLatestQualityVerdicts
     * @summary The newest verdict of every version that has been checked, newest version first (viewers)
     * @request GET:/datasets/{dataset_id}/versions/quality-checks
     * @secure
     * @response `200` `(DatasetQualityVerdictResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listLatestQualityVerdicts: (
      { datasetId }: ListLatestQualityVerdictsParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetQualityVerdictResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/quality-checks`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The version's partitions with their current row counts (viewers).
     *
     * @tags dataset dimensions
     * @name ListPartitions
     * @summary The version's partitions with their current row counts (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/partitions
     * @secure
     * @response `200` `(PartitionResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listPartitions: (
      { datasetId, versionId }: ListPartitionsParams,
      params: RequestParams = {},
    ) =>
      this.request<PartitionResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/partitions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Data-operation runs on the version, newest first (viewers).
     *
     * @tags dataset quality
     * @name ListQualityCheckRuns
     * @summary Data-operation runs on the version, newest first (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/quality-checks/runs
     * @secure
     * @response `200` `DataOperationRunResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listQualityCheckRuns: (
      { datasetId, versionId, ...query }: ListQualityCheckRunsParams,
      params: RequestParams = {},
    ) =>
      this.request<DataOperationRunResponsePage, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/quality-checks/runs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The staged edits, oldest first (viewers).
     *
     * @tags datasets
     * @name ListStagedRows
     * @summary The staged edits, oldest first (viewers)
     * @request GET:/datasets/{dataset_id}/rows/staged
     * @secure
     * @response `200` `(StagedEditResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listStagedRows: (
      { datasetId }: ListStagedRowsParams,
      params: RequestParams = {},
    ) =>
      this.request<StagedEditResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/rows/staged`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Per-trace enrichment results, filtered (errors, loops, model, tag, duration, cost), sorted and paged (viewers).
     *
     * @tags traces
     * @name ListTraceEnrichmentResults
     * @summary Per-trace enrichment results, filtered (errors, loops, model, tag, duration, cost), sorted and paged (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/trace-enrichment/results
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceEnrichmentResults: (
      { datasetId, versionId, ...query }: ListTraceEnrichmentResultsParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-enrichment/results`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The spans directly under a span of a trace (without `parent_span_id`, the trace's roots and orphans), in start order, each with its child count; keyset pages of at most 1000 (viewers).
     *
     * @tags traces
     * @name ListTraceSpanChildren
     * @summary The spans directly under a span of a trace (without `parent_span_id`, the trace's roots and orphans), in start order, each with its child count; keyset pages of at most 1000 (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/span-tree/children
     * @secure
     * @response `200` `SpanTreePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceSpanChildren: (
      { datasetId, versionId, ...query }: ListTraceSpanChildrenParams,
      params: RequestParams = {},
    ) =>
      this.request<SpanTreePage, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/span-tree/children`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every span of a trace at depth `max_depth` or above (a root is 1), level by level in start order, each with its depth and child count; keyset pages of at most 1000 (viewers).
     *
     * @tags traces
     * @name ListTraceSpansByDepth
     * @summary Every span of a trace at depth `max_depth` or above (a root is 1), level by level in start order, each with its depth and child count; keyset pages of at most 1000 (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/span-tree/by-depth
     * @secure
     * @response `200` `SpanTreePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceSpansByDepth: (
      { datasetId, versionId, ...query }: ListTraceSpansByDepthParams,
      params: RequestParams = {},
    ) =>
      this.request<SpanTreePage, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/span-tree/by-depth`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Tags on the version's traces, by trace then tag (viewers).
     *
     * @tags traces
     * @name ListTraceTags
     * @summary Tags on the version's traces, by trace then tag (viewers)
     * @request GET:/datasets/{dataset_id}/versions/{version_id}/trace-tags
     * @secure
     * @response `200` `(TraceTagResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceTags: (
      { datasetId, versionId, ...query }: ListTraceTagsParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceTagResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-tags`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Maps canonical fields (input, expected_output, context, session_id, metadata) onto the version's columns (members).
     *
     * @tags dataset versions
     * @name MapDatasetVersionFields
     * @summary Maps canonical fields (input, expected_output, context, session_id, metadata) onto the version's columns (members)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/map
     * @secure
     * @response `200` `DatasetVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    mapDatasetVersionFields: (
      { datasetId, versionId }: MapDatasetVersionFieldsParams,
      data: MapVersionRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetVersionResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/map`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Makes the version the dataset's current one (members); the previous current goes back to `candidate`.
     *
     * @tags dataset versions
     * @name PromoteDatasetVersion
     * @summary Makes the version the dataset's current one (members); the previous current goes back to `candidate`
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/promote
     * @secure
     * @response `200` `DatasetVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` version_state_conflict: already current
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    promoteDatasetVersion: (
      { datasetId, versionId }: PromoteDatasetVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetVersionResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/promote`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Rows by their annotation properties (viewers): the label columns, `labelled`, `agree`.
     *
     * @tags analysis
     * @name QueryAnnotationAnalysis
     * @summary Rows by their annotation properties (viewers): the label columns, `labelled`, `agree`
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/analysis/annotation/query
     * @secure
     * @response `200` `(Record<string,any>)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryAnnotationAnalysis: (
      { datasetId, versionId }: QueryAnnotationAnalysisParams,
      data: AnalysisQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/annotation/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Filters, sorts, projects and pages a version's rows (viewers); see docs/query-language.md.
     *
     * @tags datasets
     * @name QueryDataset
     * @summary Filters, sorts, projects and pages a version's rows (viewers); see docs/query-language.md
     * @request POST:/datasets/{dataset_id}/query
     * @secure
     * @response `200` `QueryResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryDataset: (
      { datasetId }: QueryDatasetParams,
      data: DatasetQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<QueryResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Filters, sorts, projects and pages the version's rows (viewers); see docs/query-language.md.
     *
     * @tags dataset versions
     * @name QueryDatasetVersion
     * @summary Filters, sorts, projects and pages the version's rows (viewers); see docs/query-language.md
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/query
     * @secure
     * @response `200` `QueryResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryDatasetVersion: (
      { datasetId, versionId }: QueryDatasetVersionParams,
      data: RowQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<QueryResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Rows by dimension values (and a filter), with counts per combination of the grouping dimensions (viewers).
     *
     * @tags dataset dimensions
     * @name QueryDimensions
     * @summary Rows by dimension values (and a filter), with counts per combination of the grouping dimensions (viewers)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/dimensions/query
     * @secure
     * @response `200` `DatasetDimensionsQueryResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryDimensions: (
      { datasetId, versionId }: QueryDimensionsParams,
      data: DimensionsQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetDimensionsQueryResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/dimensions/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Rows by their text properties, e.g. `question.tokens` over 500 or `answer.language` not en (viewers).
     *
     * @tags analysis
     * @name QueryTextAnalysis
     * @summary Rows by their text properties, e.g
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/analysis/text/query
     * @secure
     * @response `200` `(Record<string,any>)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryTextAnalysis: (
      { datasetId, versionId }: QueryTextAnalysisParams,
      data: AnalysisQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/text/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Rows by their map position or cluster (viewers).
     *
     * @tags analysis
     * @name QueryVisualAnalysis
     * @summary Rows by their map position or cluster (viewers)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/analysis/visual/query
     * @secure
     * @response `200` `(Record<string,any>)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryVisualAnalysis: (
      { datasetId, versionId }: QueryVisualAnalysisParams,
      data: AnalysisQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis/visual/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Queues a new enrichment of the version, optionally with model prices over the built-in table (members).
     *
     * @tags traces
     * @name RecomputeTraceEnrichment
     * @summary Queues a new enrichment of the version, optionally with model prices over the built-in table (members)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/trace-enrichment:recompute
     * @secure
     * @response `200` `TraceEnrichmentStatusResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    recomputeTraceEnrichment: (
      { datasetId, versionId, recompute }: RecomputeTraceEnrichmentParams,
      data: RecomputeEnrichmentRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceEnrichmentStatusResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-enrichment${recompute}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The partition's members, paged: sessions of rows for test-case datasets (traces and spans for trace datasets) (viewers).
     *
     * @tags dataset dimensions
     * @name ResolvePartition
     * @summary The partition's members, paged: sessions of rows for test-case datasets (traces and spans for trace datasets) (viewers)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/partitions/{partition_id}/resolve
     * @secure
     * @response `200` `((SessionPartition | TracePartition | SpanPartition))[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    resolvePartition: (
      { datasetId, versionId, partitionId, ...query }: ResolvePartitionParams,
      params: RequestParams = {},
    ) =>
      this.request<
        (SessionPartition | TracePartition | SpanPartition)[],
        ProblemResponse
      >({
        path: `/datasets/${datasetId}/versions/${versionId}/partitions/${partitionId}/resolve`,
        method: "POST",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Runs quality checks on the version now and keeps the run (members).
     *
     * @tags dataset quality
     * @name RunQualityChecks
     * @summary Runs quality checks on the version now and keeps the run (members)
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/quality-checks:run
     * @secure
     * @response `200` `DatasetQualityVerdictResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    runQualityChecks: (
      { datasetId, versionId, run }: RunQualityChecksParams,
      data: RunQualityChecksRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetQualityVerdictResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/quality-checks${run}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Starts text, annotation and visual analyses of the version through the queue (members); read them under analysis/* once it succeeds.
     *
     * @tags analysis
     * @name StartAnalysisRun
     * @summary Starts text, annotation and visual analyses of the version through the queue (members); read them under analysis/* once it succeeds
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/analysis-runs
     * @secure
     * @response `201` `AnalysisRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startAnalysisRun: (
      { datasetId, versionId }: StartAnalysisRunParams,
      data: CreateAnalysisRunRequest,
      params: RequestParams = {},
    ) =>
      this.request<AnalysisRunResponse, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/analysis-runs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Clusters a text column (members, 202): embedded with the workspace's embedder, k-means with k by silhouette, named by c-TF-IDF.
     *
     * @tags analysis
     * @name StartClusterRun
     * @summary Clusters a text column (members, 202): embedded with the workspace's embedder, k-means with k by silhouette, named by c-TF-IDF
     * @request POST:/datasets/{dataset_id}/versions/{version_id}/cluster-runs
     * @secure
     * @response `201` `DatasetClustersRun`
     * @response `202` `DatasetClustersRun` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startClusterRun: (
      { datasetId, versionId }: StartClusterRunParams,
      data: CreateClusterRunRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetClustersRun, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/cluster-runs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Adds tags to traces (or, with mode `replace`, sets their tags); answers the traces' tags (members).
     *
     * @tags traces
     * @name TagTraces
     * @summary Adds tags to traces (or, with mode `replace`, sets their tags); answers the traces' tags (members)
     * @request PUT:/datasets/{dataset_id}/versions/{version_id}/trace-tags
     * @secure
     * @response `200` `(TraceTagResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    tagTraces: (
      { datasetId, versionId }: TagTracesParams,
      data: PutTraceTagsRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceTagResponse[], ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-tags`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Removes a trace's tags, a tag from every trace, or one tag from one trace (members).
     *
     * @tags traces
     * @name UntagTraces
     * @summary Removes a trace's tags, a tag from every trace, or one tag from one trace (members)
     * @request DELETE:/datasets/{dataset_id}/versions/{version_id}/trace-tags
     * @secure
     * @response `204` `void`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    untagTraces: (
      { datasetId, versionId, ...query }: UntagTracesParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/datasets/${datasetId}/versions/${versionId}/trace-tags`,
        method: "DELETE",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description Renames, re-describes or re-tags the dataset (members). Honours If-Match.
     *
     * @tags datasets
     * @name UpdateDataset
     * @summary Renames, re-describes or re-tags the dataset (members)
     * @request PATCH:/datasets/{dataset_id}
     * @secure
     * @response `200` `DatasetResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` dataset_name_taken
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateDataset: (
      { datasetId }: UpdateDatasetParams,
      data: UpdateDatasetRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetResponse, ProblemResponse>({
        path: `/datasets/${datasetId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Stages new values for rows by id; answers row id -> the row as it will be.
     *
     * @tags datasets
     * @name UpdateRows
     * @summary Stages new values for rows by id; answers row id -> the row as it will be
     * @request PATCH:/datasets/{dataset_id}/rows/update
     * @secure
     * @response `200` `Record<string,Record<string,any>>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` row_edit_conflict
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateRows: (
      { datasetId }: UpdateRowsParams,
      data: UpdateRowsRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, Record<string, any>>, ProblemResponse>({
        path: `/datasets/${datasetId}/rows/update`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Uploads a CSV, JSON, JSON Lines or Parquet file (multipart, part `file`) as a new dataset with version 1, or as the next version of `dataset_id` (members). The file is streamed: its size is bounded by UPLOAD_MAX_BYTES (413) and its rows by UPLOAD_MAX_ROWS (413). A malformed file is 400 `malformed_file` naming the line or row, and creates nothing.
     *
     * @tags datasets
     * @name UploadDataset
     * @summary Uploads a CSV, JSON, JSON Lines or Parquet file (multipart, part `file`) as a new dataset with version 1, or as the next version of `dataset_id` (members)
     * @request POST:/datasets/upload
     * @secure
     * @response `201` `DatasetResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` dataset_name_taken
     * @response `413` `ProblemResponse` payload_too_large (UPLOAD_MAX_BYTES) or too_many_rows (UPLOAD_MAX_ROWS)
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    uploadDataset: (
      query: UploadDatasetParams,
      data: UploadDatasetForm,
      params: RequestParams = {},
    ) =>
      this.request<DatasetResponse, ProblemResponse>({
        path: `/datasets/upload`,
        method: "POST",
        query: query,
        body: data,
        secure: true,
        type: ContentType.FormData,
        format: "json",
        ...params,
      }),
  };
  datasetVersions = {
    /**
     * @description The version with its dataset and schema (viewers of its workspace; 404 for anyone else).
     *
     * @tags dataset versions
     * @name GetDatasetVersion
     * @summary The version with its dataset and schema (viewers of its workspace; 404 for anyone else)
     * @request GET:/dataset-versions/{version_id}
     * @secure
     * @response `200` `GetDatasetVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getDatasetVersion: (
      { versionId }: GetDatasetVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<GetDatasetVersionResponse, ProblemResponse>({
        path: `/dataset-versions/${versionId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  checkSuggestions = {
    /**
     * @description Checks suited to a dataset's schema, with the reason for each (viewers of its workspace).
     *
     * @tags dataset quality
     * @name ListQualityCheckSuggestions
     * @summary Checks suited to a dataset's schema, with the reason for each (viewers of its workspace)
     * @request GET:/check-suggestions
     * @secure
     * @response `200` `SuggestionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset ?dataset_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listQualityCheckSuggestions: (
      query: ListQualityCheckSuggestionsParams,
      params: RequestParams = {},
    ) =>
      this.request<SuggestionResponse, ProblemResponse>({
        path: `/check-suggestions`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  files = {
    /**
     * @description Streams a dataset version as CSV, JSON Lines or Parquet. URLs come from download-url and download.
     *
     * @tags files
     * @name DownloadDatasetVersionFile
     * @summary Streams a dataset version as CSV, JSON Lines or Parquet
     * @request GET:/files/dataset-versions/{version_id}/{filename}
     * @response `200` `File` The file
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `403` `ProblemResponse` invalid_signature or url_expired
     * @response `404` `ProblemResponse` The record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadDatasetVersionFile: (
      { versionId, filename, ...query }: DownloadDatasetVersionFileParams,
      params: RequestParams = {},
    ) =>
      this.request<File, ProblemResponse>({
        path: `/files/dataset-versions/${versionId}/${filename}`,
        method: "GET",
        query: query,
        ...params,
      }),

    /**
     * @description The report's current content as Markdown or HTML.
     *
     * @tags reports
     * @name DownloadReportContent
     * @summary The report's current content as Markdown or HTML
     * @request GET:/files/reports/{report_id}/content/{filename}
     * @response `200` `string` The report
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `403` `ProblemResponse` invalid_signature or url_expired
     * @response `404` `ProblemResponse` The record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadReportContent: (
      { reportId, filename }: DownloadReportContentParams,
      params: RequestParams = {},
    ) =>
      this.request<string, ProblemResponse>({
        path: `/files/reports/${reportId}/content/${filename}`,
        method: "GET",
        ...params,
      }),

    /**
     * @description A stored export (Markdown, HTML or PDF).
     *
     * @tags reports
     * @name DownloadReportExport
     * @summary A stored export (Markdown, HTML or PDF)
     * @request GET:/files/reports/{report_id}/exports/{export_id}/{filename}
     * @response `200` `File` The exported file
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `403` `ProblemResponse` invalid_signature or url_expired
     * @response `404` `ProblemResponse` The record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadReportExport: (
      { reportId, exportId, filename }: DownloadReportExportParams,
      params: RequestParams = {},
    ) =>
      this.request<File, ProblemResponse>({
        path: `/files/reports/${reportId}/exports/${exportId}/${filename}`,
        method: "GET",
        ...params,
      }),

    /**
     * @description Streams a run's results as Parquet; URLs come from GET /runs/{run_id}/parquet-url (the signature authorises them).
     *
     * @tags runs
     * @name DownloadRunParquet
     * @summary Streams a run's results as Parquet; URLs come from GET /runs/{run_id}/parquet-url (the signature authorises them)
     * @request GET:/files/runs/{run_id}/{filename}
     * @response `200` `File` The Parquet file
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `403` `ProblemResponse` invalid_signature or url_expired
     * @response `404` `ProblemResponse` The record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadRunParquet: (
      { runId, filename }: DownloadRunParquetParams,
      params: RequestParams = {},
    ) =>
      this.request<File, ProblemResponse>({
        path: `/files/runs/${runId}/${filename}`,
        method: "GET",
        ...params,
      }),
  };
  embeddingConfigs = {
    /**
     * @description Adds a remote embeddings endpoint (admins); its API key is a workspace secret, by reference.
     *
     * @tags embedding configs
     * @name CreateEmbeddingConfig
     * @summary Adds a remote embeddings endpoint (admins); its API key is a workspace secret, by reference
     * @request POST:/embedding-configs
     * @secure
     * @response `201` `EmbeddingConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` embedding_config_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createEmbeddingConfig: (
      data: CreateEmbeddingConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<EmbeddingConfigResponse, ProblemResponse>({
        path: `/embedding-configs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description A config by id or name (`local` is the built-in embedder) (viewers).
     *
     * @tags embedding configs
     * @name GetEmbeddingConfig
     * @summary A config by id or name (`local` is the built-in embedder) (viewers)
     * @request GET:/embedding-configs/{config_ref}
     * @secure
     * @response `200` `EmbeddingConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getEmbeddingConfig: (
      { configRef, ...query }: GetEmbeddingConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<EmbeddingConfigResponse, ProblemResponse>({
        path: `/embedding-configs/${configRef}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The built-in local embedder and the workspace's remote configs (viewers); `in_use` marks the workspace's choice.
     *
     * @tags embedding configs
     * @name ListEmbeddingConfigs
     * @summary The built-in local embedder and the workspace's remote configs (viewers); `in_use` marks the workspace's choice
     * @request GET:/embedding-configs
     * @secure
     * @response `200` `EmbeddingConfigResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listEmbeddingConfigs: (
      query: ListEmbeddingConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<EmbeddingConfigResponsePage, ProblemResponse>({
        path: `/embedding-configs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  notifications = {
    /**
     * @description Adds a webhook for some events, signed with a workspace secret (created when none is named) (admins).
     *
     * @tags notifications
     * @name CreateNotificationConfig
     * @summary Adds a webhook for some events, signed with a workspace secret (created when none is named) (admins)
     * @request POST:/notifications/config
     * @secure
     * @response `201` `NotificationConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` notification_config_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createNotificationConfig: (
      data: CreateNotificationConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<NotificationConfigResponse, ProblemResponse>({
        path: `/notifications/config`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a webhook (admins).
     *
     * @tags notifications
     * @name DeleteNotificationConfig
     * @summary Deletes a webhook (admins)
     * @request DELETE:/notifications/config/{notification_config_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the notification_config {notification_config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteNotificationConfig: (
      { notificationConfigId }: DeleteNotificationConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/notifications/config/${notificationConfigId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description The workspace's webhooks (admins: they name where data is sent).
     *
     * @tags notifications
     * @name ListNotificationConfigs
     * @summary The workspace's webhooks (admins: they name where data is sent)
     * @request GET:/notifications/config
     * @secure
     * @response `200` `NotificationConfigResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listNotificationConfigs: (
      query: ListNotificationConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<NotificationConfigResponsePage, ProblemResponse>({
        path: `/notifications/config`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  judges = {
    /**
     * @description Adds a judge (members; naming its key's secret is for admins).
     *
     * @tags judges
     * @name CreateJudge
     * @summary Adds a judge (members; naming its key's secret is for admins)
     * @request POST:/judges
     * @secure
     * @response `201` `JudgeConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` judge_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createJudge: (data: CreateJudgeRequest, params: RequestParams = {}) =>
      this.request<JudgeConnectionResponse, ProblemResponse>({
        path: `/judges`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a judge no metric or eval config names (admins).
     *
     * @tags judges
     * @name DeleteJudge
     * @summary Deletes a judge no metric or eval config names (admins)
     * @request DELETE:/judges/{judge_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the judge {judge_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` judge_in_use
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteJudge: ({ judgeId }: DeleteJudgeParams, params: RequestParams = {}) =>
      this.request<void, ProblemResponse>({
        path: `/judges/${judgeId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One judge (viewers); its key's value never appears.
     *
     * @tags judges
     * @name GetJudge
     * @summary One judge (viewers); its key's value never appears
     * @request GET:/judges/{judge_id}
     * @secure
     * @response `200` `JudgeConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the judge {judge_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getJudge: ({ judgeId }: GetJudgeParams, params: RequestParams = {}) =>
      this.request<JudgeConnectionResponse, ProblemResponse>({
        path: `/judges/${judgeId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's judges (viewers).
     *
     * @tags judges
     * @name ListJudges
     * @summary The workspace's judges (viewers)
     * @request GET:/judges
     * @secure
     * @response `200` `JudgeConnectionResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listJudges: (query: ListJudgesParams, params: RequestParams = {}) =>
      this.request<JudgeConnectionResponsePage, ProblemResponse>({
        path: `/judges`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Sends a probe (or the given rubric and sample) and reports latency and the parsed verdict (members). An unparseable answer is an error, never a score.
     *
     * @tags judges
     * @name TestJudge
     * @summary Sends a probe (or the given rubric and sample) and reports latency and the parsed verdict (members)
     * @request POST:/judges/{judge_id}/test
     * @secure
     * @response `200` `JudgeTestResult`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the judge {judge_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    testJudge: (
      { judgeId }: TestJudgeParams,
      data: JudgeTestRequest,
      params: RequestParams = {},
    ) =>
      this.request<JudgeTestResult, ProblemResponse>({
        path: `/judges/${judgeId}/test`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes a judge (members; setting a secret or moving a judge that sends one is for admins).
     *
     * @tags judges
     * @name UpdateJudge
     * @summary Changes a judge (members; setting a secret or moving a judge that sends one is for admins)
     * @request PATCH:/judges/{judge_id}
     * @secure
     * @response `200` `JudgeConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the judge {judge_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` judge_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateJudge: (
      { judgeId }: UpdateJudgeParams,
      data: UpdateJudgeRequest,
      params: RequestParams = {},
    ) =>
      this.request<JudgeConnectionResponse, ProblemResponse>({
        path: `/judges/${judgeId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  metricConfigs = {
    /**
     * @description Version 1 of a new config (members): parameters are checked against the metric's schema, rubrics parsed, judges looked up.
     *
     * @tags metric configs
     * @name CreateMetricConfig
     * @summary Version 1 of a new config (members): parameters are checked against the metric's schema, rubrics parsed, judges looked up
     * @request POST:/metric-configs
     * @secure
     * @response `201` `MetricConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` metric_config_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createMetricConfig: (
      data: CreateMetricConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigResponse, ProblemResponse>({
        path: `/metric-configs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a version no run used and nothing pins (members).
     *
     * @tags metric configs
     * @name DeleteMetricConfigVersion
     * @summary Deletes a version no run used and nothing pins (members)
     * @request DELETE:/metric-configs/{config_name}/{config_version}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` metric_config_frozen, metric_config_in_use
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteMetricConfigVersion: (
      { configName, configVersion, ...query }: DeleteMetricConfigVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/metric-configs/${configName}/${configVersion}`,
        method: "DELETE",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description A version (`latest` for the newest) (viewers).
     *
     * @tags metric configs
     * @name GetMetricConfigVersion
     * @summary A version (`latest` for the newest) (viewers)
     * @request GET:/metric-configs/{config_name}/{config_version}
     * @secure
     * @response `200` `MetricConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getMetricConfigVersion: (
      { configName, configVersion, ...query }: GetMetricConfigVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigResponse, ProblemResponse>({
        path: `/metric-configs/${configName}/${configVersion}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A metric config version's validations, newest first, without their per-item pairs (viewers).
     *
     * @tags metric configs
     * @name ListJudgeValidations
     * @summary A metric config version's validations, newest first, without their per-item pairs (viewers)
     * @request GET:/metric-configs/{config_name}/{config_version}/validations
     * @secure
     * @response `200` `JudgeValidationSummaryPage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listJudgeValidations: (
      { configName, configVersion, ...query }: ListJudgeValidationsParams,
      params: RequestParams = {},
    ) =>
      this.request<JudgeValidationSummaryPage, ProblemResponse>({
        path: `/metric-configs/${configName}/${configVersion}/validations`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One line per config name, from its newest version (viewers).
     *
     * @tags metric configs
     * @name ListMetricConfigs
     * @summary One line per config name, from its newest version (viewers)
     * @request GET:/metric-configs
     * @secure
     * @response `200` `MetricConfigSummaryPage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listMetricConfigs: (
      query: ListMetricConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigSummaryPage, ProblemResponse>({
        path: `/metric-configs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes a version no run has used yet (members); a used version is frozen (409): create a new version.
     *
     * @tags metric configs
     * @name ReplaceMetricConfigVersion
     * @summary Changes a version no run has used yet (members); a used version is frozen (409): create a new version
     * @request PUT:/metric-configs/{config_name}/{config_version}
     * @secure
     * @response `200` `MetricConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` metric_config_frozen
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceMetricConfigVersion: (
      { configName, configVersion, ...query }: ReplaceMetricConfigVersionParams,
      data: UpdateMetricConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<MetricConfigResponse, ProblemResponse>({
        path: `/metric-configs/${configName}/${configVersion}`,
        method: "PUT",
        query: query,
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  evalConfigs = {
    /**
     * @description A bundle of metrics, a default judge and a pass rule (members); every metric must resolve and every judged one have a judge.
     *
     * @tags eval configs
     * @name CreateEvalConfig
     * @summary A bundle of metrics, a default judge and a pass rule (members); every metric must resolve and every judged one have a judge
     * @request POST:/eval-configs
     * @secure
     * @response `201` `EvalConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` eval_config_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createEvalConfig: (
      data: CreateEvalConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<EvalConfigResponse, ProblemResponse>({
        path: `/eval-configs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes an eval config (members); runs that used it keep their snapshot.
     *
     * @tags eval configs
     * @name DeleteEvalConfig
     * @summary Deletes an eval config (members); runs that used it keep their snapshot
     * @request DELETE:/eval-configs/{eval_config_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the eval_config {eval_config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteEvalConfig: (
      { evalConfigId }: DeleteEvalConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/eval-configs/${evalConfigId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One eval config (viewers); the ETag serves If-Match on PUT.
     *
     * @tags eval configs
     * @name GetEvalConfig
     * @summary One eval config (viewers); the ETag serves If-Match on PUT
     * @request GET:/eval-configs/{eval_config_id}
     * @secure
     * @response `200` `EvalConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the eval_config {eval_config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getEvalConfig: (
      { evalConfigId }: GetEvalConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<EvalConfigResponse, ProblemResponse>({
        path: `/eval-configs/${evalConfigId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's eval configs by name; `q` searches names (viewers).
     *
     * @tags eval configs
     * @name ListEvalConfigs
     * @summary The workspace's eval configs by name; `q` searches names (viewers)
     * @request GET:/eval-configs
     * @secure
     * @response `200` `EvalConfigResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listEvalConfigs: (
      query: ListEvalConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<EvalConfigResponsePage, ProblemResponse>({
        path: `/eval-configs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Replaces the eval config (members); honours If-Match. Runs keep the snapshot they started with.
     *
     * @tags eval configs
     * @name ReplaceEvalConfig
     * @summary Replaces the eval config (members); honours If-Match
     * @request PUT:/eval-configs/{eval_config_id}
     * @secure
     * @response `200` `EvalConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the eval_config {eval_config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` eval_config_name_taken
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceEvalConfig: (
      { evalConfigId }: ReplaceEvalConfigParams,
      data: ReplaceEvalConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<EvalConfigResponse, ProblemResponse>({
        path: `/eval-configs/${evalConfigId}`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  judgeValidations = {
    /**
     * @description One validation with the per-item pairs it was computed from (viewers).
     *
     * @tags metric configs
     * @name GetJudgeValidation
     * @summary One validation with the per-item pairs it was computed from (viewers)
     * @request GET:/judge-validations/{validation_id}
     * @secure
     * @response `200` `JudgeValidationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the judge_validation {validation_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getJudgeValidation: (
      { validationId }: GetJudgeValidationParams,
      params: RequestParams = {},
    ) =>
      this.request<JudgeValidationResponse, ProblemResponse>({
        path: `/judge-validations/${validationId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  judgeValidationsCompare = {
    /**
     * @description Two validations (say, of two versions of a rubric) compared on the items both hold, against the human labels they share: each judge's accuracy and McNemar's exact test (viewers).
     *
     * @tags metric configs
     * @name GetJudgeValidationComparison
     * @summary Two validations (say, of two versions of a rubric) compared on the items both hold, against the human labels they share: each judge's accuracy and McNemar's exact test (viewers)
     * @request POST:/judge-validations:compare
     * @secure
     * @response `200` `JudgeValidationComparisonResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` judge_validations_no_shared_items
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getJudgeValidationComparison: (
      { compare, ...query }: GetJudgeValidationComparisonParams,
      data: CompareJudgeValidationsRequest,
      params: RequestParams = {},
    ) =>
      this.request<JudgeValidationComparisonResponse, ProblemResponse>({
        path: `/judge-validations${compare}`,
        method: "POST",
        query: query,
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  suts = {
    /**
     * @description Adds an adapter revision after checking every template and path (members); 400 adapter_invalid lists each problem with a JSON Pointer.
     *
     * @tags suts
     * @name CreateConnectionAdapter
     * @summary Adds an adapter revision after checking every template and path (members); 400 adapter_invalid lists each problem with a JSON Pointer
     * @request POST:/suts/{sut_id}/connections/{connection_id}/adapter
     * @secure
     * @response `201` `AdapterResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createConnectionAdapter: (
      { sutId, connectionId }: CreateConnectionAdapterParams,
      data: CreateAdapterRequest,
      params: RequestParams = {},
    ) =>
      this.request<AdapterResponse, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}/adapter`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Registers a system under test (members); reach it by adding connections.
     *
     * @tags suts
     * @name CreateSut
     * @summary Registers a system under test (members); reach it by adding connections
     * @request POST:/suts
     * @secure
     * @response `201` `SutResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` sut_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createSut: (data: CreateSutRequest, params: RequestParams = {}) =>
      this.request<SutResponse, ProblemResponse>({
        path: `/suts`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Adds a connection (members; naming a secret in `auth` is for admins).
     *
     * @tags suts
     * @name CreateSutConnection
     * @summary Adds a connection (members; naming a secret in `auth` is for admins)
     * @request POST:/suts/{sut_id}/connections
     * @secure
     * @response `201` `ConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` connection_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createSutConnection: (
      { sutId }: CreateSutConnectionParams,
      data: CreateConnectionRequest,
      params: RequestParams = {},
    ) =>
      this.request<ConnectionResponse, ProblemResponse>({
        path: `/suts/${sutId}/connections`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes the system with its connections and adapters (admins).
     *
     * @tags suts
     * @name DeleteSut
     * @summary Deletes the system with its connections and adapters (admins)
     * @request DELETE:/suts/{sut_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteSut: ({ sutId }: DeleteSutParams, params: RequestParams = {}) =>
      this.request<void, ProblemResponse>({
        path: `/suts/${sutId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Deletes a connection with its adapter revisions (members).
     *
     * @tags suts
     * @name DeleteSutConnection
     * @summary Deletes a connection with its adapter revisions (members)
     * @request DELETE:/suts/{sut_id}/connections/{connection_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteSutConnection: (
      { sutId, connectionId }: DeleteSutConnectionParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description The adapter in force: the newest revision, or the kind's default (revision 0) (viewers).
     *
     * @tags suts
     * @name GetConnectionAdapter
     * @summary The adapter in force: the newest revision, or the kind's default (revision 0) (viewers)
     * @request GET:/suts/{sut_id}/connections/{connection_id}/adapter
     * @secure
     * @response `200` `AdapterResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getConnectionAdapter: (
      { sutId, connectionId }: GetConnectionAdapterParams,
      params: RequestParams = {},
    ) =>
      this.request<AdapterResponse, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}/adapter`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One system (viewers); the ETag serves If-Match on PATCH.
     *
     * @tags suts
     * @name GetSut
     * @summary One system (viewers); the ETag serves If-Match on PATCH
     * @request GET:/suts/{sut_id}
     * @secure
     * @response `200` `SutResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getSut: ({ sutId }: GetSutParams, params: RequestParams = {}) =>
      this.request<SutResponse, ProblemResponse>({
        path: `/suts/${sutId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The system's connections with their limits and the adapter revision in force (viewers).
     *
     * @tags suts
     * @name ListSutConnections
     * @summary The system's connections with their limits and the adapter revision in force (viewers)
     * @request GET:/suts/{sut_id}/connections
     * @secure
     * @response `200` `(ConnectionResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSutConnections: (
      { sutId }: ListSutConnectionsParams,
      params: RequestParams = {},
    ) =>
      this.request<ConnectionResponse[], ProblemResponse>({
        path: `/suts/${sutId}/connections`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The runs of one SUT, newest first (viewers).
     *
     * @tags runs
     * @name ListSutRuns
     * @summary The runs of one SUT, newest first (viewers)
     * @request GET:/suts/{sut_id}/runs
     * @secure
     * @response `200` `RunResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSutRuns: (
      { sutId, ...query }: ListSutRunsParams,
      params: RequestParams = {},
    ) =>
      this.request<RunResponsePage, ProblemResponse>({
        path: `/suts/${sutId}/runs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's systems under test, by name (viewers); `q` searches names, `tag` filters.
     *
     * @tags suts
     * @name ListSuts
     * @summary The workspace's systems under test, by name (viewers); `q` searches names, `tag` filters
     * @request GET:/suts
     * @secure
     * @response `200` `SutResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSuts: (query: ListSutsParams, params: RequestParams = {}) =>
      this.request<SutResponsePage, ProblemResponse>({
        path: `/suts`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Ready connection + adapter templates: OpenAI-compatible chat, generic JSON REST, Anthropic messages, Azure OpenAI, a RAG endpoint (any signed-in user).
     *
     * @tags suts
     * @name ListSutTemplates
     * @summary Ready connection + adapter templates: OpenAI-compatible chat, generic JSON REST, Anthropic messages, Azure OpenAI, a RAG endpoint (any signed-in user)
     * @request GET:/suts/templates
     * @secure
     * @response `200` `SutTemplateList`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSutTemplates: (params: RequestParams = {}) =>
      this.request<SutTemplateList, ProblemResponse>({
        path: `/suts/templates`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One real call through the connection and its adapter (members): status, latency, extracted output or the error. A failing SUT is a result, not an error of this call.
     *
     * @tags suts
     * @name TestSutConnection
     * @summary One real call through the connection and its adapter (members): status, latency, extracted output or the error
     * @request POST:/suts/{sut_id}/connections/{connection_id}/test
     * @secure
     * @response `200` `ConnectionTestResult`
     * @response `400` `ProblemResponse` validation_failed, connection_not_callable (offline)
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    testSutConnection: (
      { sutId, connectionId }: TestSutConnectionParams,
      data: ConnectionTestRequest,
      params: RequestParams = {},
    ) =>
      this.request<ConnectionTestResult, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}/test`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Renames, re-describes or re-tags (members). Honours If-Match.
     *
     * @tags suts
     * @name UpdateSut
     * @summary Renames, re-describes or re-tags (members)
     * @request PATCH:/suts/{sut_id}
     * @secure
     * @response `200` `SutResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` sut_name_taken
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateSut: (
      { sutId }: UpdateSutParams,
      data: UpdateSutRequest,
      params: RequestParams = {},
    ) =>
      this.request<SutResponse, ProblemResponse>({
        path: `/suts/${sutId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes a connection (members; setting a secret, or pointing a connection that sends one elsewhere, is for admins).
     *
     * @tags suts
     * @name UpdateSutConnection
     * @summary Changes a connection (members; setting a secret, or pointing a connection that sends one elsewhere, is for admins)
     * @request PATCH:/suts/{sut_id}/connections/{connection_id}
     * @secure
     * @response `200` `ConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` connection_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateSutConnection: (
      { sutId, connectionId }: UpdateSutConnectionParams,
      data: UpdateConnectionRequest,
      params: RequestParams = {},
    ) =>
      this.request<ConnectionResponse, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Dry run (members): renders the request for a sample row and extracts from a sample response, calling nothing; problems come back as `issues`.
     *
     * @tags suts
     * @name ValidateConnectionAdapter
     * @summary Dry run (members): renders the request for a sample row and extracts from a sample response, calling nothing; problems come back as `issues`
     * @request POST:/suts/{sut_id}/connections/{connection_id}/adapter/validate
     * @secure
     * @response `200` `AdapterValidateResult`
     * @response `400` `ProblemResponse` validation_failed, adapter_invalid (a template or path does not parse)
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sut {sut_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    validateConnectionAdapter: (
      { sutId, connectionId }: ValidateConnectionAdapterParams,
      data: ValidateAdapterRequest,
      params: RequestParams = {},
    ) =>
      this.request<AdapterValidateResult, ProblemResponse>({
        path: `/suts/${sutId}/connections/${connectionId}/adapter/validate`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  ops = {
    /**
     * @description The JSON Schema (draft-07) of an op's parameters, of its newest version or of `version` (viewers).
     *
     * @tags ops
     * @name GetOpSchema
     * @summary The JSON Schema (draft-07) of an op's parameters, of its newest version or of `version` (viewers)
     * @request GET:/ops/{name}/schema
     * @secure
     * @response `200` `OpSchemaResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getOpSchema: (
      { name, ...query }: GetOpSchemaParams,
      params: RequestParams = {},
    ) =>
      this.request<OpSchemaResponse, ProblemResponse>({
        path: `/ops/${name}/schema`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One op by name (viewers).
     *
     * @tags ops
     * @name GetRegisteredOp
     * @summary One op by name (viewers)
     * @request GET:/ops/registry/{name}
     * @secure
     * @response `200` `RegistryOpView`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRegisteredOp: (
      { name, ...query }: GetRegisteredOpParams,
      params: RequestParams = {},
    ) =>
      this.request<RegistryOpView, ProblemResponse>({
        path: `/ops/registry/${name}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description What the workspace can use now, by kind: built-in metrics and checks, and registered ops whose custom op is active (viewers).
     *
     * @tags ops
     * @name ListOps
     * @summary What the workspace can use now, by kind: built-in metrics and checks, and registered ops whose custom op is active (viewers)
     * @request GET:/ops
     * @secure
     * @response `200` `OpCatalogue`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOps: (query: ListOpsParams, params: RequestParams = {}) =>
      this.request<OpCatalogue, ProblemResponse>({
        path: `/ops`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every op, available or not, with its availability and schema; filter by kind and source (viewers).
     *
     * @tags ops
     * @name ListRegisteredOps
     * @summary Every op, available or not, with its availability and schema; filter by kind and source (viewers)
     * @request GET:/ops/registry
     * @secure
     * @response `200` `RegistryListResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listRegisteredOps: (
      query: ListRegisteredOpsParams,
      params: RequestParams = {},
    ) =>
      this.request<RegistryListResponse, ProblemResponse>({
        path: `/ops/registry`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Registers an op served by one of the workspace's custom ops (admins); a name registered again gets a new version.
     *
     * @tags ops
     * @name RegisterOp
     * @summary Registers an op served by one of the workspace's custom ops (admins); a name registered again gets a new version
     * @request POST:/ops
     * @secure
     * @response `201` `RegistryOpView`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` op_name_reserved, op_kind_change
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    registerOp: (data: RegisterOpRequest, params: RequestParams = {}) =>
      this.request<RegistryOpView, ProblemResponse>({
        path: `/ops`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  runs = {
    /**
     * @description Stops new calls at once (members); the run ends cancelled with what was done kept.
     *
     * @tags runs
     * @name CancelRun
     * @summary Stops new calls at once (members); the run ends cancelled with what was done kept
     * @request POST:/runs/{run_id}/cancel
     * @secure
     * @response `200` `RunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` run_not_active
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    cancelRun: ({ runId }: CancelRunParams, params: RequestParams = {}) =>
      this.request<RunResponse, ProblemResponse>({
        path: `/runs/${runId}/cancel`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Judges an ended run as GET does and records the verdict (members). An optional `label` names the line of runs (a branch such as `main`): `GET /runs?gate_verdict=pass&gate_label=main` then finds the last good run. 201 with the answer and the record; the same inputs with the same outcome again answer that record with 200. A run not yet ended is 409.
     *
     * @tags runs
     * @name CreateRunGateVerdict
     * @summary Judges an ended run as GET does and records the verdict (members)
     * @request POST:/runs/{run_id}/gate
     * @secure
     * @response `200` `RecordedGateResponse` The same verdict was recorded before: that record
     * @response `201` `RecordedGateResponse` The verdict, judged and recorded
     * @response `400` `ProblemResponse` validation_failed, project_ambiguous
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` gate_run_not_finished, gate_baseline_not_finished
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createRunGateVerdict: (
      { runId }: CreateRunGateVerdictParams,
      data: RecordGateRequest,
      params: RequestParams = {},
    ) =>
      this.request<RecordedGateResponse, ProblemResponse>({
        path: `/runs/${runId}/gate`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Validates a judged metric of the run against human labels of its rows (members): a column of the rows' data (`human.field`) or labels per row (`human.labels`). Each labelled row's first repetition pairs the judge's verdict with the human label; the confusion matrix, true positive and true negative rates (Wilson intervals), accuracy and Cohen's kappa (seeded bootstrap), Spearman's rho and the mean absolute error on numeric scales, per dimension value with `by_dimension`, are kept with the metric's config version. Runs scored by that version then report corrected pass rates, and the release gate can require the validation.
     *
     * @tags runs
     * @name CreateRunJudgeValidation
     * @summary Validates a judged metric of the run against human labels of its rows (members): a column of the rows' data (`human.field`) or labels per row (`human.labels`)
     * @request POST:/runs/{run_id}/judge-validations
     * @secure
     * @response `201` `JudgeValidationResponse`
     * @response `400` `ProblemResponse` validation_failed, validation_labels_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` validation_metric_invalid, validation_no_overlap, validation_too_few_pairs, validation_too_many_pairs
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createRunJudgeValidation: (
      { runId }: CreateRunJudgeValidationParams,
      data: CreateJudgeValidationRequest,
      params: RequestParams = {},
    ) =>
      this.request<JudgeValidationResponse, ProblemResponse>({
        path: `/runs/${runId}/judge-validations`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The diff as a CSV (a line per row, base/candidate/delta per metric) or JSON file (viewers).
     *
     * @tags runs
     * @name ExportRunDiff
     * @summary The diff as a CSV (a line per row, base/candidate/delta per metric) or JSON file (viewers)
     * @request GET:/runs/diff/export
     * @secure
     * @response `200` `string` The diff file: CSV (`format=csv`, the default) or JSON (`format=json`)
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run ?base
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportRunDiff: (query: ExportRunDiffParams, params: RequestParams = {}) =>
      this.request<string, ProblemResponse>({
        path: `/runs/diff/export`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One run with its progress (viewers).
     *
     * @tags runs
     * @name GetRun
     * @summary One run with its progress (viewers)
     * @request GET:/runs/{run_id}
     * @secure
     * @response `200` `RunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRun: ({ runId }: GetRunParams, params: RequestParams = {}) =>
      this.request<RunResponse, ProblemResponse>({
        path: `/runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Compares two runs of a workspace row by row (viewers): per metric deltas, regressions first.
     *
     * @tags runs
     * @name GetRunDiff
     * @summary Compares two runs of a workspace row by row (viewers): per metric deltas, regressions first
     * @request GET:/runs/diff
     * @secure
     * @response `200` `RunDiffResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run ?base
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunDiff: (query: GetRunDiffParams, params: RequestParams = {}) =>
      this.request<RunDiffResponse, ProblemResponse>({
        path: `/runs/diff`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One row side by side in both runs (viewers).
     *
     * @tags runs
     * @name GetRunDiffRow
     * @summary One row side by side in both runs (viewers)
     * @request GET:/runs/diff/row
     * @secure
     * @response `200` `RunDiffRowResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run ?base
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunDiffRow: (query: GetRunDiffRowParams, params: RequestParams = {}) =>
      this.request<RunDiffRowResponse, ProblemResponse>({
        path: `/runs/diff/row`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One row side by side as a PNG image (viewers): status, input, expected output, both outputs with their verdicts, metric deltas.
     *
     * @tags runs
     * @name GetRunDiffRowImage
     * @summary One row side by side as a PNG image (viewers): status, input, expected output, both outputs with their verdicts, metric deltas
     * @request GET:/runs/diff/row/image
     * @secure
     * @response `200` `File` The PNG image
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run ?base
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunDiffRowImage: (
      query: GetRunDiffRowImageParams,
      params: RequestParams = {},
    ) =>
      this.request<Blob, ProblemResponse>({
        path: `/runs/diff/row/image`,
        method: "GET",
        query: query,
        secure: true,
        format: "blob",
        ...params,
      }),

    /**
     * @description Where the run fails (viewers): failed rows by metric and by dimension value, worst first, and the most frequent errors.
     *
     * @tags runs
     * @name GetRunFailureAnalysis
     * @summary Where the run fails (viewers): failed rows by metric and by dimension value, worst first, and the most frequent errors
     * @request GET:/runs/{run_id}/analysis
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunFailureAnalysis: (
      { runId }: GetRunFailureAnalysisParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/runs/${runId}/analysis`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The release gate (viewers): judges a run by its project's test plan (thresholds overall and per dimension value, the release rule; without a plan, the run's own pass rule) and, with `baseline_run_id`, fails on a significant regression against that run. Answers 200 with `verdict` pass or fail and every check (a run that has not succeeded fails); `format` or the Accept header picks JSON, Markdown (a pull-request comment) or JUnit XML. Nothing is recorded (POST records): the same runs and plan give the same answer.
     *
     * @tags runs
     * @name GetRunGate
     * @summary The release gate (viewers): judges a run by its project's test plan (thresholds overall and per dimension value, the release rule; without a plan, the run's own pass rule) and, with `baseline_run_id`, fails on a significant regression against that run
     * @request GET:/runs/{run_id}/gate
     * @secure
     * @response `200` `GateResponse` The verdict with every check
     * @response `400` `ProblemResponse` validation_failed, project_ambiguous
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` gate_baseline_not_finished
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunGate: (
      { runId, ...query }: GetRunGateParams,
      params: RequestParams = {},
    ) =>
      this.request<GateResponse, ProblemResponse>({
        path: `/runs/${runId}/gate`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A signed URL to the results as Parquet (viewers).
     *
     * @tags runs
     * @name GetRunParquetUrl
     * @summary A signed URL to the results as Parquet (viewers)
     * @request GET:/runs/{run_id}/parquet-url
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunParquetUrl: (
      { runId }: GetRunParquetUrlParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/runs/${runId}/parquet-url`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description What waits and what runs (viewers): queued and running runs of the workspace with their queue position and progress.
     *
     * @tags runs
     * @name GetRunQueue
     * @summary What waits and what runs (viewers): queued and running runs of the workspace with their queue position and progress
     * @request GET:/runs/queue
     * @secure
     * @response `200` `RunQueueResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunQueue: (query: GetRunQueueParams, params: RequestParams = {}) =>
      this.request<RunQueueResponse, ProblemResponse>({
        path: `/runs/queue`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Aggregates (viewers): per metric mean, pass rate and distribution, per dimension breakdown, latency, cost.
     *
     * @tags runs
     * @name GetRunResultsSummary
     * @summary Aggregates (viewers): per metric mean, pass rate and distribution, per dimension breakdown, latency, cost
     * @request GET:/runs/{run_id}/results
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunResultsSummary: (
      { runId }: GetRunResultsSummaryParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/runs/${runId}/results`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A multi-turn conversation of the run in order (viewers).
     *
     * @tags runs
     * @name GetRunSession
     * @summary A multi-turn conversation of the run in order (viewers)
     * @request GET:/runs/{run_id}/sessions/{parent_id}
     * @secure
     * @response `200` `RunSessionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRunSession: (
      { runId, parentId }: GetRunSessionParams,
      params: RequestParams = {},
    ) =>
      this.request<RunSessionResponse, ProblemResponse>({
        path: `/runs/${runId}/sessions/${parentId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The run's history in order (viewers): state changes, progress (done/total, rate, ETA), row and judge errors. Poll with `after`.
     *
     * @tags runs
     * @name ListRunEvents
     * @summary The run's history in order (viewers): state changes, progress (done/total, rate, ETA), row and judge errors
     * @request GET:/runs/{run_id}/events
     * @secure
     * @response `200` `(RunEventResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listRunEvents: (
      { runId, ...query }: ListRunEventsParams,
      params: RequestParams = {},
    ) =>
      this.request<RunEventResponse[], ProblemResponse>({
        path: `/runs/${runId}/events`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The run's recorded gate verdicts, newest first (viewers).
     *
     * @tags runs
     * @name ListRunGateVerdicts
     * @summary The run's recorded gate verdicts, newest first (viewers)
     * @request GET:/runs/{run_id}/gate-verdicts
     * @secure
     * @response `200` `(GateVerdictResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listRunGateVerdicts: (
      { runId }: ListRunGateVerdictsParams,
      params: RequestParams = {},
    ) =>
      this.request<GateVerdictResponse[], ProblemResponse>({
        path: `/runs/${runId}/gate-verdicts`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Runs, newest first (viewers): of a workspace, or of every workspace you belong to; filter by SUT, dataset, state, tag.
     *
     * @tags runs
     * @name ListRuns
     * @summary Runs, newest first (viewers): of a workspace, or of every workspace you belong to; filter by SUT, dataset, state, tag
     * @request GET:/runs
     * @secure
     * @response `200` `RunResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listRuns: (query: ListRunsParams = {}, params: RequestParams = {}) =>
      this.request<RunResponsePage, ProblemResponse>({
        path: `/runs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Row results filtered, sorted and paged in the query language (viewers).
     *
     * @tags runs
     * @name QueryRunResults
     * @summary Row results filtered, sorted and paged in the query language (viewers)
     * @request POST:/runs/{run_id}/results/query
     * @secure
     * @response `200` `RunResultsQueryResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryRunResults: (
      { runId }: QueryRunResultsParams,
      data: RunResultsQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<RunResultsQueryResponse, ProblemResponse>({
        path: `/runs/${runId}/results/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Results flattened for a table (viewers): the row's columns with `_output`, `_passed`, `_score.<metric>`; filtered and sorted in the query language.
     *
     * @tags runs
     * @name QueryRunTable
     * @summary Results flattened for a table (viewers): the row's columns with `_output`, `_passed`, `_score.<metric>`; filtered and sorted in the query language
     * @request POST:/runs/{run_id}/query
     * @secure
     * @response `200` `Record<string,any>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    queryRunTable: (
      { runId }: QueryRunTableParams,
      data: RunResultsQueryRequest,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, any>, ProblemResponse>({
        path: `/runs/${runId}/query`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description A new run with the same inputs (members): every row, or only those whose call failed, or those that failed (202).
     *
     * @tags runs
     * @name Rerun
     * @summary A new run with the same inputs (members): every row, or only those whose call failed, or those that failed (202)
     * @request POST:/runs/{run_id}/rerun
     * @secure
     * @response `201` `RunResponse`
     * @response `202` `RunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` run_still_active, nothing_to_rerun
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    rerun: (
      { runId }: RerunParams,
      data: RerunRequest,
      params: RequestParams = {},
    ) =>
      this.request<RunResponse, ProblemResponse>({
        path: `/runs/${runId}/rerun`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Starts a run (members): the inputs are snapshotted, the metric config versions frozen, and the run queued (202); an offline connection waits for PUT .../upload.
     *
     * @tags runs
     * @name StartRun
     * @summary Starts a run (members): the inputs are snapshotted, the metric config versions frozen, and the run queued (202); an offline connection waits for PUT .../upload
     * @request POST:/runs
     * @secure
     * @response `201` `RunResponse`
     * @response `202` `RunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startRun: (data: CreateRunRequest, params: RequestParams = {}) =>
      this.request<RunResponse, ProblemResponse>({
        path: `/runs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The run's events live as Server-Sent Events (viewers): the backlog after `Last-Event-ID` (or `after`), then each event as it is written, by whichever process runs it; ends after the terminal state.
     *
     * @tags runs
     * @name StreamRunEvents
     * @summary The run's events live as Server-Sent Events (viewers): the backlog after `Last-Event-ID` (or `after`), then each event as it is written, by whichever process runs it; ends after the terminal state
     * @request GET:/runs/{run_id}/events/stream
     * @secure
     * @response `200` `string` Server-Sent Events: one message per run event, `id: <seq>` (the stream position to resume from), `event: <type>`, `data: <the event as GET /runs/{run_id}/events lists it>`; a `: heartbeat` comment when idle. The stream ends after the event of the terminal state (succeeded, failed, cancelled), at once after the backlog when the run has ended.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` too_many_event_streams: you hold RUN_EVENT_STREAMS_PER_USER streams on this process already; see Retry-After; rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` event_streams_exhausted: the process serves RUN_EVENT_STREAMS_MAX streams already; service_unavailable: the database does not answer. See Retry-After
     */
    streamRunEvents: (
      { runId, ...query }: StreamRunEventsParams,
      params: RequestParams = {},
    ) =>
      this.request<string, ProblemResponse>({
        path: `/runs/${runId}/events/stream`,
        method: "GET",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description The outputs of an offline run, by row id (members): JSON `{results: [...]}` or JSON Lines (application/x-ndjson, one output object per line, scored at once); scoring is queued (202).
     *
     * @tags runs
     * @name UploadRunOutputs
     * @summary The outputs of an offline run, by row id (members): JSON `{results: [...]}` or JSON Lines (application/x-ndjson, one output object per line, scored at once); scoring is queued (202)
     * @request PUT:/runs/{run_id}/upload
     * @secure
     * @response `200` `RunResponse`
     * @response `202` `RunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` run_not_awaiting_upload
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    uploadRunOutputs: (
      { runId }: UploadRunOutputsParams,
      data: UploadOutputsRequest,
      params: RequestParams = {},
    ) =>
      this.request<RunResponse, ProblemResponse>({
        path: `/runs/${runId}/upload`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  projects = {
    /**
     * @description Attaches a test plan version (default its latest) to a project that has none (members).
     *
     * @tags projects
     * @name AttachProjectTestPlan
     * @summary Attaches a test plan version (default its latest) to a project that has none (members)
     * @request POST:/projects/{project_id}/test-plan
     * @secure
     * @response `200` `ProjectPatchResponse`
     * @response `400` `ProblemResponse` validation_failed, unknown_test_plan
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` project_test_plan_attached
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    attachProjectTestPlan: (
      { projectId }: AttachProjectTestPlanParams,
      data: AttachTestPlanRequest,
      params: RequestParams = {},
    ) =>
      this.request<ProjectPatchResponse, ProblemResponse>({
        path: `/projects/${projectId}/test-plan`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates a project (members) from a template's dimension list (as it is or edited), with SUTs and datasets of the workspace.
     *
     * @tags projects
     * @name CreateProject
     * @summary Creates a project (members) from a template's dimension list (as it is or edited), with SUTs and datasets of the workspace
     * @request POST:/projects
     * @secure
     * @response `201` `ProjectCreateResponse`
     * @response `400` `ProblemResponse` validation_failed, unknown_template, project_dimensions_invalid, unknown_sut, unknown_dataset
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` project_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createProject: (data: CreateProjectRequest, params: RequestParams = {}) =>
      this.request<ProjectCreateResponse, ProblemResponse>({
        path: `/projects`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Detaches the test plan (members); a project without one is answered unchanged.
     *
     * @tags projects
     * @name DetachProjectTestPlan
     * @summary Detaches the test plan (members); a project without one is answered unchanged
     * @request DELETE:/projects/{project_id}/test-plan
     * @secure
     * @response `200` `ProjectResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    detachProjectTestPlan: (
      { projectId }: DetachProjectTestPlanParams,
      params: RequestParams = {},
    ) =>
      this.request<ProjectResponse, ProblemResponse>({
        path: `/projects/${projectId}/test-plan`,
        method: "DELETE",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One project (viewers).
     *
     * @tags projects
     * @name GetProject
     * @summary One project (viewers)
     * @request GET:/projects/{project_id}
     * @secure
     * @response `200` `ProjectResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getProject: ({ projectId }: GetProjectParams, params: RequestParams = {}) =>
      this.request<ProjectResponse, ProblemResponse>({
        path: `/projects/${projectId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Rows of the project's datasets per dimension value (and chosen pairs), and the values with fewer than `min_rows` (viewers).
     *
     * @tags projects
     * @name GetProjectCoverage
     * @summary Rows of the project's datasets per dimension value (and chosen pairs), and the values with fewer than `min_rows` (viewers)
     * @request GET:/projects/{project_id}/coverage
     * @secure
     * @response `200` `ProjectCoverageResponse`
     * @response `400` `ProblemResponse` validation_failed, project_dimension_unknown
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getProjectCoverage: (
      { projectId, ...query }: GetProjectCoverageParams,
      params: RequestParams = {},
    ) =>
      this.request<ProjectCoverageResponse, ProblemResponse>({
        path: `/projects/${projectId}/coverage`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Metric values of the project's runs (of its SUTs or datasets) over time, per dimension value, ready for a chart (viewers).
     *
     * @tags projects
     * @name GetProjectTrend
     * @summary Metric values of the project's runs (of its SUTs or datasets) over time, per dimension value, ready for a chart (viewers)
     * @request POST:/projects/{project_id}/trend
     * @secure
     * @response `200` `ProjectTrendResponse`
     * @response `400` `ProblemResponse` validation_failed, project_dimension_unknown, invalid_time_range
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getProjectTrend: (
      { projectId }: GetProjectTrendParams,
      data: TrendRequest,
      params: RequestParams = {},
    ) =>
      this.request<ProjectTrendResponse, ProblemResponse>({
        path: `/projects/${projectId}/trend`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's projects (viewers); filter with `q`, sort by name, created_at or updated_at.
     *
     * @tags projects
     * @name ListProjects
     * @summary The workspace's projects (viewers); filter with `q`, sort by name, created_at or updated_at
     * @request GET:/projects
     * @secure
     * @response `200` `ProjectListItemPage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listProjects: (query: ListProjectsParams, params: RequestParams = {}) =>
      this.request<ProjectListItemPage, ProblemResponse>({
        path: `/projects`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Moves the project to another workspace (admins of both); its links to the old workspace's SUTs, datasets and test plan are dropped.
     *
     * @tags projects
     * @name MoveProject
     * @summary Moves the project to another workspace (admins of both); its links to the old workspace's SUTs, datasets and test plan are dropped
     * @request POST:/projects/{project_id}/move
     * @secure
     * @response `200` `ProjectResponse`
     * @response `400` `ProblemResponse` validation_failed, project_move_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` project_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    moveProject: (
      { projectId }: MoveProjectParams,
      data: MoveProjectRequest,
      params: RequestParams = {},
    ) =>
      this.request<ProjectResponse, ProblemResponse>({
        path: `/projects/${projectId}/move`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets the project's test plan version, replacing any attached one (members).
     *
     * @tags projects
     * @name ReplaceProjectTestPlan
     * @summary Sets the project's test plan version, replacing any attached one (members)
     * @request PUT:/projects/{project_id}/test-plan
     * @secure
     * @response `200` `ProjectPatchResponse`
     * @response `400` `ProblemResponse` validation_failed, unknown_test_plan
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceProjectTestPlan: (
      { projectId }: ReplaceProjectTestPlanParams,
      data: AttachTestPlanRequest,
      params: RequestParams = {},
    ) =>
      this.request<ProjectPatchResponse, ProblemResponse>({
        path: `/projects/${projectId}/test-plan`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes name, description, dimensions or links (members); lists replace the old ones.
     *
     * @tags projects
     * @name UpdateProject
     * @summary Changes name, description, dimensions or links (members); lists replace the old ones
     * @request PATCH:/projects/{project_id}
     * @secure
     * @response `200` `ProjectPatchResponse`
     * @response `400` `ProblemResponse` validation_failed, project_dimensions_invalid, unknown_sut, unknown_dataset
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the project {project_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` project_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateProject: (
      { projectId }: UpdateProjectParams,
      data: UpdateProjectRequest,
      params: RequestParams = {},
    ) =>
      this.request<ProjectPatchResponse, ProblemResponse>({
        path: `/projects/${projectId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  sdg = {
    /**
     * @description Adds an adapter (members): templates over seed rows and dimension values, or an LLM prompt through a judge connection.
     *
     * @tags synthetic data
     * @name CreateSdgAdapter
     * @summary Adds an adapter (members): templates over seed rows and dimension values, or an LLM prompt through a judge connection
     * @request POST:/sdg/adapters
     * @secure
     * @response `201` `SdgAdapterResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` sdg_adapter_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createSdgAdapter: (
      data: CreateSdgAdapterRequest,
      params: RequestParams = {},
    ) =>
      this.request<SdgAdapterResponse, ProblemResponse>({
        path: `/sdg/adapters`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description One adapter with its latest runs (viewers): poll it for a run's state.
     *
     * @tags synthetic data
     * @name GetSdgAdapter
     * @summary One adapter with its latest runs (viewers): poll it for a run's state
     * @request GET:/sdg/adapters/{adapter_id}
     * @secure
     * @response `200` `SdgAdapterResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sdg_adapter {adapter_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getSdgAdapter: (
      { adapterId }: GetSdgAdapterParams,
      params: RequestParams = {},
    ) =>
      this.request<SdgAdapterResponse, ProblemResponse>({
        path: `/sdg/adapters/${adapterId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One run of the adapter (viewers): poll it until `succeeded` (then `version_id` is the candidate version) or `failed`. The Location of POST …/runs.
     *
     * @tags synthetic data
     * @name GetSdgRun
     * @summary One run of the adapter (viewers): poll it until `succeeded` (then `version_id` is the candidate version) or `failed`
     * @request GET:/sdg/adapters/{adapter_id}/runs/{run_id}
     * @secure
     * @response `200` `SdgRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the sdg_adapter {adapter_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getSdgRun: (
      { adapterId, runId }: GetSdgRunParams,
      params: RequestParams = {},
    ) =>
      this.request<SdgRunResponse, ProblemResponse>({
        path: `/sdg/adapters/${adapterId}/runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's SDG adapters with their latest runs (viewers).
     *
     * @tags synthetic data
     * @name ListSdgAdapters
     * @summary The workspace's SDG adapters with their latest runs (viewers)
     * @request GET:/sdg/adapters
     * @secure
     * @response `200` `SdgAdapterResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSdgAdapters: (
      query: ListSdgAdaptersParams,
      params: RequestParams = {},
    ) =>
      this.request<SdgAdapterResponsePage, ProblemResponse>({
        path: `/sdg/adapters`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Generates rows into a new candidate version of the target dataset (members, 202); existing versions are never touched.
     *
     * @tags synthetic data
     * @name StartSdgRun
     * @summary Generates rows into a new candidate version of the target dataset (members, 202); existing versions are never touched
     * @request POST:/sdg/adapters/{adapter_id}/runs
     * @secure
     * @response `201` `SdgRunResponse`
     * @response `202` `SdgRunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the sdg_adapter {adapter_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startSdgRun: (
      { adapterId }: StartSdgRunParams,
      data: StartSdgRunRequest,
      params: RequestParams = {},
    ) =>
      this.request<SdgRunResponse, ProblemResponse>({
        path: `/sdg/adapters/${adapterId}/runs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  analysis = {
    /**
     * @description Properties of the annotation analysis (any signed-in user).
     *
     * @tags analysis
     * @name GetAnnotationAnalysisProperties
     * @summary Properties of the annotation analysis (any signed-in user)
     * @request GET:/analysis/properties/annotation
     * @secure
     * @response `200` `(AnalysisPropertyDto)[]`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getAnnotationAnalysisProperties: (params: RequestParams = {}) =>
      this.request<AnalysisPropertyDto[], ProblemResponse>({
        path: `/analysis/properties/annotation`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Properties of the text analysis (any signed-in user).
     *
     * @tags analysis
     * @name GetTextAnalysisProperties
     * @summary Properties of the text analysis (any signed-in user)
     * @request GET:/analysis/properties/text
     * @secure
     * @response `200` `(AnalysisPropertyDto)[]`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTextAnalysisProperties: (params: RequestParams = {}) =>
      this.request<AnalysisPropertyDto[], ProblemResponse>({
        path: `/analysis/properties/text`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Properties of the visual analysis (any signed-in user).
     *
     * @tags analysis
     * @name GetVisualAnalysisProperties
     * @summary Properties of the visual analysis (any signed-in user)
     * @request GET:/analysis/properties/visual
     * @secure
     * @response `200` `(AnalysisPropertyDto)[]`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getVisualAnalysisProperties: (params: RequestParams = {}) =>
      this.request<AnalysisPropertyDto[], ProblemResponse>({
        path: `/analysis/properties/visual`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  traces = {
    /**
     * @description Adds a source to pull traces from (members; naming a secret takes an admin): an OTLP file URL, a Langfuse-compatible or a Phoenix-compatible API.
     *
     * @tags traces
     * @name CreateTraceConnection
     * @summary Adds a source to pull traces from (members; naming a secret takes an admin): an OTLP file URL, a Langfuse-compatible or a Phoenix-compatible API
     * @request POST:/traces/connections
     * @secure
     * @response `201` `TraceSourceConnectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` trace_connection_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTraceConnection: (
      data: CreateTraceConnectionRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceSourceConnectionResponse, ProblemResponse>({
        path: `/traces/connections`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Stores an end user's feedback on a trace (or one of its spans): a thumbs up or down, a score or a category under a name, with a comment and the end user's id. The trace need not have landed yet. With `client_key` the post is safe to retry: the same key and content answers the stored feedback again (200, `Idempotent-Replayed: true`), the same key with other content 409 (members; an API key's own workspace, or `workspace_id` with a user's token).
     *
     * @tags traces
     * @name CreateTraceFeedback
     * @summary Stores an end user's feedback on a trace (or one of its spans): a thumbs up or down, a score or a category under a name, with a comment and the end user's id
     * @request POST:/traces/feedback
     * @secure
     * @response `200` `TraceFeedbackResponse` A retry: the feedback its client_key holds, unchanged (`replayed: true`)
     * @response `201` `TraceFeedbackResponse` Stored
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the API key's workspace (with a user's token: workspace_id in the body)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` trace_feedback_key_conflict: the client_key holds feedback with other content
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTraceFeedback: (
      data: CreateTraceFeedbackRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceFeedbackResponse, ProblemResponse>({
        path: `/traces/feedback`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Stores up to 100 feedbacks, each as POST /traces/feedback would (idempotent by its own client_key), and answers each one's outcome: created, replayed or conflict (members).
     *
     * @tags traces
     * @name CreateTraceFeedbackBatch
     * @summary Stores up to 100 feedbacks, each as POST /traces/feedback would (idempotent by its own client_key), and answers each one's outcome: created, replayed or conflict (members)
     * @request POST:/traces/feedback:batch
     * @secure
     * @response `200` `TraceFeedbackBatchResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the API key's workspace (with a user's token: workspace_id in the body)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTraceFeedbackBatch: (
      { batch }: CreateTraceFeedbackBatchParams,
      data: CreateTraceFeedbackBatchRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceFeedbackBatchResponse, ProblemResponse>({
        path: `/traces/feedback${batch}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Adds a new ground-truth version: expected outputs for traces of the version (members).
     *
     * @tags traces
     * @name CreateTraceGroundTruth
     * @summary Adds a new ground-truth version: expected outputs for traces of the version (members)
     * @request POST:/traces/versions/{version_id}/ground-truth
     * @secure
     * @response `201` `TraceGroundTruthVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset_version {version_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTraceGroundTruth: (
      { versionId }: CreateTraceGroundTruthParams,
      data: CreateGroundTruthRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceGroundTruthVersionResponse, ProblemResponse>({
        path: `/traces/versions/${versionId}/ground-truth`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Drops the dataset's own retention: it follows its workspace's again (admins).
     *
     * @tags traces
     * @name DeleteTraceDatasetRetention
     * @summary Drops the dataset's own retention: it follows its workspace's again (admins)
     * @request DELETE:/traces/datasets/{dataset_id}/retention
     * @secure
     * @response `204` `void` The dataset follows its workspace's retention
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteTraceDatasetRetention: (
      { datasetId }: DeleteTraceDatasetRetentionParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/retention`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Deletes one feedback, recorded in the audit trail; its client_key may be used again (members).
     *
     * @tags traces
     * @name DeleteTraceFeedback
     * @summary Deletes one feedback, recorded in the audit trail; its client_key may be used again (members)
     * @request DELETE:/traces/feedback/{feedback_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the trace_feedback {feedback_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteTraceFeedback: (
      { feedbackId }: DeleteTraceFeedbackParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/traces/feedback/${feedbackId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Which convention a sample of records follows, with a confidence, how each attribute maps onto the canonical span, and which attributes would be kept aside or dropped (viewers). Nothing is stored.
     *
     * @tags traces
     * @name DetectTraceConvention
     * @summary Which convention a sample of records follows, with a confidence, how each attribute maps onto the canonical span, and which attributes would be kept aside or dropped (viewers)
     * @request POST:/traces/conventions:detect
     * @secure
     * @response `200` `TraceConventionDetectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    detectTraceConvention: (
      { detect }: DetectTraceConventionParams,
      data: DetectConventionsRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceConventionDetectionResponse, ProblemResponse>({
        path: `/traces/conventions${detect}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Convention detection over the first spans of an upload (viewers).
     *
     * @tags traces
     * @name DetectTraceUploadConvention
     * @summary Convention detection over the first spans of an upload (viewers)
     * @request POST:/traces/uploads/{upload_id}:detect
     * @secure
     * @response `200` `TraceConventionDetectionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the trace_upload {upload_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    detectTraceUploadConvention: (
      { uploadId, detect }: DetectTraceUploadConventionParams,
      data: DetectUploadRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceConventionDetectionResponse, ProblemResponse>({
        path: `/traces/uploads/${uploadId}${detect}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The trace dataset's retention: its own, or its workspace's (viewers).
     *
     * @tags traces
     * @name GetTraceDatasetRetention
     * @summary The trace dataset's retention: its own, or its workspace's (viewers)
     * @request GET:/traces/datasets/{dataset_id}/retention
     * @secure
     * @response `200` `DatasetTraceRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceDatasetRetention: (
      { datasetId }: GetTraceDatasetRetentionParams,
      params: RequestParams = {},
    ) =>
      this.request<DatasetTraceRetentionResponse, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/retention`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One feedback (viewers).
     *
     * @tags traces
     * @name GetTraceFeedback
     * @summary One feedback (viewers)
     * @request GET:/traces/feedback/{feedback_id}
     * @secure
     * @response `200` `TraceFeedbackResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the trace_feedback {feedback_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceFeedback: (
      { feedbackId }: GetTraceFeedbackParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceFeedbackResponse, ProblemResponse>({
        path: `/traces/feedback/${feedbackId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The version's ground truth: the newest set of expected outputs (or `number`), with every version number (viewers).
     *
     * @tags traces
     * @name GetTraceGroundTruth
     * @summary The version's ground truth: the newest set of expected outputs (or `number`), with every version number (viewers)
     * @request GET:/traces/versions/{version_id}/ground-truth
     * @secure
     * @response `200` `TraceGroundTruthResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset_version {version_id}
     * @response `404` `ProblemResponse` ground_truth_not_found The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceGroundTruth: (
      { versionId, ...query }: GetTraceGroundTruthParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceGroundTruthResponse, ProblemResponse>({
        path: `/traces/versions/${versionId}/ground-truth`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description An ingest run: state, counts (received = landed + deduplicated + dropped), drops by reason, the version written (viewers).
     *
     * @tags traces
     * @name GetTraceLandingRun
     * @summary An ingest run: state, counts (received = landed + deduplicated + dropped), drops by reason, the version written (viewers)
     * @request GET:/traces/runs/{run_id}
     * @secure
     * @response `200` `TraceIngestRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the trace_ingest_run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceLandingRun: (
      { runId }: GetTraceLandingRunParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceIngestRunResponse, ProblemResponse>({
        path: `/traces/runs/${runId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The live stream: open head version, when it seals, spans pending and landed; the defaults before the first span (viewers).
     *
     * @tags traces
     * @name GetTraceLiveStream
     * @summary The live stream: open head version, when it seals, spans pending and landed; the defaults before the first span (viewers)
     * @request GET:/traces/datasets/{dataset_id}/live
     * @secure
     * @response `200` `TraceLiveStreamResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceLiveStream: (
      { datasetId }: GetTraceLiveStreamParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceLiveStreamResponse, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/live`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One evaluator's metric over a window of traces' start times, by hour, day or the whole window, optionally split by service, model or trace tag: counts, the pass rate with Wilson's 95% interval, the mean score with Student's t 95% interval, and the SD (viewers).
     *
     * @tags traces
     * @name GetTraceScoreAggregates
     * @summary One evaluator's metric over a window of traces' start times, by hour, day or the whole window, optionally split by service, model or trace tag: counts, the pass rate with Wilson's 95% interval, the mean score with Student's t 95% interval, and the SD (viewers)
     * @request GET:/traces/scores:aggregate
     * @secure
     * @response `200` `TraceScoreAggregateResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the API key's workspace (with a user's token: query workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTraceScoreAggregates: (
      { aggregate, ...query }: GetTraceScoreAggregatesParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceScoreAggregateResponse, ProblemResponse>({
        path: `/traces/scores${aggregate}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Lands the records in the body (OTLP/JSON requests or span records, at most 10000), through the queue (members, 202).
     *
     * @tags traces
     * @name LandInlineTraces
     * @summary Lands the records in the body (OTLP/JSON requests or span records, at most 10000), through the queue (members, 202)
     * @request POST:/traces/land:inline
     * @secure
     * @response `201` `TraceIngestRunResponse`
     * @response `202` `TraceIngestRunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    landInlineTraces: (
      { inline }: LandInlineTracesParams,
      data: LandInlineRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceIngestRunResponse, ProblemResponse>({
        path: `/traces/land${inline}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Lands an upload or a connection's traces into a new version of a trace dataset, through the queue (members, 202); idempotent: spans already landed are not written again.
     *
     * @tags traces
     * @name LandTraces
     * @summary Lands an upload or a connection's traces into a new version of a trace dataset, through the queue (members, 202); idempotent: spans already landed are not written again
     * @request POST:/traces/land
     * @secure
     * @response `201` `TraceIngestRunResponse`
     * @response `202` `TraceIngestRunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    landTraces: (data: LandTracesRequest, params: RequestParams = {}) =>
      this.request<TraceIngestRunResponse, ProblemResponse>({
        path: `/traces/land`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Pulls the connection's traces (page by page) into a new version of a trace dataset, through the queue (members, 202): poll GET /traces/runs/{id}.
     *
     * @tags traces
     * @name LandTracesFromConnection
     * @summary Pulls the connection's traces (page by page) into a new version of a trace dataset, through the queue (members, 202): poll GET /traces/runs/{id}
     * @request POST:/traces/connections/{connection_id}/land
     * @secure
     * @response `201` `TraceIngestRunResponse`
     * @response `202` `TraceIngestRunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the trace_connection {connection_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    landTracesFromConnection: (
      { connectionId }: LandTracesFromConnectionParams,
      data: LandFromConnectionRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceIngestRunResponse, ProblemResponse>({
        path: `/traces/connections/${connectionId}/land`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's trace source connections (viewers).
     *
     * @tags traces
     * @name ListTraceConnections
     * @summary The workspace's trace source connections (viewers)
     * @request GET:/traces/connections
     * @secure
     * @response `200` `(TraceSourceConnectionResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceConnections: (
      query: ListTraceConnectionsParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceSourceConnectionResponse[], ProblemResponse>({
        path: `/traces/connections`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's feedback, newest first, filtered by trace, span, name, value, end user and time (viewers).
     *
     * @tags traces
     * @name ListTraceFeedback
     * @summary The workspace's feedback, newest first, filtered by trace, span, name, value, end user and time (viewers)
     * @request GET:/traces/feedback
     * @secure
     * @response `200` `TraceFeedbackResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the API key's workspace (with a user's token: query workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceFeedback: (
      query: ListTraceFeedbackParams = {},
      params: RequestParams = {},
    ) =>
      this.request<TraceFeedbackResponsePage, ProblemResponse>({
        path: `/traces/feedback`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The records the run could not normalise, each with its reason and original payload, in source order (viewers).
     *
     * @tags traces
     * @name ListTraceLandingRunDrops
     * @summary The records the run could not normalise, each with its reason and original payload, in source order (viewers)
     * @request GET:/traces/runs/{run_id}/drops
     * @secure
     * @response `200` `TraceIngestRunDropsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the trace_ingest_run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceLandingRunDrops: (
      { runId, ...query }: ListTraceLandingRunDropsParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceIngestRunDropsResponse, ProblemResponse>({
        path: `/traces/runs/${runId}/drops`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's score records, newest observed first, filtered by dataset, trace, session, evaluator, metric, verdict, score, error and time (viewers; an API key's own workspace, or `workspace_id` with a user's token).
     *
     * @tags traces
     * @name ListTraceScores
     * @summary The workspace's score records, newest observed first, filtered by dataset, trace, session, evaluator, metric, verdict, score, error and time (viewers; an API key's own workspace, or `workspace_id` with a user's token)
     * @request GET:/traces/scores
     * @secure
     * @response `200` `TraceScoreResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the API key's workspace (with a user's token: query workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceScores: (
      query: ListTraceScoresParams = {},
      params: RequestParams = {},
    ) =>
      this.request<TraceScoreResponsePage, ProblemResponse>({
        path: `/traces/scores`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Drops of the landings that wrote this version (viewers).
     *
     * @tags traces
     * @name ListTraceVersionDrops
     * @summary Drops of the landings that wrote this version (viewers)
     * @request GET:/traces/versions/{version_id}/drops
     * @secure
     * @response `200` `(TraceDropRecordResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the dataset_version {version_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTraceVersionDrops: (
      { versionId, ...query }: ListTraceVersionDropsParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceDropRecordResponse[], ProblemResponse>({
        path: `/traces/versions/${versionId}/drops`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Makes the trace version its dataset's current version (members).
     *
     * @tags traces
     * @name PromoteTraceVersion
     * @summary Makes the trace version its dataset's current version (members)
     * @request POST:/traces/versions/{version_id}:promote
     * @secure
     * @response `200` `TraceCurrentVersionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset_version {version_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    promoteTraceVersion: (
      { versionId, promote }: PromoteTraceVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceCurrentVersionResponse, ProblemResponse>({
        path: `/traces/versions/${versionId}${promote}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Seals the open head version now (its statistics and enrichment are computed); the next span opens a new one. Nothing to seal is not an error (members).
     *
     * @tags traces
     * @name SealTraceLiveStream
     * @summary Seals the open head version now (its statistics and enrichment are computed); the next span opens a new one
     * @request POST:/traces/datasets/{dataset_id}/live:seal
     * @secure
     * @response `200` `TraceLiveStreamResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    sealTraceLiveStream: (
      { datasetId, seal }: SealTraceLiveStreamParams,
      params: RequestParams = {},
    ) =>
      this.request<TraceLiveStreamResponse, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/live${seal}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets the trace dataset's own retention over the workspace's; null keeps its spans forever (admins).
     *
     * @tags traces
     * @name SetTraceDatasetRetention
     * @summary Sets the trace dataset's own retention over the workspace's; null keeps its spans forever (admins)
     * @request PUT:/traces/datasets/{dataset_id}/retention
     * @secure
     * @response `200` `DatasetTraceRetentionResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setTraceDatasetRetention: (
      { datasetId }: SetTraceDatasetRetentionParams,
      data: PutTraceRetentionRequest,
      params: RequestParams = {},
    ) =>
      this.request<DatasetTraceRetentionResponse, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/retention`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Sets how long (window_seconds) and how large (max_spans) a head version grows before it is sealed; creates the stream before its first span (members).
     *
     * @tags traces
     * @name SetTraceLiveStream
     * @summary Sets how long (window_seconds) and how large (max_spans) a head version grows before it is sealed; creates the stream before its first span (members)
     * @request PUT:/traces/datasets/{dataset_id}/live
     * @secure
     * @response `200` `TraceLiveStreamResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the dataset {dataset_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    setTraceLiveStream: (
      { datasetId }: SetTraceLiveStreamParams,
      data: PutTraceLiveSettingsRequest,
      params: RequestParams = {},
    ) =>
      this.request<TraceLiveStreamResponse, ProblemResponse>({
        path: `/traces/datasets/${datasetId}/live`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Uploads a trace file (multipart, part `file`; streamed to disk, at most UPLOAD_MAX_BYTES) to detect and land (members).
     *
     * @tags traces
     * @name UploadTraceFile
     * @summary Uploads a trace file (multipart, part `file`; streamed to disk, at most UPLOAD_MAX_BYTES) to detect and land (members)
     * @request POST:/traces/uploads
     * @secure
     * @response `201` `TraceUploadResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` payload_too_large (UPLOAD_MAX_BYTES)
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    uploadTraceFile: (
      query: UploadTraceFileParams,
      data: UploadTracesForm,
      params: RequestParams = {},
    ) =>
      this.request<TraceUploadResponse, ProblemResponse>({
        path: `/traces/uploads`,
        method: "POST",
        query: query,
        body: data,
        secure: true,
        type: ContentType.FormData,
        format: "json",
        ...params,
      }),
  };
  v1 = {
    /**
     * @description Receives an OTLP/HTTP log export (binary protobuf or OTLP JSON, gzip or not), such as the GenAI events OpenTelemetry's instrumentations of model clients emit. Each record with trace context is kept for its span, in the dataset its spans land in (`x-ews-dataset`, else each resource's `service.name`), and joined to the span's row: GenAI events fill its `input`, `output` and `tool_calls` where the span lacks them, every record stays on the row as `log.records`. A record without trace context is rejected (partial success). Durable when this answers 200, authenticated and throttled as POST /v1/traces (members).
     *
     * @tags traces
     * @name ExportOtlpLogs
     * @summary Receives an OTLP/HTTP log export (binary protobuf or OTLP JSON, gzip or not), such as the GenAI events OpenTelemetry's instrumentations of model clients emit
     * @request POST:/v1/logs
     * @secure
     * @response `200` `File` An ExportLogsServiceResponse in the request's encoding; `partialSuccess` counts the log records rejected and says why
     * @response `400` `ProblemResponse` otlp_body_undecodable, otlp_dataset_header_invalid, trace_dataset_invalid (the name is a test-case dataset's), validation_failed (x-ews-workspace missing or not a UUID with a user's token). A protobuf request gets a google.rpc.Status (application/x-protobuf) instead
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the API key's workspace (with a user's token: the workspace in header x-ews-workspace)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` payload_too_large: over OTLP_MAX_BYTES once decompressed, or more than 10,000 log records
     * @response `415` `ProblemResponse` unsupported_media_type: a Content-Type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip or deflate
     * @response `429` `ProblemResponse` otlp_backpressure: the dataset has more log records waiting for their spans than OTLP_MAX_PENDING_SPANS; retry after Retry-After seconds; rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportOtlpLogs: (data: ExportOtlpLogsPayload, params: RequestParams = {}) =>
      this.request<File, ProblemResponse>({
        path: `/v1/logs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Receives an OTLP/HTTP trace export (binary protobuf or OTLP JSON, gzip or not) into trace datasets: the `x-ews-dataset` header names the dataset, else each resource's `service.name` does (created as a trace dataset on first use). Authenticated by an API key (its workspace is the target) or a user's token with `x-ews-workspace`. The spans are durable when this answers 200, and land in the dataset's open head version within moments; an exporter's retry never lands a span twice (members).
     *
     * @tags traces
     * @name ExportOtlpTraces
     * @summary Receives an OTLP/HTTP trace export (binary protobuf or OTLP JSON, gzip or not) into trace datasets: the `x-ews-dataset` header names the dataset, else each resource's `service.name` does (created as a trace dataset on first use)
     * @request POST:/v1/traces
     * @secure
     * @response `200` `File` An ExportTraceServiceResponse in the request's encoding; `partialSuccess` counts the spans rejected and says why
     * @response `400` `ProblemResponse` otlp_body_undecodable, otlp_dataset_header_invalid, trace_dataset_invalid (the name is a test-case dataset's), validation_failed (x-ews-workspace missing or not a UUID with a user's token). A protobuf request gets a google.rpc.Status (application/x-protobuf) instead
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the API key's workspace (with a user's token: the workspace in header x-ews-workspace)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` payload_too_large: over OTLP_MAX_BYTES once decompressed
     * @response `415` `ProblemResponse` unsupported_media_type: a Content-Type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip or deflate
     * @response `429` `ProblemResponse` otlp_backpressure: the dataset has more acknowledged spans landing than OTLP_MAX_PENDING_SPANS; retry after Retry-After seconds; rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportOtlpTraces: (
      data: ExportOtlpTracesPayload,
      params: RequestParams = {},
    ) =>
      this.request<File, ProblemResponse>({
        path: `/v1/traces`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  testPlans = {
    /**
     * @description Version 1 of a new plan (members): datasets or partitions of the workspace, metrics with thresholds, the release rule.
     *
     * @tags test plans
     * @name CreateTestPlan
     * @summary Version 1 of a new plan (members): datasets or partitions of the workspace, metrics with thresholds, the release rule
     * @request POST:/test-plans
     * @secure
     * @response `201` `TestPlanResponse`
     * @response `400` `ProblemResponse` validation_failed, test_plan_invalid, unknown_dataset
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` test_plan_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTestPlan: (data: CreateTestPlanRequest, params: RequestParams = {}) =>
      this.request<TestPlanResponse, ProblemResponse>({
        path: `/test-plans`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description A new version (members), from `from_version` (default the latest): what the body leaves out is copied. Versions never change.
     *
     * @tags test plans
     * @name CreateTestPlanVersion
     * @summary A new version (members), from `from_version` (default the latest): what the body leaves out is copied
     * @request POST:/test-plans/{ref}/versions
     * @secure
     * @response `201` `TestPlanResponse`
     * @response `400` `ProblemResponse` validation_failed, test_plan_invalid, unknown_dataset
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createTestPlanVersion: (
      { ref, ...query }: CreateTestPlanVersionParams,
      data: CreateTestPlanVersionRequest,
      params: RequestParams = {},
    ) =>
      this.request<TestPlanResponse, ProblemResponse>({
        path: `/test-plans/${ref}/versions`,
        method: "POST",
        query: query,
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The plan's latest version with the projects carrying it (viewers).
     *
     * @tags test plans
     * @name GetTestPlan
     * @summary The plan's latest version with the projects carrying it (viewers)
     * @request GET:/test-plans/{ref}
     * @secure
     * @response `200` `TestPlanDetailResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTestPlan: (
      { ref, ...query }: GetTestPlanParams,
      params: RequestParams = {},
    ) =>
      this.request<TestPlanDetailResponse, ProblemResponse>({
        path: `/test-plans/${ref}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One version (a number, or `latest`) (viewers).
     *
     * @tags test plans
     * @name GetTestPlanVersion
     * @summary One version (a number, or `latest`) (viewers)
     * @request GET:/test-plans/{ref}/versions/{version}
     * @secure
     * @response `200` `TestPlanDetailResponse`
     * @response `400` `ProblemResponse` invalid_test_plan_version
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getTestPlanVersion: (
      { ref, version, ...query }: GetTestPlanVersionParams,
      params: RequestParams = {},
    ) =>
      this.request<TestPlanDetailResponse, ProblemResponse>({
        path: `/test-plans/${ref}/versions/${version}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's test plans with their latest version's size (viewers).
     *
     * @tags test plans
     * @name ListTestPlans
     * @summary The workspace's test plans with their latest version's size (viewers)
     * @request GET:/test-plans
     * @secure
     * @response `200` `TestPlanSummaryResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTestPlans: (query: ListTestPlansParams, params: RequestParams = {}) =>
      this.request<TestPlanSummaryResponsePage, ProblemResponse>({
        path: `/test-plans`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The plan's versions, newest first (viewers).
     *
     * @tags test plans
     * @name ListTestPlanVersions
     * @summary The plan's versions, newest first (viewers)
     * @request GET:/test-plans/{ref}/versions
     * @secure
     * @response `200` `TestPlanVersionPage`
     * @response `400` `ProblemResponse` validation_failed (page, page_size, workspace_id)
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listTestPlanVersions: (
      { ref, ...query }: ListTestPlanVersionsParams,
      params: RequestParams = {},
    ) =>
      this.request<TestPlanVersionPage, ProblemResponse>({
        path: `/test-plans/${ref}/versions`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  testPackages = {
    /**
     * @description A workspace recommendation (members): metrics, quality checks and dimensions for a use case.
     *
     * @tags test packages
     * @name CreateRecommendation
     * @summary A workspace recommendation (members): metrics, quality checks and dimensions for a use case
     * @request POST:/test-packages/recommendations
     * @secure
     * @response `201` `TestPackageRecommendation`
     * @response `400` `ProblemResponse` validation_failed
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` recommendation_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createRecommendation: (
      data: CreateRecommendationRequest,
      params: RequestParams = {},
    ) =>
      this.request<TestPackageRecommendation, ProblemResponse>({
        path: `/test-packages/recommendations`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only).
     *
     * @tags test packages
     * @name DeleteRecommendation
     * @summary Deletes a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only)
     * @request DELETE:/test-packages/recommendations/{recommendation_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteRecommendation: (
      { recommendationId, ...query }: DeleteRecommendationParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/test-packages/recommendations/${recommendationId}`,
        method: "DELETE",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description One recommendation, built-in or the workspace's (viewers).
     *
     * @tags test packages
     * @name GetRecommendation
     * @summary One recommendation, built-in or the workspace's (viewers)
     * @request GET:/test-packages/recommendations/{recommendation_id}
     * @secure
     * @response `200` `TestPackageRecommendation`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getRecommendation: (
      { recommendationId, ...query }: GetRecommendationParams,
      params: RequestParams = {},
    ) =>
      this.request<TestPackageRecommendation, ProblemResponse>({
        path: `/test-packages/recommendations/${recommendationId}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The built-in recommendations (one per project template) and the workspace's own (viewers).
     *
     * @tags test packages
     * @name ListRecommendations
     * @summary The built-in recommendations (one per project template) and the workspace's own (viewers)
     * @request GET:/test-packages/recommendations
     * @secure
     * @response `200` `(TestPackageRecommendation)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listRecommendations: (
      query: ListRecommendationsParams,
      params: RequestParams = {},
    ) =>
      this.request<TestPackageRecommendation[], ProblemResponse>({
        path: `/test-packages/recommendations`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Replaces a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only).
     *
     * @tags test packages
     * @name ReplaceRecommendation
     * @summary Replaces a workspace recommendation (members); built-ins are read-only (403 builtin_recommendation_read_only)
     * @request PUT:/test-packages/recommendations/{recommendation_id}
     * @secure
     * @response `200` `TestPackageRecommendation`
     * @response `400` `ProblemResponse` validation_failed
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` recommendation_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceRecommendation: (
      { recommendationId, ...query }: ReplaceRecommendationParams,
      data: RecommendationDefinition,
      params: RequestParams = {},
    ) =>
      this.request<TestPackageRecommendation, ProblemResponse>({
        path: `/test-packages/recommendations/${recommendationId}`,
        method: "PUT",
        query: query,
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  reports = {
    /**
     * @description Builds a report from the run (members): every section's figures from its results, narratives from the judge when one is configured, else from the template.
     *
     * @tags reports
     * @name CreateReport
     * @summary Builds a report from the run (members): every section's figures from its results, narratives from the judge when one is configured, else from the template
     * @request POST:/reports/{run_id}
     * @secure
     * @response `201` `ReportResponse`
     * @response `400` `ProblemResponse` validation_failed, report_reference_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createReport: (
      { runId }: CreateReportParams,
      data: CreateReportRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportResponse, ProblemResponse>({
        path: `/reports/${runId}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Removes a section from the report (members); regenerate with `sections` naming it brings it back.
     *
     * @tags reports
     * @name DeleteReportSection
     * @summary Removes a section from the report (members); regenerate with `sections` naming it brings it back
     * @request DELETE:/reports/{report_id}/content/{section_key}
     * @secure
     * @response `200` `ReportContentResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` report_section_not_found The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteReportSection: (
      { reportId, sectionKey }: DeleteReportSectionParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportContentResponse, ProblemResponse>({
        path: `/reports/${reportId}/content/${sectionKey}`,
        method: "DELETE",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Renders the report as Markdown, HTML or PDF and stores the file (members); answers a signed URL to it.
     *
     * @tags reports
     * @name ExportReport
     * @summary Renders the report as Markdown, HTML or PDF and stores the file (members); answers a signed URL to it
     * @request POST:/reports/{report_id}/export
     * @secure
     * @response `200` `ReportDownloadResponse`
     * @response `400` `ProblemResponse` validation_failed, report_format_not_enabled
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportReport: (
      { reportId }: ExportReportParams,
      data: ExportReportRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportDownloadResponse, ProblemResponse>({
        path: `/reports/${reportId}/export`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description One report with its sections (viewers); the ETag serves If-Match on PUT content.
     *
     * @tags reports
     * @name GetReport
     * @summary One report with its sections (viewers); the ETag serves If-Match on PUT content
     * @request GET:/reports/{report_id}
     * @secure
     * @response `200` `ReportResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReport: ({ reportId }: GetReportParams, params: RequestParams = {}) =>
      this.request<ReportResponse, ProblemResponse>({
        path: `/reports/${reportId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every section and the whole report as one Markdown document (viewers); the ETag serves If-Match on PUT content.
     *
     * @tags reports
     * @name GetReportContent
     * @summary Every section and the whole report as one Markdown document (viewers); the ETag serves If-Match on PUT content
     * @request GET:/reports/{report_id}/content
     * @secure
     * @response `200` `ReportContentResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportContent: (
      { reportId }: GetReportContentParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportContentResponse, ProblemResponse>({
        path: `/reports/${reportId}/content`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A signed, expiring URL to the report's current content as Markdown or HTML (viewers).
     *
     * @tags reports
     * @name GetReportContentUrl
     * @summary A signed, expiring URL to the report's current content as Markdown or HTML (viewers)
     * @request GET:/reports/{report_id}/content-url
     * @secure
     * @response `200` `ReportContentUrlResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportContentUrl: (
      { reportId, ...query }: GetReportContentUrlParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportContentUrlResponse, ProblemResponse>({
        path: `/reports/${reportId}/content-url`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A signed, expiring URL to the report's file in a format (viewers): the export of this version of the report, rendered and stored when there is none yet.
     *
     * @tags reports
     * @name GetReportDownloadUrl
     * @summary A signed, expiring URL to the report's file in a format (viewers): the export of this version of the report, rendered and stored when there is none yet
     * @request GET:/reports/{report_id}/download
     * @secure
     * @response `200` `ReportDownloadResponse`
     * @response `400` `ProblemResponse` report_format_not_enabled
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportDownloadUrl: (
      { reportId, ...query }: GetReportDownloadUrlParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportDownloadResponse, ProblemResponse>({
        path: `/reports/${reportId}/download`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One section by its key (viewers).
     *
     * @tags reports
     * @name GetReportSection
     * @summary One section by its key (viewers)
     * @request GET:/reports/{report_id}/content/{key}
     * @secure
     * @response `200` `ReportSectionContent`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` report_section_not_found The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportSection: (
      { reportId, key }: GetReportSectionParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportSectionContent, ProblemResponse>({
        path: `/reports/${reportId}/content/${key}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Partition id -> the metric names a report can show for it: the run's metrics, then the built-ins the version's mapping supports (viewers).
     *
     * @tags reports
     * @name ListReportPartitionMetrics
     * @summary Partition id -> the metric names a report can show for it: the run's metrics, then the built-ins the version's mapping supports (viewers)
     * @request GET:/reports/{run_id}/partitions/metrics
     * @secure
     * @response `200` `Record<string,(string)[]>`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReportPartitionMetrics: (
      { runId }: ListReportPartitionMetricsParams,
      params: RequestParams = {},
    ) =>
      this.request<Record<string, string[]>, ProblemResponse>({
        path: `/reports/${runId}/partitions/metrics`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The partitions of the dataset version the run executed (viewers).
     *
     * @tags reports
     * @name ListReportPartitions
     * @summary The partitions of the dataset version the run executed (viewers)
     * @request GET:/reports/{run_id}/partitions
     * @secure
     * @response `200` `(PartitionResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReportPartitions: (
      { runId }: ListReportPartitionsParams,
      params: RequestParams = {},
    ) =>
      this.request<PartitionResponse[], ProblemResponse>({
        path: `/reports/${runId}/partitions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The questions a report on this run answers, section by section, from its metrics and dimensions (viewers).
     *
     * @tags reports
     * @name ListReportQuestions
     * @summary The questions a report on this run answers, section by section, from its metrics and dimensions (viewers)
     * @request GET:/reports/questions/{run_id}
     * @secure
     * @response `200` `QuestionSchemaResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the run {run_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReportQuestions: (
      { runId, ...query }: ListReportQuestionsParams,
      params: RequestParams = {},
    ) =>
      this.request<QuestionSchemaResponse, ProblemResponse>({
        path: `/reports/questions/${runId}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's reports, newest first, optionally of one run (viewers).
     *
     * @tags reports
     * @name ListReports
     * @summary The workspace's reports, newest first, optionally of one run (viewers)
     * @request GET:/reports
     * @secure
     * @response `200` `ReportSummaryPage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReports: (query: ListReportsParams, params: RequestParams = {}) =>
      this.request<ReportSummaryPage, ProblemResponse>({
        path: `/reports`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Rebuilds the report from its run (members), keeping edited sections unless `keep_edits` is false.
     *
     * @tags reports
     * @name RegenerateReport
     * @summary Rebuilds the report from its run (members), keeping edited sections unless `keep_edits` is false
     * @request POST:/reports/{report_id}/regenerate
     * @secure
     * @response `200` `ReportResponse`
     * @response `400` `ProblemResponse` validation_failed, report_reference_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    regenerateReport: (
      { reportId }: RegenerateReportParams,
      data: RegenerateReportRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportResponse, ProblemResponse>({
        path: `/reports/${reportId}/regenerate`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Edits sections' markdown and titles (members); edited sections are marked `edited`. Honours If-Match.
     *
     * @tags reports
     * @name UpdateReportContent
     * @summary Edits sections' markdown and titles (members); edited sections are marked `edited`
     * @request PUT:/reports/{report_id}/content
     * @secure
     * @response `200` `ReportContentResponse`
     * @response `400` `ProblemResponse` validation_failed, report_content_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the report {report_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `412` `ProblemResponse` If-Match does not match the current ETag
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateReportContent: (
      { reportId }: UpdateReportContentParams,
      data: UpdateReportContentRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportContentResponse, ProblemResponse>({
        path: `/reports/${reportId}/content`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  reportConfigs = {
    /**
     * @description Adds a report config (members): its sections in order, their titles and extra questions.
     *
     * @tags reports
     * @name CreateReportConfig
     * @summary Adds a report config (members): its sections in order, their titles and extra questions
     * @request POST:/report-configs
     * @secure
     * @response `201` `ReportConfigResponse`
     * @response `400` `ProblemResponse` validation_failed, report_config_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` report_config_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createReportConfig: (
      data: CreateReportConfigRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportConfigResponse, ProblemResponse>({
        path: `/report-configs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a report config (members); reports and settings that named it keep working without it.
     *
     * @tags reports
     * @name DeleteReportConfig
     * @summary Deletes a report config (members); reports and settings that named it keep working without it
     * @request DELETE:/report-configs/{config_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the report_config {config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteReportConfig: (
      { configId }: DeleteReportConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/report-configs/${configId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One report config (viewers).
     *
     * @tags reports
     * @name GetReportConfig
     * @summary One report config (viewers)
     * @request GET:/report-configs/{config_id}
     * @secure
     * @response `200` `ReportConfigResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the report_config {config_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportConfig: (
      { configId }: GetReportConfigParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportConfigResponse, ProblemResponse>({
        path: `/report-configs/${configId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description A starting config as commented YAML: every built-in section in the default order (any authenticated user).
     *
     * @tags reports
     * @name GetReportConfigTemplate
     * @summary A starting config as commented YAML: every built-in section in the default order (any authenticated user)
     * @request GET:/report-configs/template
     * @secure
     * @response `200` `string` The template as YAML
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportConfigTemplate: (params: RequestParams = {}) =>
      this.request<string, ProblemResponse>({
        path: `/report-configs/template`,
        method: "GET",
        secure: true,
        ...params,
      }),

    /**
     * @description The workspace's report configs by name (viewers).
     *
     * @tags reports
     * @name ListReportConfigs
     * @summary The workspace's report configs by name (viewers)
     * @request GET:/report-configs
     * @secure
     * @response `200` `(ReportConfigSummary)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReportConfigs: (
      query: ListReportConfigsParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportConfigSummary[], ProblemResponse>({
        path: `/report-configs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  reportSettings = {
    /**
     * @description Falls back to the built-in prompt (admins).
     *
     * @tags reports
     * @name DeleteReportPrompt
     * @summary Falls back to the built-in prompt (admins)
     * @request DELETE:/report-settings/prompts/{section_key}
     * @secure
     * @response `204` `void` The built-in prompt applies again
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` report_section_key_unknown The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteReportPrompt: (
      { sectionKey, ...query }: DeleteReportPromptParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/report-settings/prompts/${sectionKey}`,
        method: "DELETE",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description One section's prompt in effect (viewers).
     *
     * @tags reports
     * @name GetReportPrompt
     * @summary One section's prompt in effect (viewers)
     * @request GET:/report-settings/prompts/{section_key}
     * @secure
     * @response `200` `ReportSectionPromptResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` report_section_key_unknown The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportPrompt: (
      { sectionKey, ...query }: GetReportPromptParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportSectionPromptResponse, ProblemResponse>({
        path: `/report-settings/prompts/${sectionKey}`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's report defaults: config, judge and formats (viewers).
     *
     * @tags reports
     * @name GetReportSettings
     * @summary The workspace's report defaults: config, judge and formats (viewers)
     * @request GET:/report-settings
     * @secure
     * @response `200` `ReportSettingsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReportSettings: (
      query: GetReportSettingsParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportSettingsResponse, ProblemResponse>({
        path: `/report-settings`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every section's prompt in effect, built-in or the workspace's own (viewers).
     *
     * @tags reports
     * @name ListReportPrompts
     * @summary Every section's prompt in effect, built-in or the workspace's own (viewers)
     * @request GET:/report-settings/prompts
     * @secure
     * @response `200` `(ReportSectionPromptResponse)[]`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReportPrompts: (
      query: ListReportPromptsParams,
      params: RequestParams = {},
    ) =>
      this.request<ReportSectionPromptResponse[], ProblemResponse>({
        path: `/report-settings/prompts`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Replaces a section's prompt for the workspace (admins).
     *
     * @tags reports
     * @name ReplaceReportPrompt
     * @summary Replaces a section's prompt for the workspace (admins)
     * @request PUT:/report-settings/prompts/{section_key}
     * @secure
     * @response `200` `ReportSectionPromptResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` report_section_key_unknown The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    replaceReportPrompt: (
      { sectionKey }: ReplaceReportPromptParams,
      data: PutSectionPromptRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportSectionPromptResponse, ProblemResponse>({
        path: `/report-settings/prompts/${sectionKey}`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes the workspace's report defaults (admins); members left out keep their value.
     *
     * @tags reports
     * @name UpdateReportSettings
     * @summary Changes the workspace's report defaults (admins); members left out keep their value
     * @request PUT:/report-settings
     * @secure
     * @response `200` `ReportSettingsResponse`
     * @response `400` `ProblemResponse` validation_failed, report_settings_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateReportSettings: (
      data: UpdateReportSettingsRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReportSettingsResponse, ProblemResponse>({
        path: `/report-settings`,
        method: "PUT",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  reviewQueues = {
    /**
     * @description Adds items by a filter (optionally a seeded sample), by ids, or from a run's failures; items the queue has are skipped (members).
     *
     * @tags review
     * @name AddReviewItems
     * @summary Adds items by a filter (optionally a seeded sample), by ids, or from a run's failures; items the queue has are skipped (members)
     * @request POST:/review-queues/{queue_id}/items
     * @secure
     * @response `200` `AddReviewItemsResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` queue_closed
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    addReviewItems: (
      { queueId }: AddReviewItemsParams,
      data: AddReviewItemsRequest,
      params: RequestParams = {},
    ) =>
      this.request<AddReviewItemsResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The final label of an item in disagreement (admins and the queue's adjudicators).
     *
     * @tags review
     * @name AdjudicateReviewItem
     * @summary The final label of an item in disagreement (admins and the queue's adjudicators)
     * @request POST:/review-queues/{queue_id}/items/{item_id}/adjudication
     * @secure
     * @response `200` `ReviewItemResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` not_an_adjudicator Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` not_in_disagreement
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` label_invalid
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    adjudicateReviewItem: (
      { queueId, itemId }: AdjudicateReviewItemParams,
      data: AdjudicateRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewItemResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items/${itemId}/adjudication`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Cancels a queued or running judge run (members): no further judge calls; it ends `cancelled` and records no validation.
     *
     * @tags review
     * @name CancelReviewJudgeRun
     * @summary Cancels a queued or running judge run (members): no further judge calls; it ends `cancelled` and records no validation
     * @request POST:/review-queues/{queue_id}/judge-runs/{judge_run_id}:cancel
     * @secure
     * @response `200` `ReviewJudgeRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` judge_run_finished
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    cancelReviewJudgeRun: (
      { queueId, judgeRunId, cancel }: CancelReviewJudgeRunParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewJudgeRunResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/judge-runs/${judgeRunId}${cancel}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The next item for the caller to label, on a lease, with the rubric; 204 when nothing is left for the caller (members on the reviewer list).
     *
     * @tags review
     * @name ClaimNextReviewItem
     * @summary The next item for the caller to label, on a lease, with the rubric; 204 when nothing is left for the caller (members on the reviewer list)
     * @request POST:/review-queues/{queue_id}/items:next
     * @secure
     * @response `200` `LeasedItemResponse`
     * @response `204` `void` No item needs a label from the caller
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` not_a_reviewer Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` queue_closed
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    claimNextReviewItem: (
      { queueId, next }: ClaimNextReviewItemParams,
      params: RequestParams = {},
    ) =>
      this.request<LeasedItemResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items${next}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates a queue with its rubric (version 1), source, overlap, reviewers and lease length (members).
     *
     * @tags review
     * @name CreateReviewQueue
     * @summary Creates a queue with its rubric (version 1), source, overlap, reviewers and lease length (members)
     * @request POST:/review-queues
     * @secure
     * @response `201` `ReviewQueueResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createReviewQueue: (
      data: CreateReviewQueueRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewQueueResponse, ProblemResponse>({
        path: `/review-queues`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes a queue with its items and labels (admins).
     *
     * @tags review
     * @name DeleteReviewQueue
     * @summary Deletes a queue with its items and labels (admins)
     * @request DELETE:/review-queues/{queue_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteReviewQueue: (
      { queueId }: DeleteReviewQueueParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/review-queues/${queueId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Edits the caller's own label; the earlier values stay in its history (members).
     *
     * @tags review
     * @name EditReviewLabel
     * @summary Edits the caller's own label; the earlier values stay in its history (members)
     * @request PATCH:/review-queues/{queue_id}/items/{item_id}/labels/mine
     * @secure
     * @response `200` `ReviewLabelResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` label_invalid
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    editReviewLabel: (
      { queueId, itemId }: EditReviewLabelParams,
      data: SubmitLabelRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewLabelResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items/${itemId}/labels/mine`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Writes the final labels as a new candidate version of a test-case dataset, as label columns of the source dataset's rows, or (a traces queue, `ground_truth`) as the trace version's next ground truth (members).
     *
     * @tags review
     * @name ExportReviewLabels
     * @summary Writes the final labels as a new candidate version of a test-case dataset, as label columns of the source dataset's rows, or (a traces queue, `ground_truth`) as the trace version's next ground truth (members)
     * @request POST:/review-queues/{queue_id}/exports
     * @secure
     * @response `201` `ReviewExportResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` nothing_to_export, export_target_invalid
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` export_field_invalid
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportReviewLabels: (
      { queueId }: ExportReviewLabelsParams,
      data: ReviewExportRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewExportResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/exports`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description The reviewers' agreement per rubric field, with seeded bootstrap intervals over items (viewers).
     *
     * @tags review
     * @name GetReviewAgreement
     * @summary The reviewers' agreement per rubric field, with seeded bootstrap intervals over items (viewers)
     * @request GET:/review-queues/{queue_id}/agreement
     * @secure
     * @response `200` `AgreementResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReviewAgreement: (
      { queueId, ...query }: GetReviewAgreementParams,
      params: RequestParams = {},
    ) =>
      this.request<AgreementResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/agreement`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One judge run (viewers): poll it until `succeeded` (then `validation_id` names the validation), `failed` or `cancelled`. The Location of POST …/judge-runs.
     *
     * @tags review
     * @name GetReviewJudgeRun
     * @summary One judge run (viewers): poll it until `succeeded` (then `validation_id` names the validation), `failed` or `cancelled`
     * @request GET:/review-queues/{queue_id}/judge-runs/{judge_run_id}
     * @secure
     * @response `200` `ReviewJudgeRunResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReviewJudgeRun: (
      { queueId, judgeRunId }: GetReviewJudgeRunParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewJudgeRunResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/judge-runs/${judgeRunId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One queue with its current rubric and item counts (viewers).
     *
     * @tags review
     * @name GetReviewQueue
     * @summary One queue with its current rubric and item counts (viewers)
     * @request GET:/review-queues/{queue_id}
     * @secure
     * @response `200` `ReviewQueueResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getReviewQueue: (
      { queueId }: GetReviewQueueParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewQueueResponse, ProblemResponse>({
        path: `/review-queues/${queueId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Items in disagreement with every reviewer's labels (admins and the queue's adjudicators).
     *
     * @tags review
     * @name ListReviewDisagreements
     * @summary Items in disagreement with every reviewer's labels (admins and the queue's adjudicators)
     * @request GET:/review-queues/{queue_id}/disagreements
     * @secure
     * @response `200` `DisagreementResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` not_an_adjudicator Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewDisagreements: (
      { queueId, ...query }: ListReviewDisagreementsParams,
      params: RequestParams = {},
    ) =>
      this.request<DisagreementResponsePage, ProblemResponse>({
        path: `/review-queues/${queueId}/disagreements`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The final labels, in queue order (viewers).
     *
     * @tags review
     * @name ListReviewFinalLabels
     * @summary The final labels, in queue order (viewers)
     * @request GET:/review-queues/{queue_id}/labels
     * @secure
     * @response `200` `FinalLabelResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewFinalLabels: (
      { queueId, ...query }: ListReviewFinalLabelsParams,
      params: RequestParams = {},
    ) =>
      this.request<FinalLabelResponsePage, ProblemResponse>({
        path: `/review-queues/${queueId}/labels`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The queue's items in queue order, with their state and final label, never the reviewers' labels (viewers).
     *
     * @tags review
     * @name ListReviewItems
     * @summary The queue's items in queue order, with their state and final label, never the reviewers' labels (viewers)
     * @request GET:/review-queues/{queue_id}/items
     * @secure
     * @response `200` `ReviewItemResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewItems: (
      { queueId, ...query }: ListReviewItemsParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewItemResponsePage, ProblemResponse>({
        path: `/review-queues/${queueId}/items`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The queue's judge runs, newest first (viewers).
     *
     * @tags review
     * @name ListReviewJudgeRuns
     * @summary The queue's judge runs, newest first (viewers)
     * @request GET:/review-queues/{queue_id}/judge-runs
     * @secure
     * @response `200` `ReviewJudgeRunResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewJudgeRuns: (
      { queueId, ...query }: ListReviewJudgeRunsParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewJudgeRunResponsePage, ProblemResponse>({
        path: `/review-queues/${queueId}/judge-runs`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's review queues, newest first (viewers); `state` filters.
     *
     * @tags review
     * @name ListReviewQueues
     * @summary The workspace's review queues, newest first (viewers); `state` filters
     * @request GET:/review-queues
     * @secure
     * @response `200` `ReviewQueueResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewQueues: (
      query: ListReviewQueuesParams,
      params: RequestParams = {},
    ) =>
      this.request<ReviewQueueResponsePage, ProblemResponse>({
        path: `/review-queues`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every rubric version of the queue, oldest first (viewers).
     *
     * @tags review
     * @name ListReviewRubricVersions
     * @summary Every rubric version of the queue, oldest first (viewers)
     * @request GET:/review-queues/{queue_id}/rubric-versions
     * @secure
     * @response `200` `RubricVersionList`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listReviewRubricVersions: (
      { queueId }: ListReviewRubricVersionsParams,
      params: RequestParams = {},
    ) =>
      this.request<RubricVersionList, ProblemResponse>({
        path: `/review-queues/${queueId}/rubric-versions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Releases the caller's lease on an item without labelling it (members).
     *
     * @tags review
     * @name ReleaseReviewLease
     * @summary Releases the caller's lease on an item without labelling it (members)
     * @request DELETE:/review-queues/{queue_id}/items/{item_id}/lease
     * @secure
     * @response `204` `void` Released
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` no_lease
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    releaseReviewLease: (
      { queueId, itemId }: ReleaseReviewLeaseParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/review-queues/${queueId}/items/${itemId}/lease`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description Skips an item the caller holds, with an optional reason: its slot goes to someone else (members).
     *
     * @tags review
     * @name SkipReviewItem
     * @summary Skips an item the caller holds, with an optional reason: its slot goes to someone else (members)
     * @request POST:/review-queues/{queue_id}/items/{item_id}:skip
     * @secure
     * @response `201` `ReviewLabelResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` no_lease, already_labelled
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    skipReviewItem: (
      { queueId, itemId, skip }: SkipReviewItemParams,
      data: SkipItemRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewLabelResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items/${itemId}${skip}`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Applies a judged metric config version's judge to the queue's finally labelled items, as a tracked job that records a judge validation (members).
     *
     * @tags review
     * @name StartReviewJudgeRun
     * @summary Applies a judged metric config version's judge to the queue's finally labelled items, as a tracked job that records a judge validation (members)
     * @request POST:/review-queues/{queue_id}/judge-runs
     * @secure
     * @response `201` `ReviewJudgeRunResponse`
     * @response `202` `ReviewJudgeRunResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` judge_run_metric_invalid, judge_run_field_invalid
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startReviewJudgeRun: (
      { queueId }: StartReviewJudgeRunParams,
      data: StartReviewJudgeRunRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewJudgeRunResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/judge-runs`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Submits the caller's label on an item they hold a lease on (members).
     *
     * @tags review
     * @name SubmitReviewLabel
     * @summary Submits the caller's label on an item they hold a lease on (members)
     * @request POST:/review-queues/{queue_id}/items/{item_id}/labels
     * @secure
     * @response `201` `ReviewLabelResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` no_lease, already_labelled, queue_closed
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` label_invalid
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    submitReviewLabel: (
      { queueId, itemId }: SubmitReviewLabelParams,
      data: SubmitLabelRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewLabelResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/items/${itemId}/labels`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes a queue (members); a new rubric becomes the next rubric version.
     *
     * @tags review
     * @name UpdateReviewQueue
     * @summary Changes a queue (members); a new rubric becomes the next rubric version
     * @request PATCH:/review-queues/{queue_id}
     * @secure
     * @response `200` `ReviewQueueResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateReviewQueue: (
      { queueId }: UpdateReviewQueueParams,
      data: UpdateReviewQueueRequest,
      params: RequestParams = {},
    ) =>
      this.request<ReviewQueueResponse, ProblemResponse>({
        path: `/review-queues/${queueId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Validates a judged metric of a run against the queue's final labels of a rubric field (members): each finally labelled row's verdict pairs with the judge's, each reviewer's label goes along as the reviewers' agreement (the ceiling a judge can reach), and the validation is kept with the metric's config version, as POST /runs/{run_id}/judge-validations keeps it.
     *
     * @tags review
     * @name ValidateJudgeWithReviewQueue
     * @summary Validates a judged metric of a run against the queue's final labels of a rubric field (members): each finally labelled row's verdict pairs with the judge's, each reviewer's label goes along as the reviewers' agreement (the ceiling a judge can reach), and the validation is kept with the metric's config version, as POST /runs/{run_id}/judge-validations keeps it
     * @request POST:/review-queues/{queue_id}/judge-validations
     * @secure
     * @response `201` `JudgeValidationResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the review_queue {queue_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` no_final_labels
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `422` `ProblemResponse` judge_validation_source_invalid, rubric_field_not_rated, validation_metric_invalid, validation_no_overlap, validation_too_few_pairs, validation_too_many_pairs
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    validateJudgeWithReviewQueue: (
      { queueId }: ValidateJudgeWithReviewQueueParams,
      data: ValidateJudgeWithQueueRequest,
      params: RequestParams = {},
    ) =>
      this.request<JudgeValidationResponse, ProblemResponse>({
        path: `/review-queues/${queueId}/judge-validations`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  onlineEvaluators = {
    /**
     * @description Makes an alert rule on one of the evaluator's metrics and queues its first check (members).
     *
     * @tags online alerts
     * @name CreateOnlineAlertRule
     * @summary Makes an alert rule on one of the evaluator's metrics and queues its first check (members)
     * @request POST:/online-evaluators/{evaluator_id}/alert-rules
     * @secure
     * @response `201` `AlertRuleResponse`
     * @response `400` `ProblemResponse` alert_rule_invalid, validation_failed
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` alert_rule_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createOnlineAlertRule: (
      { evaluatorId }: CreateOnlineAlertRuleParams,
      data: CreateAlertRuleRequest,
      params: RequestParams = {},
    ) =>
      this.request<AlertRuleResponse, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/alert-rules`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Creates an evaluator on a trace dataset (members): what lands from now on is sampled and scored; earlier traces take a backfill.
     *
     * @tags online evaluation
     * @name CreateOnlineEvaluator
     * @summary Creates an evaluator on a trace dataset (members): what lands from now on is sampled and scored; earlier traces take a backfill
     * @request POST:/online-evaluators
     * @secure
     * @response `201` `OnlineEvaluatorResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in workspace_id in the body (workspace_id)
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` online_evaluator_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    createOnlineEvaluator: (
      data: CreateOnlineEvaluatorRequest,
      params: RequestParams = {},
    ) =>
      this.request<OnlineEvaluatorResponse, ProblemResponse>({
        path: `/online-evaluators`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Deletes an evaluator with its ledger and backfills (admins); the scores it recorded stay with the traces.
     *
     * @tags online evaluation
     * @name DeleteOnlineEvaluator
     * @summary Deletes an evaluator with its ledger and backfills (admins); the scores it recorded stay with the traces
     * @request DELETE:/online-evaluators/{evaluator_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteOnlineEvaluator: (
      { evaluatorId }: DeleteOnlineEvaluatorParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One evaluator with its current version, status, progress and targets by state (viewers).
     *
     * @tags online evaluation
     * @name GetOnlineEvaluator
     * @summary One evaluator with its current version, status, progress and targets by state (viewers)
     * @request GET:/online-evaluators/{evaluator_id}
     * @secure
     * @response `200` `OnlineEvaluatorResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getOnlineEvaluator: (
      { evaluatorId }: GetOnlineEvaluatorParams,
      params: RequestParams = {},
    ) =>
      this.request<OnlineEvaluatorResponse, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The evaluator's alert rules with their alerts' state, newest first (viewers).
     *
     * @tags online alerts
     * @name ListOnlineAlertRules
     * @summary The evaluator's alert rules with their alerts' state, newest first (viewers)
     * @request GET:/online-evaluators/{evaluator_id}/alert-rules
     * @secure
     * @response `200` `AlertRuleResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineAlertRules: (
      { evaluatorId, ...query }: ListOnlineAlertRulesParams,
      params: RequestParams = {},
    ) =>
      this.request<AlertRuleResponsePage, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/alert-rules`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The evaluator's backfills, newest first (viewers).
     *
     * @tags online evaluation
     * @name ListOnlineBackfills
     * @summary The evaluator's backfills, newest first (viewers)
     * @request GET:/online-evaluators/{evaluator_id}/backfills
     * @secure
     * @response `200` `BackfillResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineBackfills: (
      { evaluatorId, ...query }: ListOnlineBackfillsParams,
      params: RequestParams = {},
    ) =>
      this.request<BackfillResponsePage, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/backfills`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The workspace's evaluators, newest first (viewers); `dataset_id` and `state` filter.
     *
     * @tags online evaluation
     * @name ListOnlineEvaluators
     * @summary The workspace's evaluators, newest first (viewers); `dataset_id` and `state` filter
     * @request GET:/online-evaluators
     * @secure
     * @response `200` `OnlineEvaluatorResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in workspace in query workspace_id
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineEvaluators: (
      query: ListOnlineEvaluatorsParams,
      params: RequestParams = {},
    ) =>
      this.request<OnlineEvaluatorResponsePage, ProblemResponse>({
        path: `/online-evaluators`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The targets the evaluator took (sampled spans, traces or sessions), newest first, with their state (viewers).
     *
     * @tags online evaluation
     * @name ListOnlineEvaluatorTargets
     * @summary The targets the evaluator took (sampled spans, traces or sessions), newest first, with their state (viewers)
     * @request GET:/online-evaluators/{evaluator_id}/targets
     * @secure
     * @response `200` `EvaluatorTargetResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineEvaluatorTargets: (
      { evaluatorId, ...query }: ListOnlineEvaluatorTargetsParams,
      params: RequestParams = {},
    ) =>
      this.request<EvaluatorTargetResponsePage, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/targets`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Every version of the evaluator, newest first (viewers).
     *
     * @tags online evaluation
     * @name ListOnlineEvaluatorVersions
     * @summary Every version of the evaluator, newest first (viewers)
     * @request GET:/online-evaluators/{evaluator_id}/versions
     * @secure
     * @response `200` `EvaluatorVersionList`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineEvaluatorVersions: (
      { evaluatorId }: ListOnlineEvaluatorVersionsParams,
      params: RequestParams = {},
    ) =>
      this.request<EvaluatorVersionList, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/versions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Scores the traces of a past time range with the current version, each once, as a tracked job (members).
     *
     * @tags online evaluation
     * @name StartOnlineBackfill
     * @summary Scores the traces of a past time range with the current version, each once, as a tracked job (members)
     * @request POST:/online-evaluators/{evaluator_id}/backfills
     * @secure
     * @response `201` `BackfillResponse`
     * @response `202` `BackfillResponse` Accepted: the work runs asynchronously; poll the Location for its state.
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    startOnlineBackfill: (
      { evaluatorId }: StartOnlineBackfillParams,
      data: CreateBackfillRequest,
      params: RequestParams = {},
    ) =>
      this.request<BackfillResponse, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}/backfills`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes an evaluator (members): pause or resume it, rename it, or change what it scores (its next version).
     *
     * @tags online evaluation
     * @name UpdateOnlineEvaluator
     * @summary Changes an evaluator (members): pause or resume it, rename it, or change what it scores (its next version)
     * @request PATCH:/online-evaluators/{evaluator_id}
     * @secure
     * @response `200` `OnlineEvaluatorResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_evaluator {evaluator_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` online_evaluator_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateOnlineEvaluator: (
      { evaluatorId }: UpdateOnlineEvaluatorParams,
      data: UpdateOnlineEvaluatorRequest,
      params: RequestParams = {},
    ) =>
      this.request<OnlineEvaluatorResponse, ProblemResponse>({
        path: `/online-evaluators/${evaluatorId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  onlineBackfills = {
    /**
     * @description Cancels a queued or running backfill (members); what it scored keeps its scores.
     *
     * @tags online evaluation
     * @name CancelOnlineBackfill
     * @summary Cancels a queued or running backfill (members); what it scored keeps its scores
     * @request POST:/online-backfills/{backfill_id}:cancel
     * @secure
     * @response `200` `BackfillResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_backfill {backfill_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    cancelOnlineBackfill: (
      { backfillId, cancel }: CancelOnlineBackfillParams,
      params: RequestParams = {},
    ) =>
      this.request<BackfillResponse, ProblemResponse>({
        path: `/online-backfills/${backfillId}${cancel}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description One backfill with its progress (viewers): poll it until `succeeded`, `failed` or `cancelled`.
     *
     * @tags online evaluation
     * @name GetOnlineBackfill
     * @summary One backfill with its progress (viewers): poll it until `succeeded`, `failed` or `cancelled`
     * @request GET:/online-backfills/{backfill_id}
     * @secure
     * @response `200` `BackfillResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_backfill {backfill_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getOnlineBackfill: (
      { backfillId }: GetOnlineBackfillParams,
      params: RequestParams = {},
    ) =>
      this.request<BackfillResponse, ProblemResponse>({
        path: `/online-backfills/${backfillId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  onlineAlertRules = {
    /**
     * @description Deletes an alert rule with its history (admins).
     *
     * @tags online alerts
     * @name DeleteOnlineAlertRule
     * @summary Deletes an alert rule with its history (admins)
     * @request DELETE:/online-alert-rules/{alert_rule_id}
     * @secure
     * @response `204` `void` Deleted
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: admin or above in the workspace of the online_alert_rule {alert_rule_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    deleteOnlineAlertRule: (
      { alertRuleId }: DeleteOnlineAlertRuleParams,
      params: RequestParams = {},
    ) =>
      this.request<void, ProblemResponse>({
        path: `/online-alert-rules/${alertRuleId}`,
        method: "DELETE",
        secure: true,
        ...params,
      }),

    /**
     * @description One alert rule with its alert's state and last evaluation (viewers).
     *
     * @tags online alerts
     * @name GetOnlineAlertRule
     * @summary One alert rule with its alert's state and last evaluation (viewers)
     * @request GET:/online-alert-rules/{alert_rule_id}
     * @secure
     * @response `200` `AlertRuleResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_alert_rule {alert_rule_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    getOnlineAlertRule: (
      { alertRuleId }: GetOnlineAlertRuleParams,
      params: RequestParams = {},
    ) =>
      this.request<AlertRuleResponse, ProblemResponse>({
        path: `/online-alert-rules/${alertRuleId}`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The rule's firings and resolutions with their evidence, newest first (viewers).
     *
     * @tags online alerts
     * @name ListOnlineAlertEvents
     * @summary The rule's firings and resolutions with their evidence, newest first (viewers)
     * @request GET:/online-alert-rules/{alert_rule_id}/events
     * @secure
     * @response `200` `AlertEventResponsePage`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: viewer or above in the workspace of the online_alert_rule {alert_rule_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listOnlineAlertEvents: (
      { alertRuleId, ...query }: ListOnlineAlertEventsParams,
      params: RequestParams = {},
    ) =>
      this.request<AlertEventResponsePage, ProblemResponse>({
        path: `/online-alert-rules/${alertRuleId}/events`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Checks the rule now as its schedule does (members): the evaluation, and the alert's state moved by it.
     *
     * @tags online alerts
     * @name RunOnlineAlertCheck
     * @summary Checks the rule now as its schedule does (members): the evaluation, and the alert's state moved by it
     * @request POST:/online-alert-rules/{alert_rule_id}:check
     * @secure
     * @response `200` `AlertCheckResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_alert_rule {alert_rule_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` The change conflicts with the current state (a duplicate name, a record still in use)
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    runOnlineAlertCheck: (
      { alertRuleId, check }: RunOnlineAlertCheckParams,
      params: RequestParams = {},
    ) =>
      this.request<AlertCheckResponse, ProblemResponse>({
        path: `/online-alert-rules/${alertRuleId}${check}`,
        method: "POST",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description Changes an alert rule (members); a change of its statistics starts the alert again from ok.
     *
     * @tags online alerts
     * @name UpdateOnlineAlertRule
     * @summary Changes an alert rule (members); a change of its statistics starts the alert again from ok
     * @request PATCH:/online-alert-rules/{alert_rule_id}
     * @secure
     * @response `200` `AlertRuleResponse`
     * @response `400` `ProblemResponse` alert_rule_invalid, validation_failed
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: member or above in the workspace of the online_alert_rule {alert_rule_id}
     * @response `404` `ProblemResponse` The workspace or record does not exist
     * @response `409` `ProblemResponse` alert_rule_name_taken
     * @response `413` `ProblemResponse` The body exceeds the documented size limit
     * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    updateOnlineAlertRule: (
      { alertRuleId }: UpdateOnlineAlertRuleParams,
      data: UpdateAlertRuleRequest,
      params: RequestParams = {},
    ) =>
      this.request<AlertRuleResponse, ProblemResponse>({
        path: `/online-alert-rules/${alertRuleId}`,
        method: "PATCH",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
  auditEvents = {
    /**
     * @description Every system audit event the filters match, streamed as JSON Lines or CSV (system admins). Audited as audit_log.exported.
     *
     * @tags audit
     * @name ExportSystemAuditEvents
     * @summary Every system audit event the filters match, streamed as JSON Lines or CSV (system admins)
     * @request GET:/audit-events/export
     * @secure
     * @response `200` `string` The events, newest first: JSON Lines (`format=jsonl`, the default) or CSV (`format=csv`)
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    exportSystemAuditEvents: (
      query: ExportSystemAuditEventsParams = {},
      params: RequestParams = {},
    ) =>
      this.request<string, ProblemResponse>({
        path: `/audit-events/export`,
        method: "GET",
        query: query,
        secure: true,
        ...params,
      }),

    /**
     * @description The system's own audit events, those of no workspace (users created and changed, logins, system roles, branding), newest first, by cursor (system admins).
     *
     * @tags audit
     * @name ListSystemAuditEvents
     * @summary The system's own audit events, those of no workspace (users created and changed, logins, system roles, branding), newest first, by cursor (system admins)
     * @request GET:/audit-events
     * @secure
     * @response `200` `AuditEventPageResponse`
     * @response `400` `ProblemResponse` validation_failed, audit_cursor_invalid
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `403` `ProblemResponse` Allowed: system admin (a user's token, not an API key)
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSystemAuditEvents: (
      query: ListSystemAuditEventsParams = {},
      params: RequestParams = {},
    ) =>
      this.request<AuditEventPageResponse, ProblemResponse>({
        path: `/audit-events`,
        method: "GET",
        query: query,
        secure: true,
        format: "json",
        ...params,
      }),
  };
  sdk = {
    /**
     * @description The sources of the TypeScript SDK package (@ews/sdk) of this version, its client generated from the service's OpenAPI document, as files (any authenticated user).
     *
     * @tags sdk
     * @name DownloadSdk
     * @summary The sources of the TypeScript SDK package (@ews/sdk) of this version, its client generated from the service's OpenAPI document, as files (any authenticated user)
     * @request GET:/sdk/versions/{version}/download
     * @secure
     * @response `200` `BundleResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `404` `ProblemResponse` sdk_version_not_found; `available` lists the versions
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadSdk: ({ version }: DownloadSdkParams, params: RequestParams = {}) =>
      this.request<BundleResponse, ProblemResponse>({
        path: `/sdk/versions/${version}/download`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),

    /**
     * @description The TypeScript SDK package (@ews/sdk) of this version built, as `npm pack` makes it: `npm install ./ews-sdk-<version>.tgz` (any authenticated user).
     *
     * @tags sdk
     * @name DownloadSdkPackage
     * @summary The TypeScript SDK package (@ews/sdk) of this version built, as `npm pack` makes it: `npm install ./ews-sdk-<version>.tgz` (any authenticated user)
     * @request GET:/sdk/versions/{version}/package.tgz
     * @secure
     * @response `200` `File` The npm package tarball
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `404` `ProblemResponse` sdk_version_not_found; `available` lists the versions
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` sdk_package_missing: the service was built without packing the SDK; service_unavailable: the database does not answer (Retry-After)
     */
    downloadSdkPackage: (
      { version }: DownloadSdkPackageParams,
      params: RequestParams = {},
    ) =>
      this.request<Blob, ProblemResponse>({
        path: `/sdk/versions/${version}/package.tgz`,
        method: "GET",
        secure: true,
        ...params,
      }),

    /**
     * @description The client SDK versions with their download paths (any authenticated user).
     *
     * @tags sdk
     * @name ListSdkVersions
     * @summary The client SDK versions with their download paths (any authenticated user)
     * @request GET:/sdk/versions
     * @secure
     * @response `200` `SdkVersionsResponse`
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    listSdkVersions: (params: RequestParams = {}) =>
      this.request<SdkVersionsResponse, ProblemResponse>({
        path: `/sdk/versions`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  examples = {
    /**
     * @description Example datasets (CSV, JSONL), eval configs and a script that runs a whole evaluation against the service (any authenticated user).
     *
     * @tags sdk
     * @name DownloadExamples
     * @summary Example datasets (CSV, JSONL), eval configs and a script that runs a whole evaluation against the service (any authenticated user)
     * @request GET:/examples/versions/{version}/download
     * @secure
     * @response `200` `BundleResponse`
     * @response `400` `ProblemResponse` The request failed validation (body, query or path); `errors` lists each offending field
     * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
     * @response `404` `ProblemResponse` sdk_version_not_found; `available` lists the versions
     * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
     * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
     */
    downloadExamples: (
      { version }: DownloadExamplesParams,
      params: RequestParams = {},
    ) =>
      this.request<BundleResponse, ProblemResponse>({
        path: `/examples/versions/${version}/download`,
        method: "GET",
        secure: true,
        format: "json",
        ...params,
      }),
  };
  mcp = {
    /**
 * @description One MCP message (initialize, tools/list, tools/call, resources/read, prompts/get, …) of the 2026-07-28 revision or of the 2025 revisions (served statelessly). The answer is the JSON-RPC response, as JSON or as a Server-Sent Events stream when the client accepts one and the server sends messages before it. A tool the caller's role does not allow, or a record of another workspace, answers a tool error naming the API's refusal. GET and DELETE (the 2025 revisions' server stream and session end) answer 405: nothing is kept between requests.
 *
 * @tags mcp
 * @name SendMcpMessage
 * @summary One MCP message (initialize, tools/list, tools/call, resources/read, prompts/get, …) of the 2026-07-28 revision or of the 2025 revisions (served statelessly)
 * @request POST:/mcp
 * @secure
 * @response `200` `{
  /** Responses: the JSON-RPC error (code, message, data) *\/
    error?: Record<string,any>,
  /** Request id (absent in notifications) *\/
    id?: (string | number),
    jsonrpc: "2.0",
  /**
   * Requests and notifications: the method
   * @maxLength 200
   *\/
    method?: string,
  /** Requests: the method's parameters *\/
    params?: Record<string,any>,
  /** Responses: the result *\/
    result?: Record<string,any>,

}` The JSON-RPC response (or a text/event-stream carrying it)
 * @response `202` `void` A notification (or a response) the client sent: accepted, no body
 * @response `400` `ProblemResponse` malformed_json (the body is not JSON), mcp_message_invalid (not a JSON-RPC message the server accepts: the problem carries the JSON-RPC error response too, `jsonrpc`, `id` and `error`)
 * @response `401` `ProblemResponse` Missing, invalid, expired or revoked token
 * @response `406` `ProblemResponse` mcp_not_acceptable: the Accept header admits neither application/json nor text/event-stream
 * @response `413` `ProblemResponse` The body exceeds the documented size limit
 * @response `415` `ProblemResponse` The Content-Type is not one this operation accepts
 * @response `429` `ProblemResponse` rate_limit_exceeded: more requests of this operation's class than the caller's quota for the window; retry after the seconds in Retry-After
 * @response `503` `ProblemResponse` The database or the queue does not answer; retry after the seconds in Retry-After
 */
    sendMcpMessage: (data: SendMcpMessagePayload, params: RequestParams = {}) =>
      this.request<
        {
          /** Responses: the JSON-RPC error (code, message, data) */
          error?: Record<string, any>;
          /** Request id (absent in notifications) */
          id?: string | number;
          jsonrpc: "2.0";
          /**
           * Requests and notifications: the method
           * @maxLength 200
           */
          method?: string;
          /** Requests: the method's parameters */
          params?: Record<string, any>;
          /** Responses: the result */
          result?: Record<string, any>;
        },
        ProblemResponse
      >({
        path: `/mcp`,
        method: "POST",
        body: data,
        secure: true,
        type: ContentType.Json,
        format: "json",
        ...params,
      }),
  };
}
