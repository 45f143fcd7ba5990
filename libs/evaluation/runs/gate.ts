/**
 * The release gate: a run judged by its project's test plan (thresholds overall and per dimension
 * value, the release rule) and, optionally, against a baseline run (no significant regression),
 * answered as a verdict with every check, and rendered for a pull request (Markdown) and for CI
 * test reports (JUnit XML). Pure: the runs module hands in the summary and the statistics.
 */
import type { CorrectedPassRate } from '../judge-validation.js';
import type { DiffStatistics, PairedComparison, PassRule, RunMetricSpec, RunSummary } from './run.types.js';

export interface GateThreshold {
  operator: '>=' | '<=';
  value: number;
}

/** A test plan's demand on a judged metric's validation against human labels. */
export interface GateValidationRule {
  /** The lower bound of the validation's kappa interval must reach this. */
  min_kappa_lower: number | null;
  /** The lower bounds of both the true positive and the true negative rate intervals must reach this. */
  min_rates_lower: number | null;
  /** `fail`: an unvalidated or poorly validated judge fails the gate; `warn`: it is a warning. */
  on_failure: 'fail' | 'warn';
}

export interface GatePlan {
  metrics: Array<{
    name: string;
    threshold: GateThreshold;
    per_dimension: Array<{ dimension: string; value: string; threshold: GateThreshold }>;
    gating: boolean;
    validation?: GateValidationRule | null;
  }>;
  release_rule: {
    mode: 'all_metrics' | 'min_metrics_passing';
    min_metrics_passing: number | null;
    include_dimension_thresholds: boolean;
    min_row_pass_rate: number | null;
  };
}

export type GateCheckKind =
  | 'run_state'
  | 'threshold'
  | 'dimension_threshold'
  | 'release_rule'
  | 'metric_pass_rate'
  | 'row_pass_rate'
  | 'regression'
  | 'judge_validity'
  | 'corrected_pass_rate';

export interface GateCheck {
  kind: GateCheckKind;
  /** `fail` with `blocking: false` is a warning: reported, not deciding. `skipped`: nothing to check (no rows, too few rows to test). */
  status: 'pass' | 'fail' | 'skipped';
  /** Whether a failure of this check fails the gate. */
  blocking: boolean;
  metric: string | null;
  dimension: string | null;
  value: string | null;
  operator: '>=' | '<=' | null;
  threshold: number | null;
  observed: number | null;
  /** Regressions: the comparison with the baseline. */
  mean_delta: number | null;
  ci_low: number | null;
  ci_high: number | null;
  p_value: number | null;
  p_adjusted: number | null;
  message: string;
}

export interface GateResult {
  verdict: 'pass' | 'fail';
  /** Blocking checks that failed. */
  failures: number;
  /** Non-blocking checks that failed. */
  warnings: number;
  checks: GateCheck[];
}

export interface GateInput {
  /** The run's state and its own pass rule and metrics (what judges it when there is no test plan). */
  run: { state: string; pass_rule: PassRule; metrics: readonly RunMetricSpec[] };
  summary: RunSummary;
  /** The project's test plan; null: the run's own pass rule judges. */
  plan: GatePlan | null;
  /** Statistics of the diff baseline -> run, when a baseline is given. */
  baseline: DiffStatistics | null;
  /** The run's judged metrics: their config version, newest validation and corrected pass rate. */
  judges?: GateJudge[];
}

/** A judged metric of the run as the gate sees its judge's validity. */
export interface GateJudge {
  metric: string;
  /** The config version the run used; null for built-in defaults (no validation possible). */
  config: { name: string; version: number } | null;
  validation: {
    id: string;
    kappa_low: number | null;
    true_positive_rate_low: number | null;
    true_negative_rate_low: number | null;
  } | null;
  corrected: CorrectedPassRate | null;
}

const NONE = {
  metric: null,
  dimension: null,
  value: null,
  operator: null,
  threshold: null,
  observed: null,
  mean_delta: null,
  ci_low: null,
  ci_high: null,
  p_value: null,
  p_adjusted: null,
} as const;

/** A number for a sentence: at most four decimals, no trailing zeros. */
export function formatNumber(value: number | null): string {
  if (value === null) return '–';
  return Number(value.toFixed(4)).toString();
}

/** A p-value for a sentence: two significant digits. */
export function formatP(value: number | null): string {
  if (value === null) return '–';
  return value < 0.0001 ? value.toExponential(1) : Number(value.toPrecision(2)).toString();
}

const meets = (observed: number, t: GateThreshold) => (t.operator === '>=' ? observed >= t.value : observed <= t.value);

function thresholdChecks(summary: RunSummary, plan: GatePlan): GateCheck[] {
  const rule = plan.release_rule;
  const perMetricBlocking = rule.mode === 'all_metrics';
  const checks: GateCheck[] = [];
  const metricPassed = new Map<string, boolean>();
  for (const metric of plan.metrics) {
    const observed = summary.metrics.find((m) => m.name === metric.name)?.mean ?? null;
    const { operator, value } = metric.threshold;
    const blocking = perMetricBlocking && metric.gating;
    let passed = observed !== null && meets(observed, metric.threshold);
    checks.push({
      ...NONE,
      kind: 'threshold',
      status: passed ? 'pass' : 'fail',
      blocking,
      metric: metric.name,
      operator,
      threshold: value,
      observed,
      message:
        observed === null
          ? `${metric.name} was not scored by this run (needs mean ${operator} ${formatNumber(value)})`
          : `${metric.name} mean ${formatNumber(observed)} ${passed ? 'meets' : 'misses'} ${operator} ${formatNumber(value)}`,
    });
    for (const dimensionRule of metric.per_dimension) {
      const group = summary.by_dimension
        .find((d) => d.dimension === dimensionRule.dimension)
        ?.values.find((v) => v.value === dimensionRule.value);
      const seen = group && Object.hasOwn(group.metrics, metric.name) ? group.metrics[metric.name].mean : null;
      const where = `${dimensionRule.dimension}=${dimensionRule.value}`;
      const counts = rule.include_dimension_thresholds;
      if (seen === null) {
        checks.push({
          ...NONE,
          kind: 'dimension_threshold',
          status: 'skipped',
          blocking: false,
          metric: metric.name,
          dimension: dimensionRule.dimension,
          value: dimensionRule.value,
          operator: dimensionRule.threshold.operator,
          threshold: dimensionRule.threshold.value,
          message: `no row of ${where} scored ${metric.name}`,
        });
        continue;
      }
      const ok = meets(seen, dimensionRule.threshold);
      if (counts && !ok) passed = false;
      checks.push({
        ...NONE,
        kind: 'dimension_threshold',
        status: ok ? 'pass' : 'fail',
        blocking: counts && blocking,
        metric: metric.name,
        dimension: dimensionRule.dimension,
        value: dimensionRule.value,
        operator: dimensionRule.threshold.operator,
        threshold: dimensionRule.threshold.value,
        observed: seen,
        message: `${metric.name} on ${where}: mean ${formatNumber(seen)} ${ok ? 'meets' : 'misses'} ${dimensionRule.threshold.operator} ${formatNumber(dimensionRule.threshold.value)}`,
      });
    }
    if (metric.gating) metricPassed.set(metric.name, passed);
  }
  if (rule.mode === 'min_metrics_passing') {
    const needed = rule.min_metrics_passing ?? metricPassed.size;
    const passing = [...metricPassed.values()].filter(Boolean).length;
    const failing = [...metricPassed.entries()].filter(([, ok]) => !ok).map(([name]) => name);
    checks.push({
      ...NONE,
      kind: 'release_rule',
      status: passing >= needed ? 'pass' : 'fail',
      blocking: true,
      threshold: needed,
      observed: passing,
      operator: '>=',
      message: `${passing} of ${metricPassed.size} gating metrics meet their thresholds, ${needed} needed${failing.length ? ` (failing: ${failing.join(', ')})` : ''}`,
    });
  }
  return checks;
}

/** Without a test plan: the run's own pass rule, each metric's min_pass_rate and the row pass rate. */
function passRuleChecks(summary: RunSummary, run: GateInput['run']): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const metric of run.metrics) {
    if (metric.min_pass_rate === null) continue;
    const observed = summary.metrics.find((m) => m.name === metric.name)?.pass_rate ?? null;
    const ok = observed !== null && observed >= metric.min_pass_rate;
    checks.push({
      ...NONE,
      kind: 'metric_pass_rate',
      status: ok ? 'pass' : 'fail',
      blocking: true,
      metric: metric.name,
      operator: '>=',
      threshold: metric.min_pass_rate,
      observed,
      message:
        observed === null
          ? `${metric.name} has no verdicts to meet its pass rate >= ${formatNumber(metric.min_pass_rate)}`
          : `${metric.name} passes on ${formatNumber(observed)} of rows, ${ok ? 'meeting' : 'below'} >= ${formatNumber(metric.min_pass_rate)}`,
    });
  }
  return checks;
}

function regressionChecks(statistics: DiffStatistics, gatingMetrics: readonly string[]): GateCheck[] {
  const gating = new Set(gatingMetrics);
  const blockingFor = (c: PairedComparison) => c.name === 'row_verdict' || gating.has(c.name);
  const label = (c: PairedComparison) => (c.name === 'row_verdict' ? 'the row verdict' : c.name);
  const check = (c: PairedComparison, dimension: string | null, value: string | null): GateCheck => {
    const where = dimension === null ? '' : ` on ${dimension}=${value ?? '(none)'}`;
    const base = {
      ...NONE,
      kind: 'regression' as const,
      metric: c.name,
      dimension,
      value,
      observed: c.candidate_mean,
      mean_delta: c.mean_delta,
      ci_low: c.ci_low,
      ci_high: c.ci_high,
      p_value: c.p_value,
      p_adjusted: c.p_adjusted,
    };
    if (c.status === 'too_few_rows')
      return {
        ...base,
        status: 'skipped',
        blocking: false,
        message: `${label(c)}${where}: too few rows to test against the baseline (${c.n} < ${statistics.min_rows})`,
      };
    const delta = `${formatNumber(c.mean_delta)} (95% CI ${formatNumber(c.ci_low)}..${formatNumber(c.ci_high)}, ${c.test}, p = ${formatP(c.p_value)}, Holm ${formatP(c.p_adjusted)})`;
    if (c.significant && c.direction === 'worse')
      return {
        ...base,
        status: 'fail',
        blocking: blockingFor(c),
        message: `${label(c)}${where} regressed against the baseline: change ${delta}`,
      };
    return {
      ...base,
      status: 'pass',
      blocking: blockingFor(c),
      message: `${label(c)}${where}: no significant regression against the baseline, change ${delta}`,
    };
  };
  const checks = [statistics.row_verdict, ...statistics.metrics].map((c) => check(c, null, null));
  // Per dimension value only what is worth reading: regressions (a clean value adds nothing).
  for (const d of statistics.by_dimension) {
    for (const v of d.values) {
      for (const c of [v.row_verdict, ...v.metrics])
        if (c.significant && c.direction === 'worse') checks.push(check(c, d.dimension, v.value));
    }
  }
  return checks;
}

/** What a plan's validation rule asks, in words. */
function validationDemand(rule: GateValidationRule): string {
  const parts = [
    rule.min_kappa_lower === null ? null : `kappa's lower bound >= ${formatNumber(rule.min_kappa_lower)}`,
    rule.min_rates_lower === null ? null : `both rates' lower bounds >= ${formatNumber(rule.min_rates_lower)}`,
  ].filter((p) => p !== null);
  return parts.length ? parts.join(' and ') : 'a validation';
}

/** A plan metric's demand that its judge be validated: met, or not and why (blocking when `on_failure` is `fail`). */
function validityCheck(name: string, rule: GateValidationRule, judge: GateJudge | undefined): GateCheck {
  const base = { ...NONE, kind: 'judge_validity' as const, metric: name, blocking: rule.on_failure === 'fail' };
  const demand = validationDemand(rule);
  const refuse = (message: string, observed: number | null = null): GateCheck => ({
    ...base,
    status: 'fail',
    observed,
    threshold: rule.min_kappa_lower ?? rule.min_rates_lower,
    operator: '>=',
    message: `${message}; the plan requires ${demand}${rule.on_failure === 'warn' ? ' (warning only)' : ''}`,
  });
  if (!judge) return refuse(`${name} is not a judged metric of this run: there is no judge to validate`);
  if (!judge.config)
    return refuse(`${name} ran with its built-in defaults, not a metric config version: its judge cannot be validated`);
  const version = `${judge.config.name} v${judge.config.version}`;
  const v = judge.validation;
  if (!v) return refuse(`the judge of ${name} (${version}) is unvalidated: no validation against human labels`);
  const short: string[] = [];
  if (rule.min_kappa_lower !== null && !(v.kappa_low !== null && v.kappa_low >= rule.min_kappa_lower))
    short.push(`kappa's lower bound is ${formatNumber(v.kappa_low)}`);
  const rates = [v.true_positive_rate_low, v.true_negative_rate_low];
  if (rule.min_rates_lower !== null && !rates.every((r) => r !== null && r >= rule.min_rates_lower!))
    short.push(
      `the true positive and true negative rates' lower bounds are ${formatNumber(rates[0])} and ${formatNumber(rates[1])}`,
    );
  const observed = rule.min_kappa_lower !== null ? v.kappa_low : Math.min(...rates.map((r) => r ?? -Infinity));
  if (short.length)
    return refuse(
      `the judge of ${name} (${version}) is not valid enough: ${short.join(' and ')} (validation ${v.id})`,
      Number.isFinite(observed) ? observed : null,
    );
  return {
    ...base,
    status: 'pass',
    observed: Number.isFinite(observed) ? observed : null,
    threshold: rule.min_kappa_lower ?? rule.min_rates_lower,
    operator: (rule.min_kappa_lower ?? rule.min_rates_lower) ? '>=' : null,
    message: `the judge of ${name} (${version}) is validated: ${demand} holds (validation ${v.id})`,
  };
}

/** For information (never blocking): each validated judged metric's pass rate corrected for its judge's errors. */
function correctedChecks(judges: readonly GateJudge[]): GateCheck[] {
  return judges.flatMap((j): GateCheck[] => {
    const c = j.corrected;
    if (!c) return [];
    const level = `${Math.round(c.level * 100)}%`;
    return [
      {
        ...NONE,
        kind: 'corrected_pass_rate',
        status: c.pass_rate === null ? 'skipped' : 'pass',
        blocking: false,
        metric: j.metric,
        observed: c.pass_rate,
        ci_low: c.interval?.low ?? null,
        ci_high: c.interval?.high ?? null,
        message:
          c.pass_rate === null
            ? `${j.metric}: no corrected pass rate: ${c.reason}`
            : `${j.metric}: pass rate ${formatNumber(c.observed)} as judged, ${formatNumber(c.pass_rate)} corrected for the judge's errors (${level} ${c.interval ? `${formatNumber(c.interval.low)}..${formatNumber(c.interval.high)}` : 'interval undefined'}; sensitivity ${formatNumber(c.sensitivity)}, specificity ${formatNumber(c.specificity)}, validation ${c.validation_id})`,
      },
    ];
  });
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

function rowPassRateCheck(observed: number | null, min: number): GateCheck {
  const ok = observed !== null && observed >= min;
  return {
    ...NONE,
    kind: 'row_pass_rate',
    status: ok ? 'pass' : 'fail',
    blocking: true,
    operator: '>=',
    threshold: min,
    observed,
    message: `row pass rate ${formatNumber(observed)} ${ok ? 'meets' : 'misses'} >= ${formatNumber(min)}`,
  };
}

export function evaluateGate(input: GateInput): GateResult {
  const { run, summary, plan } = input;
  const checks: GateCheck[] = [];
  const state = run.state;
  const runMessage =
    state === 'succeeded'
      ? 'the run succeeded'
      : FINISHED.has(state)
        ? `the run ended ${state}, not succeeded`
        : `the run is ${state}: the gate passes only a finished run (judged over the rows scored so far)`;
  checks.push({
    ...NONE,
    kind: 'run_state',
    status: state === 'succeeded' ? 'pass' : 'fail',
    blocking: true,
    message: runMessage,
  });
  if (plan) {
    checks.push(...thresholdChecks(summary, plan));
    for (const metric of plan.metrics)
      if (metric.validation)
        checks.push(
          validityCheck(
            metric.name,
            metric.validation,
            input.judges?.find((j) => j.metric === metric.name),
          ),
        );
    if (plan.release_rule.min_row_pass_rate !== null)
      checks.push(rowPassRateCheck(summary.pass_rate, plan.release_rule.min_row_pass_rate));
  } else {
    checks.push(...passRuleChecks(summary, run));
    checks.push(rowPassRateCheck(summary.pass_rate, run.pass_rule.min_pass_rate));
  }
  if (input.baseline) {
    const gating = plan
      ? plan.metrics.filter((m) => m.gating).map((m) => m.name)
      : run.metrics.filter((m) => m.gating).map((m) => m.name);
    checks.push(...regressionChecks(input.baseline, gating));
  }
  checks.push(...correctedChecks(input.judges ?? []));
  const failures = checks.filter((c) => c.status === 'fail' && c.blocking).length;
  const warnings = checks.filter((c) => c.status === 'fail' && !c.blocking).length;
  return { verdict: failures === 0 ? 'pass' : 'fail', failures, warnings, checks };
}

/** What the renderers print around the checks. */
export interface GateReport extends GateResult {
  run_id: string;
  run_name: string;
  project_name: string | null;
  /** Null: the run's own pass rule judged it. */
  test_plan: { name: string; version: number } | null;
  baseline_run_id: string | null;
  alpha: number;
}

const MARKDOWN_PASSED_ROWS = 50;
/** GitHub refuses comments over 65,536 characters; keep well under. */
const MARKDOWN_MAX_CHARS = 60_000;

// XML 1.0 allows tab, LF, CR and the ranges below; anything else (control characters, lone surrogates) is dropped
// (from XML and from Markdown alike: a comment is no place for them).
const XML_INVALID = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

const cell = (text: string) =>
  text
    .replace(XML_INVALID, '')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/[\r\n]+/g, ' ')
    .replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));

function where(c: GateCheck): string {
  return c.dimension === null ? '' : `${c.dimension}=${c.value ?? '(none)'}`;
}

function icon(c: GateCheck): string {
  if (c.status === 'pass') return '✅';
  if (c.status === 'skipped') return '⏭️';
  return c.blocking ? '❌' : '⚠️';
}

/** A Markdown summary that fits a pull-request comment: verdict, context, failures first, then (some of) the passed checks. */
export function gateToMarkdown(report: GateReport): string {
  const lines: string[] = [];
  lines.push(
    `## ${report.verdict === 'pass' ? '✅ Release gate passed' : '❌ Release gate failed'}: ${cell(report.run_name)}`,
  );
  lines.push('');
  const baseline = report.baseline_run_id
    ? ` · baseline run \`${report.baseline_run_id}\` (alpha ${formatNumber(report.alpha)}, Holm)`
    : '';
  const judge = report.test_plan
    ? `test plan **${cell(report.test_plan.name)}** v${report.test_plan.version} (project **${cell(report.project_name ?? '')}**)`
    : "the run's own pass rule (no test plan)";
  lines.push(`Run \`${report.run_id}\` · ${judge}${baseline}`);
  lines.push('');
  const passed = report.checks.filter((c) => c.status === 'pass').length;
  const skipped = report.checks.filter((c) => c.status === 'skipped').length;
  lines.push(
    `**${report.failures} ${report.failures === 1 ? 'failure' : 'failures'}**, ${report.warnings} ${report.warnings === 1 ? 'warning' : 'warnings'}, ${passed} passed, ${skipped} skipped.`,
  );
  lines.push('');
  lines.push('| | Check | Metric | Dimension | Threshold | Observed | Δ (95% CI) | p (Holm) | Detail |');
  lines.push('|---|---|---|---|---|---|---|---|---|');
  const order = (c: GateCheck) => (c.status === 'fail' ? (c.blocking ? 0 : 1) : c.status === 'skipped' ? 2 : 3);
  const sorted = [...report.checks].sort((a, b) => order(a) - order(b));
  let passedShown = 0;
  let omitted = 0;
  let size = lines.join('\n').length;
  for (const c of sorted) {
    if (c.status === 'pass' && passedShown >= MARKDOWN_PASSED_ROWS) {
      omitted++;
      continue;
    }
    const threshold = c.operator === null || c.threshold === null ? '' : `${c.operator} ${formatNumber(c.threshold)}`;
    const delta =
      c.mean_delta === null
        ? ''
        : `${formatNumber(c.mean_delta)}${c.ci_low === null ? '' : ` (${formatNumber(c.ci_low)}..${formatNumber(c.ci_high)})`}`;
    const p = c.p_adjusted === null ? '' : formatP(c.p_adjusted);
    const row = `| ${icon(c)} | ${c.kind} | ${cell(c.metric ?? '')} | ${cell(where(c))} | ${cell(threshold)} | ${c.observed === null ? '' : formatNumber(c.observed)} | ${delta} | ${p} | ${cell(c.message)} |`;
    if (size + row.length + 200 > MARKDOWN_MAX_CHARS) {
      omitted++;
      continue;
    }
    if (c.status === 'pass') passedShown++;
    lines.push(row);
    size += row.length + 1;
  }
  if (omitted > 0)
    lines.push('', `…and ${omitted} more ${omitted === 1 ? 'check' : 'checks'} (the JSON answer has them all).`);
  return `${lines.join('\n')}\n`;
}

export function xmlEscape(text: string): string {
  return text
    .replace(XML_INVALID, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** JUnit XML (the schema Jenkins, GitLab, GitHub test reporters and Azure DevOps read): one test case per check. */
export function gateToJUnit(report: GateReport): string {
  const attr = xmlEscape;
  const skipped = report.checks.filter((c) => c.status === 'skipped').length;
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const counts = `tests="${report.checks.length}" failures="${report.failures}" errors="0" skipped="${skipped}"`;
  out.push(`<testsuites name="ews release gate" ${counts}>`);
  out.push(`  <testsuite name="${attr(`release gate: ${report.run_name}`)}" ${counts}>`);
  out.push('    <properties>');
  const props: Array<[string, string]> = [
    ['run_id', report.run_id],
    ['verdict', report.verdict],
    ['test_plan', report.test_plan ? `${report.test_plan.name} v${report.test_plan.version}` : ''],
    ['project', report.project_name ?? ''],
    ['baseline_run_id', report.baseline_run_id ?? ''],
    ['alpha', String(report.alpha)],
  ];
  for (const [name, value] of props) out.push(`      <property name="${name}" value="${attr(value)}"/>`);
  out.push('    </properties>');
  for (const c of report.checks) {
    const name =
      [
        c.metric,
        where(c),
        c.operator === null || c.threshold === null ? '' : `${c.operator} ${formatNumber(c.threshold)}`,
      ]
        .filter((s) => s)
        .join(' ') || c.kind;
    out.push(`    <testcase classname="ews.gate.${c.kind}" name="${attr(name)}">`);
    if (c.status === 'fail' && c.blocking)
      out.push(`      <failure type="${c.kind}" message="${attr(c.message)}">${attr(c.message)}</failure>`);
    else if (c.status === 'skipped') out.push(`      <skipped message="${attr(c.message)}"/>`);
    else
      out.push(
        `      <system-out>${attr(c.status === 'fail' ? `warning (not blocking): ${c.message}` : c.message)}</system-out>`,
      );
    out.push('    </testcase>');
  }
  out.push('  </testsuite>', '</testsuites>', '');
  return out.join('\n');
}
