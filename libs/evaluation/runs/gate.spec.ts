import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { evaluateGate, gateToJUnit, gateToMarkdown, xmlEscape, type GatePlan, type GateReport } from './gate.js';
import { summarize } from './summary.js';
import type { ItemResult, RunMetricSpec } from './run.types.js';

const metrics: RunMetricSpec[] = [
  { name: 'acc', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'faith', better: 'higher', gating: true, min_pass_rate: null },
  { name: 'latency', better: 'lower', gating: false, min_pass_rate: null },
];

/** Ten rows: acc 1 on en, 0.5 on fr; faith 0.6 everywhere; latency 100. */
const items: ItemResult[] = Array.from({ length: 10 }, (_, i) => ({
  row_id: `r${i}`,
  repetition: 0,
  status: 'done',
  output: 'x',
  latency_ms: 100,
  cost_usd: null,
  error: null,
  scores: {
    acc: { score: i < 6 ? 1 : 0.5, passed: i < 6 },
    faith: { score: 0.6, passed: true },
    latency: { score: 100, passed: null },
  },
  passed: i < 6,
  dimensions: { lang: i < 6 ? 'en' : 'fr' },
}));
const rule = { row: 'all' as const, min_pass_rate: 0, errors_fail: true };
const summary = summarize(items, metrics, rule);
const run = (state = 'succeeded', over: Partial<typeof rule> = {}, withMetrics: RunMetricSpec[] = metrics) => ({
  state,
  pass_rule: { ...rule, ...over },
  metrics: withMetrics,
});

const plan = (over: Partial<GatePlan['release_rule']> = {}, faith = 0.7): GatePlan => ({
  metrics: [
    {
      name: 'acc',
      threshold: { operator: '>=', value: 0.7 },
      per_dimension: [
        { dimension: 'lang', value: 'fr', threshold: { operator: '>=', value: 0.6 } },
        { dimension: 'lang', value: 'de', threshold: { operator: '>=', value: 0.9 } },
      ],
      gating: true,
    },
    { name: 'faith', threshold: { operator: '>=', value: faith }, per_dimension: [], gating: true },
    { name: 'latency', threshold: { operator: '<=', value: 50 }, per_dimension: [], gating: false },
  ],
  release_rule: {
    mode: 'all_metrics',
    min_metrics_passing: null,
    include_dimension_thresholds: true,
    min_row_pass_rate: null,
    ...over,
  },
});

describe('evaluateGate', () => {
  it('fails on every blocking threshold, reports non-gating ones as warnings and skips a dimension value without rows', () => {
    const result = evaluateGate({ run: run(), summary, plan: plan(), baseline: null });
    expect(result).toMatchObject({ verdict: 'fail', failures: 2, warnings: 1 });
    expect(result.checks.map((c) => [c.kind, c.metric, c.value, c.status, c.blocking])).toEqual([
      ['run_state', null, null, 'pass', true],
      ['threshold', 'acc', null, 'pass', true],
      ['dimension_threshold', 'acc', 'fr', 'fail', true],
      ['dimension_threshold', 'acc', 'de', 'skipped', false],
      ['threshold', 'faith', null, 'fail', true],
      ['threshold', 'latency', null, 'fail', false],
    ]);
    expect(result.checks[2]).toMatchObject({
      observed: 0.5,
      threshold: 0.6,
      message: 'acc on lang=fr: mean 0.5 misses >= 0.6',
    });
  });

  it('applies min_metrics_passing, dimension thresholds only when included, the row pass rate and the run state', () => {
    // acc fails only by its fr threshold; faith fails: 0 of 2 pass with dimensions, 1 of 2 without.
    const strict = evaluateGate({
      run: run(),
      summary,
      plan: { ...plan({ mode: 'min_metrics_passing', min_metrics_passing: 1 }) },
      baseline: null,
    });
    expect(strict.verdict).toBe('fail');
    expect(strict.checks.find((c) => c.kind === 'release_rule')).toMatchObject({
      status: 'fail',
      observed: 0,
      threshold: 1,
      message: '0 of 2 gating metrics meet their thresholds, 1 needed (failing: acc, faith)',
    });
    expect(strict.checks.filter((c) => c.kind !== 'release_rule' && c.blocking && c.kind !== 'run_state')).toEqual([]);
    const loose = evaluateGate({
      run: run(),
      summary,
      plan: plan({ mode: 'min_metrics_passing', min_metrics_passing: 1, include_dimension_thresholds: false }),
      baseline: null,
    });
    expect(loose).toMatchObject({ verdict: 'pass', failures: 0 });
    expect(loose.checks.find((c) => c.kind === 'dimension_threshold' && c.value === 'fr')).toMatchObject({
      status: 'fail',
      blocking: false,
    });
    const rowRate = evaluateGate({
      run: run(),
      summary,
      plan: plan({ include_dimension_thresholds: false, min_row_pass_rate: 0.7 }, 0.5),
      baseline: null,
    });
    expect(rowRate.checks.find((c) => c.kind === 'row_pass_rate')).toMatchObject({
      status: 'fail',
      observed: 0.6,
      threshold: 0.7,
      blocking: true,
    });
    const cancelled = evaluateGate({
      run: run('cancelled'),
      summary,
      plan: plan({ include_dimension_thresholds: false }, 0.5),
      baseline: null,
    });
    expect(cancelled).toMatchObject({ verdict: 'fail', failures: 1 });
    expect(cancelled.checks[0]).toMatchObject({
      kind: 'run_state',
      status: 'fail',
      message: 'the run ended cancelled, not succeeded',
    });
  });
});

describe('evaluateGate without a test plan', () => {
  it("judges by the run's own pass rule (row pass rate, each metric's min_pass_rate), and fails a run that has not finished", () => {
    const withMins = metrics.map((m) => (m.name === 'acc' ? { ...m, min_pass_rate: 0.7 } : m));
    const result = evaluateGate({
      run: run('succeeded', { min_pass_rate: 0.5 }, withMins),
      summary,
      plan: null,
      baseline: null,
    });
    expect(result).toMatchObject({ verdict: 'fail', failures: 1 });
    expect(result.checks.map((c) => [c.kind, c.metric, c.status])).toEqual([
      ['run_state', null, 'pass'],
      ['metric_pass_rate', 'acc', 'fail'],
      ['row_pass_rate', null, 'pass'],
    ]);
    expect(result.checks[1].message).toBe('acc passes on 0.6 of rows, below >= 0.7');
    const running = evaluateGate({ run: run('running', { min_pass_rate: 0.5 }), summary, plan: null, baseline: null });
    expect(running).toMatchObject({ verdict: 'fail', failures: 1 });
    expect(running.checks[0].message).toBe(
      'the run is running: the gate passes only a finished run (judged over the rows scored so far)',
    );
  });
});

describe('gate renderers', () => {
  const hostile = 'nightly <b>&"\'| run\u0001\uD800 ]]>';
  const report = (over: Partial<GateReport> = {}): GateReport => ({
    ...evaluateGate({ run: run(), summary, plan: plan(), baseline: null }),
    run_id: 'run-1',
    run_name: hostile,
    project_name: 'p|q',
    test_plan: { name: 'plan <1>', version: 3 },
    baseline_run_id: null,
    alpha: 0.05,
    ...over,
  });

  it('writes well-formed JUnit XML with a failure per blocking failed check, whatever the names hold', () => {
    const xml = gateToJUnit(report());
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    const suite = parsed.testsuites.testsuite;
    expect(suite.name).toBe('release gate: nightly <b>&"\'| run ]]>');
    expect(suite.failures).toBe('2');
    expect(suite.testcase).toHaveLength(6);
    expect(suite.testcase[2]).toMatchObject({
      classname: 'ews.gate.dimension_threshold',
      name: 'acc lang=fr >= 0.6',
      failure: { type: 'dimension_threshold' },
    });
    expect(suite.testcase[3].skipped).toEqual({ message: 'no row of lang=de scored acc' });
    expect(suite.testcase[5]['system-out']).toMatch(/^warning \(not blocking\): latency mean 100 misses <= 50$/);
  });

  it('escapes anything into valid XML text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        (text) => XMLValidator.validate(`<a b="${xmlEscape(text)}">${xmlEscape(text)}</a>`) === true,
      ),
      { seed: 19, numRuns: 500 },
    );
  });

  it('writes Markdown for a pull request: failures first, table cells escaped, and bounded', () => {
    const md = gateToMarkdown(report());
    expect(md.split('\n')[0]).toBe('## ❌ Release gate failed: nightly &lt;b&gt;&"\'\\| run ]]&gt;');
    expect(md).toContain('**2 failures**, 1 warning, 2 passed, 1 skipped.');
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| |'));
    expect(rows.map((l) => l.split(' | ')[0].slice(2))).toEqual(['❌', '❌', '⚠️', '⏭️', '✅', '✅']);
    // Many passing checks: 50 shown, the rest counted; thousands of failures stay under GitHub's limit.
    const many = report({
      checks: Array.from({ length: 5000 }, (_, i) => ({
        ...report().checks[1],
        metric: `m${i}`,
        status: i < 3000 ? 'fail' : 'pass',
        message: 'x'.repeat(100),
      })),
    });
    const long = gateToMarkdown(many);
    expect(long.length).toBeLessThan(65_536);
    expect(long).toMatch(/…and \d+ more checks \(the JSON answer has them all\)\.\n$/);
    expect(gateToMarkdown(report({ test_plan: null, project_name: null }))).toContain(
      "· the run's own pass rule (no test plan)",
    );
  });

  it('escapes the operator alike in the Threshold and Detail cells', () => {
    const row = gateToMarkdown(report())
      .split('\n')
      .find((l) => l.includes('lang=fr'))!
      .split(' | ');
    expect(row[4]).toBe('&gt;= 0.6');
    expect(row[8]).toBe('acc on lang=fr: mean 0.5 misses &gt;= 0.6 |');
    expect(row.join(' | ')).not.toMatch(/(^|[^&]|&[a-z]+;)>=/);
  });
});
