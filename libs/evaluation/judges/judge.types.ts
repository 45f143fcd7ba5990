/**
 * LLM judges: a connection to a grading model, and the rubric that turns its answer into a
 * score. An unparseable verdict is an error, never a score.
 */

export const JUDGE_PROVIDERS = ['openai_compatible', 'azure_openai', 'anthropic'] as const;
export type JudgeProvider = (typeof JUDGE_PROVIDERS)[number];

export interface JudgeConnection {
  provider: JudgeProvider;
  /** openai_compatible: e.g. https://api.openai.com/v1 (`/chat/completions` appended). azure_openai: https://<resource>.openai.azure.com (`/openai/deployments/<deployment>/chat/completions?api-version=` appended). anthropic: https://api.anthropic.com (`/v1/messages` appended). */
  base_url: string;
  /** The model (openai_compatible, anthropic) or the deployment name (azure_openai). */
  model: string;
  /** azure_openai only, e.g. 2024-10-21. */
  api_version?: string | null;
  /** temperature, max_tokens, top_p, seed … passed through; `max_tokens` defaults to 512 (anthropic requires it). */
  parameters: Record<string, unknown>;
  /** Ask for a JSON answer where the provider supports it (response_format json_object on OpenAI-compatible and Azure). */
  json_mode: boolean;
  timeout_ms: number;
  /** Attempts in all on 429, 5xx, timeouts and network errors (backoff doubles from 500 ms, Retry-After honoured). */
  max_attempts: number;
}

/** The secret value (API key), resolved by the caller; `null` when the judge needs none. */
export type JudgeCredential = string | null;

/** How a judged metric grades: a numeric scale or a set of labels. */
export type VerdictScale =
  | { type: 'numeric'; min: number; max: number }
  | {
      type: 'labels';
      labels: string[];
      /** label -> score, e.g. {pass: 1, fail: 0}; defaults to evenly spaced 1 .. 0 in list order. */ scores?: Record<
        string,
        number
      >;
    };

export interface Verdict {
  /** On the scale (numeric) or the label's score. */
  score: number;
  label: string | null;
  reason: string | null;
  /** The score mapped to [0, 1] (min -> 0, max -> 1). */
  normalized: number;
}

export interface JudgeCallResult {
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  attempts: number;
  /** The model's text answer. */
  text: string | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null };
  error: { code: 'timeout' | 'network' | 'http_status' | 'malformed_response' | 'cancelled'; message: string } | null;
  response_excerpt: string | null;
}

export interface GradeResult {
  call: JudgeCallResult;
  /** Present only when the answer parsed into a verdict on the scale. */
  verdict: Verdict | null;
  /** Why there is no verdict: the call failed, or the answer could not be parsed (`unparseable_verdict`), or the score is off the scale (`off_scale`). */
  error: { code: string; message: string } | null;
}

/** What a rubric's placeholders read: {{input}}, {{output}}, {{expected_output}}, {{context}}, {{trajectory}} and {{row.<column>}}. */
export interface GradingContext {
  input?: unknown;
  output: string | null;
  expected_output?: unknown;
  context?: unknown;
  /** The trajectory as rendered for the judge (renderTrajectory), when the rubric names it. */
  trajectory?: string;
  row?: Record<string, unknown>;
}
