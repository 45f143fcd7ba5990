import { In } from 'typeorm';
import { Injectable } from '@nestjs/common';
import { ProjectEntity } from './entities/project.entity.js';
import { RecommendationEntity } from './entities/recommendation.entity.js';
import { TestPlanEntity, TestPlanVersionEntity } from './entities/test-plan.entity.js';
import { AccessCache } from '../../../libs/auth/access-cache.js';
import { Db } from '../../../libs/database/unit-of-work.js';
import { nameTaken } from '../../../libs/database/record-queries.js';
import { containsPattern } from '../../../libs/database/like.js';

const like = containsPattern;

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
    filter: { q?: string; column: string; direction: 'ASC' | 'DESC' },
    window: { skip: number; take: number },
  ): Promise<[ProjectEntity[], number]> {
    const query = this.projects.createQueryBuilder('p').where('p.workspace_id = :workspaceId', { workspaceId });
    if (filter.q) query.andWhere(`p.name ILIKE :q ESCAPE '\\'`, { q: like(filter.q) });
    return query
      .orderBy(filter.column, filter.direction)
      .addOrderBy('p.id', 'ASC')
      .skip(window.skip)
      .take(window.take)
      .getManyAndCount();
  }

  /** Projects of the workspace carrying a test plan and linking the SUT or the dataset, by name. */
  projectsWithPlanLinking(workspaceId: string, sutId: string, datasetId: string): Promise<ProjectEntity[]> {
    return this.projects
      .createQueryBuilder('p')
      .where(
        'p.workspace_id = :workspaceId AND p.test_plan_id IS NOT NULL AND (:sutId = ANY(p.sut_ids) OR :datasetId = ANY(p.dataset_ids))',
        { workspaceId, sutId, datasetId },
      )
      .orderBy('lower(p.name)', 'ASC')
      .addOrderBy('p.id', 'ASC')
      .getMany();
  }

  findProject(workspaceId: string, id: string): Promise<ProjectEntity | null> {
    return this.projects.findOne({ where: { id, workspaceId } });
  }

  /** The project in any of the workspaces given, or null. */
  findProjectIn(workspaceIds: string[], id: string): Promise<ProjectEntity | null> {
    return this.projects.findOne({ where: { id, workspaceId: In(workspaceIds) } });
  }

  async lockProject(workspaceId: string, id: string): Promise<ProjectEntity | null> {
    return this.projects
      .createQueryBuilder('p')
      .setLock('pessimistic_write')
      .where('p.id = :id AND p.workspace_id = :workspaceId', { id, workspaceId })
      .getOne();
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
    const query = this.plans.createQueryBuilder('t').where('t.workspace_id = :workspaceId', { workspaceId });
    if (q) query.andWhere(`t.name ILIKE :q ESCAPE '\\'`, { q: like(q) });
    return query
      .orderBy('lower(t.name)', 'ASC')
      .addOrderBy('t.id', 'ASC')
      .skip(window.skip)
      .take(window.take)
      .getManyAndCount();
  }

  /** A plan by id (when `ref` is a UUID) or else by name, in the workspace. */
  async findPlan(workspaceId: string, ref: string, lock = false): Promise<TestPlanEntity | null> {
    const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
    const one = (where: string) => {
      const query = this.plans
        .createQueryBuilder('t')
        .where(`t.workspace_id = :workspaceId AND ${where}`, { workspaceId, ref });
      if (lock) query.setLock('pessimistic_write');
      return query.getOne();
    };
    return (isId ? await one('t.id = :ref') : null) ?? one('lower(t.name) = lower(:ref)');
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
    return this.versions.findAndCount({
      where: { workspaceId, testPlanId: planId },
      order: { number: 'DESC' },
      ...window,
    });
  }

  /** The latest version of each plan given. */
  async latestVersions(workspaceId: string, plans: TestPlanEntity[]): Promise<TestPlanVersionEntity[]> {
    if (!plans.length) return [];
    return this.versions
      .createQueryBuilder('v')
      .innerJoin(TestPlanEntity, 't', 't.id = v.test_plan_id AND t.latest_version = v.number')
      .where('v.workspace_id = :workspaceId AND v.test_plan_id IN (:...ids)', {
        workspaceId,
        ids: plans.map((p) => p.id),
      })
      .getMany();
  }

  /** Plans by id in the workspace (for project responses). */
  plansByIds(workspaceId: string, ids: string[]): Promise<TestPlanEntity[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.plans
      .createQueryBuilder('t')
      .where('t.workspace_id = :workspaceId AND t.id IN (:...ids)', { workspaceId, ids })
      .getMany();
  }

  projectsUsingPlans(workspaceId: string, planIds: string[]): Promise<ProjectEntity[]> {
    if (!planIds.length) return Promise.resolve([]);
    return this.projects
      .createQueryBuilder('p')
      .where('p.workspace_id = :workspaceId AND p.test_plan_id IN (:...planIds)', { workspaceId, planIds })
      .orderBy('lower(p.name)')
      .getMany();
  }

  // Recommendations

  recommendationList(workspaceId: string, useCase?: string): Promise<RecommendationEntity[]> {
    return this.recommendations.find({
      where: { workspaceId, ...(useCase ? { useCase } : {}) },
      order: { name: 'ASC', id: 'ASC' },
    });
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
