import { Injectable, Logger } from '@nestjs/common';
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import { requestPressure } from '#libs/common/request-pressure.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { rowContext } from '#libs/evaluation/row-context.js';
import { RateGate } from '#libs/evaluation/runs/rate-gate.js';
import type { RunSummary } from '#libs/evaluation/runs/run.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import { callSut } from '#libs/evaluation/sut/sut-client.js';
import type { SutCallResult } from '#libs/evaluation/sut/sut.types.js';
import type { ChatMessage, TraceLink } from '#libs/evaluation/sut/sut.types.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { JobInterrupted, type JobContext, type JobOf } from '#libs/queue/job.types.js';
import type { TrackedFailure } from '#libs/queue/tracked-job.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { TERMINAL_RUN_STATES, type RunEntity, type RunState } from '../entities/run.entity.js';
import { ItemScorer, type ScoringKeys } from './item-scorer.js';
import { callContext, TraceJoins, type CallContext } from './trace-joins.service.js';
import { NotificationDispatcher } from '../../catalogues/notifications/notification-dispatcher.service.js';
import { RunSummaries } from './run-summaries.service.js';
import { RUNS, RunsRepository, type ItemKey, type RunItemRow } from '../runs.repository.js';
import { RUN_JOB } from '../runs.jobs.js';

/** The failure of a run cancelled by request (`POST /runs/{id}/cancel`) while it ran or waited for its upload. */
export const CANCELLED: TrackedFailure = { code: 'cancelled', message: 'cancelled by request; what was done is kept' };
/** Row and judge errors recorded as events per run at most (the items keep every error). */
const MAX_ERROR_EVENTS = 100;
const PROGRESS_EVERY_MS = 1000;
/** Runs of more pages than this refresh the items' planner statistics before they start (RunsRepository.analyzeItems). */
const ANALYZE_FROM_PAGES = 10;

/** Records an event of the run (row and judge errors, incomplete traces), up to MAX_ERROR_EVENTS of them. */
type Note = (type: string, data: Record<string, unknown>) => Promise<void>;

/**
 * Executes a run: calls the SUT for every pending item (the connection's concurrency and rate,
 * turns of a session in order with the conversation so far), scores every answered item, and
 * records each item as it finishes, so a restarted worker resumes without calling the SUT again
 * for a finished row. Cancel stops new calls at once and keeps what was done.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger('RunExecutor');

  constructor(
    private readonly runs: RunsRepository,
    private readonly secrets: SecretsService,
    private readonly notifications: NotificationDispatcher,
    private readonly transactions: TransactionRunner,
    private readonly summaries: RunSummaries,
    private readonly config: AppConfig,
    private readonly tracked: TrackedRecords,
    private readonly traceJoins: TraceJoins,
  ) {}

  @JobHandler(RUN_JOB, { maxAttempts: 5, tracks: RUNS })
  async execute({
    payload,
    signal,
    progress,
  }: JobContext<typeof RUN_JOB>): Promise<{ state: RunState; items: number }> {
    // The queue has marked the run running (its first start kept across retries and hand-backs); the event says it once.
    const run = await this.runs.findUnscoped(payload.run_id);
    if (!run || run.state !== 'running') return { state: run?.state ?? 'failed', items: 0 };
    await this.announceStart(run);
    const snapshot = run.snapshot;
    const keys = await this.keys(run);
    const scorer = new ItemScorer(snapshot.metrics, snapshot.pass_rule, snapshot.mapping, keys, signal);
    const sut = await this.sutCaller(run, signal);
    const width = sut.width;
    const scores = new ScoreBuffer((batch) => this.runs.saveScores(run.id, batch));
    const counts = await this.runs.finishedCounts(run.id);
    // The planner is told how many items a run of many pages has, or each page would read every item after it.
    const large = counts.total > ANALYZE_FROM_PAGES * this.config.env.RUN_PAGE_SIZE;
    if (large) await this.runs.analyzeItems();
    const tracker = new ProgressTracker(counts, async (data) => {
      await scores.flush();
      await this.progress(run, data, progress);
    });
    // Conversations in progress at once: enough to keep every SUT slot busy, few enough to bound memory and database writes.
    const laneCount = Math.max(8, 2 * width);
    const lanes = new Lanes(laneCount);
    // Each call waiting under the run's signal (a rate slot or a retry's backoff in a SUT slot, a judge's in a lane)
    // holds an abort listener until its wait ends: as many at once as calls in flight, not a leak past Node's 10.
    setMaxListeners(defaultMaxListeners + width + laneCount, signal);
    const link = snapshot.connection.spec.trace_link ?? null;
    let errorEvents = 0;
    const note: Note = async (type, data) => {
      if (errorEvents++ < MAX_ERROR_EVENTS) await this.runs.appendEvent(run.id, run.workspaceId, type, data);
    };

    const runItem = async (item: RunItemRow, history: ChatMessage[]) => {
      if (item.status === 'pending' && snapshot.connection.spec.kind === 'offline') {
        await this.runs.saveOutcome(run.id, item.row_id, item.repetition, NOT_UPLOADED);
        Object.assign(item, NOT_UPLOADED);
      }
      let context: CallContext | null = null;
      if (item.status === 'pending') {
        context = callContext();
        if (!(await this.answer(run, item, () => sut.call(item, history, context!), context, note))) return false;
      }
      if (signal.aborted) return false;
      // An answer's own trace is read before it is scored (again after a restart, when it was not yet).
      if (link && item.status === 'done' && item.trace_id && item.trajectory?.source !== 'trace') {
        await this.joinTrace(run, link, item, context, signal, note);
        if (signal.aborted) return false;
      }
      const scored = await scorer.score(item);
      if (signal.aborted && scored.judgeErrors.some((e) => e.code === 'cancelled')) return false;
      await scores.add({
        row_id: item.row_id,
        repetition: item.repetition,
        scores: scored.scores,
        passed: scored.passed,
      });
      for (const e of scored.judgeErrors)
        await note('judge_error', { row_id: item.row_id, repetition: item.repetition, ...e });
      await tracker.finished(item);
      return true;
    };

    // The turns of a conversation go in order, each seeing the conversation so far (the turns finished before a restart too).
    const converse = async (turns: RunItemRow[]) => {
      const history: ChatMessage[] = [];
      for (const item of turns) {
        const finished = item.status !== 'pending' && item.scored_at !== null;
        if (!finished && (signal.aborted || !(await runItem(item, [...history])))) return;
        history.push(
          { role: 'user', content: textOf(rowContext(item.data, snapshot.mapping).input) },
          { role: 'assistant', content: item.output ?? '' },
        );
      }
    };

    // Conversations run side by side, a page of them at a time in memory.
    try {
      for await (const turns of this.conversations(run.id, signal)) {
        if (signal.aborted) break;
        await lanes.add(() => converse(turns));
      }
    } finally {
      await lanes.drain();
    }
    await scores.flush();
    await tracker.flush();
    await this.end(run.id, signal, large);
    return { state: 'succeeded', items: counts.total };
  }

  /**
   * Reads what an answered item's own trace says (waiting, bounded, for it to land) and keeps it with
   * the item: the trajectory the trace shows, and its tokens and cost where the answer reported none.
   */
  private async joinTrace(
    run: RunEntity,
    link: TraceLink,
    item: RunItemRow,
    context: CallContext | null,
    signal: AbortSignal,
    note: Note,
  ): Promise<void> {
    // After a restart the call's span id is gone: any span of the trace counts as its entry.
    const call = context ?? { trace_id: item.trace_id!, span_id: '', traceparent: '' };
    const joined = await this.traceJoins.join(run.workspaceId, link, call, signal);
    if (signal.aborted) return;
    const traced = {
      trajectory: joined.trajectory ?? item.trajectory,
      usage: reported(item.usage) ? item.usage : joined.usage,
      cost_usd: item.cost_usd ?? joined.cost_usd,
    };
    await this.runs.saveTrace(run.id, item.row_id, item.repetition, traced);
    Object.assign(item, traced);
    if (!joined.complete)
      await note('trace_incomplete', {
        row_id: item.row_id,
        repetition: item.repetition,
        trace_id: joined.trace_id,
        spans: joined.spans,
        waited_ms: joined.waited_ms,
      });
  }

  /** Calls the SUT for a pending item and records its answer (or its error); false when the run stopped first. */
  private async answer(
    run: RunEntity,
    item: RunItemRow,
    call: () => Promise<SutCallResult | null>,
    context: CallContext,
    note: Note,
  ): Promise<boolean> {
    const result = await call();
    if (!result || result.error?.code === 'cancelled') return false;
    const outcome = { ...outcomeOf(result), trace_id: context.trace_id };
    await this.runs.saveOutcome(run.id, item.row_id, item.repetition, outcome);
    Object.assign(item, outcome);
    if (outcome.error)
      await note('row_error', {
        row_id: item.row_id,
        repetition: item.repetition,
        code: outcome.error.code,
        message: outcome.error.message,
        status_code: result.status_code,
      });
    return true;
  }

  /** The run's `running` event, once however often its job starts again. */
  private async announceStart(run: RunEntity): Promise<void> {
    if (await this.runs.hasStateEvent(run.id, 'running')) return;
    await this.runs.appendEvent(run.id, run.workspaceId, 'state_changed', {
      from: 'queued',
      to: 'running',
      reason: null,
    });
  }

  /**
   * Calls the SUT for an item with the conversation so far, within the run's concurrency (a slot
   * of `width`) and its connection's rate: null when the run was stopped before the call.
   */
  private async sutCaller(run: RunEntity, signal: AbortSignal) {
    const { connection, adapter, mapping } = run.snapshot;
    const spec = connection.spec;
    const secret = spec.auth ? await this.secret(run, spec.auth.secret_id, 'the connection') : null;
    const width = Math.max(1, Math.min(run.concurrency, spec.max_concurrency));
    const slots = pLimit(width);
    const gate = new RateGate(spec.requests_per_second);
    // Every call carries its own W3C trace context: the SUT's spans name it, and a trace link joins them to the row.
    const call = (item: RunItemRow, history: ChatMessage[], context: CallContext) => {
      const { row_id, session_id, turn } = item;
      const ctx = rowContext(item.data, mapping, { row_id, history, session_id, turn });
      return slots(async () => {
        if (signal.aborted) return null;
        // Requests served by this process go first while they are waiting (libs/common/request-pressure.ts).
        await requestPressure.giveWay(signal);
        await gate.wait(signal);
        return signal.aborted
          ? null
          : callSut(spec, adapter.spec, ctx, { secret, signal, headers: { traceparent: context.traceparent } });
      });
    };
    return { width, call };
  }

  /**
   * Ends the run once its items are answered or the work was interrupted. Cancelled: the run ends
   * with what was done, and its job ends cancelled (thrown). A lost lease or a shutdown: the job
   * goes back to the queue (thrown) and resumes from the items recorded.
   */
  private async end(runId: string, signal: AbortSignal, large: boolean): Promise<void> {
    const reason = signal.aborted
      ? signal.reason instanceof JobInterrupted
        ? signal.reason.reason
        : 'shutdown'
      : null;
    // Told again now that the items are answered: with the statistics of the start (every item pending) the
    // summary's pages, which read the answered ones, were each planned as a scan of the whole table, and a
    // large run's summary took minutes (docs/performance.md#runs). The reads after the run gain too.
    if (large && (reason === null || reason === 'cancelled')) await this.runs.analyzeItems();
    if (reason === null) return this.finish(runId, null);
    if (reason === 'cancelled') await this.finish(runId, CANCELLED);
    throw signal.reason instanceof Error ? signal.reason : new Error('interrupted');
  }

  /**
   * The run's conversations with work left, in item order, a page (RUN_PAGE_SIZE) at a time:
   * the next page is read while this one's are called, so the SUT never waits on a read, and
   * never more than about three pages are in memory. Each page is one statement on a connection
   * of its own turn (never inside a transaction, never beside another query on one client).
   */
  private async *conversations(runId: string, signal: AbortSignal): AsyncGenerator<RunItemRow[]> {
    const size = this.config.env.RUN_PAGE_SIZE;
    const read = (from: ItemKey | null) => {
      const page = this.runs.conversations(runId, from, size);
      // Left unawaited when the run stops first: its failure must not go unhandled.
      page.catch(() => undefined);
      return page;
    };
    let next = read(null);
    for (;;) {
      const page = await next;
      if (!page.conversations.length) return;
      next =
        page.conversations.length < size || signal.aborted
          ? Promise.resolve({ conversations: [], last: null })
          : read(page.last);
      yield* page.conversations;
    }
  }

  /**
   * A run whose job ended without its executor ending it (failed for good, cancelled before it ran, its worker lost
   * for good): the queue has ended its record (state, failure, finished_at) in this transaction; what the end means
   * beyond the record is written here. An executor that ended its run wrote all of it (and its summary).
   */
  @OnJobSettled(RUN_JOB)
  async onSettled(job: JobOf<typeof RUN_JOB>): Promise<void> {
    const run = await this.runs.findForUpdateUnscoped(job.payload.run_id);
    if (!run || !TERMINAL_RUN_STATES.has(run.state) || run.summary) return;
    await this.recordEnd(run, run.startedAt ? 'running' : 'queued');
  }

  /**
   * Ends a run (`failure` null: succeeded; else failed or, with code `cancelled`, cancelled) with what the end
   * means: its tracked columns, the summary over its answered items, the state event and webhooks, in one transaction.
   */
  async finish(runId: string, failure: TrackedFailure | null): Promise<void> {
    const current = await this.runs.findUnscoped(runId);
    if (!current || TERMINAL_RUN_STATES.has(current.state)) return;
    // The run's items have no other writer once its executor ends, so their summary is read before the run is
    // locked, in pages that leave the embedded database's one connection free in between. An offline run
    // awaiting its upload may still get one: its summary is read under the lock.
    const summary =
      current.state === 'awaiting_upload' ? undefined : await this.summaries.summarize(current, { scored: false });
    await this.transactions.run(async () => {
      const run = await this.runs.findForUpdateUnscoped(runId);
      if (!run || TERMINAL_RUN_STATES.has(run.state)) return;
      const from = run.state;
      const ended = !failure
        ? await this.tracked.succeed(RUNS, runId)
        : await this.tracked.fail(RUNS, runId, failure, failure.code === 'cancelled' ? 'cancelled' : 'failed');
      if (ended)
        await this.recordEnd(
          (await this.runs.findUnscoped(runId))!,
          from,
          from === current.state ? summary : undefined,
        );
    });
  }

  /** What an ended run's record does not say: summary, verdict and final counts, the `state_changed` event, webhooks. */
  private async recordEnd(run: RunEntity, from: RunState, read?: RunSummary): Promise<void> {
    const summary = read ?? (await this.summaries.summarize(run, { scored: false }));
    const end = {
      summary,
      passed: run.state === 'succeeded' ? summary.passed : null,
      completed: summary.completed,
      errored: summary.errored,
    };
    await this.runs.saveEnd(run.id, end);
    Object.assign(run, end);
    await this.runs.appendEvent(run.id, run.workspaceId, 'state_changed', {
      from,
      to: run.state,
      reason: run.stateReason,
      passed: run.passed,
      pass_rate: summary.pass_rate,
    });
    await this.notifications.dispatch(run.workspaceId, `run.${run.state}`, runEvent(run));
  }

  private async progress(
    run: RunEntity,
    data: RunProgress,
    report: (p: Record<string, number | null>) => Promise<void>,
  ): Promise<void> {
    await this.runs.setProgress(run.id, data);
    await this.runs.appendEvent(run.id, run.workspaceId, 'progress', data);
    await report(data).catch((err: unknown) =>
      this.logger.warn(`progress of run ${run.id} not recorded on its job: ${(err as Error).message}`),
    );
  }

  private async keys(run: RunEntity): Promise<ScoringKeys> {
    const keys: ScoringKeys = { judges: new Map(), customOps: new Map() };
    for (const m of run.snapshot.metrics) {
      if (m.judge && !keys.judges.has(m.judge.id))
        keys.judges.set(
          m.judge.id,
          m.judge.secret_id ? await this.secret(run, m.judge.secret_id, `judge ${m.judge.name}`) : null,
        );
      if (m.custom_op && !keys.customOps.has(m.custom_op.name))
        keys.customOps.set(
          m.custom_op.name,
          m.custom_op.secret_id ? await this.secret(run, m.custom_op.secret_id, `custom op ${m.custom_op.name}`) : null,
        );
    }
    return keys;
  }

  private async secret(run: RunEntity, secretId: string, what: string): Promise<string> {
    try {
      return await this.secrets.resolveValue(run.workspaceId, secretId);
    } catch (err) {
      throw new JobFailure(`the secret of ${what} cannot be read (${(err as Error).message}); set it again and rerun`, {
        code: 'secret_unavailable',
        retry: false,
      });
    }
  }
}

/** What a webhook receives when a run ends. */
function runEvent(run: RunEntity): Record<string, unknown> {
  const s = run.summary;
  return {
    run_id: run.id,
    name: run.name,
    state: run.state,
    reason: run.stateReason,
    passed: run.passed,
    sut: run.snapshot.sut,
    dataset: run.snapshot.dataset,
    eval_config: run.snapshot.eval_config,
    summary: s
      ? {
          rows: s.rows,
          completed: s.completed,
          errored: s.errored,
          pass_rate: s.pass_rate,
          reasons: s.reasons,
          metrics: s.metrics.map((m) => ({ name: m.name, mean: m.mean, pass_rate: m.pass_rate })),
        }
      : null,
    finished_at: run.finishedAt,
  };
}

function textOf(value: unknown): string {
  return value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
}

type ScoredRow = Parameters<RunsRepository['saveScores']>[1][number];

/** Collects item scores and writes them a batch at a time; scores lost with a crash are recomputed on resume (outputs are saved at once). */
class ScoreBuffer {
  private rows: ScoredRow[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly write: (batch: ScoredRow[]) => Promise<void>) {}

  async add(row: ScoredRow): Promise<void> {
    this.rows.push(row);
    if (this.rows.length >= 500) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.rows;
    this.rows = [];
    this.writing = this.writing.then(() => this.write(batch));
    await this.writing;
  }
}

/** A run's progress report: on the record, in its `progress` event and on its job. */
type RunProgress = {
  done: number;
  total: number;
  completed: number;
  errored: number;
  rate_per_s: number | null;
  eta_s: number | null;
};

/** Counts finished items (from those finished before this attempt) and reports progress (done/total, rate, ETA) at most once a second. */
class ProgressTracker {
  private readonly total: number;
  private done: number;
  private completed: number;
  private errored: number;
  private readonly startedAt = performance.now();
  private readonly startDone: number;
  private lastReport = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    counts: { total: number; done: number; completed: number; errored: number },
    private readonly report: (data: RunProgress) => Promise<void>,
  ) {
    ({ total: this.total, done: this.done, completed: this.completed, errored: this.errored } = counts);
    this.startDone = this.done;
  }

  async finished(item: RunItemRow): Promise<void> {
    this.done++;
    if (item.status === 'done') this.completed++;
    else this.errored++;
    const now = performance.now();
    if (now - this.lastReport >= PROGRESS_EVERY_MS) {
      this.lastReport = now;
      await this.emit();
    }
  }

  async flush(): Promise<void> {
    await this.pending;
    await this.emit();
  }

  private emit(): Promise<void> {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? (this.done - this.startDone) / seconds : null;
    const eta = rate ? (this.total - this.done) / rate : null;
    this.pending = this.report({
      done: this.done,
      total: this.total,
      completed: this.completed,
      errored: this.errored,
      rate_per_s: rate === null ? null : Math.round(rate * 100) / 100,
      eta_s: eta === null ? null : Math.round(eta * 10) / 10,
    });
    return this.pending;
  }
}

/**
 * Runs tasks `size` at a time for one dispatcher: `add` waits for a free lane, so the tasks not
 * started yet stay with their page rather than in a queue. After the first failure no task starts:
 * `add` throws it at once, `drain` once the tasks still running have settled.
 */
class Lanes {
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;
  private freed: (() => void) | null = null;

  constructor(private readonly size: number) {}

  async add(task: () => Promise<unknown>): Promise<void> {
    while (this.running.size >= this.size && !this.failure)
      await new Promise<void>((resolve) => (this.freed = resolve));
    if (this.failure) throw this.failure.error;
    const lane: Promise<void> = task().then(
      () => undefined,
      (error: unknown) => void (this.failure ??= { error }),
    );
    this.running.add(lane);
    void lane.finally(() => {
      this.running.delete(lane);
      const wake = this.freed;
      this.freed = null;
      wake?.();
    });
  }

  /** Waits for the tasks running; throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.running);
    if (this.failure) throw this.failure.error;
  }
}

/** An offline run's item whose output was never uploaded. */
const NOT_UPLOADED = {
  status: 'error' as const,
  output: null,
  latency_ms: null,
  usage: null,
  cost_usd: null,
  extras: null,
  error: { code: 'not_uploaded', message: 'no output was uploaded for this row' },
  attempts: null,
};

/** What a SUT call leaves on its item: the extracted answer, or the error (no latency when nothing answered). */
/** Whether the answer reported any token count (an adapter without usage paths gives an object of nulls). */
function reported(usage: RunItemRow['usage']): boolean {
  return !!usage && (usage.prompt_tokens !== null || usage.completion_tokens !== null || usage.total_tokens !== null);
}

function outcomeOf(result: SutCallResult) {
  return {
    status: result.ok ? ('done' as const) : ('error' as const),
    output: result.extracted?.output ?? null,
    latency_ms: result.status_code === null && !result.ok ? null : result.latency_ms,
    usage: result.extracted?.usage ?? null,
    cost_usd: result.extracted?.cost_usd ?? null,
    extras: result.extracted?.extras ?? null,
    error: result.error ? { code: result.error.code, message: result.error.message } : null,
    attempts: result.attempts,
    trajectory: result.extracted?.trajectory ?? null,
  };
}
