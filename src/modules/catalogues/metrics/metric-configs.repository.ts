import { Injectable } from '@nestjs/common';
import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool } from 'kysely';
import { MetricConfigDefaultEntity } from '../entities/metric-config-default.entity.js';
import { MetricConfigEntity, type MetricConfigKind } from '../entities/metric-config.entity.js';
import type { DB, EvalConfigs, MetricConfigs } from '#libs/database/schema.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';
import { Db } from '#libs/database/unit-of-work.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { containsText, entityList, sameText } from '#libs/database/typed-fragments.js';

type ConfigVersion = Selectable<MetricConfigs>['config_version'];

/** One line per name, from its newest version; the kind column holds a MetricConfigKind (a CHECK constraint). */
export type MetricConfigSummaryRow = Pick<
  Selectable<MetricConfigs>,
  'name' | 'metric' | 'description' | 'updated_at'
> & {
  kind: MetricConfigKind;
  latest_version: ConfigVersion;
  version_count: number;
  frozen_versions: ConfigVersion[];
};

type ConfigCondition = (eb: ExpressionBuilder<DB, 'metric_configs'>) => Expression<SqlBool>;

/** The workspace's versions grouped by name (case-insensitively), each line from its newest version. */
function summaryQuery(q: QueryBuilder, where: ConfigCondition) {
  return q
    .selectFrom('metric_configs')
    .select((eb) => {
      const newest = <C extends 'name' | 'kind' | 'metric' | 'description'>(column: C) =>
        sql<
          Selectable<MetricConfigs>[C]
        >`(${eb.fn.agg('array_agg', [column]).orderBy('config_version', 'desc')})[1]`.as(column);
      return [
        newest('name'),
        newest('kind'),
        newest('metric'),
        newest('description'),
        eb.fn.max('config_version').as('latest_version'),
        sql<number>`count(*)::int`.as('version_count'),
        eb.fn
          .coalesce(
            eb.fn
              .agg<ConfigVersion[]>('array_agg', ['config_version'])
              .orderBy('config_version')
              .filterWhere('first_used_at', 'is not', null),
            sql<ConfigVersion[]>`'{}'`,
          )
          .as('frozen_versions'),
        eb.fn.max('updated_at').as('updated_at'),
      ];
    })
    .where(where)
    .groupBy(sql`lower(name)`)
    .$narrowType<{ kind: MetricConfigKind }>();
}

/** The versions of the workspace's config of this name (compared case-insensitively), every column. */
function versionsOfName(q: QueryBuilder, workspaceId: string, name: string) {
  return q
    .selectFrom('metric_configs')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where((eb) => sameText(eb, 'name', name));
}

/** Metric config versions and the workspace's pinned defaults: queries only. */
@Injectable()
export class MetricConfigsRepository {
  constructor(private readonly db: Db) {}

  private get configs() {
    return this.db.repository(MetricConfigEntity);
  }

  private get defaults() {
    return this.db.repository(MetricConfigDefaultEntity);
  }

  /** One line per name, from its newest version. */
  async summaries(
    workspaceId: string,
    filter: { kind?: string; metric?: string; q?: string },
    window: { skip: number; take: number },
  ): Promise<[MetricConfigSummaryRow[], number]> {
    const where: ConfigCondition = (eb) =>
      eb.and([
        eb('workspace_id', '=', workspaceId),
        ...(filter.kind ? [eb('kind', '=', filter.kind)] : []),
        ...(filter.metric ? [sameText(eb, 'metric', filter.metric)] : []),
        ...(filter.q ? [containsText(eb, 'name', filter.q)] : []),
      ]);
    const [rows, count] = await Promise.all([
      this.db.typed((q) =>
        summaryQuery(q, where)
          .orderBy(sql`lower(name)`)
          .limit(window.take)
          .offset(window.skip),
      ),
      this.db.typed((q) => q.selectFrom(summaryQuery(q, where).as('g')).select(sql<number>`count(*)::int`.as('n'))),
    ]);
    return [rows, count[0].n];
  }

  async find(workspaceId: string, name: string, version: number | 'latest'): Promise<MetricConfigEntity | null> {
    const rows = await this.db.typed((q) =>
      versionsOfName(q, workspaceId, name)
        .$if(version !== 'latest', (w) => w.where('config_version', '=', version as number))
        .orderBy('config_version', 'desc'),
    );
    return entitiesFrom(this.configs, rows.slice(0, 1))[0] ?? null;
  }

  /** The workspace's config version with this id, or null. */
  findById(workspaceId: string, id: string): Promise<MetricConfigEntity | null> {
    return this.configs.findOne({ where: { id, workspaceId } });
  }

  /** Every version of the name, oldest first, locked (FOR UPDATE) until the transaction ends. */
  async lockName(workspaceId: string, name: string): Promise<MetricConfigEntity[]> {
    const rows = await this.db.typed((q) => versionsOfName(q, workspaceId, name).orderBy('config_version').forUpdate());
    return entitiesFrom(this.configs, rows);
  }

  /** Every version of the workspace, newest first per name (resolution and the catalogue read them all; a workspace has hundreds at most). */
  all(workspaceId: string): Promise<MetricConfigEntity[]> {
    return entityList(
      this.db,
      this.configs,
      (q) => q.selectFrom('metric_configs').where('workspace_id', '=', workspaceId),
      (query) => query.orderBy('name', 'asc').orderBy('config_version', 'desc'),
    );
  }

  save(config: Partial<MetricConfigEntity>): Promise<MetricConfigEntity> {
    const repo = this.configs;
    return repo.save(repo.create(config));
  }

  async delete(id: string): Promise<void> {
    await this.configs.delete({ id });
  }

  /** Freezes versions a run is about to use; the first run is remembered. */
  async markUsed(ids: string[], runId: string): Promise<void> {
    if (!ids.length) return;
    await this.db.typedWrite((q) =>
      q
        .updateTable('metric_configs')
        .set({ first_used_at: sql`now()`, first_used_by_run: runId })
        .where('id', '=', sql<string>`ANY(${ids}::uuid[])`)
        .where('first_used_at', 'is', null),
    );
  }

  async judgeInWorkspace(workspaceId: string, judgeId: string): Promise<boolean> {
    const rows = await this.db.typed((q) =>
      q.selectFrom('judges').select('id').where('id', '=', judgeId).where('workspace_id', '=', workspaceId),
    );
    return rows.length > 0;
  }

  /**
   * Eval configs that pin this exact version. Kept as SQL text: it reads the pins out of the
   * metrics array with jsonb_array_elements() in FROM and ->> operators, clearer as written.
   */
  async evalConfigsPinning(workspaceId: string, name: string, version: number): Promise<string[]> {
    const rows: Array<Pick<Selectable<EvalConfigs>, 'name'>> = await this.db.query(
      `SELECT e.name FROM eval_configs e, jsonb_array_elements(e.metrics) m
       WHERE e.workspace_id = $1 AND lower(m->>'config_name') = lower($2) AND (m->>'config_version')::int = $3 ORDER BY e.name`,
      [workspaceId, name, version],
    );
    return rows.map((r) => r.name);
  }

  /** The newest default revision of each metric (cleared pins included). */
  async currentDefaults(workspaceId: string): Promise<MetricConfigDefaultEntity[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('metric_config_defaults')
        .selectAll()
        .distinctOn((eb) => eb.fn('lower', ['metric_name']))
        .where('workspace_id', '=', workspaceId)
        .orderBy((eb) => eb.fn('lower', ['metric_name']))
        .orderBy('revision', 'desc'),
    );
    return entitiesFrom(this.defaults, rows);
  }

  async defaultHistory(workspaceId: string, metricName: string): Promise<MetricConfigDefaultEntity[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('metric_config_defaults')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => sameText(eb, 'metric_name', metricName))
        .orderBy('revision', 'desc'),
    );
    return entitiesFrom(this.defaults, rows);
  }

  /** Adds the next revision of a metric's default; callers serialise on the workspace row. */
  async insertDefault(
    entry: Pick<
      MetricConfigDefaultEntity,
      'workspaceId' | 'metricName' | 'configName' | 'configVersion' | 'note' | 'setBy'
    >,
  ): Promise<MetricConfigDefaultEntity> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('metric_config_defaults')
        .select(sql<number>`coalesce(max(revision), 0) + 1`.as('next'))
        .where('workspace_id', '=', entry.workspaceId)
        .where((eb) => sameText(eb, 'metric_name', entry.metricName)),
    );
    const repo = this.defaults;
    return repo.save(repo.create({ ...entry, revision: rows[0].next, setAt: new Date() }));
  }

  /** The configs (`name vN`, in order, at most 20) of kind custom scoring with any of the ops named (lower case). */
  async usingOps(workspaceId: string, opNames: string[]): Promise<string[]> {
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('metric_configs')
        .select((eb) => sql<string>`${eb.ref('name')} || ' v' || ${eb.ref('config_version')}`.as('ref'))
        .distinct()
        .where('workspace_id', '=', workspaceId)
        .where('kind', '=', 'custom')
        .where((eb) => eb(eb.fn('lower', ['metric']), '=', sql<string>`ANY(${opNames}::text[])`))
        .orderBy('ref')
        .limit(20),
    );
    return rows.map((r) => r.ref);
  }
}
