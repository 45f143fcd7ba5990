#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createClient, type EwsClient } from '../client.js';
import { isEwsApiError } from '../errors.js';
import type { CreateRunRequest, RecordedGateResponse, RunDiffResponse, RunResponse } from '../generated/api.js';
import { diffSummary, ProgressBar, runSummary } from './render.js';
import {
  defaultVersion,
  findDataset,
  isUuid,
  resolveConnection,
  resolveDataset,
  resolveEvalConfig,
  resolvePartition,
  resolveSut,
  resolveVersion,
  resolveWorkspace,
  UsageError,
} from './resolve.js';

/** The exit codes (docs/ci.md): what a pipeline acts on. */
export const EXIT = { ok: 0, failed: 1, error: 2 } as const;

const USAGE = `ews: the Evaluation Workspace Service from the command line (and from CI).

Environment: EWS_URL (the service's address), EWS_API_KEY (an API key, ews_...), EWS_WORKSPACE (optional).

  ews run --dataset <name|id> [--version <n|id>] [--partition <name|id>] --sut <name|id> [--connection <name|id>]
          (--eval-config <name|id> | --metrics a,b [--judge <id>]) [--name <text>] [--tag <t>]... [--repetitions <n>]
          [--concurrency <n>] [--baseline <run id>|latest [--baseline-label <label>] [--allow-no-baseline]]
          [--out <file.json>] [--no-progress] [--workspace <name|id>]
          [--gate [--project <id>] [--label <label>] [--markdown <file.md>] [--junit <file.xml>]]
      Starts a run, follows it live, prints its summary; exit 0 when it passes, 1 when it fails its pass rule
      (with --gate: the release gate, the project's test plan and no significant regression against --baseline,
      recorded with --label), 2 on an error. --baseline latest: the last run of the SUT on the dataset whose
      recorded gate passed (with --baseline-label, default --label); none found is exit 2 unless --allow-no-baseline.
  ews diff <run> <baseline> [--out <file.json>] [--fail-on-regression]
      Compares a run with a baseline row by row; with --fail-on-regression, exit 1 when a row regressed.
  ews upload <file> --dataset <name> [--message <text>] [--tag <t>]... [--workspace <name|id>]
      Uploads a CSV, JSON, JSON Lines or Parquet file: a new dataset, or the next version of the one of that name.
  ews report <run> [--pdf | --format markdown|html|pdf] [--out <file>] [--template-only] [--baseline <run id>]
      Writes the run's report (default format pdf).

Exit codes: 0 ok, 1 failed (the run's verdict or its gate, or a regression with --fail-on-regression), 2 error.`;

type Values = Record<string, string | boolean | string[] | undefined>;

function parse(
  args: string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Values; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Values, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const str = (values: Values, name: string): string | undefined =>
  typeof values[name] === 'string' ? (values[name] as string) : undefined;
const required = (values: Values, name: string): string => {
  const value = str(values, name);
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
};
const int = (values: Values, name: string): number | undefined => {
  const value = str(values, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} takes a whole number, not "${value}"`);
  return Number(value);
};

function writeJson(path: string | undefined, value: unknown): void {
  if (path) writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function connect(env: NodeJS.ProcessEnv): EwsClient {
  const baseUrl = env.EWS_URL;
  const apiKey = env.EWS_API_KEY;
  if (!baseUrl) throw new UsageError("set EWS_URL to the service's address, e.g. https://ews.example.com");
  if (!apiKey) throw new UsageError('set EWS_API_KEY to an API key of the workspace (ews_...)');
  return createClient({ baseUrl, apiKey, headers: { 'User-Agent': 'ews-cli' } });
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** What `--baseline` names, checked before the run starts: the run compared with, or none (`latest` finding none when allowed). */
async function baselineOf(
  client: EwsClient,
  given: string,
  on: { workspaceId: string; sutId: string; datasetId: string; label?: string; allowNone: boolean },
): Promise<string | undefined> {
  if (given === 'latest') {
    // The service's lookup: the newest run of the SUT on the dataset whose newest recorded gate verdict (of the label) passed.
    const good = await client.runs.listRuns({
      workspace_id: on.workspaceId,
      sut_id: on.sutId,
      dataset_id: on.datasetId,
      gate_verdict: 'pass',
      ...(on.label ? { gate_label: on.label } : {}),
      page_size: 1,
    });
    if (good.items[0]) return good.items[0].id;
    const what = `no run of this SUT on this dataset has passed a recorded gate${on.label ? ` with label "${on.label}"` : ''}`;
    if (on.allowNone) {
      process.stderr.write(`${what}: no baseline to compare with (--allow-no-baseline)\n`);
      return undefined;
    }
    throw new UsageError(
      `--baseline latest: ${what} (\`ews run --gate\` records one; --allow-no-baseline lets the first run of a pipeline go without)`,
    );
  }
  if (!isUuid(given)) throw new UsageError('--baseline takes a run id or "latest"');
  let run: RunResponse;
  try {
    run = await client.runs.getRun({ runId: given });
  } catch (err) {
    // 403: a run of a workspace the API key is not scoped to.
    if (isEwsApiError(err) && (err.status === 404 || err.status === 403))
      throw new UsageError(`--baseline: no run ${given} in this workspace`);
    throw err;
  }
  if (run.workspace_id !== on.workspaceId)
    throw new UsageError(`--baseline: run ${given} belongs to another workspace`);
  if (!TERMINAL.has(run.state))
    throw new UsageError(`--baseline: run ${given} is ${run.state}; compare with a run that has ended`);
  if (run.dataset_id !== on.datasetId)
    throw new UsageError(`--baseline: run ${given} ran on another dataset; compare runs of the same dataset`);
  return run.id;
}

/**
 * The verdict `ews run` exits on without `--gate`: the run's own (its eval config's pass rule and
 * each metric's minimum pass rate).
 */
function verdictOf(run: RunResponse): { exit: number; passed: boolean | null; reasons: string[] } {
  if (run.state !== 'succeeded')
    return {
      exit: EXIT.error,
      passed: null,
      reasons: [`the run ended ${run.state}${run.state_reason ? `: ${run.state_reason}` : ''}`],
    };
  const reasons = ((run.summary as { reasons?: string[] } | null)?.reasons ?? []).slice();
  return { exit: run.passed === false ? EXIT.failed : EXIT.ok, passed: run.passed, reasons };
}

/**
 * With `--gate`: the release gate's verdict, recorded with the label (POST /runs/{run_id}/gate:
 * the project's test plan, thresholds per dimension value, no significant regression against the
 * baseline), written as Markdown and JUnit XML when asked (GET, the same inputs: the same
 * answer). A failed blocking check exits 1, naming it.
 */
async function gateVerdict(
  client: EwsClient,
  run: RunResponse,
  options: { baseline?: string; project?: string; label?: string; markdown?: string; junit?: string },
): Promise<{ exit: number; passed: boolean | null; reasons: string[]; gate: RecordedGateResponse }> {
  const inputs = {
    ...(options.baseline ? { baseline_run_id: options.baseline } : {}),
    ...(options.project ? { project_id: options.project } : {}),
  };
  const gate = await client.runs.createRunGateVerdict(
    { runId: run.id },
    { ...inputs, ...(options.label ? { label: options.label } : {}) },
  );
  const query = { runId: run.id, ...inputs };
  if (options.markdown)
    writeFileSync(
      options.markdown,
      String(await client.runs.getRunGate({ ...query, format: 'markdown' }, { format: 'text' })),
    );
  if (options.junit)
    writeFileSync(
      options.junit,
      String(await client.runs.getRunGate({ ...query, format: 'junit' }, { format: 'text' })),
    );
  const failed = gate.checks.filter((c) => c.status === 'fail' && c.blocking).map((c) => c.message);
  if (run.state !== 'succeeded')
    return {
      exit: EXIT.error,
      passed: null,
      reasons: [`the run ended ${run.state}${run.state_reason ? `: ${run.state_reason}` : ''}`],
      gate,
    };
  return {
    exit: gate.verdict === 'pass' ? EXIT.ok : EXIT.failed,
    passed: gate.verdict === 'pass',
    reasons: failed,
    gate,
  };
}

async function runCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parse(args, {
    workspace: { type: 'string' },
    dataset: { type: 'string' },
    version: { type: 'string' },
    partition: { type: 'string' },
    sut: { type: 'string' },
    connection: { type: 'string' },
    'eval-config': { type: 'string' },
    metrics: { type: 'string' },
    judge: { type: 'string' },
    name: { type: 'string' },
    tag: { type: 'string', multiple: true },
    repetitions: { type: 'string' },
    concurrency: { type: 'string' },
    baseline: { type: 'string' },
    'baseline-label': { type: 'string' },
    'allow-no-baseline': { type: 'boolean' },
    out: { type: 'string' },
    'no-progress': { type: 'boolean' },
    gate: { type: 'boolean' },
    project: { type: 'string' },
    label: { type: 'string' },
    markdown: { type: 'string' },
    junit: { type: 'string' },
  });
  if (values.help) return usage();
  if (!values.gate && (values.project || values.label !== undefined || values.markdown || values.junit))
    throw new UsageError('--project, --label, --markdown and --junit go with --gate');
  const latest = str(values, 'baseline') === 'latest';
  if (!latest && (values['baseline-label'] !== undefined || values['allow-no-baseline']))
    throw new UsageError('--baseline-label and --allow-no-baseline go with --baseline latest');
  const client = connect(env);
  if (!values['eval-config'] && !values.metrics) throw new UsageError('name --eval-config or --metrics');
  const workspaceId = await resolveWorkspace(client, str(values, 'workspace') ?? env.EWS_WORKSPACE);
  const datasetId = await resolveDataset(client, workspaceId, required(values, 'dataset'));
  const versionId = str(values, 'version')
    ? await resolveVersion(client, datasetId, str(values, 'version')!)
    : undefined;
  const partition = str(values, 'partition');
  const partitionId = partition
    ? await resolvePartition(client, datasetId, versionId ?? (await defaultVersion(client, datasetId)), partition)
    : undefined;
  const sutId = await resolveSut(client, workspaceId, required(values, 'sut'));
  const connectionId = await resolveConnection(client, sutId, str(values, 'connection'));
  const body: CreateRunRequest = {
    workspace_id: workspaceId,
    dataset_id: datasetId,
    sut_id: sutId,
    connection_id: connectionId,
    ...(versionId ? { version_id: versionId } : {}),
    ...(partitionId ? { partition_id: partitionId } : {}),
    ...(values['eval-config']
      ? { eval_config_id: await resolveEvalConfig(client, workspaceId, str(values, 'eval-config')!) }
      : {}),
    ...(values.metrics
      ? {
          metrics: str(values, 'metrics')!
            .split(',')
            .map((m) => m.trim())
            .filter(Boolean),
        }
      : {}),
    ...(values.judge ? { judge_id: str(values, 'judge') } : {}),
    ...(values.name ? { name: str(values, 'name') } : {}),
    ...(values.tag ? { tags: values.tag as string[] } : {}),
    ...(int(values, 'repetitions') !== undefined ? { repetitions: int(values, 'repetitions') } : {}),
    ...(int(values, 'concurrency') !== undefined ? { concurrency: int(values, 'concurrency') } : {}),
  };
  // An empty label (a CI variable that is not set) is no label.
  const label = str(values, 'label') || undefined;
  // The baseline is known (or refused) before anything runs.
  const baseline = str(values, 'baseline')
    ? await baselineOf(client, str(values, 'baseline')!, {
        workspaceId,
        sutId,
        datasetId,
        label: str(values, 'baseline-label') || label,
        allowNone: values['allow-no-baseline'] === true,
      })
    : undefined;
  const started = await client.runs.startRun(body);
  process.stderr.write(`started run ${started.id} (${started.name}): ${started.progress.total} items\n`);
  const bar = values['no-progress'] ? undefined : new ProgressBar();
  for await (const event of client.followRunEvents(started.id)) bar?.update(event);
  bar?.finish();
  let run = await client.runs.getRun({ runId: started.id });
  // The stream ends with the terminal event, written with the run's final state; read again should a proxy have cut it short.
  for (let i = 0; i < 50 && !TERMINAL.has(run.state); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    run = await client.runs.getRun({ runId: started.id });
  }
  process.stdout.write(`${runSummary(run)}\n`);
  let diff: RunDiffResponse | undefined;
  if (baseline) {
    diff = await client.runs.getRunDiff({ base: baseline, candidate: run.id, limit: 100 });
    process.stdout.write(`\n${diffSummary(diff)}\n`);
  }
  const gated = values.gate
    ? await gateVerdict(client, run, {
        baseline,
        project: str(values, 'project'),
        label,
        markdown: str(values, 'markdown'),
        junit: str(values, 'junit'),
      })
    : undefined;
  const verdict = gated ? { exit: gated.exit, passed: gated.passed, reasons: gated.reasons } : verdictOf(run);
  if (gated)
    process.stdout.write(
      `\ngate: ${gated.gate.verdict}${gated.reasons.length ? `\n  ${gated.reasons.join('\n  ')}` : ''}\n`,
    );
  writeJson(str(values, 'out'), {
    run,
    verdict,
    ...(gated ? { gate: gated.gate } : {}),
    ...(diff ? { baseline_run_id: baseline, diff: { summary: diff.summary, metrics: diff.metrics } } : {}),
    exit_code: verdict.exit,
  });
  if (verdict.exit === EXIT.error) process.stderr.write(`${verdict.reasons.join('; ')}\n`);
  return verdict.exit;
}

async function diffCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parse(args, { out: { type: 'string' }, 'fail-on-regression': { type: 'boolean' } });
  if (values.help) return usage();
  const [candidate, base] = positionals;
  if (!candidate || !base || positionals.length > 2) throw new UsageError('usage: ews diff <run> <baseline>');
  if (!isUuid(candidate) || !isUuid(base)) throw new UsageError('ews diff takes two run ids');
  const client = connect(env);
  const diff = await client.runs.getRunDiff({ base, candidate, limit: 100 });
  process.stdout.write(`${diffSummary(diff)}\n`);
  writeJson(str(values, 'out'), diff);
  return values['fail-on-regression'] && diff.summary.regressed > 0 ? EXIT.failed : EXIT.ok;
}

async function uploadCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parse(args, {
    dataset: { type: 'string' },
    workspace: { type: 'string' },
    message: { type: 'string' },
    tag: { type: 'string', multiple: true },
  });
  if (values.help) return usage();
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('usage: ews upload <file> --dataset <name>');
  const name = required(values, 'dataset');
  const client = connect(env);
  const workspaceId = await resolveWorkspace(client, str(values, 'workspace') ?? env.EWS_WORKSPACE);
  const existing = await findDataset(client, workspaceId, name);
  const dataset = await client.uploadDataset({
    workspaceId,
    file,
    filename: basename(file),
    fields: {
      ...(existing ? { dataset_id: existing } : { name }),
      ...(values.message ? { message: str(values, 'message') } : {}),
      ...(values.tag ? { tags: values.tag as string[] } : {}),
    },
  });
  const version = dataset.latest_version;
  process.stdout.write(
    `${existing ? 'new version of' : 'created'} dataset ${dataset.name} (${dataset.id}): version ${version?.number ?? '-'} (${version?.id ?? '-'}), ${version?.row_count ?? 0} rows\n`,
  );
  return EXIT.ok;
}

async function reportCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parse(args, {
    pdf: { type: 'boolean' },
    format: { type: 'string' },
    out: { type: 'string' },
    'template-only': { type: 'boolean' },
    baseline: { type: 'string' },
  });
  if (values.help) return usage();
  const [runId] = positionals;
  if (!runId || !isUuid(runId) || positionals.length > 1) throw new UsageError('usage: ews report <run id> [--pdf]');
  const format = values.pdf ? 'pdf' : (str(values, 'format') ?? 'pdf');
  if (format !== 'pdf' && format !== 'html' && format !== 'markdown')
    throw new UsageError('--format is markdown, html or pdf');
  const client = connect(env);
  const report = await client.reports.createReport(
    { runId },
    {
      ...(values['template-only'] ? { template_only: true } : {}),
      ...(values.baseline ? { baseline_run_id: str(values, 'baseline') } : {}),
    },
  );
  const file = await client.reports.getReportDownloadUrl({ reportId: report.id, format });
  const response = await fetch(new URL(file.url, env.EWS_URL));
  if (!response.ok) throw new Error(`downloading the report answered ${response.status}`);
  const out = str(values, 'out') ?? file.filename;
  writeFileSync(out, Buffer.from(await response.arrayBuffer()));
  process.stdout.write(`wrote ${out} (${format}, report ${report.id})\n`);
  return EXIT.ok;
}

function usage(): number {
  process.stdout.write(`${USAGE}\n`);
  return EXIT.ok;
}

const COMMANDS: Record<string, (args: string[], env: NodeJS.ProcessEnv) => Promise<number>> = {
  run: runCommand,
  diff: diffCommand,
  upload: uploadCommand,
  report: reportCommand,
};

/** Runs one command; answers its exit code. Every failure is reported on stderr and is exit code 2. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') return usage();
  try {
    const handler = COMMANDS[command];
    if (!handler) throw new UsageError(`unknown command "${command}" (run, diff, upload, report)`);
    return await handler(args, env);
  } catch (err) {
    if (err instanceof UsageError) process.stderr.write(`ews: ${err.message}\n`);
    else if (isEwsApiError(err))
      process.stderr.write(`ews: ${err.status} ${err.errorCode ?? ''}: ${err.problem?.detail ?? err.message}\n`);
    else process.stderr.write(`ews: ${(err as Error).message ?? String(err)}\n`);
    return EXIT.error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = EXIT.error;
  },
);
