import type { CustomOpSummary, RegistryOpView } from './dto/ops.dto.js';
import type { CustomOpEntity } from './entities/custom-op.entity.js';
import type { RegistryOpEntity } from './entities/registry-op.entity.js';

export function summary(op: CustomOpEntity): CustomOpSummary {
  return {
    id: op.id,
    workspace_id: op.workspaceId,
    name: op.name,
    description: op.description,
    state: op.state,
    state_reason: op.stateReason,
    revision: op.revision,
    endpoint_url: op.endpointUrl,
    health_url: op.healthUrl || null,
    timeout_ms: op.timeoutMs,
    secret_id: op.secretId,
    last_checked_at: op.lastCheckedAt,
    created_by: op.createdBy,
    created_at: op.createdAt,
    updated_at: op.updatedAt,
  };
}

export function registeredView(versions: RegistryOpEntity[], customOp: CustomOpEntity | undefined): RegistryOpView {
  const latest = versions[0];
  const available = customOp?.state === 'active';
  return {
    name: latest.name,
    kind: latest.kind,
    description: latest.description,
    source: 'workspace',
    version: latest.opVersion,
    version_count: versions.length,
    params_schema: latest.paramsSchema,
    custom_op: customOp ? { name: customOp.name, state: customOp.state } : null,
    available,
    unavailable_reason: available
      ? null
      : customOp
        ? `custom op ${customOp.name} is ${customOp.state}${customOp.stateReason ? `: ${customOp.stateReason}` : ''}`
        : 'its custom op was deleted',
    registered_at: latest.createdAt,
  };
}
