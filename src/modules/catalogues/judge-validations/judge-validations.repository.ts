import { Injectable } from '@nestjs/common';
import type { Insertable, Selectable } from 'kysely';
import type { JudgeValidations } from '#libs/database/schema.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import type { PageWindow } from '#libs/database/typed-fragments.js';
import { countOf, withTotal } from '#libs/database/typed-fragments.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { JudgePair, JudgeValidationResult } from '#libs/evaluation/judge-validation.js';
import type { JudgeValidationSource } from '../entities/judge-validation.entity.js';

/** A validation as read, its JSON columns typed. */
export type JudgeValidationRow = Omit<Selectable<JudgeValidations>, 'source' | 'pairs' | 'result'> & {
  source: JudgeValidationSource;
  pairs: JudgePair[];
  result: JudgeValidationResult;
};

/** A validation without its pairs (lists, the newest of a config version). */
export type JudgeValidationSummaryRow = Omit<JudgeValidationRow, 'pairs'>;

const SUMMARY_COLUMNS = [
  'id',
  'workspace_id',
  'metric_config_id',
  'config_name',
  'config_version',
  'metric',
  'source',
  'level',
  'seed',
  'items',
  'result',
  'created_by',
  'version',
  'created_at',
  'updated_at',
] as const;

/** Judge validations (judge_validations), always read within their workspace. */
@Injectable()
export class JudgeValidationsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: Insertable<JudgeValidations>): Promise<JudgeValidationRow> {
    const [created] = await this.db.typed((q) =>
      q.insertInto('judge_validations').values(row).returningAll().$castTo<JudgeValidationRow>(),
    );
    return created;
  }

  /** The workspace's validation with its pairs, or undefined. */
  async find(workspaceId: string, id: string): Promise<JudgeValidationRow | undefined> {
    const [row] = await this.db.typed((q) =>
      q
        .selectFrom('judge_validations')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .$castTo<JudgeValidationRow>(),
    );
    return row;
  }

  /** A page of a config version's validations, newest first, and their count. */
  async page(
    workspaceId: string,
    metricConfigId: string,
    window: PageWindow,
  ): Promise<[JudgeValidationSummaryRow[], number]> {
    const matching = (q: QueryBuilder) =>
      q
        .selectFrom('judge_validations')
        .where('workspace_id', '=', workspaceId)
        .where('metric_config_id', '=', metricConfigId);
    const rows = await this.db.typed((q) =>
      matching(q)
        .select(SUMMARY_COLUMNS)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .offset(window.skip)
        .limit(window.take)
        .$castTo<JudgeValidationSummaryRow>(),
    );
    return withTotal(rows, window, () => countOf(this.db, matching));
  }

  /** The newest validation of each of these config versions (those with one). */
  async latest(workspaceId: string, metricConfigIds: readonly string[]): Promise<JudgeValidationSummaryRow[]> {
    if (metricConfigIds.length === 0) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('judge_validations')
        .select(SUMMARY_COLUMNS)
        .distinctOn('metric_config_id')
        .where('workspace_id', '=', workspaceId)
        .where('metric_config_id', 'in', [...metricConfigIds])
        .orderBy('metric_config_id')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .$castTo<JudgeValidationSummaryRow>(),
    );
    return rows;
  }
}
