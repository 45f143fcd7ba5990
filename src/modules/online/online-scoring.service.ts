import { Injectable, Logger } from '@nestjs/common';
import { trajectoryFromSpans } from '#libs/evaluation/trajectory/from-spans.js';
import pLimit from 'p-limit';
import type { Filter } from '#libs/database/query-language.js';
import { AppConfig } from '#libs/config/app-config.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { asText, targetContext, targetsOf, type Span, type TargetLevel } from '#libs/evaluation/online/targets.js';
import type { MetricScore } from '#libs/evaluation/runs/run.types.js';
import { tokenCost } from '#libs/traces/enrichment.js';
import { RunPlanner } from '../runs/execution/run-planner.service.js';
import { ItemScorer, type JudgeCall, type ScoredItem, type ScoringKeys } from '../runs/execution/item-scorer.js';
import type { RunMetric } from '../runs/execution/run-snapshot.js';
import { ReviewItemsService } from '../review/review-items.service.js';
import { RowsService } from '../datasets/rows/rows.service.js';
import { SecretsService } from '../secrets/secrets.service.js';
import { TraceScoresService, type NewTraceScore } from '../traces/scores/scores.service.js';
import { spanRowId, TraceDatasets } from '../traces/trace-datasets.service.js';
import { OnlineRepository, type EvaluatorRow, type NewTarget, type TargetRow } from './online.repository.js';
import { isRouted, type EvaluatorSpec } from './online.rules.js';

/** Spans read from a dataset per statement. */
export const FOLLOW_BATCH = 5000;
/** Targets claimed per statement, and scored at once at most (each judge keeps to its own max_concurrency). */
const CLAIM_BATCH = 100;
const TARGETS_AT_ONCE = 64;
/** Judge failures that mean the judge was not reached (after the judge's own retries), not a bad answer. */
const UNREACHABLE = new Set(['timeout', 'network', 'http_status']);

/** What one claim of targets came to. */
export interface ScoringRound {
  claimed: number;
  scored: number;
  skipped: number;
  /** The judge could not be reached: the targets went back to wait. */
  unreachable: boolean;
  /** Stopped early because other work waits for the worker. */
  yielded?: boolean;
}

/** An evaluator version ready to score: its metrics resolved as a run resolves them and their keys. */
export interface PreparedScorer {
  spec: EvaluatorSpec;
  version: number;
  metrics: RunMetric[];
  keys: ScoringKeys;
  judged: boolean;
}

/**
 * The work of online evaluation, shared by continuous following and backfills: reading what
 * landed into the ledger of targets (sampled, filtered, complete or not), claiming ready targets,
 * scoring them with the same scorer, judges, outbound policy and retries as runs, recording their
 * scores once with the traces, and routing failures into a review queue or a dataset.
 */
@Injectable()
export class OnlineScoring {
  private readonly logger = new Logger(OnlineScoring.name);

  constructor(
    private readonly config: AppConfig,
    private readonly repo: OnlineRepository,
    private readonly traces: TraceDatasets,
    private readonly scores: TraceScoresService,
    private readonly planner: RunPlanner,
    private readonly secrets: SecretsService,
    private readonly review: ReviewItemsService,
    private readonly rows: RowsService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The evaluator version's spec (the current one unless told). */
  async spec(evaluator: EvaluatorRow, version = evaluator.version): Promise<EvaluatorSpec> {
    const row = await this.repo.version(evaluator.id, version);
    if (!row) throw new Error(`online evaluator ${evaluator.id} has no version ${version}`);
    return row.spec as EvaluatorSpec;
  }

  /** The version's filter compiled over spans (none: every span), `extra` predicates joined to it. */
  filterOf(spec: EvaluatorSpec, extra: Array<Record<string, unknown>> = []): Filter | undefined {
    const parts = [...(spec.filter ? [spec.filter] : []), ...extra];
    if (!parts.length) return undefined;
    return this.traces.spanFilter(parts.length === 1 ? parts[0] : { and: parts }, '/filter');
  }

  async prepare(evaluator: EvaluatorRow, version: number): Promise<PreparedScorer> {
    const spec = await this.spec(evaluator, version);
    const metrics = await this.planner.metrics(evaluator.workspace_id, spec.metrics, spec.judge_id);
    const keys: ScoringKeys = { judges: new Map(), customOps: new Map() };
    for (const m of metrics) {
      if (m.judge && !keys.judges.has(m.judge.id))
        keys.judges.set(m.judge.id, m.judge.secret_id ? await this.secret(evaluator, m.judge.secret_id) : null);
      if (m.custom_op && !keys.customOps.has(m.custom_op.name))
        keys.customOps.set(
          m.custom_op.name,
          m.custom_op.secret_id ? await this.secret(evaluator, m.custom_op.secret_id) : null,
        );
    }
    return { spec, version, metrics, keys, judged: metrics.some((m) => m.kind === 'judged') };
  }

  /**
   * Reads up to FOLLOW_BATCH spans landed past the evaluator's cursor and takes the targets they
   * name that the filter matched and the rate sampled into the ledger: complete ones ready now,
   * others a quiet period after their newest span. Moves the cursor, in one unit of work.
   * Answers how many spans were read.
   */
  async follow(evaluator: EvaluatorRow, spec: EvaluatorSpec): Promise<number> {
    const cursor = Number(evaluator.cursor_ordinal);
    const read = await this.traces.spansLandedAfter(evaluator.dataset_id, cursor, FOLLOW_BATCH, this.filterOf(spec));
    if (!read.length) return 0;
    const targets = targetsOf(read, spec.level, spec.sampling_rate);
    const now = Date.now();
    const later = new Date(now + spec.quiet_seconds * 1000);
    const offered = targets
      .filter((t) => t.sampled && t.matched)
      .map((t) => this.newTarget(evaluator, spec.level, t, 'continuous', null, t.complete ? new Date(now) : later));
    const grown = targets.filter((t) => t.sampled && !t.matched && !t.complete).map((t) => t.key);
    const traces = read.filter((r) => !r.span.parent_span_id && typeof r.span.trace_id === 'string').length;
    await this.transactions.run(async () => {
      const sampled = await this.repo.offer(offered);
      await this.repo.postpone(evaluator.id, evaluator.version, grown, later);
      await this.repo.advance(evaluator.id, read[read.length - 1].ordinal, { spans: read.length, traces, sampled });
    });
    return read.length;
  }

  /**
   * Reads spans of a backfill's range past `after` (only those its filter and range match) and
   * takes their sampled targets into the ledger, ready now, marked with the backfill. Answers the
   * last ordinal read (null: nothing more), how many spans and how many new targets.
   */
  async offerRange(
    evaluator: EvaluatorRow,
    prepared: PreparedScorer,
    backfillId: string,
    range: { from: Date; to: Date },
    after: number,
  ): Promise<{ last: number | null; spans: number; sampled: number }> {
    const filter = this.filterOf(prepared.spec, [
      { field: 'start_time', op: 'gte', value: range.from.toISOString() },
      { field: 'start_time', op: 'lt', value: range.to.toISOString() },
    ]);
    const read = await this.traces.spansLandedAfter(evaluator.dataset_id, after, FOLLOW_BATCH, filter, true);
    if (!read.length) return { last: null, spans: 0, sampled: 0 };
    const now = new Date();
    const offered = targetsOf(read, prepared.spec.level, prepared.spec.sampling_rate)
      .filter((t) => t.sampled)
      .map((t) => ({
        ...this.newTarget(evaluator, prepared.spec.level, t, 'backfill', backfillId, now),
        evaluator_version: prepared.version,
        complete: true,
      }));
    const sampled = await this.transactions.run(() => this.repo.offer(offered));
    return { last: read[read.length - 1].ordinal, spans: read.length, sampled };
  }

  /**
   * Claims ready targets of the version (of a backfill, when named) and scores them, until none is
   * ready, the judge cannot be reached, `deadline` passes or, between claims, `yieldNow` says other
   * work waits. Answers what the rounds came to.
   */
  async scoreReady(
    evaluator: EvaluatorRow,
    prepared: PreparedScorer,
    backfillId: string | null,
    signal: AbortSignal,
    deadline: number,
    yieldNow: () => Promise<boolean> = () => Promise.resolve(false),
  ): Promise<ScoringRound> {
    const total: ScoringRound = { claimed: 0, scored: 0, skipped: 0, unreachable: false };
    // One scorer for every claim: each judge keeps to its max_concurrency across them.
    const scorer = new ItemScorer(
      prepared.metrics,
      { row: 'all', min_pass_rate: 1, errors_fail: true },
      { input: 'input', expected_output: 'expected_output', context: 'context' },
      prepared.keys,
      signal,
    );
    while (Date.now() < deadline && !signal.aborted) {
      if (total.claimed && (await yieldNow())) {
        total.yielded = true;
        break;
      }
      const lease = this.config.env.ONLINE_LEASE_SECONDS;
      const claimed = await this.transactions.run(() =>
        this.repo.claim(evaluator.id, prepared.version, CLAIM_BATCH, lease, backfillId),
      );
      if (!claimed.length) break;
      const round = await this.scoreClaimed(evaluator, prepared, claimed, scorer);
      total.claimed += round.claimed;
      total.scored += round.scored;
      total.skipped += round.skipped;
      if (round.unreachable) {
        total.unreachable = true;
        break;
      }
    }
    return total;
  }

  private async scoreClaimed(
    evaluator: EvaluatorRow,
    prepared: PreparedScorer,
    all: TargetRow[],
    scorer: ItemScorer,
  ): Promise<ScoringRound> {
    const { spec } = prepared;
    const budget = prepared.judged ? await this.budgetRoom(evaluator, spec) : { room: all.length, reason: null };
    const claimed = all.slice(0, budget.room);
    const over = all.slice(budget.room);
    if (over.length) {
      await this.transactions.run(async () => {
        const keys = over.map((t) => t.target_key);
        await this.repo.finishMany(evaluator.id, prepared.version, keys, 'skipped', 'budget_exhausted');
        await this.repo.setStatus(evaluator.id, 'budget_exhausted', budget.reason);
      });
      if (!claimed.length) return { claimed: all.length, scored: 0, skipped: over.length, unreachable: false };
    }
    const spans = await this.spansOf(evaluator.dataset_id, spec.level, claimed);
    const limit = pLimit(TARGETS_AT_ONCE);
    const outcomes = await Promise.all(
      claimed.map((target) =>
        limit(async () => {
          const own = spans.get(target.target_key) ?? [];
          if (!own.length) return { target, own, scored: null };
          const ctx = targetContext(own, spec.mapping);
          const scored = await scorer.score({
            row_id: target.target_key,
            data: {
              input: asText(ctx.fields.input),
              expected_output: asText(ctx.fields.expected_output),
              context: asText(ctx.fields.context),
              tool_calls: ctx.fields.tool_calls,
            },
            output: ctx.fields.output as never,
            latency_ms: ctx.latency_ms,
            usage: ctx.tokens as never,
            cost_usd: null,
            // What the target's spans show the agent did: trajectory metrics score it as they score a run's.
            trajectory: trajectoryFromSpans(own as never, spec.level === 'trace' ? target.target_key : null),
          });
          return { target, own, scored, ctx };
        }),
      ),
    );
    const unreachable = outcomes.filter((o) => o.scored?.judgeErrors.some((e) => UNREACHABLE.has(e.code)));
    const done = outcomes.filter((o) => !unreachable.includes(o));
    let scored = 0;
    let skipped = 0;
    await this.transactions.run(async () => {
      const routedTraces = new Map<string, Span[]>();
      const routedRows: Array<{ rowId: string; data: Record<string, unknown> }> = [];
      // Targets whose spans are gone (retention, a deleted dataset version) have nothing left to score.
      const gone = done.filter((o) => !o.scored || !o.ctx).map((o) => o.target.target_key);
      skipped = (await this.repo.finishMany(evaluator.id, prepared.version, gone, 'skipped', 'spans_gone')).size;
      // The targets still pending end scored, and only theirs are kept: one a late worker took is not scored twice.
      const finished = await this.repo.finishMany(
        evaluator.id,
        prepared.version,
        done.filter((o) => o.scored && o.ctx).map((o) => o.target.target_key),
        'scored',
        null,
      );
      const kept = done.filter((o) => finished.has(o.target.target_key));
      await this.scores.record(kept.flatMap((o) => this.scoreRows(evaluator, prepared, o.target, o.scored!, o.ctx!)));
      scored = kept.length;
      for (const o of kept) {
        if (isRouted(spec.route, o.scored!.scores)) {
          if (spec.route?.review_queue_id) routedTraces.set(o.target.session_id ?? o.target.trace_id!, o.own);
          if (spec.route?.dataset_id) routedRows.push(this.routedRow(evaluator, o.target, o.scored!, o.ctx!));
        }
      }
      if (spec.route?.review_queue_id && routedTraces.size)
        await this.review.addFromSpans(evaluator.workspace_id, spec.route.review_queue_id, routedTraces);
      if (spec.route?.dataset_id && routedRows.length && evaluator.created_by)
        await this.rows.stageRouted(evaluator.workspace_id, spec.route.dataset_id, routedRows, {
          userId: evaluator.created_by,
          email: `online-evaluator:${evaluator.name}`,
        });
      if (unreachable.length) {
        const first = unreachable[0].scored!.judgeErrors.find((e) => UNREACHABLE.has(e.code))!;
        const detail = `judge ${first.judge} could not be reached (${first.code}: ${first.message}); ${unreachable.length} target(s) wait and are tried again`;
        await this.repo.release(
          evaluator.id,
          prepared.version,
          unreachable.map((o) => o.target.target_key),
          new Date(Date.now() + this.config.env.ONLINE_JUDGE_RETRY_MS),
          'judge_unreachable',
        );
        await this.repo.setStatus(evaluator.id, 'judge_unreachable', detail);
      } else if (scored && evaluator.status !== 'ok') await this.repo.setStatus(evaluator.id, 'ok', null);
    });
    if (unreachable.length)
      this.logger.warn(`online evaluator ${evaluator.id}: judge unreachable, ${unreachable.length} target(s) wait`);
    return { claimed: all.length, scored, skipped: skipped + over.length, unreachable: unreachable.length > 0 };
  }

  /**
   * How many more targets the budget lets the evaluator judge now (what the hour's calls leave;
   * none once the day's cost is spent), and why not more.
   */
  private async budgetRoom(
    evaluator: EvaluatorRow,
    spec: EvaluatorSpec,
  ): Promise<{ room: number; reason: string | null }> {
    const { judge_calls_per_hour: perHour, cost_per_day_usd: perDay } = spec.budget;
    if (perDay) {
      const cost = await this.scores.costSince(evaluator.id, new Date(Date.now() - 86_400_000));
      if (cost >= perDay)
        return { room: 0, reason: `judge cost ${cost.toFixed(4)} USD in the last day; the budget is ${perDay} USD` };
    }
    if (!perHour) return { room: Number.MAX_SAFE_INTEGER, reason: null };
    const used = await this.repo.scoredSince(evaluator.id, new Date(Date.now() - 3_600_000));
    return {
      room: Math.max(0, perHour - used),
      reason: `${used} targets judged in the last hour; the budget is ${perHour}`,
    };
  }

  /** The spans of each claimed target, by target key. */
  private async spansOf(datasetId: string, level: TargetLevel, targets: TargetRow[]): Promise<Map<string, Span[]>> {
    const key = level === 'session' ? 'session_id' : 'trace_id';
    const values = [...new Set(targets.map((t) => (level === 'session' ? t.session_id! : t.trace_id!)))];
    const spans = await this.traces.currentSpans(datasetId, key, values);
    const out = new Map<string, Span[]>();
    for (const span of spans) {
      const group = String(span[key]);
      const target = level === 'span' ? `${group}/${String(span.span_id)}` : group;
      const list = out.get(target) ?? [];
      list.push(span);
      out.set(target, list);
    }
    return out;
  }

  private scoreRows(
    evaluator: EvaluatorRow,
    prepared: PreparedScorer,
    target: TargetRow,
    scored: ScoredItem,
    ctx: ReturnType<typeof targetContext>,
  ): NewTraceScore[] {
    return Object.entries(scored.scores).map(([metric, s]: [string, MetricScore]) => ({
      workspace_id: evaluator.workspace_id,
      dataset_id: evaluator.dataset_id,
      evaluator_id: evaluator.id,
      evaluator_name: evaluator.name,
      evaluator_version: prepared.version,
      level: target.level,
      target_key: target.target_key,
      trace_id: target.trace_id,
      span_id: target.span_id,
      session_id: target.session_id,
      metric,
      score: s.score ?? null,
      passed: s.passed ?? null,
      label: s.label ?? null,
      reason: s.reason ?? null,
      error: s.error ?? null,
      detail: s.detail === undefined ? null : JSON.stringify(s.detail),
      service_name: ctx.service_name,
      model: ctx.model,
      cost_usd: judgeCost(scored.judgeCalls.filter((c) => c.metric === metric)),
      observed_at: ctx.observed_at,
    }));
  }

  /** A failing target as a test case: its input and output, where it came from, and its scores. */
  private routedRow(
    evaluator: EvaluatorRow,
    target: TargetRow,
    scored: ScoredItem,
    ctx: ReturnType<typeof targetContext>,
  ): { rowId: string; data: Record<string, unknown> } {
    return {
      rowId: spanRowId(evaluator.id, target.target_key, 'routed'),
      data: {
        input: asText(ctx.fields.input),
        output: asText(ctx.fields.output),
        trace_id: target.trace_id,
        session_id: target.session_id,
        span_id: target.span_id,
        source: `online evaluator ${evaluator.name} v${target.evaluator_version}`,
        scores: Object.fromEntries(
          Object.entries(scored.scores).map(([m, s]) => [m, { score: s.score ?? null, passed: s.passed ?? null }]),
        ),
      },
    };
  }

  private newTarget(
    evaluator: EvaluatorRow,
    level: TargetLevel,
    t: { key: string; trace_id: string | null; span_id: string | null; session_id: string | null; complete: boolean },
    origin: 'continuous' | 'backfill',
    backfillId: string | null,
    readyAt: Date,
  ): NewTarget {
    return {
      evaluator_id: evaluator.id,
      evaluator_version: evaluator.version,
      target_key: t.key,
      level,
      trace_id: t.trace_id,
      span_id: t.span_id,
      session_id: t.session_id,
      origin,
      backfill_id: backfillId,
      complete: t.complete,
      ready_at: readyAt,
    };
  }

  private async secret(evaluator: EvaluatorRow, secretId: string): Promise<string> {
    try {
      return await this.secrets.resolveValue(evaluator.workspace_id, secretId);
    } catch (err) {
      throw new Error(
        `online evaluator ${evaluator.name}: a secret its metrics need cannot be read (${(err as Error).message}); set it again`,
        { cause: err },
      );
    }
  }
}

/** What judge calls cost by the built-in price table (null when no call's model is priced). */
export function judgeCost(calls: JudgeCall[]): number | null {
  let total: number | null = null;
  for (const c of calls) {
    const cost = tokenCost(c.model, c.prompt_tokens, c.completion_tokens);
    if (cost !== null) total = (total ?? 0) + cost;
  }
  return total;
}
