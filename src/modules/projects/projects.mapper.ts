import type { ProjectListItem, ProjectResponse, ProjectTestPlanRef } from './dto/project.dto.js';
import type {
  PlanDatasetResponse,
  PlanMetricResponse,
  TestPlanResponse,
  TestPlanSummaryResponse,
  TestPlanVersionSummary,
} from './dto/test-plan.dto.js';
import type { TestPackageRecommendation } from './dto/recommendation.dto.js';
import type { ProjectEntity } from './entities/project.entity.js';
import type { RecommendationEntity } from './entities/recommendation.entity.js';
import type { TestPlanEntity, TestPlanVersionEntity } from './entities/test-plan.entity.js';
import { checkReason } from './builtin-recommendations.js';
import type { TemplateDetail, TemplateSummary } from './dto/template.dto.js';
import type { ProjectTemplate } from './templates/index.js';

function planRef(p: ProjectEntity, plans: ReadonlyMap<string, TestPlanEntity>): ProjectTestPlanRef | null {
  const plan = p.testPlanId ? plans.get(p.testPlanId) : undefined;
  return plan && p.testPlanVersion
    ? { id: plan.id, name: plan.name, version: p.testPlanVersion, latest_version: plan.latestVersion }
    : null;
}

export function toProjectResponse(p: ProjectEntity, plans: ReadonlyMap<string, TestPlanEntity>): ProjectResponse {
  return {
    id: p.id,
    workspace_id: p.workspaceId,
    name: p.name,
    description: p.description,
    template: p.template,
    dimensions: p.dimensions.map((d) => ({
      name: d.name,
      description: d.description,
      values: d.values.map((v) => ({ value: v.value, description: v.description })),
    })),
    sut_ids: [...p.sutIds],
    dataset_ids: [...p.datasetIds],
    test_plan: planRef(p, plans),
    created_by: p.createdBy,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

export function toProjectListItem(p: ProjectEntity, plans: ReadonlyMap<string, TestPlanEntity>): ProjectListItem {
  return {
    id: p.id,
    workspace_id: p.workspaceId,
    name: p.name,
    description: p.description,
    template: p.template,
    dimension_count: p.dimensions.length,
    sut_count: p.sutIds.length,
    dataset_count: p.datasetIds.length,
    test_plan: planRef(p, plans),
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

export function toTestPlanResponse(plan: TestPlanEntity, v: TestPlanVersionEntity): TestPlanResponse {
  return {
    id: plan.id,
    workspace_id: plan.workspaceId,
    name: plan.name,
    description: plan.description,
    version: v.number,
    latest_version: plan.latestVersion,
    version_id: v.id,
    message: v.message,
    datasets: v.datasets.map((d): PlanDatasetResponse => ({
      dataset_id: d.dataset_id,
      version_id: d.version_id,
      partition_id: d.partition_id,
    })),
    metrics: v.metrics.map((m): PlanMetricResponse => ({
      name: m.name,
      threshold: { ...m.threshold },
      per_dimension: m.per_dimension.map((d) => ({
        dimension: d.dimension,
        value: d.value,
        threshold: { ...d.threshold },
      })),
      gating: m.gating,
      ...(m.validation ? { validation: { ...m.validation } } : {}),
    })),
    release_rule: { ...v.releaseRule },
    created_by: v.createdBy,
    created_at: v.createdAt,
  };
}

export function toTestPlanSummary(
  plan: TestPlanEntity,
  latest: TestPlanVersionEntity | undefined,
  projectCount: number,
): TestPlanSummaryResponse {
  return {
    id: plan.id,
    workspace_id: plan.workspaceId,
    name: plan.name,
    description: plan.description,
    latest_version: plan.latestVersion,
    metric_count: latest?.metrics.length ?? 0,
    dataset_count: latest?.datasets.length ?? 0,
    project_count: projectCount,
    created_at: plan.createdAt,
    updated_at: plan.updatedAt,
  };
}

export function toVersionSummary(v: TestPlanVersionEntity): TestPlanVersionSummary {
  return {
    version_id: v.id,
    version: v.number,
    message: v.message,
    metric_count: v.metrics.length,
    dataset_count: v.datasets.length,
    created_by: v.createdBy,
    created_at: v.createdAt,
  };
}

export function toRecommendation(r: RecommendationEntity): TestPackageRecommendation {
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    builtin: false,
    name: r.name,
    use_case: r.useCase,
    description: r.description,
    template: null,
    metrics: r.metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      description: m.description,
      threshold: m.threshold ? { ...m.threshold } : null,
    })),
    checks: r.checks.map((id) => ({ id, reason: checkReason(id) })),
    dimensions: [...r.dimensions],
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export function toSummary(t: ProjectTemplate): TemplateSummary {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    use_case: t.use_case,
    dimension_count: t.dimensions.length,
  };
}

/** Deep copies, so a caller editing a response (before passing it to project creation) cannot touch the catalogue. */
export function toDetail(t: ProjectTemplate): TemplateDetail {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    use_case: t.use_case,
    dimensions: t.dimensions.map((d) => ({
      name: d.name,
      description: d.description,
      values: d.values.map((v) => ({ value: v.value, description: v.description })),
    })),
    suggested_metrics: t.suggested_metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      description: m.description,
      threshold: m.threshold ? { ...m.threshold } : null,
    })),
  };
}
