import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import {
  comparePairs,
  validationResult,
  type JudgePair,
  type JudgeValidationResult,
} from '#libs/evaluation/judge-validation.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import {
  toJudgeValidationComparison,
  toJudgeValidationResponse,
  toJudgeValidationSummary,
} from '../catalogues.mapper.js';
import type {
  CompareJudgeValidationsRequest,
  JudgeValidationComparisonResponse,
  JudgeValidationResponse,
  JudgeValidationSummary,
  ListJudgeValidationsQuery,
} from '../dto/judge-validation.dto.js';
import type { JudgeValidationSource } from '../entities/judge-validation.entity.js';
import { MetricConfigsRepository } from '../metrics/metric-configs.repository.js';
import { notFound, parseVersion } from '../metrics/metric-configs.service.js';
import { JudgeValidationsRepository } from './judge-validations.repository.js';

/** What a validation is recorded from: the config version, the labels' source and the per-item pairs. */
export interface JudgeValidationInput {
  metricConfigId: string;
  /** The metric's name in the run. */
  metric: string;
  source: JudgeValidationSource;
  pairs: JudgePair[];
  /** Confidence level of the intervals and seed of the bootstrap. */
  level: number;
  seed: number;
  /** A dimension to break the figures down by, or null. */
  dimension: string | null;
}

/** The newest validation of a config version, as runs (corrected pass rates, the gate) read it. */
export interface LatestValidation {
  id: string;
  config_name: string;
  config_version: number;
  result: JudgeValidationResult;
}

/**
 * Judge validations kept with the metric config version they validate: recorded by runs (which
 * pairs its verdicts with human labels), read per config version, compared two by two.
 */
@Injectable()
export class JudgeValidationsService {
  constructor(
    private readonly validations: JudgeValidationsRepository,
    private readonly configs: MetricConfigsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** A config version's validations, newest first, without their pairs. */
  async list(
    access: WorkspaceAccess,
    name: string,
    version: string,
    query: ListJudgeValidationsQuery,
  ): Promise<Page<JudgeValidationSummary>> {
    const config = await this.configs.find(access.workspaceId, name, parseVersion(version));
    if (!config) throw notFound(name, version);
    const [rows, total] = await this.validations.page(access.workspaceId, config.id, pageWindow(query));
    return { items: rows.map(toJudgeValidationSummary), total, page: query.page, page_size: query.page_size };
  }

  /** One validation with its pairs. */
  async get(access: WorkspaceAccess, id: string): Promise<JudgeValidationResponse> {
    return toJudgeValidationResponse(await this.require(access.workspaceId, id));
  }

  /** McNemar's exact test of two validations' judges on the items both hold. */
  async compare(
    access: WorkspaceAccess,
    body: CompareJudgeValidationsRequest,
  ): Promise<JudgeValidationComparisonResponse> {
    const base = await this.require(access.workspaceId, body.base_validation_id);
    const candidate = await this.require(access.workspaceId, body.candidate_validation_id);
    const comparison = comparePairs(base.pairs, candidate.pairs, base.level);
    if (comparison.items === 0)
      throw new DomainError(
        CatalogueErrors.judge_validations_no_shared_items,
        `Validations ${base.id} and ${candidate.id} share ${comparison.shared_items} items, none with both verdicts and the same human label`,
        { shared_items: comparison.shared_items, human_label_conflicts: comparison.human_label_conflicts },
      );
    return toJudgeValidationComparison(base, candidate, comparison);
  }

  /** Computes the figures from the pairs and keeps the validation with the config version (a judged one). */
  record(
    access: WorkspaceAccess,
    input: JudgeValidationInput,
    caller: Pick<Principal, 'userId' | 'email'>,
  ): Promise<JudgeValidationResponse> {
    return this.transactions.run(async () => {
      const config = await this.configs.findById(access.workspaceId, input.metricConfigId);
      if (!config) throw new NotFoundError('metric config', input.metricConfigId);
      if (config.kind !== 'judged')
        throw new DomainError(
          CatalogueErrors.judge_validation_not_judged,
          `${config.name} v${config.configVersion} is a ${config.kind} metric; only judged metrics are validated against human labels`,
        );
      const result = validationResult(input.pairs, {
        level: input.level,
        seed: input.seed,
        dimension: input.dimension,
      });
      const row = await this.validations.insert({
        workspace_id: access.workspaceId,
        metric_config_id: config.id,
        config_name: config.name,
        config_version: config.configVersion,
        metric: input.metric,
        source: JSON.stringify(input.source),
        level: input.level,
        seed: input.seed,
        items: input.pairs.length,
        pairs: JSON.stringify(input.pairs),
        result: JSON.stringify(result),
        created_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'judge_validation.recorded',
        targetType: 'metric_config',
        targetId: config.id,
        details: {
          validation_id: row.id,
          name: config.name,
          version: config.configVersion,
          run_id: input.source.run_id,
          ...(input.source.judge_run_id
            ? { queue_id: input.source.queue_id, judge_run_id: input.source.judge_run_id }
            : {}),
          items: input.pairs.length,
        },
      });
      return toJudgeValidationResponse(row);
    });
  }

  /** The newest validation of each config version that has one, by config version id. */
  async latest(workspaceId: string, metricConfigIds: readonly string[]): Promise<Map<string, LatestValidation>> {
    const rows = await this.validations.latest(workspaceId, [...new Set(metricConfigIds)]);
    return new Map(
      rows.map((v) => [
        v.metric_config_id,
        { id: v.id, config_name: v.config_name, config_version: v.config_version, result: v.result },
      ]),
    );
  }

  private async require(workspaceId: string, id: string) {
    const row = await this.validations.find(workspaceId, id);
    if (!row) throw new NotFoundError('judge validation', id);
    return row;
  }
}
