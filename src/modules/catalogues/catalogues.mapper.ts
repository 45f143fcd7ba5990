import { strongEtag } from '#libs/common/etag.js';
import type { EvalConfigResponse } from './dto/eval-config.dto.js';
import type { EvalConfigEntity } from './entities/eval-config.entity.js';
import type { JudgeConnectionResponse, ScaleDto } from './dto/judge.dto.js';
import type { JudgeEntity } from './entities/judge.entity.js';
import type { NotificationConfigResponse } from './dto/notification-config.dto.js';
import type { NotificationConfigEntity } from './entities/notification-config.entity.js';
import type { MetricConfigResponse } from './dto/metric-config.dto.js';
import type { MetricConfigEntity } from './entities/metric-config.entity.js';
import type { WorkspaceMetricConfigDefault } from './dto/metric-defaults.dto.js';
import type { MetricConfigDefaultEntity } from './entities/metric-config-default.entity.js';
import type { EmbeddingConfigResponse } from './dto/embedding-config.dto.js';
import type { EmbeddingConfigEntity } from './entities/embedding-config.entity.js';
import type {
  JudgeValidationComparisonResponse,
  JudgeValidationResponse,
  JudgeValidationSummary,
} from './dto/judge-validation.dto.js';
import type {
  JudgeValidationRow,
  JudgeValidationSummaryRow,
} from './judge-validations/judge-validations.repository.js';
import type { PairedJudgeComparison } from '#libs/evaluation/judge-validation.js';
import { SIGNATURE_HEADER } from '#libs/common/webhook-signature.js';
import { LOCAL_EMBEDDER } from '#libs/evaluation/local-embedder.js';

/** The built-in local embedder's name: always there, never a row. */
export const LOCAL_CONFIG_NAME = 'local';

const SIGNING = {
  algorithm: 'HMAC-SHA256' as const,
  header: SIGNATURE_HEADER,
  format: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">',
};

export function toEvalConfigResponse(e: EvalConfigEntity): EvalConfigResponse {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    name: e.name,
    description: e.description,
    metrics: e.metrics,
    default_judge_id: e.defaultJudgeId,
    pass_rule: e.passRule,
    created_by: e.createdBy,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

export function toJudgeResponse(j: JudgeEntity): JudgeConnectionResponse {
  return {
    id: j.id,
    workspace_id: j.workspaceId,
    name: j.name,
    description: j.description,
    provider: j.provider,
    base_url: j.baseUrl,
    model: j.model,
    api_version: j.apiVersion,
    parameters: j.parameters,
    json_mode: j.jsonMode,
    timeout_ms: j.timeoutMs,
    max_attempts: j.maxAttempts,
    max_concurrency: j.maxConcurrency,
    secret_id: j.secretId,
    created_by: j.createdBy,
    created_at: j.createdAt,
    updated_at: j.updatedAt,
  };
}

export function toNotificationConfigResponse(
  c: NotificationConfigEntity,
  secretCreated?: boolean,
): NotificationConfigResponse {
  return {
    id: c.id,
    workspace_id: c.workspaceId,
    name: c.name,
    description: c.description,
    url: c.url,
    events: c.events,
    enabled: c.enabled,
    secret_id: c.secretId,
    ...(secretCreated !== undefined ? { secret_created: secretCreated } : {}),
    signing: SIGNING,
    created_by: c.createdBy,
    created_at: c.createdAt,
  };
}

export function toMetricConfigResponse(c: MetricConfigEntity, isLatest: boolean): MetricConfigResponse {
  return {
    id: c.id,
    workspace_id: c.workspaceId,
    name: c.name,
    version: c.configVersion,
    description: c.description,
    kind: c.kind,
    metric: c.metric,
    params: c.params,
    threshold: c.threshold,
    judged: c.judged ? { ...c.judged, scale: c.judged.scale as ScaleDto, judge_id: c.judgeId } : null,
    frozen: c.firstUsedAt !== null,
    first_used_at: c.firstUsedAt,
    first_used_by_run: c.firstUsedByRun,
    is_latest: isLatest,
    created_by: c.createdBy,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export function toMetricDefaultResponse(d: MetricConfigDefaultEntity): WorkspaceMetricConfigDefault {
  return {
    metric_name: d.metricName,
    config_name: d.configName,
    config_version: d.configVersion,
    revision: d.revision,
    note: d.note,
    set_by: d.setBy,
    set_at: d.setAt,
  };
}

/** The workspace's embedder choice as the config responses read it (`in_use`). */
export interface EmbeddingChoice {
  provider: string;
  config_ref?: string;
}

/** The built-in local embedder, shown first in every workspace's list. */
export function localEmbeddingConfigResponse(workspaceId: string, choice: EmbeddingChoice): EmbeddingConfigResponse {
  return {
    id: null,
    workspace_id: workspaceId,
    name: LOCAL_CONFIG_NAME,
    description: 'Built-in: hashed character 3- to 5-grams, deterministic, no network',
    provider: 'local',
    builtin: true,
    base_url: null,
    model: LOCAL_EMBEDDER.name,
    dimensions: LOCAL_EMBEDDER.defaultDimensions,
    batch_size: 1000,
    secret_id: null,
    in_use: choice.provider === 'local',
    created_by: null,
    created_at: null,
  };
}

export function toEmbeddingConfigResponse(c: EmbeddingConfigEntity, choice: EmbeddingChoice): EmbeddingConfigResponse {
  const ref = choice.config_ref?.toLowerCase();
  return {
    id: c.id,
    workspace_id: c.workspaceId,
    name: c.name,
    description: c.description,
    provider: c.provider,
    builtin: false,
    base_url: c.baseUrl,
    model: c.model,
    dimensions: c.dimensions,
    batch_size: c.batchSize,
    secret_id: c.secretId,
    in_use: choice.provider === 'remote' && (ref === c.id || ref === c.name.toLowerCase()),
    created_by: c.createdBy,
    created_at: c.createdAt,
  };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function evalConfigEtag(config: EvalConfigResponse): string {
  return strongEtag('eval_config', config.id, config.updated_at.toISOString());
}

export function toJudgeValidationSummary(v: JudgeValidationSummaryRow): JudgeValidationSummary {
  return {
    id: v.id,
    workspace_id: v.workspace_id,
    metric_config_id: v.metric_config_id,
    config_name: v.config_name,
    config_version: v.config_version,
    metric: v.metric,
    source: v.source,
    seed: v.seed,
    items: v.items,
    result: v.result,
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

export function toJudgeValidationResponse(v: JudgeValidationRow): JudgeValidationResponse {
  return { ...toJudgeValidationSummary(v), pairs: v.pairs };
}

/** Two validations compared on their shared items; significant at 0.05. */
export function toJudgeValidationComparison(
  base: JudgeValidationRow,
  candidate: JudgeValidationRow,
  c: PairedJudgeComparison,
): JudgeValidationComparisonResponse {
  const ref = (v: JudgeValidationRow) => ({ id: v.id, config_name: v.config_name, config_version: v.config_version });
  return {
    base: ref(base),
    candidate: ref(candidate),
    shared_items: c.shared_items,
    human_label_conflicts: c.human_label_conflicts,
    items: c.items,
    accuracy_base: c.accuracy_base,
    accuracy_candidate: c.accuracy_candidate,
    only_base_correct: c.only_a_correct,
    only_candidate_correct: c.only_b_correct,
    difference: c.difference,
    mcnemar: c.mcnemar,
    significant: c.mcnemar.p_value < 0.05,
  };
}
