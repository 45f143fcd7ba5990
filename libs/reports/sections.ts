/**
 * The built-in report sections: their titles, questions, prompts, the figures each takes from a
 * run's results, and the deterministic narrative used when no judge writes one. Pure functions.
 */
import { correctedFigure } from '#libs/evaluation/judge-validation.js';
import type { ConfusionMatrix } from '#libs/evaluation/statistics/judge-validity.js';
import { diffRows, type DiffResult } from '#libs/evaluation/runs/diff.js';
import { summarize } from '#libs/evaluation/runs/summary.js';
import type { ItemResult, PassRule, RunMetricSpec, RunSummary } from '#libs/evaluation/runs/run.types.js';
import type { ConfigSection, SectionKey } from './report.types.js';
import { SECTION_KEYS } from './report.types.js';

export const SECTION_TITLES: Record<SectionKey, string> = {
  summary: 'Summary',
  metrics_overview: 'Metrics overview',
  results_by_dimension: 'Results by dimension',
  regressions: 'Regressions',
  failure_examples: 'Failure examples',
  recommendations: 'Recommendations',
};

/** The built-in section prompts; a workspace may replace each (PUT /report-settings/prompts/{section_key}). */
export const BUILTIN_PROMPTS: Record<SectionKey, string> = {
  summary:
    'Write a short executive summary (3 to 5 sentences) of the evaluation run "{{run_name}}" of {{sut_name}} on {{dataset_name}}. Say whether it passed its pass rule and why, the share of rows that passed and any errors. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  metrics_overview:
    'Describe, in one paragraph, how each metric of the run "{{run_name}}" did: its mean score and pass rate, and which metrics are weakest. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  results_by_dimension:
    'Explain, in one paragraph, where the run "{{run_name}}" does worse across the dataset dimensions: name the dimension values with the lowest pass rates. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  regressions:
    'Compare the run "{{run_name}}" with the previous run of the same system on the same dataset in one paragraph: regressed and improved rows and the metric moves. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  failure_examples:
    'Describe, in one paragraph, the patterns in the failing rows and errors of the run "{{run_name}}" shown below. Use only the examples given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
  recommendations:
    'Recommend, as a short list, what the team should fix first after the run "{{run_name}}", most important first, each tied to a figure. Use only the figures given.\n\nQuestions to answer:\n{{questions}}\n\nFigures (JSON):\n{{data}}',
};

/** What a report is built from: the run, its per-row results and the previous comparable run. */
export interface ReportInput {
  run: {
    id: string;
    name: string;
    state: string;
    sut_name: string;
    dataset_name: string;
    version_number: number;
    created_at: string;
    finished_at: string | null;
    pass_rule: PassRule;
    metrics: RunMetricSpec[];
    /** Judged metrics' newest validations (of the config versions the run used), by metric name: their pass rates are shown corrected too. */
    validations?: Record<string, { id: string; confusion: ConfusionMatrix; level: number }>;
  };
  items: ReportItem[];
  /** The previous run of the same SUT on the same dataset, with its items; null when there is none. */
  baseline: { id: string; name: string; created_at: string; metrics: RunMetricSpec[]; items: ReportItem[] } | null;
}

export interface ReportItem extends ItemResult {
  input: string | null;
  expected_output: string | null;
}

/** Figures and the deterministic narrative of one section. */
export interface SectionDraft {
  key: SectionKey;
  title: string;
  questions: string[];
  data: Record<string, unknown>;
  narrative: string;
  /** Markdown tables and lists of the figures (always shown, whoever writes the narrative). */
  figures: string;
}

const EXAMPLES = 5;
const REGRESSED_ROWS = 10;
const TEXT_CUT = 300;
/** How much of an item's texts a report needs: one character past the cut tells `cut` the text was longer. */
export const REPORT_TEXT_KEPT = TEXT_CUT + 1;

export function round4(x: number | null): number | null {
  return x === null ? null : Math.round(x * 10_000) / 10_000;
}

export function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`;
}

export function num(x: number | null | undefined): string {
  return x === null || x === undefined ? 'n/a' : String(round4(x));
}

function cut(text: string | null, n = TEXT_CUT): string | null {
  if (text === null) return null;
  return text.length > n ? `${text.slice(0, n)}…` : text;
}

/** A Markdown table cell: pipes escaped, one line. */
function cell(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
}

function table(head: string[], rows: unknown[][]): string {
  return [
    `| ${head.map(cell).join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Items with a recorded outcome (pending ones are not results yet); errored rows fail when the pass rule says so. */
function recorded(items: ReportItem[], rule: PassRule): ReportItem[] {
  return items
    .filter((i) => (i.status as string) !== 'pending')
    .map((i) => ({ ...i, passed: i.status === 'error' && rule.errors_fail ? false : i.passed }));
}

/** The questions each section answers for a run with these metrics and dimensions. */
export function sectionQuestions(
  key: SectionKey,
  metrics: string[],
  dimensions: string[],
  hasBaseline: boolean,
): string[] {
  switch (key) {
    case 'summary':
      return [
        'Did the run pass its pass rule, and why not?',
        'What share of rows passed?',
        'How many rows errored, and what did the run cost?',
      ];
    case 'metrics_overview':
      return metrics.length
        ? metrics.map((m) => `What are the mean score and pass rate of ${m}?`).concat('Which metric is weakest?')
        : ['Which metrics scored the run?'];
    case 'results_by_dimension':
      return dimensions.length
        ? dimensions.map((d) => `Which values of ${d} have the lowest pass rate?`)
        : ['Does the dataset have dimensions to break the results down by?'];
    case 'regressions':
      return hasBaseline
        ? [
            'Which rows regressed since the previous run of this SUT on this dataset?',
            'Which rows improved?',
            ...metrics.map((m) => `How did ${m} move against the previous run?`),
          ]
        : ['Is there a previous run of this SUT on this dataset to compare with?'];
    case 'failure_examples':
      return ['What do failing rows look like?', 'Which errors occurred most?'];
    case 'recommendations':
      return ['What should be fixed first?', 'Which metrics or dimension values need attention?'];
  }
}

/** The sections of a config in order; without a config, every built-in section. */
export function plannedSections(config: ConfigSection[] | null, only: SectionKey[] | undefined): ConfigSection[] {
  const base = config?.length ? config : SECTION_KEYS.map((key) => ({ key }));
  return only?.length ? [...new Set(only)].map((key) => base.find((s) => s.key === key) ?? { key }) : base;
}

function dimensionNames(items: ItemResult[]): string[] {
  const names = new Set<string>();
  for (const item of items) for (const name of Object.keys(item.dimensions ?? {})) names.add(name);
  return [...names].sort();
}

/** Figures shared by every section: the run summary over the recorded rows. */
export interface Computed {
  summary: RunSummary;
  items: ReportItem[];
  dimensions: string[];
  diff: DiffResult | null;
}

export function compute(input: ReportInput): Computed {
  const items = recorded(input.items, input.run.pass_rule);
  const dimensions = dimensionNames(items);
  const summary = summarize(items, input.run.metrics, input.run.pass_rule, dimensions);
  let diff: DiffResult | null = null;
  if (input.baseline) {
    const byName = new Map<string, RunMetricSpec>();
    for (const m of [...input.baseline.metrics, ...input.run.metrics]) if (!byName.has(m.name)) byName.set(m.name, m);
    diff = diffRows(recorded(input.baseline.items, input.run.pass_rule), items, [...byName.values()]);
  }
  return { summary, items, dimensions, diff };
}

/** Every planned section's figures, questions and deterministic narrative. */
export function draftSections(input: ReportInput, planned: ConfigSection[]): SectionDraft[] {
  const c = compute(input);
  const metricNames = input.run.metrics.map((m) => m.name);
  return planned.map((p) => {
    const draft = DRAFTERS[p.key](input, c);
    return {
      key: p.key,
      title: p.title ?? SECTION_TITLES[p.key],
      questions: [
        ...sectionQuestions(p.key, metricNames, c.dimensions, input.baseline !== null),
        ...(p.questions ?? []),
      ],
      ...draft,
    };
  });
}

type Drafter = (
  input: ReportInput,
  c: Computed,
) => { data: Record<string, unknown>; narrative: string; figures: string };

function metricFigures(c: Computed) {
  return c.summary.metrics.map((m) => ({
    name: m.name,
    scored: m.scored,
    errors: m.errors,
    mean: round4(m.mean),
    median: round4(m.median),
    p90: round4(m.p90),
    min: round4(m.min),
    max: round4(m.max),
    pass_rate: round4(m.pass_rate),
    passed: m.passed,
    failed: m.failed,
    meets_min_pass_rate: m.meets_min_pass_rate,
  }));
}

const DRAFTERS: Record<SectionKey, Drafter> = {
  summary: (input, c) => {
    const s = c.summary;
    const data = {
      run_id: input.run.id,
      run_name: input.run.name,
      run_state: input.run.state,
      sut: input.run.sut_name,
      dataset: input.run.dataset_name,
      dataset_version: input.run.version_number,
      final: input.run.finished_at !== null,
      rows: s.rows,
      completed: s.completed,
      errored: s.errored,
      passed_rows: s.passed_rows,
      failed_rows: s.failed_rows,
      pass_rate: round4(s.pass_rate),
      passed: s.passed,
      reasons: s.reasons,
      min_pass_rate: input.run.pass_rule.min_pass_rate,
      latency_ms: {
        mean: round4(s.latency_ms.mean),
        p50: s.latency_ms.p50,
        p90: s.latency_ms.p90,
        p99: s.latency_ms.p99,
      },
      cost_usd_total: s.cost_usd_total,
    };
    const verdict =
      s.passed === null
        ? 'has no verdict yet (no row has one)'
        : s.passed
          ? 'passed its pass rule'
          : `did not pass its pass rule: ${s.reasons.join('; ')}`;
    const narrative = [
      `Run "${input.run.name || input.run.id}" evaluated ${input.run.sut_name} on ${input.run.dataset_name} (version ${input.run.version_number}) over ${s.rows} rows and ${verdict}.`,
      `${s.passed_rows} rows passed and ${s.failed_rows} failed, a pass rate of ${pct(s.pass_rate)} against a required ${pct(input.run.pass_rule.min_pass_rate)}.`,
      s.errored ? `${s.errored} rows errored (the SUT call failed).` : 'No SUT call failed.',
      input.run.finished_at === null
        ? `The run is ${input.run.state}: these figures cover the rows recorded so far.`
        : '',
    ]
      .filter(Boolean)
      .join(' ');
    const figures = table(
      ['Figure', 'Value'],
      [
        ['Rows', s.rows],
        ['Passed rows', s.passed_rows],
        ['Failed rows', s.failed_rows],
        ['Errored rows', s.errored],
        ['Pass rate', pct(s.pass_rate)],
        ['Verdict', s.passed === null ? 'n/a' : s.passed ? 'passed' : 'failed'],
        ['Mean latency (ms)', num(s.latency_ms.mean)],
        ['Total cost (USD)', num(s.cost_usd_total)],
      ],
    );
    return { data, narrative, figures };
  },

  metrics_overview: (input, c) => {
    const validations = input.run.validations ?? {};
    const metrics = metricFigures(c).map((m) => {
      const v = validations[m.name];
      if (!v) return m;
      const r = correctedFigure(m.passed, m.passed + m.failed, v, v.level);
      const interval = r.interval && { low: round4(r.interval.low), high: round4(r.interval.high) };
      return { ...m, corrected: { pass_rate: round4(r.pass_rate), interval, validation_id: v.id, reason: r.reason } };
    });
    const corrected = (m: (typeof metrics)[number]) => ('corrected' in m ? m.corrected : null);
    const anyCorrected = metrics.some((m) => corrected(m));
    const judged = metrics.filter((m) => m.pass_rate !== null);
    const weakest = judged.length ? judged.reduce((a, b) => (b.pass_rate! < a.pass_rate! ? b : a)) : null;
    const correctedText = (m: (typeof metrics)[number]) => {
      const k = corrected(m);
      if (!k) return '';
      return k.pass_rate === null
        ? ' (no corrected pass rate)'
        : ` (${pct(k.pass_rate)} corrected for its judge's errors${k.interval ? `, ${pct(k.interval.low)}–${pct(k.interval.high)}` : ''})`;
    };
    const narrative = metrics.length
      ? `${metrics.length} metrics scored the run. ${metrics.map((m) => `${m.name} has a mean of ${num(m.mean)} and a pass rate of ${pct(m.pass_rate)}${correctedText(m)}`).join('; ')}.${weakest ? ` The weakest is ${weakest.name} (${pct(weakest.pass_rate)} of rows pass).` : ''}`
      : 'No metric scored the run.';
    const head = ['Metric', 'Mean', 'Median', 'P90', 'Min', 'Max', 'Pass rate', 'Passed', 'Failed', 'Errors'];
    const figures = metrics.length
      ? table(
          anyCorrected ? [...head, 'Corrected pass rate'] : head,
          metrics.map((m) => {
            const row: unknown[] = [
              m.name,
              num(m.mean),
              num(m.median),
              num(m.p90),
              num(m.min),
              num(m.max),
              pct(m.pass_rate),
              m.passed,
              m.failed,
              m.errors,
            ];
            const k = corrected(m);
            if (anyCorrected)
              row.push(
                k?.pass_rate == null
                  ? ''
                  : `${pct(k.pass_rate)}${k.interval ? ` (${pct(k.interval.low)}–${pct(k.interval.high)})` : ''}`,
              );
            return row;
          }),
        )
      : '';
    return { data: { metrics, weakest: weakest?.name ?? null }, narrative, figures };
  },

  results_by_dimension: (_input, c) => {
    const dimensions = c.summary.by_dimension.map((d) => ({
      dimension: d.dimension,
      values: d.values.map((v) => ({
        value: v.value,
        rows: v.rows,
        pass_rate: round4(v.pass_rate),
        metrics: Object.fromEntries(
          Object.entries(v.metrics).map(([k, m]) => [k, { mean: round4(m.mean), pass_rate: round4(m.pass_rate) }]),
        ),
      })),
    }));
    const worst =
      dimensions
        .flatMap((d) =>
          d.values
            .filter((v) => v.value !== null && v.pass_rate !== null)
            .map((v) => ({ dimension: d.dimension, value: v.value!, pass_rate: v.pass_rate!, rows: v.rows })),
        )
        .sort((a, b) => a.pass_rate - b.pass_rate || b.rows - a.rows)[0] ?? null;
    const narrative = dimensions.length
      ? `The results break down along ${dimensions.length} dimension${dimensions.length > 1 ? 's' : ''} (${dimensions.map((d) => d.dimension).join(', ')}).${worst ? ` The lowest pass rate is ${worst.dimension} = ${worst.value}: ${pct(worst.pass_rate)} over ${worst.rows} rows.` : ''}`
      : 'The rows of this run carry no dimension values, so there is no breakdown.';
    const figures = dimensions
      .map(
        (d) =>
          `**${d.dimension}**\n\n${table(
            ['Value', 'Rows', 'Pass rate'],
            d.values.map((v) => [v.value ?? '(none)', v.rows, pct(v.pass_rate)]),
          )}`,
      )
      .join('\n\n');
    return { data: { dimensions, worst }, narrative, figures };
  },

  regressions: (input, c) => {
    if (!input.baseline || !c.diff) {
      return {
        data: { baseline_run_id: null, counts: null, metrics: [], regressed_rows: [] },
        narrative: `No earlier run of ${input.run.sut_name} on ${input.run.dataset_name} exists to compare with.`,
        figures: '',
      };
    }
    const s = c.diff.summary;
    const byId = new Map(c.items.map((i) => [i.row_id, i]));
    const regressed = c.diff.rows
      .filter((r) => r.status === 'regressed')
      .slice(0, REGRESSED_ROWS)
      .map((r) => ({
        row_id: r.row_id,
        input: cut(byId.get(r.row_id)?.input ?? null),
        base_passed: r.base_passed,
        candidate_passed: r.candidate_passed,
      }));
    const metrics = s.metrics.map((m) => ({
      name: m.name,
      base_mean: round4(m.base_mean),
      candidate_mean: round4(m.candidate_mean),
      delta: round4(m.delta),
      base_pass_rate: round4(m.base_pass_rate),
      candidate_pass_rate: round4(m.candidate_pass_rate),
      regressions: m.regressions,
      improvements: m.improvements,
    }));
    const data = {
      baseline_run_id: input.baseline.id,
      baseline_run_name: input.baseline.name,
      counts: {
        rows: s.rows,
        regressed: s.regressed,
        improved: s.improved,
        changed: s.changed,
        unchanged: s.unchanged,
        new: s.new,
        missing: s.missing,
      },
      metrics,
      regressed_rows: regressed,
    };
    const narrative = `Against the previous run "${input.baseline.name || input.baseline.id}", ${s.regressed} rows regressed and ${s.improved} improved (${s.unchanged} unchanged, ${s.changed} changed both ways). ${metrics
      .filter((m) => m.delta !== null)
      .map((m) => `${m.name} moved ${m.delta! >= 0 ? '+' : ''}${num(m.delta)}`)
      .join('; ')}.`;
    const figures = [
      table(
        ['Metric', 'Previous mean', 'Mean', 'Delta', 'Previous pass rate', 'Pass rate'],
        metrics.map((m) => [
          m.name,
          num(m.base_mean),
          num(m.candidate_mean),
          num(m.delta),
          pct(m.base_pass_rate),
          pct(m.candidate_pass_rate),
        ]),
      ),
      regressed.length
        ? `Regressed rows:\n\n${regressed.map((r) => `- \`${r.row_id}\`: ${r.input ?? ''}`).join('\n')}`
        : '',
    ]
      .filter(Boolean)
      .join('\n\n');
    return { data, narrative, figures };
  },

  failure_examples: (input, c) => {
    const failing = c.items.filter((i) => i.status === 'error' || i.passed === false);
    const errors = new Map<string, { code: string; count: number; message: string }>();
    for (const item of c.items) {
      if (!item.error) continue;
      const e = errors.get(item.error.code) ?? {
        code: item.error.code,
        count: 0,
        message: cut(item.error.message, 200)!,
      };
      e.count++;
      errors.set(item.error.code, e);
    }
    const seen = new Set<string>();
    const examples = failing
      .filter((i) => !seen.has(i.row_id) && seen.add(i.row_id))
      .slice(0, EXAMPLES)
      .map((i) => ({
        row_id: i.row_id,
        input: cut(i.input),
        expected_output: cut(i.expected_output),
        output: cut(i.output),
        error: i.error?.code ?? null,
        failed_metrics: Object.entries(i.scores)
          .filter(([, s]) => s.passed === false)
          .map(([name]) => name),
      }));
    const errorList = [...errors.values()].sort((a, b) => b.count - a.count);
    const data = { failed_rows: failing.length, rows: c.items.length, errors: errorList, examples };
    const narrative = failing.length
      ? `${failing.length} of ${c.items.length} rows failed.${errorList.length ? ` The most frequent error is ${errorList[0].code} (${errorList[0].count} rows).` : ''} ${examples.length} examples follow.`
      : 'No row failed.';
    const figures = examples
      .map(
        (e, n) =>
          `**Example ${n + 1}** (\`${e.row_id}\`)\n\n- Input: ${e.input ?? ''}\n- Expected: ${e.expected_output ?? ''}\n- Output: ${e.error ? `error ${e.error}` : (e.output ?? '')}\n- Failed metrics: ${e.failed_metrics.join(', ') || 'none'}`,
      )
      .join('\n\n');
    void input;
    return { data, narrative, figures };
  },

  recommendations: (input, c) => {
    const items: Array<{ priority: number; text: string; evidence: string }> = [];
    for (const m of c.summary.metrics) {
      if (m.meets_min_pass_rate === false)
        items.push({
          priority: 1,
          text: `Raise ${m.name}: it is below its required pass rate.`,
          evidence: `${m.name} passes on ${pct(m.pass_rate)} of rows`,
        });
    }
    if (c.summary.errored)
      items.push({
        priority: 1,
        text: 'Fix the failing SUT calls before judging quality.',
        evidence: `${c.summary.errored} of ${c.summary.rows} rows errored`,
      });
    if (c.diff && c.diff.summary.regressed)
      items.push({
        priority: 2,
        text: 'Review the rows that regressed since the previous run.',
        evidence: `${c.diff.summary.regressed} rows regressed`,
      });
    const weakest = c.summary.metrics
      .filter((m) => m.pass_rate !== null && m.meets_min_pass_rate !== false)
      .sort((a, b) => a.pass_rate! - b.pass_rate!)[0];
    if (weakest && weakest.pass_rate! < 1)
      items.push({
        priority: 3,
        text: `Improve ${weakest.name}, the weakest metric.`,
        evidence: `${weakest.name} passes on ${pct(weakest.pass_rate)} of rows`,
      });
    for (const d of c.summary.by_dimension) {
      const worst = d.values
        .filter((v) => v.value !== null && v.pass_rate !== null)
        .sort((a, b) => a.pass_rate! - b.pass_rate!)[0];
      if (worst && c.summary.pass_rate !== null && worst.pass_rate! < c.summary.pass_rate)
        items.push({
          priority: 3,
          text: `Add or fix cases where ${d.dimension} is ${worst.value}.`,
          evidence: `${d.dimension} = ${worst.value} passes on ${pct(worst.pass_rate)} of rows, below the run's ${pct(c.summary.pass_rate)}`,
        });
    }
    if (!items.length)
      items.push({
        priority: 3,
        text: 'Keep this run as the baseline and extend the dataset with harder cases.',
        evidence: `pass rate ${pct(c.summary.pass_rate)}`,
      });
    items.sort((a, b) => a.priority - b.priority);
    void input;
    return {
      data: { items },
      narrative: items.map((i, n) => `${n + 1}. ${i.text} (${i.evidence})`).join('\n'),
      figures: '',
    };
  },
};

/** A section prompt with its placeholders filled in. */
export function renderPrompt(template: string, input: ReportInput, draft: SectionDraft): string {
  const values: Record<string, string> = {
    run_name: input.run.name || input.run.id,
    sut_name: input.run.sut_name,
    dataset_name: input.run.dataset_name,
    section_title: draft.title,
    questions: draft.questions.map((q) => `- ${q}`).join('\n'),
    data: JSON.stringify(draft.data, null, 2),
  };
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

export const PROMPT_PLACEHOLDERS = ['run_name', 'sut_name', 'dataset_name', 'section_title', 'questions', 'data'];

/** The section's Markdown: heading, narrative (with a note when the judge's was not used) and figures. */
export function sectionMarkdown(title: string, narrative: string, figures: string, judgeError: string | null): string {
  return [
    `## ${title}`,
    narrative.trim(),
    judgeError ? `_Narrative from the built-in template: ${judgeError}._` : '',
    figures,
  ]
    .filter(Boolean)
    .join('\n\n');
}
