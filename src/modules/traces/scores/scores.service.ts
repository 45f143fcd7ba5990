import { Injectable } from '@nestjs/common';
import {
  type NewTraceScore,
  type ScoreWindow,
  TraceScoresRepository,
  type TraceScoreRow,
} from './scores.repository.js';

export type { NewTraceScore, ScoreWindow, TraceScoreRow } from './scores.repository.js';

/** One evaluator metric's scores in a window, as numbers. */
export interface ScoreWindowStats {
  /** Score records in the window (errors included). */
  n: number;
  /** Records with a score. */
  scored: number;
  passed: number;
  failed: number;
  errored: number;
  mean: number | null;
  sd: number | null;
}

/**
 * Scores of production traces, kept by the traces family beside the spans they score: written by
 * online evaluation once per evaluator version, target and metric, read back per trace, per
 * window (alerts) and with a version's enrichment.
 */
@Injectable()
export class TraceScoresService {
  constructor(private readonly scores: TraceScoresRepository) {}

  /** Keeps the scores no earlier write kept (inside the caller's unit of work); answers how many were new. */
  record(rows: NewTraceScore[]): Promise<number> {
    return this.scores.insert(rows);
  }

  async windowStats(window: ScoreWindow): Promise<ScoreWindowStats> {
    const c = await this.scores.windowCounts(window);
    const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
    return {
      n: Number(c.n),
      scored: Number(c.scored),
      passed: Number(c.passed),
      failed: Number(c.failed),
      errored: Number(c.errored),
      mean: num(c.mean),
      sd: num(c.sd),
    };
  }

  /** The window's lowest scores (failures first), at most `limit`. */
  lowest(window: ScoreWindow, limit: number): Promise<TraceScoreRow[]> {
    return this.scores.lowest(window, limit);
  }

  /** The judge cost (USD) an evaluator's scores recorded since `since`: what a daily budget counts. */
  costSince(evaluatorId: string, since: Date): Promise<number> {
    return this.scores.costSince(evaluatorId, since);
  }

  forTraces(workspaceId: string, datasetId: string, traceIds: string[]): Promise<TraceScoreRow[]> {
    return this.scores.forTraces(workspaceId, datasetId, traceIds);
  }
}
