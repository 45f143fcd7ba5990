import { distance } from 'fastest-levenshtein';
import { RE2 } from 're2-wasm';
import { ajv, compiledSchema, violations } from './json-schema.js';
import { cosine, localEmbed } from './local-embedder.js';
import { bleu, rougeL, tokenF1 } from './text-metrics.js';
import { TRAJECTORY_METRICS } from './trajectory/trajectory-metrics.js';
import type { Trajectory } from './trajectory/trajectory.types.js';

/** What a run knows about one row when it scores it. */
export interface MetricInput {
  /** The system under test's output (null when the call failed). */
  output: string | null;
  expected_output?: string | null;
  input?: string | null;
  context?: string | null;
  latency_ms?: number | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  /** Cost the SUT reported itself, in US dollars. */
  cost_usd?: number | null;
  /** What the agent did (its tool calls and other steps); null when neither its answer nor its trace gave it. */
  trajectory?: Trajectory | null;
  /** The row's data: trajectory metrics read the expected tool calls from a column of it. */
  data?: Record<string, unknown> | null;
}

export interface MetricResult {
  /** The value (similarities in [0, 1]; latency in ms; cost in USD; length in characters or words); null when it cannot be computed. */
  score: number | null;
  /** Against the threshold, when one is configured; else the metric's own verdict, when it has one. */
  passed?: boolean;
  detail?: Record<string, unknown>;
  /** Why there is no score (e.g. the output is missing): an error, never a zero. */
  error?: string;
}

export interface DeterministicMetric {
  name: string;
  description: string;
  /** `higher` when a larger score is better (similarities), `lower` for latency, cost and length. */
  better: 'higher' | 'lower';
  /** JSON Schema of the parameters (also the default threshold). */
  paramsSchema: Record<string, unknown>;
  compute(input: MetricInput, params: Record<string, unknown>): MetricResult;
}

/** A metric's parameters that break its schema. */
export class MetricParamsError extends Error {
  constructor(
    readonly metric: string,
    readonly errors: Array<{ field: string; message: string }>,
  ) {
    super(`invalid parameters for ${metric}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`);
  }
}

const threshold = {
  type: 'number',
  description: 'Pass when the score is at least this (at most, for latency, cost and length)',
};
const textOptions = {
  case_sensitive: { type: 'boolean', default: false },
  normalize_whitespace: { type: 'boolean', default: true },
};

function normalize(text: string, params: Record<string, unknown>): string {
  let t = text.trim();
  if (params.normalize_whitespace !== false) t = t.replace(/\s+/g, ' ');
  if (params.case_sensitive !== true) t = t.toLowerCase();
  return t;
}

function needOutput(input: MetricInput): string | MetricResult {
  return input.output === null || input.output === undefined
    ? { score: null, error: 'the output is missing (the call failed or returned nothing)' }
    : input.output;
}

function needPair(input: MetricInput): [string, string] | MetricResult {
  const output = needOutput(input);
  if (typeof output !== 'string') return output;
  if (input.expected_output === null || input.expected_output === undefined)
    return { score: null, error: 'the row has no expected output (map expected_output)' };
  return [output, input.expected_output];
}

/** The JSON inside an output: the whole text, or the first fenced ```json block when asked to extract one. */
function jsonOf(output: string, extract: boolean): { value?: unknown; error?: string } {
  const fenced = extract ? /```(?:json)?\s*([\s\S]*?)```/i.exec(output)?.[1] : undefined;
  try {
    return { value: JSON.parse(fenced ?? output) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const MAX_REGEX_LENGTH = 1000;

export const DETERMINISTIC_METRICS: readonly DeterministicMetric[] = [
  {
    name: 'exact_match',
    description: 'The output equals the expected output (trimmed; case and whitespace folded unless asked not to)',
    better: 'higher',
    paramsSchema: { type: 'object', properties: { ...textOptions, threshold }, additionalProperties: false },
    compute(input, params) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      return { score: normalize(pair[0], params) === normalize(pair[1], params) ? 1 : 0 };
    },
  },
  {
    name: 'contains',
    description: 'The output contains the expected output (or `substring`)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { ...textOptions, substring: { type: 'string', minLength: 1, maxLength: 10000 }, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const output = needOutput(input);
      if (typeof output !== 'string') return output;
      const needle = (params.substring as string | undefined) ?? input.expected_output;
      if (needle === null || needle === undefined)
        return { score: null, error: 'no substring given and the row has no expected output' };
      return { score: normalize(output, params).includes(normalize(needle, params)) ? 1 : 0 };
    },
  },
  {
    name: 'regex',
    description: 'The output matches `pattern` (RE2 syntax: linear time, no backreferences or lookaround)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, maxLength: MAX_REGEX_LENGTH },
        case_sensitive: { type: 'boolean', default: true },
        threshold,
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    compute(input, params) {
      const output = needOutput(input);
      if (typeof output !== 'string') return output;
      const re = new RE2(params.pattern as string, params.case_sensitive === false ? 'iu' : 'u');
      return { score: re.test(output) ? 1 : 0 };
    },
  },
  {
    name: 'json_valid',
    description: 'The output parses as JSON (with `extract_code_block`, the first ```json block in it)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { extract_code_block: { type: 'boolean', default: false }, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const output = needOutput(input);
      if (typeof output !== 'string') return output;
      const parsed = jsonOf(output, params.extract_code_block === true);
      return parsed.error ? { score: 0, detail: { parse_error: parsed.error } } : { score: 1 };
    },
  },
  {
    name: 'json_schema',
    description: 'The output is JSON valid against `schema` (JSON Schema draft 2020-12 subset Ajv supports)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { schema: { type: 'object' }, extract_code_block: { type: 'boolean', default: false }, threshold },
      required: ['schema'],
      additionalProperties: false,
    },
    compute(input, params) {
      const output = needOutput(input);
      if (typeof output !== 'string') return output;
      const parsed = jsonOf(output, params.extract_code_block === true);
      if (parsed.error) return { score: 0, detail: { parse_error: parsed.error } };
      const validate = compiledSchema(params.schema as object);
      return validate(parsed.value) ? { score: 1 } : { score: 0, detail: { violations: violations(validate) } };
    },
  },
  {
    name: 'levenshtein',
    description: 'Edit similarity: 1 − Levenshtein distance / length of the longer text',
    better: 'higher',
    paramsSchema: { type: 'object', properties: { ...textOptions, threshold }, additionalProperties: false },
    compute(input, params) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      const [a, b] = pair.map((t) => normalize(t, params));
      const longest = Math.max(a.length, b.length);
      const d = distance(a, b);
      return { score: longest ? 1 - d / longest : 1, detail: { distance: d } };
    },
  },
  {
    name: 'token_f1',
    description: 'Token-overlap F1 after SQuAD normalisation (lower case, no punctuation or articles)',
    better: 'higher',
    paramsSchema: { type: 'object', properties: { threshold }, additionalProperties: false },
    compute(input) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      const r = tokenF1(pair[0], pair[1]);
      return { score: r.f1, detail: { precision: r.precision, recall: r.recall } };
    },
  },
  {
    name: 'bleu',
    description: 'Sentence BLEU-4 of the output against the expected output (brevity penalty, smoothing method 1)',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { max_n: { type: 'integer', minimum: 1, maximum: 4, default: 4 }, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      const r = bleu(pair[0], pair[1], (params.max_n as number | undefined) ?? 4);
      return { score: r.bleu, detail: { precisions: r.precisions, brevity_penalty: r.brevity_penalty } };
    },
  },
  {
    name: 'rouge_l',
    description: 'ROUGE-L F1: the longest common token subsequence of output and expected output',
    better: 'higher',
    paramsSchema: { type: 'object', properties: { threshold }, additionalProperties: false },
    compute(input) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      const r = rougeL(pair[0], pair[1]);
      return { score: r.f1, detail: { precision: r.precision, recall: r.recall } };
    },
  },
  {
    name: 'embedding_similarity',
    description:
      'Cosine similarity of output and expected output under the local embedder (character n-grams); clipped at 0',
    better: 'higher',
    paramsSchema: {
      type: 'object',
      properties: { dimensions: { type: 'integer', minimum: 16, maximum: 8192, default: 512 }, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const pair = needPair(input);
      if (!Array.isArray(pair)) return pair;
      const dims = (params.dimensions as number | undefined) ?? 512;
      return { score: Math.max(0, cosine(localEmbed(pair[0], dims), localEmbed(pair[1], dims))) };
    },
  },
  {
    name: 'latency',
    description: 'Milliseconds the system under test took to answer',
    better: 'lower',
    paramsSchema: { type: 'object', properties: { threshold }, additionalProperties: false },
    compute(input) {
      return typeof input.latency_ms === 'number'
        ? { score: input.latency_ms }
        : { score: null, error: 'no latency was recorded' };
    },
  },
  {
    name: 'cost',
    description: 'US dollars of the call: the cost the SUT reported, else tokens times the prices per 1000 tokens',
    better: 'lower',
    paramsSchema: {
      type: 'object',
      properties: {
        prompt_price_per_1k: { type: 'number', minimum: 0 },
        completion_price_per_1k: { type: 'number', minimum: 0 },
        threshold,
      },
      additionalProperties: false,
    },
    compute(input, params) {
      if (typeof input.cost_usd === 'number') return { score: input.cost_usd, detail: { source: 'reported' } };
      const usage = input.usage;
      if (!usage || (params.prompt_price_per_1k === undefined && params.completion_price_per_1k === undefined)) {
        return { score: null, error: 'no reported cost, and no token usage with prices to compute one' };
      }
      const prompt = ((usage.prompt_tokens ?? 0) * ((params.prompt_price_per_1k as number | undefined) ?? 0)) / 1000;
      const completion =
        ((usage.completion_tokens ?? 0) * ((params.completion_price_per_1k as number | undefined) ?? 0)) / 1000;
      return {
        score: prompt + completion,
        detail: { source: 'tokens', prompt_usd: prompt, completion_usd: completion },
      };
    },
  },
  {
    name: 'length',
    description: 'Length of the output in characters (code points) or words',
    better: 'lower',
    paramsSchema: {
      type: 'object',
      properties: { unit: { enum: ['characters', 'words'], default: 'characters' }, threshold },
      additionalProperties: false,
    },
    compute(input, params) {
      const output = needOutput(input);
      if (typeof output !== 'string') return output;
      const words = output.trim() ? output.trim().split(/\s+/).length : 0;
      const characters = [...output].length;
      return { score: params.unit === 'words' ? words : characters, detail: { characters, words } };
    },
  },
  ...TRAJECTORY_METRICS,
];

const byName = new Map(DETERMINISTIC_METRICS.map((m) => [m.name, m]));
const paramValidators = new Map(DETERMINISTIC_METRICS.map((m) => [m.name, ajv.compile(m.paramsSchema)]));

export function deterministicMetric(name: string): DeterministicMetric | undefined {
  return byName.get(name);
}

/** Checks parameters against the metric's schema (and compiles its pattern or schema), throwing MetricParamsError. */
export function validateMetricParams(name: string, params: unknown): Record<string, unknown> {
  const metric = byName.get(name);
  if (!metric)
    throw new MetricParamsError(name, [
      {
        field: 'name',
        message: `is not a deterministic metric; they are ${DETERMINISTIC_METRICS.map((m) => m.name).join(', ')}`,
      },
    ]);
  const validate = paramValidators.get(name)!;
  if (!validate(params)) {
    throw new MetricParamsError(
      name,
      (validate.errors ?? []).map((e) => ({
        field: `params${e.instancePath.replace(/\//g, '.')}`,
        message: e.message ?? 'is invalid',
      })),
    );
  }
  const p = params as Record<string, unknown>;
  try {
    if (name === 'regex') new RE2(p.pattern as string, 'u');
    if (name === 'json_schema' || (name === 'tool_args_match' && p.schema !== undefined))
      ajv.compile(p.schema as object);
  } catch (err) {
    throw new MetricParamsError(name, [
      { field: name === 'regex' ? 'params.pattern' : 'params.schema', message: (err as Error).message },
    ]);
  }
  return p;
}

/** Scores one row; a configured threshold decides `passed` in the metric's better direction. */
export function scoreDeterministic(name: string, input: MetricInput, params: Record<string, unknown>): MetricResult {
  const metric = byName.get(name);
  if (!metric) throw new Error(`unknown deterministic metric ${name}`);
  const result = metric.compute(input, params);
  const limit = params.threshold;
  if (typeof limit === 'number' && result.score !== null)
    result.passed = metric.better === 'higher' ? result.score >= limit : result.score <= limit;
  return result;
}
