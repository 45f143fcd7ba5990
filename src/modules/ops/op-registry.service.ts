import { Injectable } from '@nestjs/common';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { pageFrom } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { BUILTIN_OPS } from './builtin-ops.js';
import type {
  ListRegistryQuery,
  OpCatalogue,
  OpSchemaResponse,
  RegisterOpBody,
  RegistryListResponse,
  RegistryOpView,
} from './dto/ops.dto.js';
import { OP_KINDS, type RegistryOpEntity } from './entities/registry-op.entity.js';
import { OpsErrors } from './ops.errors.js';
import { OpsRepository } from './ops.repository.js';
import { registeredView } from './ops.mapper.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
export const SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';
/** What a registered op takes when it names no schema. */
const NO_PARAMS = { type: 'object', properties: {}, additionalProperties: false };

/** An operation as the rest of the service sees it. */
export interface ResolvedOp {
  name: string;
  kind: RegistryOpEntity['kind'];
  source: 'builtin' | 'workspace';
  version: number;
  params_schema: Record<string, unknown>;
  available: boolean;
}

/**
 * The operation registry: the service's built-in ops (metrics, checks) and the ops a workspace
 * registers, each served by one of its custom ops. Parameters are checked against the op's
 * JSON Schema wherever an op is used (metric configs, runs).
 */
@Injectable()
export class OpRegistry {
  private readonly validators = new Map<string, ReturnType<Ajv['compile']>>();

  constructor(
    private readonly ops: OpsRepository,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** A built-in or registered op by name (case-insensitive), or null. */
  async lookup(workspaceId: string, name: string): Promise<ResolvedOp | null> {
    const builtin = BUILTIN_OPS.find((o) => o.name === name.toLowerCase());
    if (builtin)
      return {
        name: builtin.name,
        kind: builtin.kind,
        source: 'builtin',
        version: 1,
        params_schema: builtin.params_schema,
        available: true,
      };
    const [latest] = await this.ops.versionsOf(workspaceId, name);
    if (!latest) return null;
    const [customOp] = await this.ops.customOpsByIds([latest.customOpId]);
    return {
      name: latest.name,
      kind: latest.kind,
      source: 'workspace',
      version: latest.opVersion,
      params_schema: latest.paramsSchema,
      available: customOp?.state === 'active',
    };
  }

  /** Where a registered op is served (for runs): its custom op's endpoint and state, or null for built-ins and unknown names. */
  async endpointOf(
    workspaceId: string,
    name: string,
  ): Promise<{
    name: string;
    endpoint_url: string;
    timeout_ms: number;
    secret_id: string | null;
    state: string;
  } | null> {
    const [latest] = await this.ops.versionsOf(workspaceId, name);
    if (!latest) return null;
    const [customOp] = await this.ops.customOpsByIds([latest.customOpId]);
    return customOp
      ? {
          name: latest.name,
          endpoint_url: customOp.endpointUrl,
          timeout_ms: customOp.timeoutMs,
          secret_id: customOp.secretId,
          state: customOp.state,
        }
      : null;
  }

  /** Errors of `params` against the op's schema ({field, message}); empty when they fit. */
  validateParams(op: Pick<ResolvedOp, 'params_schema'>, params: unknown): Array<{ field: string; message: string }> {
    const key = JSON.stringify(op.params_schema);
    let validate = this.validators.get(key);
    if (!validate) {
      validate = ajv.compile(op.params_schema);
      if (this.validators.size > 500) this.validators.clear();
      this.validators.set(key, validate);
    }
    return validate(params) ? [] : (validate.errors ?? []).map(fieldError);
  }

  async catalogue(access: WorkspaceAccess): Promise<OpCatalogue> {
    const views = await this.views(access.workspaceId);
    const ofKind = (kind: (typeof OP_KINDS)[number]) =>
      views
        .filter((v) => v.kind === kind && v.available)
        .map((v) => ({ name: v.name, description: v.description, source: v.source, version: v.version }));
    const kinds: OpCatalogue['kinds'] = {
      metric: ofKind('metric'),
      check: ofKind('check'),
      enrichment: ofKind('enrichment'),
      transform: ofKind('transform'),
    };
    return {
      workspace_id: access.workspaceId,
      kinds,
      total: Object.values(kinds).reduce((n, list) => n + list.length, 0),
    };
  }

  async list(access: WorkspaceAccess, query: ListRegistryQuery): Promise<RegistryListResponse> {
    const views = (await this.views(access.workspaceId)).filter(
      (v) => (!query.kind || v.kind === query.kind) && (!query.source || v.source === query.source),
    );
    return pageFrom(views, query);
  }

  async get(access: WorkspaceAccess, name: string): Promise<RegistryOpView> {
    const view = (await this.views(access.workspaceId)).find((v) => v.name.toLowerCase() === name.toLowerCase());
    if (!view) throw new NotFoundError('op', name);
    return view;
  }

  async schema(access: WorkspaceAccess, name: string, version?: number): Promise<OpSchemaResponse> {
    const builtin = BUILTIN_OPS.find((o) => o.name === name.toLowerCase());
    if (builtin) {
      if (version !== undefined && version !== 1) throw new NotFoundError('op version', `${name} v${version}`);
      return {
        name: builtin.name,
        kind: builtin.kind,
        version: 1,
        dialect: SCHEMA_DIALECT,
        schema: builtin.params_schema,
      };
    }
    const versions = await this.ops.versionsOf(access.workspaceId, name);
    const op = version === undefined ? versions[0] : versions.find((v) => v.opVersion === version);
    if (!op)
      throw new NotFoundError(
        version === undefined ? 'op' : 'op version',
        version === undefined ? name : `${name} v${version}`,
      );
    return { name: op.name, kind: op.kind, version: op.opVersion, dialect: SCHEMA_DIALECT, schema: op.paramsSchema };
  }

  /** Registers an op served by a custom op (a name registered again gets a new version). */
  async register(access: WorkspaceAccess, body: RegisterOpBody, caller: Principal): Promise<RegistryOpView> {
    await this.transactions.run(async () => {
      const customOp = await this.ops.findCustomOp(access.workspaceId, body.custom_op, true);
      if (!customOp)
        throw new DomainError(
          OpsErrors.unknown_custom_op,
          `The workspace has no custom op "${body.custom_op}"; publish one with POST /workspaces/${access.workspaceId}/custom_ops`,
        );
      await this.registerVersion(access.workspaceId, { ...body, customOpId: customOp.id }, caller);
    });
    return this.get(access, body.name);
  }

  /** Adds a version of `name` (checking its schema and that a name keeps its kind); used by register and by custom op publish/redeploy. */
  async registerVersion(
    workspaceId: string,
    op: {
      name: string;
      kind: RegistryOpEntity['kind'];
      description?: string;
      params_schema?: Record<string, unknown>;
      customOpId: string;
    },
    caller: Principal,
  ): Promise<RegistryOpEntity> {
    if (BUILTIN_OPS.some((b) => b.name === op.name.toLowerCase()))
      throw new DomainError(OpsErrors.op_name_reserved, `"${op.name}" is a built-in op; choose another name`);
    const schema = op.params_schema ?? NO_PARAMS;
    assertSchema(schema);
    const [latest] = await this.ops.versionsOf(workspaceId, op.name);
    if (latest && latest.kind !== op.kind)
      throw new DomainError(
        OpsErrors.op_kind_change,
        `"${op.name}" is registered as a ${latest.kind}; a name keeps its kind across versions`,
      );
    const saved = await this.ops.insertOpVersion({
      workspaceId,
      name: op.name,
      kind: op.kind,
      description: op.description ?? latest?.description ?? '',
      paramsSchema: schema,
      customOpId: op.customOpId,
      createdBy: caller.userId,
    });
    await this.audit.record({
      actor: caller,
      workspaceId,
      action: 'op.registered',
      targetType: 'op',
      targetId: saved.id,
      details: { name: saved.name, version: saved.opVersion, kind: saved.kind },
    });
    return saved;
  }

  /** Built-ins first, then the workspace's registered ops by name (newest version each). */
  async views(workspaceId: string): Promise<RegistryOpView[]> {
    const registered = await this.ops.registered(workspaceId);
    const customOps = new Map(
      (await this.ops.customOpsByIds([...new Set(registered.map((r) => r.customOpId))])).map((c) => [c.id, c]),
    );
    const byName = new Map<string, RegistryOpEntity[]>();
    for (const op of registered) byName.set(op.name.toLowerCase(), [...(byName.get(op.name.toLowerCase()) ?? []), op]);
    const builtins: RegistryOpView[] = BUILTIN_OPS.map((b) => ({
      name: b.name,
      kind: b.kind,
      description: b.description,
      source: 'builtin',
      version: 1,
      version_count: 1,
      params_schema: b.params_schema,
      custom_op: null,
      available: true,
      unavailable_reason: null,
      registered_at: null,
    }));
    return [
      ...builtins,
      ...[...byName.values()].map((versions) => registeredView(versions, customOps.get(versions[0].customOpId))),
    ];
  }
}

/** A params schema must compile and describe an object. */
function assertSchema(schema: Record<string, unknown>): void {
  if (schema.type !== 'object')
    throw new DomainError(
      OpsErrors.op_schema_invalid,
      'params_schema must describe an object: its root needs "type": "object"',
    );
  try {
    ajv.compile(schema);
  } catch (err) {
    throw new DomainError(
      OpsErrors.op_schema_invalid,
      `params_schema is not a valid JSON Schema (draft-07): ${(err as Error).message}`,
    );
  }
}

function fieldError(e: ErrorObject): { field: string; message: string } {
  const extra =
    e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : '';
  return { field: `params${e.instancePath.replace(/\//g, '.')}`, message: `${e.message ?? 'is invalid'}${extra}` };
}
