import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext, JobOf } from '#libs/queue/job.types.js';
import { LandingListeners } from '../traces/landing-listeners.service.js';
import { OnlineRepository, type EvaluatorRow } from './online.repository.js';
import { FOLLOW_BATCH, OnlineScoring, type PreparedScorer } from './online-scoring.service.js';
import { ONLINE_FOLLOW_JOB } from './online.jobs.js';

/**
 * A follow job keeps reading and scoring while there is work, this long at most, then hands over
 * to the next; sooner when other jobs wait for a worker.
 */
const FOLLOW_SLICE_MS = 30_000;
/** The earliest a follow job starts after the one before, when targets are still waiting to be complete. */
const MIN_DELAY_MS = 250;

/**
 * Continuous scoring: one follow job per active evaluator at a time. A landing (live or file)
 * tells the evaluators of its dataset in its own transaction (LandingListeners); an evaluator
 * with no job running, or only one waiting for later, gets one now; one whose job is running is
 * marked (`follow_again`) and that job goes on. The job reads what landed since the evaluator's
 * cursor into the ledger, scores the targets that are ready, and when nothing is left ends, or
 * queues itself for when the next waiting target is due (a trace's quiet period, a judge tried
 * again). Landing does no more than that one statement per batch.
 */
@Injectable()
export class OnlineFollow implements OnModuleInit {
  private readonly logger = new Logger(OnlineFollow.name);

  constructor(
    private readonly repo: OnlineRepository,
    private readonly scoring: OnlineScoring,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
    private readonly landings: LandingListeners,
  ) {}

  onModuleInit(): void {
    this.landings.register(({ datasetId }) => this.landed(datasetId));
  }

  /** Spans landed in the dataset (inside the landing's unit of work): its active evaluators follow. */
  async landed(datasetId: string): Promise<void> {
    for (const evaluator of await this.repo.activeOfDatasetLocked(datasetId)) await this.wake(evaluator);
  }

  /**
   * Makes sure an active evaluator (locked by the caller's unit of work) is followed now: a job is
   * queued unless one is running or queued to start now, which is told to go on.
   */
  async wake(evaluator: EvaluatorRow): Promise<void> {
    if (evaluator.state !== 'active') return;
    const waiting = evaluator.follow_run_after !== null && evaluator.follow_run_after.getTime() > Date.now();
    if (evaluator.follow_job_id && !waiting) {
      if (!evaluator.follow_again) await this.repo.followAgain(evaluator.id);
      return;
    }
    await this.queueFollow(evaluator, new Date());
  }

  private async queueFollow(evaluator: EvaluatorRow, at: Date): Promise<void> {
    const { job } = await this.queue.enqueue({
      type: ONLINE_FOLLOW_JOB,
      payload: { evaluator_id: evaluator.id },
      workspaceId: evaluator.workspace_id,
      targetType: 'online_evaluator',
      targetId: evaluator.id,
      createdBy: evaluator.created_by,
      runAfter: at,
      // Behind every other due job: a follow turn never keeps a landing waiting for a worker.
      priority: -1,
    });
    await this.repo.setFollow(evaluator.id, { follow_job_id: job.id, follow_run_after: at, follow_again: false });
  }

  @JobHandler(ONLINE_FOLLOW_JOB, { maxAttempts: 5 })
  async follow({ job, payload, signal }: JobContext<typeof ONLINE_FOLLOW_JOB>): Promise<Record<string, number>> {
    const deadline = Date.now() + FOLLOW_SLICE_MS;
    const totals = { spans: 0, scored: 0, skipped: 0 };
    let evaluator = await this.repo.findUnscoped(payload.evaluator_id);
    // Another job follows it now (this one was replaced while it waited), or it is gone or paused.
    if (!evaluator || evaluator.follow_job_id !== job.id) return totals;
    let more = false;
    const prepared = evaluator.state === 'active' ? await this.prepare(evaluator) : null;
    if (prepared) {
      for (;;) {
        const read = await this.scoring.follow(evaluator, prepared.spec);
        evaluator = (await this.repo.findUnscoped(evaluator.id))!;
        const othersWait = () => this.queue.othersDue(ONLINE_FOLLOW_JOB);
        const round = await this.scoring.scoreReady(evaluator, prepared, null, signal, deadline, othersWait);
        totals.spans += read;
        totals.scored += round.scored;
        totals.skipped += round.skipped;
        more = read === FOLLOW_BATCH || (round.claimed > 0 && !round.unreachable);
        signal.throwIfAborted();
        if (!more || Date.now() >= deadline || evaluator.version !== prepared.version) break;
        // Landing and the rest of the queue go first: the next turn is queued behind them.
        if (round.yielded || (await othersWait())) break;
      }
    }
    await this.transactions.run(() => this.handOver(payload.evaluator_id, job.id, more));
    return totals;
  }

  /**
   * The current version ready to score, or null when something it names is gone (a metric config,
   * a judge, a custom op, a secret): the evaluator shows `misconfigured` and takes nothing until
   * it is changed (its cursor stays, so what lands meanwhile is taken then).
   */
  private async prepare(evaluator: EvaluatorRow): Promise<PreparedScorer | null> {
    try {
      const prepared = await this.scoring.prepare(evaluator, evaluator.version);
      if (evaluator.status === 'misconfigured')
        await this.transactions.run(() => this.repo.setStatus(evaluator.id, 'ok', null));
      return prepared;
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      await this.transactions.run(() => this.repo.setStatus(evaluator.id, 'misconfigured', detail));
      this.logger.warn(`online evaluator ${evaluator.id} misconfigured: ${detail}`);
      return null;
    }
  }

  /** A follow job that failed for good hands over too, so the evaluator is not left without one. */
  @OnJobSettled(ONLINE_FOLLOW_JOB)
  async onFollowSettled(job: JobOf<typeof ONLINE_FOLLOW_JOB>): Promise<void> {
    if (job.status === 'succeeded') return;
    this.logger.warn(`online follow of ${job.payload.evaluator_id} ${job.status}: ${job.error?.message ?? ''}`);
    await this.transactions.run(() => this.handOver(job.payload.evaluator_id, job.id, false, 30_000));
  }

  /**
   * Ends this job's turn: the next job now when there is more to do or spans landed meanwhile,
   * later when targets wait (for their quiet period, or a judge), none otherwise.
   */
  private async handOver(evaluatorId: string, jobId: string, more: boolean, minDelayMs = MIN_DELAY_MS): Promise<void> {
    const evaluator = await this.repo.lockUnscoped(evaluatorId);
    if (!evaluator || evaluator.follow_job_id !== jobId) return;
    if (evaluator.state !== 'active' || evaluator.status === 'misconfigured') {
      await this.repo.setFollow(evaluator.id, { follow_job_id: null, follow_run_after: null, follow_again: false });
      return;
    }
    if (more || evaluator.follow_again)
      return this.queueFollow(evaluator, new Date(Date.now() + (more ? 0 : minDelayMs)));
    const next = await this.repo.nextReady(evaluator.id, evaluator.version);
    if (next) return this.queueFollow(evaluator, new Date(Math.max(next.getTime(), Date.now() + minDelayMs)));
    await this.repo.setFollow(evaluator.id, { follow_job_id: null, follow_run_after: null, follow_again: false });
  }
}
