import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { DiffRowDto, PairedComparisonDto, RunDiffResponse, RunDiffRowResponse } from '../../runs/dto/diff.dto.js';
import type { GateResponse } from '../../runs/dto/gate.dto.js';
import type { RunResponse } from '../../runs/dto/run.dto.js';
import { type McpApi, path } from '../mcp-api.js';
import { answer, clipText, clipValue, guarded } from '../tool-results.js';
import { id, pageArg, pageSizeArg, paging, pagingOf, READS, workspaceArg } from './tool-kit.js';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const RUN_STATES = ['queued', 'running', 'awaiting_upload', 'succeeded', 'failed', 'cancelled'] as const;

const runSummary = z.object({
  id: z.string(),
  name: z.string(),
  state: z.string(),
  state_reason: z.string().nullable(),
  passed: z.boolean().nullable(),
  dataset_id: z.string(),
  version_id: z.string(),
  sut_id: z.string(),
  metrics: z.array(z.string()),
  tags: z.array(z.string()),
  progress: z.object({
    total: z.number(),
    completed: z.number(),
    errored: z.number(),
    pending: z.number(),
    percent: z.number(),
  }),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

function runOf(run: RunResponse): z.infer<typeof runSummary> {
  return {
    id: run.id,
    name: run.name,
    state: run.state,
    state_reason: run.state_reason,
    passed: run.passed,
    dataset_id: run.dataset_id,
    version_id: run.version_id,
    sut_id: run.sut_id,
    metrics: run.metrics.map((m) => (typeof m === 'string' ? m : String((m as { name?: string }).name ?? m))),
    tags: run.tags,
    progress: run.progress,
    created_at: String(run.created_at),
    finished_at: run.finished_at === null ? null : String(run.finished_at),
  };
}

const comparison = z.object({
  metric: z.string(),
  measure: z.string(),
  n: z.number(),
  status: z.string(),
  base_mean: z.number().nullable(),
  candidate_mean: z.number().nullable(),
  mean_delta: z.number().nullable(),
  ci_low: z.number().nullable().describe('95% paired-bootstrap interval of mean_delta'),
  ci_high: z.number().nullable(),
  test: z.string().nullable(),
  p_value: z.number().nullable(),
  p_adjusted: z.number().nullable(),
  direction: z.string().nullable(),
  significant: z.boolean().nullable(),
});

function comparisonOf(c: PairedComparisonDto): z.infer<typeof comparison> {
  return {
    metric: c.name,
    measure: c.measure,
    n: c.n,
    status: c.status,
    base_mean: c.base_mean,
    candidate_mean: c.candidate_mean,
    mean_delta: c.mean_delta,
    ci_low: c.ci_low,
    ci_high: c.ci_high,
    test: c.test,
    p_value: c.p_value,
    p_adjusted: c.p_adjusted,
    direction: c.direction,
    significant: c.significant,
  };
}

const diffRow = z.object({
  row_id: z.string(),
  status: z.string(),
  base_passed: z.boolean().nullable(),
  candidate_passed: z.boolean().nullable(),
  output_changed: z.boolean(),
  metrics: z.record(
    z.string(),
    z.object({ base: z.number().nullable(), candidate: z.number().nullable(), delta: z.number().nullable() }),
  ),
});

function diffRowOf(row: DiffRowDto): z.infer<typeof diffRow> {
  const metrics = Object.fromEntries(
    Object.entries(row.metrics).map(([name, m]) => [name, { base: m.base, candidate: m.candidate, delta: m.delta }]),
  );
  return {
    row_id: row.row_id,
    status: row.status,
    base_passed: row.base_passed,
    candidate_passed: row.candidate_passed,
    output_changed: row.output_changed,
    metrics,
  };
}

/** Runs: list and read them, compare two with the statistics, explain a gate, start one and follow it. */
export function registerRunTools(server: McpServer, api: McpApi): void {
  listRuns(server, api);
  showRun(server, api);
  compareRuns(server, api);
  showDiffRow(server, api);
  explainGate(server, api);
  startRun(server, api);
  followRun(server, api);
}

/** List runs: the `list_runs` tool. */
function listRuns(server: McpServer, api: McpApi): void {
  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description:
        "Runs of a workspace, newest first, filtered by project, dataset, SUT, state, gate verdict or tag: each with its state, verdict (passed) and progress. Use show_run for one run's metrics, compare_runs for two.",
      inputSchema: z.object({
        workspace_id: workspaceArg(),
        project_id: id().optional(),
        dataset_id: id().optional(),
        sut_id: id().optional(),
        state: z.enum(RUN_STATES).optional(),
        gate_verdict: z.enum(['pass', 'fail']).optional(),
        tag: z.string().max(100).optional(),
        page: pageArg(),
        page_size: pageSizeArg(),
      }),
      outputSchema: z.object({ runs: z.array(runSummary), paging }),
      annotations: READS,
    },
    guarded(async (args) => {
      const workspaceId = await api.workspace(args.workspace_id);
      const page = await api.get<{ items: RunResponse[]; total: number; page: number; page_size: number }>('/runs', {
        ...args,
        workspace_id: workspaceId,
      });
      return answer({ runs: page.items.map(runOf), paging: pagingOf(page, page.items.length) });
    }),
  );
}

/** Show a run: the `show_run` tool. */
function showRun(server: McpServer, api: McpApi): void {
  server.registerTool(
    'show_run',
    {
      title: 'Show a run',
      description:
        "One run: its state, verdict, progress and, once it ended, its summary (per metric mean, pass rate and spread, latency, cost; corrected pass rates for validated judges), with the results' breakdown by dimension when asked.",
      inputSchema: z.object({
        run_id: id(),
        breakdown: z.boolean().default(false).describe('Add per-dimension results'),
      }),
      outputSchema: z.object({
        run: runSummary,
        pass_rule: z.record(z.string(), z.unknown()).nullable(),
        summary: z.record(z.string(), z.unknown()).nullable(),
        results: z.record(z.string(), z.unknown()).nullable(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const run = await api.get<RunResponse>(path`/runs/${args.run_id}`);
      const results = args.breakdown
        ? await api.get<Record<string, unknown>>(path`/runs/${args.run_id}/results`)
        : null;
      return answer({
        run: runOf(run),
        pass_rule: run.pass_rule as Record<string, unknown> | null,
        summary: run.summary === null ? null : (clipValue(run.summary, 200) as Record<string, unknown>),
        results: results === null ? null : (clipValue(results, 200) as Record<string, unknown>),
      });
    }),
  );
}

/** Compare two runs: the `compare_runs` tool. */
function compareRuns(server: McpServer, api: McpApi): void {
  server.registerTool(
    'compare_runs',
    {
      title: 'Compare two runs',
      description:
        'Compares a candidate run with a base run over the rows both scored: per metric the means, the paired change with its 95% bootstrap interval, the paired test (Wilcoxon for scores, exact McNemar for pass/fail) with Holm-adjusted p-values, and whether the change is significant at alpha; the row verdicts likewise; then the regressed rows (or those of `status`), each with its per-metric change. Read one row with show_diff_row.',
      inputSchema: z.object({
        base_run_id: id(),
        candidate_run_id: id(),
        status: z.enum(['regressed', 'improved', 'changed', 'unchanged', 'new', 'missing']).default('regressed'),
        alpha: z.number().gt(0).lt(1).optional().describe('Significance level (default 0.05)'),
        limit: z.int().min(1).max(100).default(20).describe('Rows listed'),
        offset: z.int().min(0).max(1_000_000).default(0),
      }),
      outputSchema: z.object({
        base_run_id: z.string(),
        candidate_run_id: z.string(),
        alpha: z.number(),
        matched_rows: z.number(),
        counts: z.object({
          rows: z.number(),
          regressed: z.number(),
          improved: z.number(),
          unchanged: z.number(),
          changed: z.number(),
          new: z.number(),
          missing: z.number(),
        }),
        row_verdict: comparison.nullable(),
        metrics: z.array(comparison),
        significant_regressions: z.array(z.string()),
        rows: z.array(diffRow),
        rows_total: z.number(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const diff = await api.get<RunDiffResponse>('/runs/diff', {
        base: args.base_run_id,
        candidate: args.candidate_run_id,
        status: args.status,
        alpha: args.alpha,
        limit: args.limit,
        offset: args.offset,
      });
      const stats = diff.statistics;
      const metrics = stats.metrics.map(comparisonOf);
      const { metrics: _perMetric, ...counts } = diff.summary;
      return answer({
        base_run_id: diff.base_run_id,
        candidate_run_id: diff.candidate_run_id,
        alpha: stats.alpha,
        matched_rows: stats.matched_rows,
        counts,
        row_verdict: stats.row_verdict ? comparisonOf(stats.row_verdict) : null,
        metrics,
        significant_regressions: [...metrics, ...(stats.row_verdict ? [comparisonOf(stats.row_verdict)] : [])]
          .filter((m) => m.significant === true && m.direction === 'worse')
          .map((m) => m.metric),
        rows: diff.rows.map(diffRowOf),
        rows_total: diff.total,
      });
    }),
  );
}

/** Show one row of a comparison: the `show_diff_row` tool. */
function showDiffRow(server: McpServer, api: McpApi): void {
  server.registerTool(
    'show_diff_row',
    {
      title: 'Show one row of a comparison',
      description:
        "One row in two runs side by side: the row's input and expected output, each run's output, verdict, scores, latency and error. Values are clipped to max_chars.",
      inputSchema: z.object({
        base_run_id: id(),
        candidate_run_id: id(),
        row_id: z.string().min(1).max(200),
        max_chars: z.int().min(50).max(20_000).default(2000),
      }),
      outputSchema: z.object({
        row_id: z.string(),
        status: z.string(),
        input: z.string().nullable(),
        expected_output: z.string().nullable(),
        base: z.record(z.string(), z.unknown()).nullable(),
        candidate: z.record(z.string(), z.unknown()).nullable(),
        metrics: z.record(z.string(), z.unknown()),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const row = await api.get<RunDiffRowResponse>('/runs/diff/row', {
        base: args.base_run_id,
        candidate: args.candidate_run_id,
        row_id: args.row_id,
      });
      const clip = (v: unknown) => clipValue(v, args.max_chars) as Record<string, unknown>;
      return answer({
        row_id: row.row_id,
        status: row.status,
        input: row.input === null ? null : clipText(row.input, args.max_chars),
        expected_output: row.expected_output === null ? null : clipText(row.expected_output, args.max_chars),
        base: row.base === null ? null : clip(row.base),
        candidate: row.candidate === null ? null : clip(row.candidate),
        metrics: clip(row.metrics),
      });
    }),
  );
}

/** Explain a release gate verdict: the `explain_gate` tool. */
function explainGate(server: McpServer, api: McpApi): void {
  server.registerTool(
    'explain_gate',
    {
      title: 'Explain a release gate verdict',
      description:
        "Why a run passes or fails its release gate: the verdict, then the failing checks first (run state, each threshold, the row pass rate, each regression against the baseline with its interval and adjusted p-value), each with its message. The project's test plan judges it when the run belongs to one.",
      inputSchema: z.object({
        run_id: id(),
        project_id: id().optional(),
        baseline_run_id: id()
          .optional()
          .describe("Default: the plan's baseline rule, or the project's last passing run"),
        alpha: z.number().gt(0).lt(1).optional(),
      }),
      outputSchema: z.object({
        run_id: z.string(),
        verdict: z.string(),
        failures: z.number(),
        warnings: z.number(),
        test_plan: z.object({ id: z.string(), name: z.string(), version: z.number() }).nullable(),
        baseline_run_id: z.string().nullable(),
        checks: z.array(z.record(z.string(), z.unknown())),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const gate = await api.get<GateResponse>(path`/runs/${args.run_id}/gate`, {
        project_id: args.project_id,
        baseline_run_id: args.baseline_run_id,
        alpha: args.alpha,
      });
      const order = (c: { status: string; blocking: boolean }) => (c.status === 'fail' ? (c.blocking ? 0 : 1) : 2);
      const checks = [...gate.checks].sort((a, b) => order(a) - order(b));
      return answer({
        run_id: gate.run_id,
        verdict: gate.verdict,
        failures: gate.failures,
        warnings: gate.warnings,
        test_plan: gate.test_plan,
        baseline_run_id: gate.baseline_run_id,
        checks: checks.map((c) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== null))),
      });
    }),
  );
}

/** Start a run: the `start_run` tool. */
function startRun(server: McpServer, api: McpApi): void {
  server.registerTool(
    'start_run',
    {
      title: 'Start a run',
      description:
        'Starts a run: calls the SUT through the connection for every row of the dataset version (default: current) and scores the answers with the eval config or the named metrics. Members and above. It is queued at once; follow it with follow_run.',
      inputSchema: z.object({
        workspace_id: workspaceArg(),
        dataset_id: id(),
        version_id: id().optional(),
        sut_id: id(),
        connection_id: id(),
        eval_config_id: id().optional(),
        metrics: z.array(z.string().min(1).max(200)).max(50).optional(),
        judge_id: id().optional(),
        name: z.string().max(200).optional(),
        tags: z.array(z.string().max(100)).max(20).optional(),
      }),
      outputSchema: z.object({ run: runSummary }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded(async (args) => {
      const workspaceId = await api.workspace(args.workspace_id);
      const run = await api.post<RunResponse>('/runs', { ...args, workspace_id: workspaceId });
      return answer({ run: runOf(run) });
    }),
  );
}

/** Follow a run: the `follow_run` tool. */
function followRun(server: McpServer, api: McpApi): void {
  server.registerTool(
    'follow_run',
    {
      title: 'Follow a run',
      description:
        'Waits up to wait_seconds for a run to end (polling), then answers its state, progress and the events since after_seq (state changes, row and judge errors). Call again with the returned last_seq to keep following.',
      inputSchema: z.object({
        run_id: id(),
        wait_seconds: z.int().min(0).max(60).default(20),
        after_seq: z.int().min(0).optional(),
      }),
      outputSchema: z.object({
        run: runSummary,
        ended: z.boolean(),
        events: z.array(z.object({ seq: z.number(), type: z.string(), at: z.string(), data: z.unknown() })),
        last_seq: z.number().nullable(),
      }),
      annotations: READS,
    },
    guarded(async (args) => {
      const deadline = Date.now() + args.wait_seconds * 1000;
      let run = await api.get<RunResponse>(path`/runs/${args.run_id}`);
      while (!TERMINAL.has(run.state) && run.state !== 'awaiting_upload' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(500, Math.max(0, deadline - Date.now()))));
        run = await api.get<RunResponse>(path`/runs/${args.run_id}`);
      }
      const events = await api.get<Array<{ seq: number; type: string; at: string; data: unknown }>>(
        path`/runs/${args.run_id}/events`,
        { after: args.after_seq, limit: 50 },
      );
      return answer({
        run: runOf(run),
        ended: TERMINAL.has(run.state),
        events: events.map((e) => ({ ...e, at: String(e.at), data: clipValue(e.data, 200) })),
        last_seq: events.length ? events[events.length - 1].seq : (args.after_seq ?? null),
      });
    }),
  );
}
