/** The row verdict: what a row's gating metric verdicts add up to under the pass rule. */
import type { MetricScore, PassRule, RunMetricSpec } from './run.types.js';

/**
 * true / false under `rule.row` over the gating metrics that gave a verdict; null when none did.
 * A gating metric without a verdict (no threshold, no score, or absent) neither passes nor fails the row.
 */
export function rowVerdict(
  scores: Record<string, MetricScore>,
  metrics: RunMetricSpec[],
  rule: PassRule,
): boolean | null {
  let passes = 0;
  let fails = 0;
  for (const metric of metrics) {
    if (!metric.gating) continue;
    const verdict = scores[metric.name]?.passed;
    if (verdict === true) passes++;
    else if (verdict === false) fails++;
  }
  if (passes + fails === 0) return null;
  return rule.row === 'all' ? fails === 0 : passes > 0;
}
