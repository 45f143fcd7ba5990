import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { rowContext } from '#libs/evaluation/row-context.js';
import { checkAdapter, DEFAULT_RETRY, defaultAdapter, renderRequest } from '#libs/evaluation/sut/adapter.js';
import { extractResponse } from '#libs/evaluation/sut/extract.js';
import { callSut } from '#libs/evaluation/sut/sut-client.js';
import type {
  AdapterIssue,
  AdapterSpec,
  ConnectionSpec,
  HttpTransport,
  OpenAiChatTransport,
  TraceLink,
} from '#libs/evaluation/sut/sut.types.js';
import { SecretReferences } from '../secrets/secret-references.service.js';
import { SecretsService } from '../secrets/secrets.service.js';
import type {
  AdapterResponse,
  AdapterValidateResult,
  ConnectionTestRequest,
  ConnectionTestResult,
  CreateAdapterRequest,
  SampleRowDto,
  ValidateAdapterRequest,
} from './dto/adapter.dto.js';
import type {
  ConnectionAuthDto,
  ConnectionResponse,
  CreateConnectionRequest,
  UpdateConnectionRequest,
} from './dto/connection.dto.js';
import type { ConnectionEntity, ConnectionLimits } from './entities/connection.entity.js';
import { SutErrors } from './suts.errors.js';
import { SutsRepository } from './suts.repository.js';
import { adapterResponse, toConnectionResponse } from './suts.mapper.js';

/** A trace link's defaults: an exporter's batch delay (5 s by default) with room, and a second of quiet. */
const DEFAULT_TRACE_WAIT_MS = 15_000;
const DEFAULT_TRACE_SETTLE_MS = 1_000;

const DEFAULT_LIMITS: Omit<ConnectionLimits, 'retry'> = {
  timeout_ms: 30_000,
  max_concurrency: 8,
  requests_per_second: null,
};
const TEST_ROW = {
  input: 'Hello! This is a connection test from the Evaluation Workspace Service. Please answer briefly.',
};

/**
 * How a SUT is reached (connections), how rows become requests (adapter revisions), a dry run of
 * an adapter on a sample (validate) and one real call (test). Runs read the same records.
 */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly suts: SutsRepository,
    private readonly secretReferences: SecretReferences,
    private readonly secrets: SecretsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, sutId: string): Promise<ConnectionResponse[]> {
    await this.requireSut(access, sutId);
    const connections = await this.suts.listConnections(sutId);
    const adapters = await this.suts.currentAdapters(connections.map((c) => c.id));
    return connections.map((c) => toConnectionResponse(c, adapters.get(c.id)?.revision ?? 0));
  }

  async create(
    access: WorkspaceAccess,
    sutId: string,
    body: CreateConnectionRequest,
    caller: Principal,
  ): Promise<ConnectionResponse> {
    const transport = transportFor(body.kind, body);
    if (body.kind === 'offline' && body.auth)
      throw new DomainError(
        SutErrors.connection_transport_invalid,
        'An offline connection sends nothing: it takes no auth',
      );
    const connection = await this.transactions.run(async () => {
      await this.requireSut(access, sutId);
      if (await this.suts.connectionNameTaken(sutId, body.name, null)) throw nameTaken(body.name);
      if (body.auth) await this.useSecret(access, body.auth);
      const created = await this.suts.saveConnection({
        workspaceId: access.workspaceId,
        sutId,
        name: body.name,
        kind: body.kind,
        transport,
        auth: body.auth ? authShape(body.auth) : null,
        secretId: body.auth?.secret_id ?? null,
        limits: limitsOf(body, { ...DEFAULT_LIMITS, retry: DEFAULT_RETRY }),
        traceLink: traceLinkOf(body.trace_link, null),
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut_connection.created',
        targetType: 'sut_connection',
        targetId: created.id,
        details: { sut_id: sutId, name: created.name, kind: created.kind, destination: destinationOf(created) },
      });
      return created;
    });
    return toConnectionResponse(connection, 0);
  }

  /** `http` / `openai_chat` replace the transport as a whole; `retry` is merged over the current policy; `auth: null` removes the key. */
  async update(
    access: WorkspaceAccess,
    sutId: string,
    id: string,
    body: UpdateConnectionRequest,
    caller: Principal,
  ): Promise<ConnectionResponse> {
    const updated = await this.transactions.run(async () => {
      await this.requireSut(access, sutId);
      const connection = await this.suts.findConnectionForUpdate(sutId, id);
      if (!connection) throw new NotFoundError('connection', id);
      const before = { destination: destinationOf(connection), secret_id: connection.secretId };
      if (body.name !== undefined && body.name !== connection.name) {
        if (await this.suts.connectionNameTaken(sutId, body.name, id)) throw nameTaken(body.name);
        connection.name = body.name;
      }
      if (body.http !== undefined || body.openai_chat !== undefined)
        connection.transport = transportFor(connection.kind, body);
      if (body.auth === null) {
        connection.auth = null;
        connection.secretId = null;
      } else if (body.auth !== undefined) {
        if (connection.kind === 'offline')
          throw new DomainError(
            SutErrors.connection_transport_invalid,
            'An offline connection sends nothing: it takes no auth',
          );
        await this.useSecret(access, body.auth);
        connection.auth = authShape(body.auth);
        connection.secretId = body.auth.secret_id;
      }
      const destination = destinationOf(connection);
      if (connection.secretId && destination !== before.destination)
        this.secretReferences.requireAdmin(access, 'change where a connection that sends a secret points');
      connection.limits = limitsOf(body, connection.limits);
      connection.traceLink = traceLinkOf(body.trace_link, connection.traceLink);
      const saved = await this.suts.saveConnection(connection);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut_connection.updated',
        targetType: 'sut_connection',
        targetId: id,
        details: {
          sut_id: sutId,
          fields: Object.keys(body),
          destination: { from: before.destination, to: destination },
          secret_id: { from: before.secret_id, to: connection.secretId },
        },
      });
      return saved;
    });
    const adapter = (await this.suts.currentAdapters([id])).get(id);
    return toConnectionResponse(updated, adapter?.revision ?? 0);
  }

  async delete(access: WorkspaceAccess, sutId: string, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      await this.requireSut(access, sutId);
      const connection = await this.suts.findConnectionForUpdate(sutId, id);
      if (!connection) throw new NotFoundError('connection', id);
      await this.suts.deleteConnection(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut_connection.deleted',
        targetType: 'sut_connection',
        targetId: id,
        details: { sut_id: sutId, name: connection.name },
      });
    });
  }

  /** The adapter in force: the newest revision, or the kind's default before one is posted. */
  async getAdapter(access: WorkspaceAccess, sutId: string, id: string): Promise<AdapterResponse> {
    const connection = await this.requireConnection(access, sutId, id);
    const adapter = (await this.suts.currentAdapters([id])).get(id);
    return adapterResponse(connection, adapter);
  }

  /** Adds a revision after checking every template and path; earlier revisions stay as runs recorded them. */
  async createAdapter(
    access: WorkspaceAccess,
    sutId: string,
    id: string,
    body: CreateAdapterRequest,
    caller: Principal,
  ): Promise<AdapterResponse> {
    const spec = specOfBody(body);
    return this.transactions.run(async () => {
      await this.requireSut(access, sutId);
      const connection = await this.suts.findConnectionForUpdate(sutId, id);
      if (!connection) throw new NotFoundError('connection', id);
      assertAdapter(spec, connection);
      const adapter = await this.suts.insertAdapter({
        workspaceId: access.workspaceId,
        connectionId: id,
        spec,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sut_adapter.created',
        targetType: 'sut_connection',
        targetId: id,
        details: { sut_id: sutId, revision: adapter.revision },
      });
      return adapterResponse(connection, adapter);
    });
  }

  /** Renders the request for a sample row and extracts from a sample response, calling nothing. */
  async validate(
    access: WorkspaceAccess,
    sutId: string,
    id: string,
    body: ValidateAdapterRequest,
  ): Promise<AdapterValidateResult> {
    const connection = await this.requireConnection(access, sutId, id);
    const current = (await this.suts.currentAdapters([id])).get(id);
    const spec = body.adapter ? specOfBody(body.adapter) : (current?.spec ?? defaultAdapter(connection.kind));
    assertAdapter(spec, connection);
    const issues: AdapterIssue[] = [];
    let request: AdapterValidateResult['request'] = null;
    if (connection.kind !== 'offline') {
      // The secret's place is shown as *** : validate never reads its value.
      const rendered = renderRequest(
        connectionSpec(connection),
        spec,
        sampleRow(body),
        connection.secretId ? '***' : null,
        { redact: true },
      );
      issues.push(...rendered.issues);
      request = rendered.issues.length ? null : rendered.request;
    }
    let extracted: AdapterValidateResult['extracted'] = null;
    if (body.response !== undefined) {
      const parsed = responseBody(body.response);
      if (parsed.issue) issues.push(parsed.issue);
      else {
        const result = extractResponse(spec.response, parsed.value, connection.kind);
        issues.push(...result.issues);
        extracted = result.extracted;
      }
    }
    return {
      valid: issues.length === 0,
      issues,
      request,
      extracted,
      adapter_revision: body.adapter ? null : (current?.revision ?? 0),
    };
  }

  /** One real call through the connection and its adapter in force. */
  async test(
    access: WorkspaceAccess,
    sutId: string,
    id: string,
    body: ConnectionTestRequest,
  ): Promise<ConnectionTestResult> {
    const connection = await this.requireConnection(access, sutId, id);
    if (connection.kind === 'offline')
      throw new DomainError(
        SutErrors.connection_not_callable,
        'An offline connection has no endpoint to call; upload outputs to an offline run instead',
      );
    const adapter = (await this.suts.currentAdapters([id])).get(id);
    const secret = connection.secretId
      ? await this.secrets.resolveValue(access.workspaceId, connection.secretId)
      : null;
    const result = await callSut(
      connectionSpec(connection),
      adapter?.spec ?? defaultAdapter(connection.kind),
      sampleRow({ ...body, row: body.row ?? TEST_ROW }),
      { secret },
    );
    return {
      ok: result.ok,
      status_code: result.status_code,
      latency_ms: result.latency_ms,
      attempts: result.attempts,
      request: result.request,
      output: result.extracted?.output ?? null,
      usage: result.extracted?.usage ?? null,
      cost_usd: result.extracted?.cost_usd ?? null,
      extras: result.extracted?.extras ?? {},
      trajectory: result.extracted?.trajectory ?? null,
      error: result.error,
      response_excerpt: result.response_excerpt,
      adapter_revision: adapter?.revision ?? 0,
    };
  }

  private async requireSut(access: WorkspaceAccess, sutId: string): Promise<void> {
    if (!(await this.suts.find(access.workspaceId, sutId))) throw new NotFoundError('SUT', sutId);
  }

  private async requireConnection(access: WorkspaceAccess, sutId: string, id: string): Promise<ConnectionEntity> {
    await this.requireSut(access, sutId);
    const connection = await this.suts.findConnection(sutId, id);
    if (!connection) throw new NotFoundError('connection', id);
    return connection;
  }

  private async useSecret(access: WorkspaceAccess, auth: ConnectionAuthDto): Promise<void> {
    if (auth.scheme === 'header' && !auth.header)
      throw new DomainError(SutErrors.auth_incomplete, 'auth.scheme `header` needs auth.header (e.g. x-api-key)');
    if (auth.scheme === 'query' && !auth.param)
      throw new DomainError(SutErrors.auth_incomplete, 'auth.scheme `query` needs auth.param (e.g. api_key)');
    await this.secretReferences.requireUsable(access, auth.secret_id);
  }
}

/** The connection as the SUT client takes it. */
export function connectionSpec(c: ConnectionEntity): ConnectionSpec {
  return {
    kind: c.kind,
    http: c.kind === 'http' ? (c.transport as HttpTransport) : undefined,
    openai_chat: c.kind === 'openai_chat' ? (c.transport as OpenAiChatTransport) : undefined,
    auth: c.auth && c.secretId ? { ...c.auth, secret_id: c.secretId } : null,
    ...c.limits,
    trace_link: c.traceLink,
  };
}

function transportFor(
  kind: ConnectionEntity['kind'],
  body: UpdateConnectionRequest,
): HttpTransport | OpenAiChatTransport | null {
  const invalid = (detail: string) => new DomainError(SutErrors.connection_transport_invalid, detail);
  if (kind === 'offline') {
    if (body.http || body.openai_chat)
      throw invalid('An offline connection takes neither `http` nor `openai_chat`: its outputs are uploaded');
    return null;
  }
  if (kind === 'http') {
    if (body.openai_chat) throw invalid('A connection of kind http takes `http`, not `openai_chat`');
    if (!body.http) throw invalid('A connection of kind http needs `http` ({url, method, headers})');
    return { url: body.http.url, method: body.http.method ?? 'POST', headers: lowerKeys(body.http.headers ?? {}) };
  }
  if (body.http) throw invalid('A connection of kind openai_chat takes `openai_chat`, not `http`');
  if (!body.openai_chat)
    throw invalid('A connection of kind openai_chat needs `openai_chat` ({base_url, model, parameters})');
  return {
    base_url: body.openai_chat.base_url.replace(/\/+$/, ''),
    model: body.openai_chat.model,
    parameters: body.openai_chat.parameters ?? {},
    headers: lowerKeys(body.openai_chat.headers ?? {}),
  };
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function authShape(auth: ConnectionAuthDto): Omit<ConnectionAuthDto, 'secret_id'> {
  return {
    scheme: auth.scheme,
    ...(auth.header ? { header: auth.header.toLowerCase() } : {}),
    ...(auth.prefix !== undefined ? { prefix: auth.prefix } : {}),
    ...(auth.param ? { param: auth.param } : {}),
  };
}

function limitsOf(body: UpdateConnectionRequest, current: ConnectionLimits): ConnectionLimits {
  const retry = {
    ...current.retry,
    ...Object.fromEntries(Object.entries(body.retry ?? {}).filter(([, v]) => v !== undefined)),
  };
  return {
    timeout_ms: body.timeout_ms ?? current.timeout_ms,
    max_concurrency: body.max_concurrency ?? current.max_concurrency,
    requests_per_second:
      body.requests_per_second === undefined ? current.requests_per_second : body.requests_per_second,
    retry,
  };
}

/** The trace link a body asks for: absent keeps the current one, null removes it, the rest from the defaults. */
function traceLinkOf(body: UpdateConnectionRequest['trace_link'], current: TraceLink | null): TraceLink | null {
  if (body === undefined) return current;
  if (body === null) return null;
  return {
    dataset: body.dataset,
    wait_ms: body.wait_ms ?? current?.wait_ms ?? DEFAULT_TRACE_WAIT_MS,
    settle_ms: body.settle_ms ?? current?.settle_ms ?? DEFAULT_TRACE_SETTLE_MS,
  };
}

/** Where the connection's calls (and its key) go. */
function destinationOf(c: Pick<ConnectionEntity, 'kind' | 'transport'>): string | null {
  if (!c.transport) return null;
  return 'url' in c.transport ? c.transport.url : c.transport.base_url;
}

function nameTaken(name: string): DomainError {
  return new DomainError(SutErrors.connection_name_taken, `The system already has a connection named "${name}"`);
}

function specOfBody(body: CreateAdapterRequest): AdapterSpec {
  return JSON.parse(JSON.stringify(body)) as AdapterSpec;
}

function assertAdapter(spec: AdapterSpec, connection: ConnectionEntity): void {
  const issues = checkAdapter(spec, connection.kind);
  if (issues.length) {
    throw new DomainError(
      SutErrors.adapter_invalid,
      issues.length === 1
        ? `${issues[0].pointer}: ${issues[0].message}`
        : `${issues.length} problems in the adapter: ${issues.map((i) => i.pointer).join(', ')}`,
      { issues },
    );
  }
}

function sampleRow(body: SampleRowDto) {
  return rowContext(body.row ?? {}, body.mapping ?? {}, { history: body.history ?? [] });
}

/** A sample response given as JSON, or as text that should hold JSON. */
function responseBody(response: unknown): { value?: unknown; issue?: AdapterIssue } {
  if (typeof response !== 'string') return { value: response };
  try {
    return { value: JSON.parse(response) };
  } catch {
    return {
      issue: {
        pointer: '/response',
        code: 'response_not_json',
        message: 'The sample response is text that does not parse as JSON',
      },
    };
  }
}
