/**
 * Whether a diff's changes are real: per metric (and per dimension value) the mean paired delta
 * with a seeded bootstrap interval, a paired test, an effect size and a Holm-corrected verdict.
 * See docs/runs.md "Statistics" for the choices.
 */
import { bootstrapMeanInterval, seedFromText } from '../statistics/bootstrap.js';
import { holmAdjust, mcnemarExact, pairedDifferences, wilcoxonSignedRank } from '../statistics/paired-tests.js';
import type { DiffRow, DiffStatistics, PairedComparison, RunMetricSpec } from './run.types.js';
import { isScore, mean } from './stats.js';

const { hasOwn } = Object;

export const DEFAULT_ALPHA = 0.05;
export const DEFAULT_MIN_ROWS = 10;
export const CONFIDENCE = 0.95;

export interface DiffStatisticsOptions {
  alpha?: number;
  /** Fewer matched pairs than this: `too_few_rows`, no test. */
  minRows?: number;
  /** Identifies the compared runs in the bootstrap seed (e.g. "<base id>:<candidate id>"). */
  seedKey: string;
  /** A row's dimension values (dimension -> value). */
  dimensionsOf?: (rowId: string) => Record<string, string | null> | undefined;
}

/** Which paired values a metric is compared on: 0/1 verdicts for binary metrics, scores otherwise. */
type Measure = 'score' | 'verdict';

interface Pairs {
  base: number[];
  candidate: number[];
}

const asNumber = (v: boolean) => (v ? 1 : 0);

function pairsOf(rows: readonly DiffRow[], metric: string | null, measure: Measure): Pairs {
  const base: number[] = [];
  const candidate: number[] = [];
  for (const row of rows) {
    if (metric === null) {
      // The row verdict under each run's pass rule.
      if (row.base_passed === null || row.candidate_passed === null) continue;
      base.push(asNumber(row.base_passed));
      candidate.push(asNumber(row.candidate_passed));
      continue;
    }
    const d = hasOwn(row.metrics, metric) ? row.metrics[metric] : undefined;
    if (d === undefined) continue;
    if (measure === 'score') {
      if (!isScore(d.base) || !isScore(d.candidate)) continue;
      base.push(d.base);
      candidate.push(d.candidate);
    } else {
      if (d.base_passed === null || d.candidate_passed === null) continue;
      base.push(asNumber(d.base_passed));
      candidate.push(asNumber(d.candidate_passed));
    }
  }
  return { base, candidate };
}

/** Verdicts for metrics that score 0 or 1 only (exact match, regex, JSON validity…), else scores. */
function measureOf(rows: readonly DiffRow[], metric: string): Measure {
  const scores = pairsOf(rows, metric, 'score');
  const verdicts = pairsOf(rows, metric, 'verdict');
  if (scores.base.length === 0) return verdicts.base.length > 0 ? 'verdict' : 'score';
  const binary = [...scores.base, ...scores.candidate].every((v) => v === 0 || v === 1);
  return binary && verdicts.base.length > 0 ? 'verdict' : 'score';
}

/** One comparison before Holm: everything but the adjusted p-value and the verdict. */
function compare(
  name: string,
  measure: Measure,
  better: 'higher' | 'lower',
  pairs: Pairs,
  minRows: number,
  seed: number,
): PairedComparison {
  const n = pairs.base.length;
  // Rounded to about 12 significant digits, so equal changes of averaged trial scores tie when ranked.
  const differences = pairedDifferences(pairs.base, pairs.candidate);
  const comparison: PairedComparison = {
    name,
    measure,
    n,
    status: n < minRows ? 'too_few_rows' : 'tested',
    base_mean: mean(pairs.base),
    candidate_mean: mean(pairs.candidate),
    mean_delta: mean(differences),
    ci_low: null,
    ci_high: null,
    test: measure === 'score' ? 'wilcoxon_signed_rank' : 'mcnemar_exact',
    method: null,
    statistic: null,
    p_value: null,
    p_adjusted: null,
    effect_size: null,
    direction: null,
    significant: null,
  };
  if (comparison.status === 'too_few_rows') return comparison;
  const interval = bootstrapMeanInterval(differences, seed, CONFIDENCE);
  comparison.ci_low = interval?.low ?? null;
  comparison.ci_high = interval?.high ?? null;
  let effect: number;
  if (measure === 'score') {
    const result = wilcoxonSignedRank(differences);
    Object.assign(comparison, { method: result.method, statistic: result.statistic, p_value: result.p_value });
    effect = result.rank_biserial;
    comparison.effect_size = { name: 'rank_biserial', value: effect };
  } else {
    let worse = 0;
    let gained = 0;
    for (const d of differences) {
      if (d < 0) worse++;
      else if (d > 0) gained++;
    }
    const result = mcnemarExact(worse, gained);
    Object.assign(comparison, { method: result.method, statistic: result.statistic, p_value: result.p_value });
    effect = (gained - worse) / n;
    comparison.effect_size = { name: 'risk_difference', value: effect };
  }
  // Candidate minus base: a rise is better for higher-is-better metrics, worse for latency and cost.
  const towardBetter = better === 'higher' ? effect : -effect;
  comparison.direction = towardBetter > 0 ? 'better' : towardBetter < 0 ? 'worse' : 'none';
  return comparison;
}

/** Sets p_adjusted and significant across one family of comparisons. */
function applyHolm(family: PairedComparison[], alpha: number): void {
  const adjusted = holmAdjust(family.map((c) => (c.status === 'tested' ? c.p_value : null)));
  family.forEach((c, i) => {
    c.p_adjusted = adjusted[i];
    c.significant = adjusted[i] === null ? null : adjusted[i]! <= alpha;
  });
}

function compareGroup(
  rows: readonly DiffRow[],
  metrics: readonly RunMetricSpec[],
  measures: Map<string, Measure>,
  minRows: number,
  seedKey: string,
) {
  return {
    row_verdict: compare(
      'row_verdict',
      'verdict',
      'higher',
      pairsOf(rows, null, 'verdict'),
      minRows,
      seedFromText(`${seedKey}|row_verdict`),
    ),
    metrics: metrics.map((m) =>
      compare(
        m.name,
        measures.get(m.name)!,
        m.better,
        pairsOf(rows, m.name, measures.get(m.name)!),
        minRows,
        seedFromText(`${seedKey}|${m.name}`),
      ),
    ),
  };
}

/**
 * Statistics over the matched rows of a diff (rows in both runs). Two Holm families: the overall
 * one (each metric and the row verdict) and the by-dimension one (every metric and row verdict of
 * every dimension value together).
 */
export function diffStatistics(
  rows: readonly DiffRow[],
  metrics: readonly RunMetricSpec[],
  options: DiffStatisticsOptions,
): DiffStatistics {
  const alpha = options.alpha ?? DEFAULT_ALPHA;
  const minRows = options.minRows ?? DEFAULT_MIN_ROWS;
  const matched = rows.filter((r) => r.status !== 'new' && r.status !== 'missing');
  const measures = new Map(metrics.map((m) => [m.name, measureOf(matched, m.name)]));

  const overall = compareGroup(matched, metrics, measures, minRows, options.seedKey);
  applyHolm([overall.row_verdict, ...overall.metrics], alpha);

  const groups = new Map<string, Map<string | null, DiffRow[]>>();
  for (const row of matched) {
    const dims = options.dimensionsOf?.(row.row_id);
    if (!dims) continue;
    for (const [dimension, value] of Object.entries(dims)) {
      let byValue = groups.get(dimension);
      if (!byValue) groups.set(dimension, (byValue = new Map()));
      const group = byValue.get(value ?? null);
      if (group) group.push(row);
      else byValue.set(value ?? null, [row]);
    }
  }
  const byDimension = [...groups.keys()].sort().map((dimension) => {
    const byValue = groups.get(dimension)!;
    const values = [...byValue.keys()].filter((v): v is string => v !== null).sort();
    const ordered: Array<string | null> = byValue.has(null) ? [...values, null] : values;
    return {
      dimension,
      values: ordered.map((value) => {
        const group = byValue.get(value)!;
        return {
          value,
          rows: group.length,
          ...compareGroup(group, metrics, measures, minRows, `${options.seedKey}|${dimension}=${value ?? ''}`),
        };
      }),
    };
  });
  applyHolm(
    byDimension.flatMap((d) => d.values.flatMap((v) => [v.row_verdict, ...v.metrics])),
    alpha,
  );

  return {
    alpha,
    confidence: CONFIDENCE,
    correction: 'holm',
    min_rows: minRows,
    matched_rows: matched.length,
    row_verdict: overall.row_verdict,
    metrics: overall.metrics,
    by_dimension: byDimension,
  };
}
