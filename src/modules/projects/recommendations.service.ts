import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError, ValidationFailedError } from '#libs/common/domain-error.js';
import { isUuid } from '#libs/common/uuid.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { BUILTIN_PREFIX, builtinRecommendations, checkReason } from './builtin-recommendations.js';
import type {
  CreateRecommendationRequest,
  ListRecommendationsQuery,
  RecommendationDefinition,
  TestPackageRecommendation,
} from './dto/recommendation.dto.js';
import type { RecommendationEntity } from './entities/recommendation.entity.js';
import { toRecommendation } from './projects.mapper.js';
import { ProjectErrors } from './projects.errors.js';
import { ProjectsRepository } from './projects.repository.js';

type Definition = Pick<RecommendationEntity, 'name' | 'useCase' | 'description' | 'metrics' | 'checks' | 'dimensions'>;

function definition(body: RecommendationDefinition): Definition {
  const errors: Array<{ field: string; message: string }> = [];
  (body.checks ?? []).forEach((c, i) => {
    if (!checkReason(c))
      errors.push({
        field: `checks[${i}]`,
        message: `"${c}" is not a quality check (exact_duplicates, near_duplicates, empty_fields, pii, length_outliers, language_mismatch, label_leakage)`,
      });
  });
  const names = new Set<string>();
  body.metrics.forEach((m, i) => {
    if (names.has(m.name.toLowerCase()))
      errors.push({ field: `metrics[${i}].name`, message: `"${m.name}" appears twice` });
    names.add(m.name.toLowerCase());
  });
  if (errors.length) throw new ValidationFailedError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  return {
    name: body.name,
    useCase: body.use_case,
    description: body.description ?? '',
    metrics: body.metrics.map((m) => ({
      name: m.name,
      kind: m.kind,
      description: m.description ?? '',
      threshold: m.threshold ? { operator: m.threshold.operator, value: m.threshold.value } : null,
    })),
    checks: [...new Set(body.checks ?? [])],
    dimensions: [...new Set(body.dimensions ?? [])],
  };
}

/** Test-package recommendations: the built-in ones derived from the templates (read-only) and a workspace's own. */
@Injectable()
export class RecommendationsService {
  constructor(
    private readonly repo: ProjectsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListRecommendationsQuery): Promise<TestPackageRecommendation[]> {
    const builtins =
      query.source === 'workspace'
        ? []
        : builtinRecommendations().filter((r) => !query.use_case || r.use_case === query.use_case);
    const own =
      query.source === 'builtin'
        ? []
        : (await this.repo.recommendationList(access.workspaceId, query.use_case)).map(toRecommendation);
    return [...builtins, ...own];
  }

  async get(access: WorkspaceAccess, id: string): Promise<TestPackageRecommendation> {
    const builtin = builtinRecommendations().find((r) => r.id === id);
    if (builtin) return builtin;
    return toRecommendation(await this.own(access, id));
  }

  private async own(access: WorkspaceAccess, id: string): Promise<RecommendationEntity> {
    if (id.startsWith(BUILTIN_PREFIX) && !builtinRecommendations().some((r) => r.id === id))
      throw new NotFoundError('test-package recommendation', id.slice(0, 100));
    if (builtinRecommendations().some((r) => r.id === id))
      throw new DomainError(
        ProjectErrors.builtin_recommendation_read_only,
        `${id} is a built-in recommendation and cannot be changed or deleted; create your own with POST /test-packages/recommendations`,
      );
    const rec = isUuid(id) ? await this.repo.findRecommendation(access.workspaceId, id) : null;
    if (!rec) throw new NotFoundError('test-package recommendation', id.slice(0, 100));
    return rec;
  }

  async create(
    access: WorkspaceAccess,
    body: CreateRecommendationRequest,
    caller: Principal,
  ): Promise<TestPackageRecommendation> {
    const def = definition(body);
    return this.transactions.run(async () => {
      if (await this.repo.recommendationNameTaken(access.workspaceId, def.name, null))
        throw new DomainError(
          ProjectErrors.recommendation_name_taken,
          `The workspace already has a recommendation named "${def.name}"`,
        );
      const rec = await this.repo.saveRecommendation({
        workspaceId: access.workspaceId,
        ...def,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'test_package_recommendation.created',
        targetType: 'test_package_recommendation',
        targetId: rec.id,
        details: { name: rec.name, use_case: rec.useCase },
      });
      return toRecommendation(rec);
    });
  }

  async replace(
    access: WorkspaceAccess,
    id: string,
    body: RecommendationDefinition,
    caller: Principal,
  ): Promise<TestPackageRecommendation> {
    const existing = await this.own(access, id);
    const def = definition(body);
    return this.transactions.run(async () => {
      if (await this.repo.recommendationNameTaken(access.workspaceId, def.name, existing.id))
        throw new DomainError(
          ProjectErrors.recommendation_name_taken,
          `The workspace already has a recommendation named "${def.name}"`,
        );
      const rec = await this.repo.saveRecommendation(Object.assign(existing, def));
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'test_package_recommendation.updated',
        targetType: 'test_package_recommendation',
        targetId: rec.id,
        details: { name: rec.name },
      });
      return toRecommendation(rec);
    });
  }

  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    const existing = await this.own(access, id);
    await this.transactions.run(async () => {
      await this.repo.deleteRecommendation(access.workspaceId, existing.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'test_package_recommendation.deleted',
        targetType: 'test_package_recommendation',
        targetId: existing.id,
        details: { name: existing.name },
      });
    });
  }
}
