import { Injectable } from '@nestjs/common';
import type { Insertable, Selectable } from 'kysely';
import type { RunGateVerdicts } from '../../../libs/database/schema.js';
import { Db } from '../../../libs/database/unit-of-work.js';

export type GateVerdictRow = Selectable<RunGateVerdicts>;

/** Recorded gate verdicts (run_gate_verdicts), always read through their run's workspace. */
@Injectable()
export class GateVerdictsRepository {
  constructor(private readonly db: Db) {}

  /** Records the verdict, or answers the one already recorded with the same fingerprint (`created: false`). */
  async record(row: Insertable<RunGateVerdicts>): Promise<{ row: GateVerdictRow; created: boolean }> {
    const [created] = await this.db.typed((q) =>
      q
        .insertInto('run_gate_verdicts')
        .values(row)
        .onConflict((oc) => oc.columns(['run_id', 'fingerprint']).doNothing())
        .returningAll(),
    );
    if (created) return { row: created, created: true };
    const [existing] = await this.db.typed((q) =>
      q
        .selectFrom('run_gate_verdicts')
        .selectAll()
        .where('run_id', '=', row.run_id)
        .where('fingerprint', '=', row.fingerprint),
    );
    return { row: existing, created: false };
  }

  /** The run's recorded verdicts, newest first. */
  list(workspaceId: string, runId: string): Promise<GateVerdictRow[]> {
    return this.db.typed((q) =>
      q
        .selectFrom('run_gate_verdicts')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('run_id', '=', runId)
        .orderBy('recorded_at', 'desc')
        .orderBy('id', 'desc'),
    );
  }
}

/**
 * The condition on runs `r` of GET /runs' gate filters: the run's newest verdict (of the label,
 * when named) is `verdict`; with only a label, the run has a verdict of that label. Named
 * parameters `gateVerdict` and `gateLabel`.
 */
export function gateVerdictCondition(filter: { verdict?: string; label?: string }): string | null {
  const ofLabel = filter.label === undefined ? '' : ' AND v.label = :gateLabel';
  if (filter.verdict)
    return `(SELECT v.verdict FROM run_gate_verdicts v WHERE v.run_id = r.id${ofLabel} ORDER BY v.recorded_at DESC, v.id DESC LIMIT 1) = :gateVerdict`;
  if (filter.label !== undefined) return `EXISTS (SELECT 1 FROM run_gate_verdicts v WHERE v.run_id = r.id${ofLabel})`;
  return null;
}
