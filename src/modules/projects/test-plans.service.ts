import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { PartitionsService } from '../datasets/dimensions/partitions.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import type {
  CreateTestPlanRequest,
  CreateTestPlanVersionRequest,
  ListTestPlansQuery,
  ListTestPlanVersionsQuery,
  PlanDatasetDto,
  PlanMetricDto,
  ReleaseRuleDto,
  TestPlanDetailResponse,
  TestPlanResponse,
  TestPlanSummaryResponse,
  TestPlanVersionPage,
} from './dto/test-plan.dto.js';
import type {
  PlanDatasetSpec,
  PlanMetricSpec,
  ReleaseRuleSpec,
  TestPlanEntity,
  TestPlanVersionEntity,
} from './entities/test-plan.entity.js';
import { toTestPlanResponse, toTestPlanSummary, toVersionSummary } from './projects.mapper.js';
import { ProjectErrors } from './projects.errors.js';
import { ProjectsRepository } from './projects.repository.js';

/** `3` or `latest`. */
export function parsePlanVersion(version: string): number | 'latest' {
  if (version === 'latest') return 'latest';
  if (!/^[1-9]\d{0,8}$/.test(version))
    throw new DomainError(
      ProjectErrors.invalid_test_plan_version,
      `version must be a positive integer or "latest", not "${version.slice(0, 50)}"`,
    );
  return Number(version);
}

/** Checks metrics and the release rule together; answers the stored shapes. */
export function planDefinition(
  metrics: readonly PlanMetricDto[] | readonly PlanMetricSpec[],
  rule: ReleaseRuleDto | ReleaseRuleSpec | undefined,
): { metrics: PlanMetricSpec[]; releaseRule: ReleaseRuleSpec } {
  const errors: string[] = [];
  const names = new Set<string>();
  const out = metrics.map((m, i): PlanMetricSpec => {
    if (names.has(m.name.toLowerCase())) errors.push(`metrics[${i}].name: "${m.name}" appears twice`);
    names.add(m.name.toLowerCase());
    const per = m.per_dimension ?? [];
    const seen = new Set<string>();
    for (const d of per) {
      const key = `${d.dimension}=${d.value}`;
      if (seen.has(key)) errors.push(`metrics[${i}].per_dimension: ${key} appears twice`);
      seen.add(key);
    }
    return {
      name: m.name,
      threshold: { operator: m.threshold.operator, value: m.threshold.value },
      per_dimension: per.map((d) => ({
        dimension: d.dimension,
        value: d.value,
        threshold: { operator: d.threshold.operator, value: d.threshold.value },
      })),
      gating: m.gating ?? true,
      ...(m.validation
        ? {
            validation: {
              min_kappa_lower: m.validation.min_kappa_lower ?? null,
              min_rates_lower: m.validation.min_rates_lower ?? null,
              on_failure: m.validation.on_failure,
            },
          }
        : {}),
    };
  });
  const mode = rule?.mode ?? 'all_metrics';
  const gating = out.filter((m) => m.gating).length;
  const minPassing = rule?.min_metrics_passing ?? null;
  if (mode === 'min_metrics_passing' && minPassing === null)
    errors.push('release_rule.min_metrics_passing is required with mode min_metrics_passing');
  if (mode === 'all_metrics' && minPassing !== null)
    errors.push('release_rule.min_metrics_passing is for mode min_metrics_passing');
  if (minPassing !== null && minPassing > gating)
    errors.push(`release_rule.min_metrics_passing (${minPassing}) exceeds the ${gating} gating metrics`);
  if (!gating) errors.push('at least one metric must be gating');
  if (errors.length) throw new DomainError(ProjectErrors.test_plan_invalid, errors.join('; '), { errors });
  return {
    metrics: out,
    releaseRule: {
      mode,
      min_metrics_passing: minPassing,
      include_dimension_thresholds: rule?.include_dimension_thresholds ?? true,
      min_row_pass_rate: rule?.min_row_pass_rate ?? null,
    },
  };
}

/** Named, versioned test plans: datasets or partitions, metrics with thresholds, and the release rule. */
@Injectable()
export class TestPlansService {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly datasets: DatasetsService,
    private readonly datasetVersions: VersionsService,
    private readonly partitions: PartitionsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  private async plan(workspaceId: string, ref: string, lock = false): Promise<TestPlanEntity> {
    // Names follow the catalogue name rule; anything else cannot name a plan (and is never sent to the database).
    const plan = /^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,99}$/.test(ref)
      ? await this.repo.findPlan(workspaceId, ref, lock)
      : null;
    if (!plan) throw new NotFoundError('test plan', ref.slice(0, 100));
    return plan;
  }

  private async checkDatasets(
    workspaceId: string,
    datasets: readonly PlanDatasetDto[] | readonly PlanDatasetSpec[],
  ): Promise<PlanDatasetSpec[]> {
    const invalid: string[] = [];
    const missing = await this.datasets.missing(workspaceId, [
      ...new Set(datasets.map((d) => d.dataset_id.toLowerCase())),
    ]);
    invalid.push(...missing.map((id) => `dataset ${id}`));
    for (const d of datasets) {
      if (missing.includes(d.dataset_id.toLowerCase())) continue;
      if (d.version_id && !(await this.datasetVersions.find(workspaceId, d.dataset_id, d.version_id)))
        invalid.push(`version ${d.version_id} of dataset ${d.dataset_id}`);
      if (d.partition_id && !(await this.partitions.isOfDataset(workspaceId, d.dataset_id, d.partition_id)))
        invalid.push(`partition ${d.partition_id} of dataset ${d.dataset_id}`);
    }
    if (invalid.length)
      throw new DomainError(ProjectErrors.unknown_dataset, `Workspace ${workspaceId} has no ${invalid.join(', ')}`, {
        field: 'datasets',
        invalid,
      });
    return datasets.map((d) => ({
      dataset_id: d.dataset_id.toLowerCase(),
      version_id: d.version_id ?? null,
      partition_id: d.partition_id ?? null,
    }));
  }

  async list(access: WorkspaceAccess, query: ListTestPlansQuery): Promise<Page<TestPlanSummaryResponse>> {
    const [plans, total] = await this.repo.planPage(access.workspaceId, query.q, pageWindow(query));
    const latest = await this.repo.latestVersions(access.workspaceId, plans);
    const projects = await this.repo.projectsUsingPlans(
      access.workspaceId,
      plans.map((p) => p.id),
    );
    return pageOf(plans, total, query, (p) =>
      toTestPlanSummary(
        p,
        latest.find((v) => v.testPlanId === p.id),
        projects.filter((x) => x.testPlanId === p.id).length,
      ),
    );
  }

  async create(access: WorkspaceAccess, body: CreateTestPlanRequest, caller: Principal): Promise<TestPlanResponse> {
    const definition = planDefinition(body.metrics, body.release_rule);
    return this.transactions.run(async () => {
      if (await this.repo.planNameTaken(access.workspaceId, body.name))
        throw new DomainError(
          ProjectErrors.test_plan_name_taken,
          `The workspace already has a test plan named "${body.name}"; add a version with POST /test-plans/${body.name}/versions`,
        );
      const datasets = await this.checkDatasets(access.workspaceId, body.datasets);
      const plan = await this.repo.savePlan({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        latestVersion: 1,
        createdBy: caller.userId,
      });
      const version = await this.repo.saveVersion({
        workspaceId: access.workspaceId,
        testPlanId: plan.id,
        number: 1,
        message: body.message ?? '',
        datasets,
        ...definition,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'test_plan.created',
        targetType: 'test_plan',
        targetId: plan.id,
        details: { name: plan.name, version: 1 },
      });
      return toTestPlanResponse(plan, version);
    });
  }

  /** The next version, from `from_version` (default the latest): what the body leaves out is copied. */
  async createVersion(
    access: WorkspaceAccess,
    ref: string,
    body: CreateTestPlanVersionRequest,
    caller: Principal,
  ): Promise<TestPlanResponse> {
    return this.transactions.run(async () => {
      const plan = await this.plan(access.workspaceId, ref, true);
      const baseNumber = body.from_version ?? plan.latestVersion;
      const base = await this.repo.findVersion(access.workspaceId, plan.id, baseNumber);
      if (!base)
        throw new DomainError(
          ProjectErrors.test_plan_invalid,
          `from_version: ${plan.name} has no version ${baseNumber} (latest is ${plan.latestVersion})`,
          { errors: ['from_version names no version'] },
        );
      const definition = planDefinition(body.metrics ?? base.metrics, body.release_rule ?? base.releaseRule);
      const datasets = await this.checkDatasets(access.workspaceId, body.datasets ?? base.datasets);
      const number = plan.latestVersion + 1;
      plan.latestVersion = number;
      if (body.description !== undefined) plan.description = body.description;
      const saved = await this.repo.savePlan(plan);
      const version = await this.repo.saveVersion({
        workspaceId: access.workspaceId,
        testPlanId: plan.id,
        number,
        message: body.message ?? '',
        datasets,
        ...definition,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'test_plan.version_created',
        targetType: 'test_plan',
        targetId: plan.id,
        details: { version: number, from_version: baseNumber },
      });
      return toTestPlanResponse(saved, version);
    });
  }

  async get(access: WorkspaceAccess, ref: string, version: string = 'latest'): Promise<TestPlanDetailResponse> {
    const wanted = parsePlanVersion(version);
    const plan = await this.plan(access.workspaceId, ref);
    const number = wanted === 'latest' ? plan.latestVersion : wanted;
    const v = await this.repo.findVersion(access.workspaceId, plan.id, number);
    if (!v) throw new NotFoundError('test plan version', `${plan.name} v${number}`);
    return this.detail(plan, v);
  }

  private async detail(plan: TestPlanEntity, v: TestPlanVersionEntity): Promise<TestPlanDetailResponse> {
    const projects = await this.repo.projectsUsingPlans(plan.workspaceId, [plan.id]);
    return {
      ...toTestPlanResponse(plan, v),
      is_latest: v.number === plan.latestVersion,
      projects: projects.map((p) => ({ id: p.id, name: p.name, version: p.testPlanVersion ?? 0 })),
    };
  }

  async versions(access: WorkspaceAccess, ref: string, query: ListTestPlanVersionsQuery): Promise<TestPlanVersionPage> {
    const plan = await this.plan(access.workspaceId, ref);
    const [rows, total] = await this.repo.versionPage(access.workspaceId, plan.id, pageWindow(query));
    return {
      test_plan_id: plan.id,
      name: plan.name,
      latest_version: plan.latestVersion,
      ...pageOf(rows, total, query, toVersionSummary),
    };
  }
}
