import { Injectable } from '@nestjs/common';
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { DB } from '#libs/database/schema.js';
import { Db } from '#libs/database/unit-of-work.js';
import { countOf, withTotal, type PageWindow } from '#libs/database/typed-fragments.js';
import type { AlertState } from '#libs/evaluation/online/drop-alert.js';
import type { AlertEvaluation } from './alerts.rules.js';

export type AlertRuleRow = Omit<Selectable<DB['online_alert_rules']>, 'last_evaluation' | 'status' | 'kind'> & {
  status: AlertState['status'];
  kind: 'pass_rate';
  last_evaluation: AlertEvaluation | null;
};

/** A low score kept as an example of a drop. */
export interface AlertExampleRow {
  trace_id: string | null;
  span_id: string | null;
  session_id: string | null;
  score: number | null;
  passed: boolean | null;
  reason: string | null;
  observed_at: string;
}

/** What an event keeps: the evaluation that moved the alert and the recent window's lowest scores. */
export interface AlertEventEvidence {
  evaluation: AlertEvaluation;
  examples: AlertExampleRow[];
}

export type AlertEventRow = Omit<Selectable<DB['online_alert_events']>, 'evidence' | 'kind'> & {
  kind: 'firing' | 'resolved';
  evidence: AlertEventEvidence;
};

/** The evaluator a rule watches, as alerts read it. */
export interface WatchedEvaluator {
  id: string;
  name: string;
  dataset_id: string;
}

type NewRule = Omit<Insertable<DB['online_alert_rules']>, 'last_evaluation'>;
type RuleChange = Omit<Updateable<DB['online_alert_rules']>, 'last_evaluation' | 'id' | 'workspace_id'> & {
  last_evaluation?: AlertEvaluation | null;
};

/** Alert rules on online scores and their events: queries only, always with the workspace. */
@Injectable()
export class OnlineAlertsRepository {
  constructor(private readonly db: Db) {}

  async evaluator(workspaceId: string, evaluatorId: string): Promise<WatchedEvaluator | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_evaluators')
        .select(['id', 'name', 'dataset_id'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', evaluatorId),
    );
    return row ?? null;
  }

  /** The metrics any version of the evaluator scores, by name. */
  async scoredMetrics(evaluatorId: string): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('online_evaluator_versions')
        .select(sql<string>`jsonb_array_elements(spec->'metrics')->>'name'`.as('name'))
        .where('evaluator_id', '=', evaluatorId),
    );
    return [...new Set(rows.map((r) => r.name))].sort();
  }

  async nameTaken(evaluatorId: string, name: string, except?: string): Promise<boolean> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_alert_rules')
        .select('id')
        .where('evaluator_id', '=', evaluatorId)
        .where('name', '=', name)
        .$if(except !== undefined, (w) => w.where('id', '!=', except!)),
    );
    return Boolean(row);
  }

  async insert(values: NewRule): Promise<AlertRuleRow> {
    const [row] = await this.db.typed((q) => q.insertInto('online_alert_rules').values(values).returningAll());
    return row as unknown as AlertRuleRow;
  }

  async find(workspaceId: string, id: string, lock = false): Promise<AlertRuleRow | null> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('online_alert_rules')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .$if(lock, (w) => w.forUpdate()),
    );
    return (row as unknown as AlertRuleRow) ?? null;
  }

  /** The rule a check job works for, by the id in its payload (the job carries no caller). */
  async findRuleUnscoped(id: string): Promise<AlertRuleRow | null> {
    const [row] = await this.db.typed((q) => q.selectFrom('online_alert_rules').selectAll().where('id', '=', id));
    return (row as unknown as AlertRuleRow) ?? null;
  }

  async page(workspaceId: string, evaluatorId: string, window: PageWindow): Promise<[AlertRuleRow[], number]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('online_alert_rules')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('evaluator_id', '=', evaluatorId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .offset(window.skip)
        .limit(window.take),
    );
    return withTotal(rows as unknown as AlertRuleRow[], window, () =>
      countOf(this.db, (q) =>
        q
          .selectFrom('online_alert_rules')
          .where('workspace_id', '=', workspaceId)
          .where('evaluator_id', '=', evaluatorId),
      ),
    );
  }

  /** Writes a change; `stateVersion` makes it conditional on the state as read (false: it moved meanwhile). */
  async update(workspaceId: string, id: string, change: RuleChange, stateVersion?: number): Promise<boolean> {
    const { last_evaluation, ...rest } = change;
    const rows = await this.db.typed((q) =>
      q
        .updateTable('online_alert_rules')
        .set({
          ...rest,
          ...(last_evaluation !== undefined && {
            last_evaluation: last_evaluation && JSON.stringify(last_evaluation),
          }),
          updated_at: new Date(),
        })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .$if(stateVersion !== undefined, (w) => w.where('state_version', '=', stateVersion!))
        .returning('id'),
    );
    return rows.length > 0;
  }

  /** Moves the chain of scheduled checks on from `seq`, once: false when another attempt already did. */
  async advanceChain(workspaceId: string, id: string, seq: number): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q
        .updateTable('online_alert_rules')
        .set({ check_seq: seq + 1 })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('check_seq', '=', seq)
        .returning('id'),
    );
    return rows.length > 0;
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q.deleteFrom('online_alert_rules').where('workspace_id', '=', workspaceId).where('id', '=', id).returning('id'),
    );
    return rows.length > 0;
  }

  async insertEvent(values: {
    id: string;
    workspace_id: string;
    rule_id: string;
    evaluator_id: string;
    kind: 'firing' | 'resolved';
    evidence: AlertEventEvidence;
    deliveries: number;
  }): Promise<AlertEventRow> {
    const [row] = await this.db.typed((q) =>
      q
        .insertInto('online_alert_events')
        .values({ ...values, evidence: JSON.stringify(values.evidence) })
        .returningAll(),
    );
    return row as unknown as AlertEventRow;
  }

  async events(workspaceId: string, ruleId: string, window: PageWindow): Promise<[AlertEventRow[], number]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('online_alert_events')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('rule_id', '=', ruleId)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .offset(window.skip)
        .limit(window.take),
    );
    return withTotal(rows as unknown as AlertEventRow[], window, () =>
      countOf(this.db, (q) =>
        q.selectFrom('online_alert_events').where('workspace_id', '=', workspaceId).where('rule_id', '=', ruleId),
      ),
    );
  }
}
