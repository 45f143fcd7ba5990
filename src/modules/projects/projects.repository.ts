import { In } from 'typeorm';
import { Injectable } from '@nestjs/common';
import { ProjectEntity } from './entities/project.entity.js';
import { RecommendationEntity } from './entities/recommendation.entity.js';
import { TestPlanEntity, TestPlanVersionEntity } from './entities/test-plan.entity.js';
import { AccessCache } from '#libs/auth/access-cache.js';
import { Db } from '#libs/database/unit-of-work.js';
import { nameTaken } from '#libs/database/record-queries.js';
import { entitiesFrom } from '#libs/database/typed-entities.js';
import { containsText, entityList, entityPage, holds, sameText, sorted } from '#libs/database/typed-fragments.js';
import type { QueryBuilder } from '#libs/database/typed-queries.js';

/** What a project list sorts by: names case-insensitively, as people read them. */
export type ProjectSort = 'name' | 'created_at' | 'updated_at';

/** Names case-insensitively, as people read them. */
const BY_NAME = { column: 'name', direction: 'ASC', lower: true } as const;

/** The workspace's projects. */
function projectsOf(q: QueryBuilder, workspaceId: string) {
  return q.selectFrom('projects').where('workspace_id', '=', workspaceId);
}

/** The workspace's test plans. */
function plansOf(q: QueryBuilder, workspaceId: string) {
  return q.selectFrom('test_plans').where('workspace_id', '=', workspaceId);
}

/** Projects, test plans, recommendations, and the reads over runs that trend needs: queries only. */
@Injectable()
export class ProjectsRepository {
  constructor(
    private readonly db: Db,
    private readonly access: AccessCache,
  ) {}

  private get projects() {
    return this.db.repository(ProjectEntity);
  }

  private get plans() {
    return this.db.repository(TestPlanEntity);
  }

  private get versions() {
    return this.db.repository(TestPlanVersionEntity);
  }

  private get recommendations() {
    return this.db.repository(RecommendationEntity);
  }

  // Projects

  page(
    workspaceId: string,
    filter: { q?: string; column: ProjectSort; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ): Promise<[ProjectEntity[], number]> {
    const { q: text, column, direction } = filter;
    return entityPage(
      this.db,
      this.projects,
      (q) => projectsOf(q, workspaceId).$if(!!text, (query) => query.where((eb) => containsText(eb, 'name', text!))),
      (query) => sorted(query, { column, direction, lower: column === 'name' }, 'id'),
      window,
    );
  }

  /** Projects of the workspace carrying a test plan and linking the SUT or the dataset, by name. */
  async projectsWithPlanLinking(workspaceId: string, sutId: string, datasetId: string): Promise<ProjectEntity[]> {
    const rows = await this.db.typed((q) =>
      projectsOf(q, workspaceId)
        .selectAll()
        .where('test_plan_id', 'is not', null)
        .where((eb) => eb.or([holds(eb, 'sut_ids', sutId), holds(eb, 'dataset_ids', datasetId)]))
        .$call((query) => sorted(query, BY_NAME, 'id')),
    );
    return entitiesFrom(this.projects, rows);
  }

  findProject(workspaceId: string, id: string): Promise<ProjectEntity | null> {
    return this.projects.findOne({ where: { id, workspaceId } });
  }

  /** The project in any of the workspaces given, or null. */
  findProjectIn(workspaceIds: string[], id: string): Promise<ProjectEntity | null> {
    return this.projects.findOne({ where: { id, workspaceId: In(workspaceIds) } });
  }

  async lockProject(workspaceId: string, id: string): Promise<ProjectEntity | null> {
    const rows = await this.db.typed((q) => projectsOf(q, workspaceId).selectAll().where('id', '=', id).forUpdate());
    return entitiesFrom(this.projects, rows)[0] ?? null;
  }

  async projectNameTaken(workspaceId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(this.db, 'projects', { column: 'workspace_id', value: workspaceId }, name, exceptId);
  }

  saveProject(project: Partial<ProjectEntity>): Promise<ProjectEntity> {
    const repo = this.projects;
    return repo.save(repo.create(project));
  }

  /** Saves a project given another workspace; every process's access cache forgets where it was. */
  async saveMoved(project: ProjectEntity): Promise<ProjectEntity> {
    const saved = await this.saveProject(project);
    this.access.changed({ record: { table: 'projects', id: project.id } });
    return saved;
  }

  // Test plans

  planPage(
    workspaceId: string,
    q: string | undefined,
    window: { skip: number; take: number },
  ): Promise<[TestPlanEntity[], number]> {
    return entityPage(
      this.db,
      this.plans,
      (b) => plansOf(b, workspaceId).$if(!!q, (query) => query.where((eb) => containsText(eb, 'name', q!))),
      (query) => sorted(query, BY_NAME, 'id'),
      window,
    );
  }

  /** A plan by id (when `ref` is a UUID) or else by name, in the workspace. */
  async findPlan(workspaceId: string, ref: string, lock = false): Promise<TestPlanEntity | null> {
    const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
    const one = async (by: 'id' | 'name') => {
      const rows = await this.db.typed((q) => {
        const query = plansOf(q, workspaceId)
          .selectAll()
          .where((eb) => (by === 'id' ? eb('id', '=', ref) : sameText(eb, 'name', ref)));
        return lock ? query.forUpdate() : query;
      });
      return entitiesFrom(this.plans, rows)[0] ?? null;
    };
    return (isId ? await one('id') : null) ?? one('name');
  }

  async planNameTaken(workspaceId: string, name: string): Promise<boolean> {
    return nameTaken(this.db, 'test_plans', { column: 'workspace_id', value: workspaceId }, name);
  }

  savePlan(plan: Partial<TestPlanEntity>): Promise<TestPlanEntity> {
    const repo = this.plans;
    return repo.save(repo.create(plan));
  }

  saveVersion(version: Partial<TestPlanVersionEntity>): Promise<TestPlanVersionEntity> {
    const repo = this.versions;
    return repo.save(repo.create(version));
  }

  findVersion(workspaceId: string, planId: string, number: number): Promise<TestPlanVersionEntity | null> {
    return this.versions.findOne({ where: { workspaceId, testPlanId: planId, number } });
  }

  versionPage(
    workspaceId: string,
    planId: string,
    window: { skip: number; take: number },
  ): Promise<[TestPlanVersionEntity[], number]> {
    return entityPage(
      this.db,
      this.versions,
      (q) =>
        q.selectFrom('test_plan_versions').where('workspace_id', '=', workspaceId).where('test_plan_id', '=', planId),
      (query) => query.orderBy('number', 'desc'),
      window,
    );
  }

  /** The latest version of each plan given. */
  async latestVersions(workspaceId: string, plans: TestPlanEntity[]): Promise<TestPlanVersionEntity[]> {
    if (!plans.length) return [];
    const rows = await this.db.typed((q) =>
      q
        .selectFrom('test_plan_versions as v')
        .innerJoin('test_plans as t', (join) =>
          join.onRef('t.id', '=', 'v.test_plan_id').onRef('t.latest_version', '=', 'v.number'),
        )
        .selectAll('v')
        .where('v.workspace_id', '=', workspaceId)
        .where(
          'v.test_plan_id',
          'in',
          plans.map((p) => p.id),
        ),
    );
    return entitiesFrom(this.versions, rows);
  }

  /** Plans by id in the workspace (for project responses). */
  async plansByIds(workspaceId: string, ids: string[]): Promise<TestPlanEntity[]> {
    if (!ids.length) return [];
    const rows = await this.db.typed((q) => plansOf(q, workspaceId).selectAll().where('id', 'in', ids));
    return entitiesFrom(this.plans, rows);
  }

  async projectsUsingPlans(workspaceId: string, planIds: string[]): Promise<ProjectEntity[]> {
    if (!planIds.length) return [];
    const rows = await this.db.typed((q) =>
      projectsOf(q, workspaceId)
        .selectAll()
        .where('test_plan_id', 'in', planIds)
        .orderBy((eb) => eb.fn('lower', ['name'])),
    );
    return entitiesFrom(this.projects, rows);
  }

  // Recommendations

  recommendationList(workspaceId: string, useCase?: string): Promise<RecommendationEntity[]> {
    return entityList(
      this.db,
      this.recommendations,
      (q) =>
        q
          .selectFrom('test_package_recommendations')
          .where('workspace_id', '=', workspaceId)
          .$if(!!useCase, (query) => query.where('use_case', '=', useCase!)),
      (query) => query.orderBy('name', 'asc').orderBy('id', 'asc'),
    );
  }

  findRecommendation(workspaceId: string, id: string): Promise<RecommendationEntity | null> {
    return this.recommendations.findOne({ where: { id, workspaceId } });
  }

  async recommendationNameTaken(workspaceId: string, name: string, exceptId: string | null): Promise<boolean> {
    return nameTaken(
      this.db,
      'test_package_recommendations',
      { column: 'workspace_id', value: workspaceId },
      name,
      exceptId,
    );
  }

  saveRecommendation(rec: Partial<RecommendationEntity>): Promise<RecommendationEntity> {
    const repo = this.recommendations;
    return repo.save(repo.create(rec));
  }

  async deleteRecommendation(workspaceId: string, id: string): Promise<void> {
    await this.recommendations.delete({ id, workspaceId });
  }
}
