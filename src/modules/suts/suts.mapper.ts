import { strongEtag } from '#libs/common/etag.js';
import { defaultAdapter } from '#libs/evaluation/sut/adapter.js';
import type { HttpTransport, OpenAiChatTransport } from '#libs/evaluation/sut/sut.types.js';
import type { AdapterResponse } from './dto/adapter.dto.js';
import type { ConnectionResponse } from './dto/connection.dto.js';
import type { AdapterEntity } from './entities/adapter.entity.js';
import type { ConnectionEntity } from './entities/connection.entity.js';
import type { SutResponse } from './dto/sut.dto.js';
import type { SutEntity } from './entities/sut.entity.js';

export function adapterResponse(connection: ConnectionEntity, adapter: AdapterEntity | undefined): AdapterResponse {
  const spec = adapter?.spec ?? defaultAdapter(connection.kind);
  return {
    id: adapter?.id ?? null,
    connection_id: connection.id,
    revision: adapter?.revision ?? 0,
    source: adapter ? 'custom' : 'default',
    request: spec.request,
    response: spec.response,
    created_by: adapter?.createdBy ?? null,
    created_at: adapter?.createdAt ?? null,
  };
}

export function toConnectionResponse(c: ConnectionEntity, adapterRevision: number): ConnectionResponse {
  return {
    id: c.id,
    sut_id: c.sutId,
    workspace_id: c.workspaceId,
    name: c.name,
    kind: c.kind,
    http: c.kind === 'http' ? (c.transport as HttpTransport) : null,
    openai_chat: c.kind === 'openai_chat' ? (c.transport as OpenAiChatTransport) : null,
    auth: c.auth && c.secretId ? { secret_id: c.secretId, ...c.auth } : null,
    timeout_ms: c.limits.timeout_ms,
    max_concurrency: c.limits.max_concurrency,
    requests_per_second: c.limits.requests_per_second,
    retry: c.limits.retry,
    trace_link: c.traceLink,
    adapter_revision: adapterRevision,
    created_by: c.createdBy,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export function toSutResponse(s: SutEntity, connectionCount: number): SutResponse {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    name: s.name,
    description: s.description,
    tags: s.tags,
    connection_count: connectionCount,
    created_by: s.createdBy,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** The record's ETag (If-Match on writes; the ETag header on reads and writes). */
export function sutEtag(sut: SutResponse): string {
  return strongEtag('sut', sut.id, sut.updated_at.toISOString());
}
