import { Injectable } from '@nestjs/common';
import { MetricConfigDefaultEntity } from './entities/metric-config-default.entity.js';
import { MetricConfigEntity } from './entities/metric-config.entity.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { containsPattern } from '../../../libs/database/like.js';

export interface MetricConfigSummaryRow {
  name: string;
  kind: MetricConfigEntity['kind'];
  metric: string;
  description: string;
  latest_version: number;
  version_count: number;
  frozen_versions: number[];
  updated_at: Date;
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
    const params: unknown[] = [workspaceId];
    const where = ['workspace_id = $1'];
    if (filter.kind) where.push(`kind = $${params.push(filter.kind)}`);
    if (filter.metric) where.push(`lower(metric) = lower($${params.push(filter.metric)})`);
    if (filter.q) where.push(`name ILIKE $${params.push(containsPattern(filter.q))} ESCAPE '\\'`);
    const grouped = `SELECT (array_agg(name ORDER BY config_version DESC))[1] AS name,
        (array_agg(kind ORDER BY config_version DESC))[1] AS kind,
        (array_agg(metric ORDER BY config_version DESC))[1] AS metric,
        (array_agg(description ORDER BY config_version DESC))[1] AS description,
        max(config_version)::int AS latest_version,
        count(*)::int AS version_count,
        coalesce(array_agg(config_version ORDER BY config_version) FILTER (WHERE first_used_at IS NOT NULL), '{}') AS frozen_versions,
        max(updated_at) AS updated_at
      FROM metric_configs WHERE ${where.join(' AND ')} GROUP BY lower(name) ORDER BY lower(name)`;
    const [rows, count] = await Promise.all([
      this.configs.query(`${grouped} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [
        ...params,
        window.take,
        window.skip,
      ]) as Promise<MetricConfigSummaryRow[]>,
      this.configs.query(`SELECT count(*)::int AS n FROM (${grouped}) g`, params) as Promise<Array<{ n: number }>>,
    ]);
    return [rows, count[0].n];
  }

  find(workspaceId: string, name: string, version: number | 'latest'): Promise<MetricConfigEntity | null> {
    const query = this.configs
      .createQueryBuilder('m')
      .where('m.workspace_id = :workspaceId AND lower(m.name) = lower(:name)', { workspaceId, name });
    if (version !== 'latest') query.andWhere('m.config_version = :version', { version });
    return query.orderBy('m.config_version', 'DESC').getOne();
  }

  async lockName(workspaceId: string, name: string): Promise<MetricConfigEntity[]> {
    return this.db
      .repository(MetricConfigEntity)
      .createQueryBuilder('m')
      .setLock('pessimistic_write')
      .where('m.workspace_id = :workspaceId AND lower(m.name) = lower(:name)', { workspaceId, name })
      .orderBy('m.config_version', 'ASC')
      .getMany();
  }

  /** Every version of the workspace, newest first per name (resolution and the catalogue read them all; a workspace has hundreds at most). */
  all(workspaceId: string): Promise<MetricConfigEntity[]> {
    return this.configs.find({ where: { workspaceId }, order: { name: 'ASC', configVersion: 'DESC' } });
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
    await this.db.query(
      'UPDATE metric_configs SET first_used_at = now(), first_used_by_run = $2 WHERE id = ANY($1) AND first_used_at IS NULL',
      [ids, runId],
    );
  }

  async judgeInWorkspace(workspaceId: string, judgeId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query('SELECT 1 FROM judges WHERE id = $1 AND workspace_id = $2', [
      judgeId,
      workspaceId,
    ]);
    return rows.length > 0;
  }

  /** Eval configs that pin this exact version. */
  async evalConfigsPinning(workspaceId: string, name: string, version: number): Promise<string[]> {
    const rows: Array<{ name: string }> = await this.db.query(
      `SELECT e.name FROM eval_configs e, jsonb_array_elements(e.metrics) m
       WHERE e.workspace_id = $1 AND lower(m->>'config_name') = lower($2) AND (m->>'config_version')::int = $3 ORDER BY e.name`,
      [workspaceId, name, version],
    );
    return rows.map((r) => r.name);
  }

  /** The newest default revision of each metric (cleared pins included). */
  currentDefaults(workspaceId: string): Promise<MetricConfigDefaultEntity[]> {
    return this.db.manager
      .getRepository(MetricConfigDefaultEntity)
      .createQueryBuilder('d')
      .distinctOn(['lower(d.metric_name)'])
      .where('d.workspace_id = :workspaceId', { workspaceId })
      .orderBy('lower(d.metric_name)')
      .addOrderBy('d.revision', 'DESC')
      .getMany();
  }

  defaultHistory(workspaceId: string, metricName: string): Promise<MetricConfigDefaultEntity[]> {
    return this.defaults
      .createQueryBuilder('d')
      .where('d.workspace_id = :workspaceId AND lower(d.metric_name) = lower(:metricName)', { workspaceId, metricName })
      .orderBy('d.revision', 'DESC')
      .getMany();
  }

  /** Adds the next revision of a metric's default; callers serialise on the workspace row. */
  async insertDefault(
    entry: Pick<
      MetricConfigDefaultEntity,
      'workspaceId' | 'metricName' | 'configName' | 'configVersion' | 'note' | 'setBy'
    >,
  ): Promise<MetricConfigDefaultEntity> {
    const rows: Array<{ next: number }> = await this.db.query(
      'SELECT coalesce(max(revision), 0) + 1 AS next FROM metric_config_defaults WHERE workspace_id = $1 AND lower(metric_name) = lower($2)',
      [entry.workspaceId, entry.metricName],
    );
    const repo = this.defaults;
    return repo.save(repo.create({ ...entry, revision: rows[0].next, setAt: new Date() }));
  }

  /** The configs (`name vN`, in order, at most 20) of kind custom scoring with any of the ops named (lower case). */
  async usingOps(workspaceId: string, opNames: string[]): Promise<string[]> {
    const rows: Array<{ ref: string }> = await this.db.query(
      `SELECT DISTINCT name || ' v' || config_version AS ref FROM metric_configs
        WHERE workspace_id = $1 AND kind = 'custom' AND lower(metric) = ANY($2::text[]) ORDER BY 1 LIMIT 20`,
      [workspaceId, opNames],
    );
    return rows.map((r) => r.ref);
  }
}
