import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { AccessRepository } from '#libs/auth/access.repository.js';
import { roleAtLeast, type Principal, type WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, ForbiddenError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow, parseSort } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { DimensionsService } from '../datasets/dimensions/dimensions.service.js';
import { SutsService } from '../suts/suts.service.js';
import { PROJECT_TEMPLATES } from './templates/index.js';
import type { DimensionDefinition } from './dto/template.dto.js';
import { buildCoverage, parsePairs } from './coverage.js';
import type { CoverageQuery, ProjectCoverageResponse, TrendRequest } from './dto/insights.dto.js';
import type {
  AttachTestPlanRequest,
  CreateProjectRequest,
  ListProjectsQuery,
  MoveProjectRequest,
  ProjectCreateResponse,
  ProjectListItem,
  ProjectPatchResponse,
  ProjectResponse,
  UpdateProjectRequest,
} from './dto/project.dto.js';
import type { ProjectDimension, ProjectEntity } from './entities/project.entity.js';
import type { PlanMetricSpec, ReleaseRuleSpec, TestPlanEntity } from './entities/test-plan.entity.js';
import { toProjectListItem, toProjectResponse } from './projects.mapper.js';
import { ProjectErrors } from './projects.errors.js';
import { ProjectsRepository, type ProjectSort } from './projects.repository.js';

/** A project and the test plan version it carries (null: none), as the release gate reads them. */
export interface ReleasePlan {
  project_id: string;
  project_name: string;
  test_plan: {
    id: string;
    name: string;
    version: number;
    metrics: PlanMetricSpec[];
    release_rule: ReleaseRuleSpec;
  } | null;
}

const SORTS = { name: 'name', created_at: 'created_at', updated_at: 'updated_at' } as const satisfies Record<
  string,
  ProjectSort
>;
const DEFAULT_TREND_STATES = ['queued', 'running', 'awaiting_upload', 'succeeded', 'failed'];

/** Checks a dimension list: unique names, unique values in each. Returns a deep copy. */
export function checkDimensions(dimensions: readonly DimensionDefinition[]): ProjectDimension[] {
  const errors: string[] = [];
  const names = new Set<string>();
  for (const [i, d] of dimensions.entries()) {
    if (names.has(d.name)) errors.push(`dimensions[${i}].name: "${d.name}" appears twice`);
    names.add(d.name);
    const values = new Set<string>();
    for (const v of d.values) {
      if (values.has(v.value)) errors.push(`dimensions[${i}] (${d.name}): value "${v.value}" appears twice`);
      values.add(v.value);
    }
  }
  if (errors.length) throw new DomainError(ProjectErrors.project_dimensions_invalid, errors.join('; '), { errors });
  return dimensions.map((d) => ({
    name: d.name,
    description: d.description,
    values: d.values.map((v) => ({ value: v.value, description: v.description })),
  }));
}

function sameDimensions(a: readonly ProjectDimension[], b: readonly ProjectDimension[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const unique = (ids: readonly string[]) => [...new Set(ids.map((id) => id.toLowerCase()))];

/** What a project links: the runs of its SUTs or datasets in its workspace are its runs. */
export interface ProjectLinks {
  workspaceId: string;
  sutIds: string[];
  datasetIds: string[];
}

/** The runs a project's trend reads: of its SUTs or datasets, in the window, in these states. */
export interface TrendRunFilter {
  sutIds: string[];
  datasetIds: string[];
  from?: Date;
  to?: Date;
  states: string[];
}

/** A project's trend, checked and scoped: which runs, grouped by which of its dimensions. */
export interface ProjectTrendScope {
  projectId: string;
  groupBy: string | null;
  filter: TrendRunFilter;
}

/** Projects: their dimensions and links, the test plan version they carry, moves, coverage and the trend's scope. */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly datasets: DatasetsService,
    private readonly dimensions: DimensionsService,
    private readonly suts: SutsService,
    private readonly access: AccessRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  private async plansOf(workspaceId: string, projects: ProjectEntity[]): Promise<Map<string, TestPlanEntity>> {
    const ids = [...new Set(projects.map((p) => p.testPlanId).filter((id): id is string => !!id))];
    return new Map((await this.repo.plansByIds(workspaceId, ids)).map((p) => [p.id, p]));
  }

  private async response(p: ProjectEntity): Promise<ProjectResponse> {
    return toProjectResponse(p, await this.plansOf(p.workspaceId, [p]));
  }

  private async load(access: WorkspaceAccess, id: string): Promise<ProjectEntity> {
    const project = await this.repo.findProject(access.workspaceId, id);
    if (!project) throw new NotFoundError('project', id);
    return project;
  }

  /** A project's links (its SUTs and datasets) when it is in one of the workspaces given, else null: the runs list's filter. */
  async links(workspaceIds: string[], id: string): Promise<ProjectLinks | null> {
    const project = await this.repo.findProjectIn(workspaceIds, id);
    return project && { workspaceId: project.workspaceId, sutIds: project.sutIds, datasetIds: project.datasetIds };
  }

  async list(access: WorkspaceAccess, query: ListProjectsQuery): Promise<Page<ProjectListItem>> {
    const sort = parseSort(query.sort, SORTS, 'name');
    const [rows, total] = await this.repo.page(access.workspaceId, { q: query.q, ...sort }, pageWindow(query));
    const plans = await this.plansOf(access.workspaceId, rows);
    return pageOf(rows, total, query, (p) => toProjectListItem(p, plans));
  }

  async get(access: WorkspaceAccess, id: string): Promise<ProjectResponse> {
    return this.response(await this.load(access, id));
  }

  private async checkLinks(
    workspaceId: string,
    sutIds: string[] | undefined,
    datasetIds: string[] | undefined,
  ): Promise<void> {
    if (sutIds?.length) {
      const missing = await this.suts.missing(workspaceId, sutIds);
      if (missing.length)
        throw new DomainError(ProjectErrors.unknown_sut, `Workspace ${workspaceId} has no SUT ${missing.join(', ')}`, {
          field: 'sut_ids',
          invalid: missing,
        });
    }
    if (datasetIds?.length) {
      const missing = await this.datasets.missing(workspaceId, datasetIds);
      if (missing.length)
        throw new DomainError(
          ProjectErrors.unknown_dataset,
          `Workspace ${workspaceId} has no dataset ${missing.join(', ')}`,
          { field: 'dataset_ids', invalid: missing },
        );
    }
  }

  async create(access: WorkspaceAccess, body: CreateProjectRequest, caller: Principal): Promise<ProjectCreateResponse> {
    const template = body.template === undefined ? null : PROJECT_TEMPLATES.find((t) => t.name === body.template);
    if (template === undefined) {
      const available = PROJECT_TEMPLATES.map((t) => t.name);
      throw new DomainError(
        ProjectErrors.unknown_template,
        `No template is named '${String(body.template).slice(0, 100)}'; available templates: ${available.join(', ')}`,
        { field: 'template', available },
      );
    }
    const templateDimensions = template ? checkDimensions(template.dimensions as DimensionDefinition[]) : null;
    const dimensions = body.dimensions ? checkDimensions(body.dimensions) : (templateDimensions ?? []);
    const source: ProjectCreateResponse['dimension_source'] = templateDimensions
      ? sameDimensions(dimensions, templateDimensions)
        ? 'template'
        : 'template_edited'
      : dimensions.length
        ? 'custom'
        : 'none';
    const sutIds = unique(body.sut_ids ?? []);
    const datasetIds = unique(body.dataset_ids ?? []);
    return this.transactions.run(async () => {
      if (await this.repo.projectNameTaken(access.workspaceId, body.name, null))
        throw new DomainError(
          ProjectErrors.project_name_taken,
          `The workspace already has a project named "${body.name}"`,
        );
      await this.checkLinks(access.workspaceId, sutIds, datasetIds);
      const project = await this.repo.saveProject({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        template: template?.name ?? null,
        dimensions,
        sutIds,
        datasetIds,
        testPlanId: null,
        testPlanVersion: null,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'project.created',
        targetType: 'project',
        targetId: project.id,
        details: { name: project.name, template: project.template, dimensions: dimensions.length },
      });
      return { ...toProjectResponse(project, new Map()), dimension_source: source };
    });
  }

  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateProjectRequest,
    caller: Principal,
  ): Promise<ProjectPatchResponse> {
    const dimensions = body.dimensions ? checkDimensions(body.dimensions) : undefined;
    return this.transactions.run(async () => {
      const project = await this.repo.lockProject(access.workspaceId, id);
      if (!project) throw new NotFoundError('project', id);
      const changed: string[] = [];
      if (body.name !== undefined && body.name !== project.name) {
        if (await this.repo.projectNameTaken(access.workspaceId, body.name, project.id))
          throw new DomainError(
            ProjectErrors.project_name_taken,
            `The workspace already has a project named "${body.name}"`,
          );
        project.name = body.name;
        changed.push('name');
      }
      if (body.description !== undefined && body.description !== project.description) {
        project.description = body.description;
        changed.push('description');
      }
      if (dimensions && !sameDimensions(dimensions, project.dimensions)) {
        project.dimensions = dimensions;
        changed.push('dimensions');
      }
      const sutIds = body.sut_ids ? unique(body.sut_ids) : undefined;
      const datasetIds = body.dataset_ids ? unique(body.dataset_ids) : undefined;
      await this.checkLinks(access.workspaceId, sutIds, datasetIds);
      if (sutIds && JSON.stringify(sutIds) !== JSON.stringify(project.sutIds)) {
        project.sutIds = sutIds;
        changed.push('sut_ids');
      }
      if (datasetIds && JSON.stringify(datasetIds) !== JSON.stringify(project.datasetIds)) {
        project.datasetIds = datasetIds;
        changed.push('dataset_ids');
      }
      const saved = changed.length ? await this.repo.saveProject(project) : project;
      if (changed.length)
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'project.updated',
          targetType: 'project',
          targetId: id,
          details: { fields: changed },
        });
      return { ...(await this.response(saved)), changed };
    });
  }

  /**
   * Hands the project to another workspace where the caller is an admin too. Its SUT and dataset
   * links and its test plan name records of the old workspace, so they are dropped.
   */
  async move(
    access: WorkspaceAccess,
    id: string,
    body: MoveProjectRequest,
    caller: Principal,
  ): Promise<ProjectResponse> {
    const target = body.workspace_id.toLowerCase();
    if (target === access.workspaceId)
      throw new DomainError(ProjectErrors.project_move_invalid, 'The project is already in that workspace');
    const { exists, role } = await this.access.membership(target, caller.userId);
    if (!exists) throw new NotFoundError('workspace', target);
    if (caller.systemRole !== 'admin' && !(role && roleAtLeast(role, 'admin')))
      throw new ForbiddenError(
        `Moving a project needs the admin role in the target workspace ${target} too; yours is ${role ?? 'none'}`,
      );
    return this.transactions.run(async () => {
      const project = await this.repo.lockProject(access.workspaceId, id);
      if (!project) throw new NotFoundError('project', id);
      if (await this.repo.projectNameTaken(target, project.name, null))
        throw new DomainError(
          ProjectErrors.project_name_taken,
          `Workspace ${target} already has a project named "${project.name}"`,
        );
      const dropped = { sut_ids: project.sutIds, dataset_ids: project.datasetIds, test_plan_id: project.testPlanId };
      Object.assign(project, {
        workspaceId: target,
        sutIds: [],
        datasetIds: [],
        testPlanId: null,
        testPlanVersion: null,
      });
      const saved = await this.repo.saveMoved(project);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'project.moved_out',
        targetType: 'project',
        targetId: id,
        details: { to: target, dropped },
      });
      await this.audit.record({
        actor: caller,
        workspaceId: target,
        action: 'project.moved_in',
        targetType: 'project',
        targetId: id,
        details: { from: access.workspaceId },
      });
      return toProjectResponse(saved, new Map());
    });
  }

  /**
   * The test plan version a release is judged by: the given project's, or else the one project
   * with a test plan that links the run's SUT or dataset. Null when the project carries no plan
   * (or none links the run): the gate then judges by the run's own pass rule. Read-only.
   */
  async releasePlan(
    access: WorkspaceAccess,
    target: { projectId?: string; sutId: string; datasetId: string },
  ): Promise<ReleasePlan | null> {
    let project: ProjectEntity;
    if (target.projectId) {
      project = await this.load(access, target.projectId);
    } else {
      const candidates = await this.repo.projectsWithPlanLinking(access.workspaceId, target.sutId, target.datasetId);
      if (candidates.length === 0) return null;
      if (candidates.length > 1)
        throw new DomainError(
          ProjectErrors.project_ambiguous,
          `${candidates.length} projects with a test plan link this run (${candidates.map((p) => p.name).join(', ')}); pass project_id`,
          { project_ids: candidates.map((p) => p.id) },
        );
      project = candidates[0];
    }
    const none = { project_id: project.id, project_name: project.name, test_plan: null };
    if (!project.testPlanId) return none;
    const plan = (await this.repo.plansByIds(access.workspaceId, [project.testPlanId]))[0];
    const version = await this.repo.findVersion(access.workspaceId, project.testPlanId, project.testPlanVersion!);
    if (!plan || !version) return none;
    return {
      project_id: project.id,
      project_name: project.name,
      test_plan: {
        id: plan.id,
        name: plan.name,
        version: version.number,
        metrics: version.metrics,
        release_rule: version.releaseRule,
      },
    };
  }

  /** POST attaches (refused when one is attached), PUT attaches or replaces. */
  async attachPlan(
    access: WorkspaceAccess,
    id: string,
    body: AttachTestPlanRequest,
    replace: boolean,
    caller: Principal,
  ): Promise<ProjectPatchResponse> {
    return this.transactions.run(async () => {
      const project = await this.repo.lockProject(access.workspaceId, id);
      if (!project) throw new NotFoundError('project', id);
      if (!replace && project.testPlanId)
        throw new DomainError(
          ProjectErrors.project_test_plan_attached,
          `Project ${id} already carries a test plan; replace it with PUT /projects/${id}/test-plan`,
        );
      const plan = await this.repo.findPlan(access.workspaceId, body.test_plan);
      if (!plan)
        throw new DomainError(
          ProjectErrors.unknown_test_plan,
          `Workspace ${access.workspaceId} has no test plan "${body.test_plan}"`,
          { field: 'test_plan' },
        );
      const version = body.version ?? plan.latestVersion;
      if (!(await this.repo.findVersion(access.workspaceId, plan.id, version)))
        throw new DomainError(
          ProjectErrors.unknown_test_plan,
          `Test plan ${plan.name} has no version ${version} (latest is ${plan.latestVersion})`,
          { field: 'version' },
        );
      const changed = project.testPlanId === plan.id && project.testPlanVersion === version ? [] : ['test_plan'];
      project.testPlanId = plan.id;
      project.testPlanVersion = version;
      const saved = changed.length ? await this.repo.saveProject(project) : project;
      if (changed.length)
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: replace ? 'project.test_plan_replaced' : 'project.test_plan_attached',
          targetType: 'project',
          targetId: id,
          details: { test_plan_id: plan.id, version },
        });
      return { ...toProjectResponse(saved, new Map([[plan.id, plan]])), changed };
    });
  }

  /** Detaches the plan; a project without one is answered as it is. */
  async detachPlan(access: WorkspaceAccess, id: string, caller: Principal): Promise<ProjectResponse> {
    return this.transactions.run(async () => {
      const project = await this.repo.lockProject(access.workspaceId, id);
      if (!project) throw new NotFoundError('project', id);
      if (!project.testPlanId) return toProjectResponse(project, new Map());
      const previous = { test_plan_id: project.testPlanId, version: project.testPlanVersion };
      project.testPlanId = null;
      project.testPlanVersion = null;
      const saved = await this.repo.saveProject(project);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'project.test_plan_detached',
        targetType: 'project',
        targetId: id,
        details: previous,
      });
      return toProjectResponse(saved, new Map());
    });
  }

  async coverage(access: WorkspaceAccess, id: string, query: CoverageQuery): Promise<ProjectCoverageResponse> {
    const project = await this.load(access, id);
    const names = project.dimensions.map((d) => d.name);
    const { pairs, errors } = parsePairs(query.pairs, new Set(names));
    if (errors.length)
      throw new DomainError(ProjectErrors.project_dimension_unknown, `pairs: ${errors.join('; ')}`, {
        field: 'pairs',
        errors,
        available: names,
      });
    const minRows = query.min_rows ?? 1;
    const sources = await this.dimensions.countedVersions(access.workspaceId, project.datasetIds);
    const datasetIds = sources.map((s) => s.dataset_id);
    const counts = await this.dimensions.valueCounts(access.workspaceId, datasetIds, names);
    const pairCounts = (
      await Promise.all(pairs.map(([a, b]) => this.dimensions.pairCounts(access.workspaceId, datasetIds, a, b)))
    ).flat();
    const totalRows = sources.reduce((n, s) => n + s.rows, 0);
    const report = buildCoverage(project.dimensions, counts, totalRows, minRows, pairs, pairCounts);
    return {
      project_id: project.id,
      min_rows: minRows,
      datasets: sources.map((s) => ({
        dataset_id: s.dataset_id,
        name: s.name,
        version_id: s.version_id,
        version_number: s.n,
        version_source: s.version_source,
        rows: s.rows,
      })),
      total_rows: totalRows,
      ...report,
    };
  }

  /**
   * What a project's trend covers, checked: its SUTs and datasets, the window, the run states and
   * the dimension to group by (the runs family reads the runs: POST /projects/{id}/trend).
   */
  async trendScope(access: WorkspaceAccess, id: string, body: TrendRequest): Promise<ProjectTrendScope> {
    const project = await this.load(access, id);
    if (body.from && body.to && body.from >= body.to)
      throw new DomainError(ProjectErrors.invalid_time_range, 'from must be before to', { field: 'from' });
    const groupBy = body.group_by ?? null;
    if (groupBy && !project.dimensions.some((d) => d.name === groupBy)) {
      throw new DomainError(
        ProjectErrors.project_dimension_unknown,
        `group_by: the project has no dimension "${groupBy}"`,
        { field: 'group_by', available: project.dimensions.map((d) => d.name) },
      );
    }
    return {
      projectId: project.id,
      groupBy,
      filter: {
        sutIds: project.sutIds,
        datasetIds: project.datasetIds,
        from: body.from,
        to: body.to,
        states: body.states ?? DEFAULT_TREND_STATES,
      },
    };
  }
}
