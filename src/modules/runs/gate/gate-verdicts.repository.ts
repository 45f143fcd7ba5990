import { Injectable } from '@nestjs/common';
import type { Expression, ExpressionBuilder, Insertable, Selectable, SqlBool } from 'kysely';
import type { DB, RunGateVerdicts } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';

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
 * The condition on runs of GET /runs' gate filters: the run's newest verdict (of the label, when
 * named) is `verdict`; with only a label, the run has a verdict of that label. Null when neither
 * is asked.
 */
export function gateVerdictCondition(filter: {
  verdict?: string;
  label?: string;
}): ((eb: ExpressionBuilder<DB, 'runs'>) => Expression<SqlBool>) | null {
  const verdicts = (eb: ExpressionBuilder<DB, 'runs'>) =>
    eb
      .selectFrom('run_gate_verdicts as v')
      .whereRef('v.run_id', '=', 'runs.id')
      .$if(filter.label !== undefined, (w) => w.where('v.label', '=', filter.label!));
  const { verdict } = filter;
  if (verdict)
    return (eb) =>
      eb(
        verdicts(eb).select('v.verdict').orderBy('v.recorded_at', 'desc').orderBy('v.id', 'desc').limit(eb.lit(1)),
        '=',
        verdict,
      );
  if (filter.label !== undefined) return (eb) => eb.exists(verdicts(eb).select(eb.lit(1).as('one')));
  return null;
}
