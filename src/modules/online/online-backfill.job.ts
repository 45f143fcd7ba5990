import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import type { JobContext } from '#libs/queue/job.types.js';
import { OnlineRepository, ONLINE_BACKFILLS } from './online.repository.js';
import { OnlineScoring } from './online-scoring.service.js';
import { ONLINE_BACKFILL_JOB } from './online.jobs.js';

/** The longest a backfill waits at once for targets given back (a judge that could not be reached). */
const MAX_WAIT_MS = 30_000;

/**
 * A backfill: the evaluator version's filter and sampling over the spans of a past time range,
 * each target taken into the ledger once (one the version scored already, continuously or by an
 * earlier backfill, is not scored again), then scored. It reads the dataset in landing order and
 * keeps where it stopped in its progress, so a retry after a crash goes on from there.
 */
@Injectable()
export class OnlineBackfill {
  constructor(
    private readonly repo: OnlineRepository,
    private readonly scoring: OnlineScoring,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The queue marks the backfill running and ends it when the job ends (`tracks`). */
  @JobHandler(ONLINE_BACKFILL_JOB, { maxAttempts: 3, tracks: ONLINE_BACKFILLS })
  async backfill({
    payload,
    signal,
    progress,
  }: JobContext<typeof ONLINE_BACKFILL_JOB>): Promise<Record<string, number>> {
    const backfill = await this.repo.findBackfillUnscoped(payload.backfill_id);
    if (!backfill) throw new JobFailure(`backfill ${payload.backfill_id} is gone`, { code: 'not_found', retry: false });
    const evaluator = await this.repo.findUnscoped(backfill.evaluator_id);
    if (!evaluator) throw new JobFailure('its evaluator was deleted', { code: 'evaluator_gone', retry: false });
    const prepared = await this.scoring.prepare(evaluator, backfill.evaluator_version).catch((err: unknown) => {
      throw new JobFailure((err as Error).message, { code: 'misconfigured', retry: false });
    });
    const range = { from: backfill.from_time, to: backfill.to_time };
    const before = (backfill.progress as { after?: number } | null)?.after;
    let after = typeof before === 'number' ? before : -1;
    const report = async (phase: string) => {
      const counts = await this.repo.counts(evaluator.id, backfill.evaluator_version, backfill.id);
      const fresh = await this.repo.findBackfillUnscoped(backfill.id);
      await progress({
        phase,
        after,
        spans_read: Number(fresh?.spans_read ?? 0),
        targets_sampled: fresh?.targets_sampled ?? 0,
        ...counts,
        done: counts.scored + counts.skipped + counts.failed,
        total: counts.pending + counts.scored + counts.skipped + counts.failed,
      });
    };
    // Take the range's targets into the ledger, a batch of spans at a time.
    for (;;) {
      signal.throwIfAborted();
      const read = await this.scoring.offerRange(evaluator, prepared, backfill.id, range, after);
      if (read.last === null) break;
      after = read.last;
      await this.transactions.run(() =>
        this.repo.addBackfillCounts(backfill.id, { spans: read.spans, sampled: read.sampled }),
      );
      await report('reading');
    }
    // Score them; targets given back wait for their time.
    for (;;) {
      signal.throwIfAborted();
      await this.scoring.scoreReady(evaluator, prepared, backfill.id, signal, Date.now() + 60_000);
      await report('scoring');
      const next = await this.repo.nextReady(evaluator.id, backfill.evaluator_version, backfill.id);
      if (!next) break;
      await sleep(Math.min(MAX_WAIT_MS, Math.max(100, next.getTime() - Date.now())), undefined, { signal }).catch(
        () => undefined,
      );
    }
    const counts = await this.repo.counts(evaluator.id, backfill.evaluator_version, backfill.id);
    return { ...counts };
  }
}
