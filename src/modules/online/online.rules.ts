import { isDeepStrictEqual } from 'node:util';
import type { TargetLevel, TargetMapping } from '#libs/evaluation/online/targets.js';
import type { EvaluatorSpecFields } from './dto/online.dto.js';
import { targetMapping, type TargetMappingDto } from '../traces/dto/span-mapping.dto.js';

/** What an evaluator version scores and how (kept as given in `online_evaluator_versions.spec`). */
export interface EvaluatorSpec {
  level: TargetLevel;
  filter: Record<string, unknown> | null;
  sampling_rate: number;
  metrics: Array<{ name: string; threshold: number | null }>;
  judge_id: string | null;
  mapping: TargetMapping;
  quiet_seconds: number;
  budget: { judge_calls_per_hour: number | null; cost_per_day_usd: number | null };
  route: { metric: string | null; review_queue_id: string | null; dataset_id: string | null } | null;
}

export const DEFAULT_QUIET_SECONDS = 30;

/** The members of a request that make a version, over the version before (none: a first version's defaults). */
export function specOf(body: EvaluatorSpecFields, previous: EvaluatorSpec | null): EvaluatorSpec {
  const base: EvaluatorSpec = previous ?? {
    level: 'trace',
    filter: null,
    sampling_rate: 1,
    metrics: [],
    judge_id: null,
    mapping: {},
    quiet_seconds: DEFAULT_QUIET_SECONDS,
    budget: { judge_calls_per_hour: null, cost_per_day_usd: null },
    route: null,
  };
  const mapping = targetMapping(body.mapping ?? (base.mapping as TargetMappingDto));
  return {
    level: body.level ?? base.level,
    filter: body.filter === undefined ? base.filter : body.filter,
    sampling_rate: body.sampling_rate ?? base.sampling_rate,
    metrics: body.metrics ? body.metrics.map((m) => ({ name: m.name, threshold: m.threshold ?? null })) : base.metrics,
    judge_id: body.judge_id === undefined ? base.judge_id : body.judge_id,
    mapping,
    quiet_seconds: body.quiet_seconds ?? base.quiet_seconds,
    budget: body.budget
      ? {
          judge_calls_per_hour: body.budget.judge_calls_per_hour ?? null,
          cost_per_day_usd: body.budget.cost_per_day_usd ?? null,
        }
      : base.budget,
    route:
      body.route === undefined
        ? base.route
        : body.route === null
          ? null
          : {
              metric: body.route.metric ?? null,
              review_queue_id: body.route.review_queue_id ?? null,
              dataset_id: body.route.dataset_id ?? null,
            },
  };
}

/** Whether two versions score alike (a PATCH that changes nothing of it makes no version). */
export function sameSpec(a: EvaluatorSpec, b: EvaluatorSpec): boolean {
  return isDeepStrictEqual(a, b);
}

/** Whether a scored target is routed: the route's metric failed (any metric's, when it names none). */
export function isRouted(route: EvaluatorSpec['route'], scores: Record<string, { passed?: boolean | null }>): boolean {
  if (!route || (!route.review_queue_id && !route.dataset_id)) return false;
  const looked = route.metric ? [scores[route.metric]].filter(Boolean) : Object.values(scores);
  return looked.some((s) => s.passed === false);
}
