import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { checkCustomOpHealth } from '#libs/evaluation/custom-op-client.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext, JobOf } from '#libs/queue/job.types.js';
import { defineStateVocabulary } from '#libs/queue/tracked-job.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { SecretReferences } from '../secrets/secret-references.service.js';
import { SecretsService } from '../secrets/secrets.service.js';
import type {
  CustomOpDetailResponse,
  CustomOpPublishResponse,
  CustomOpRedeployResponse,
  CustomOpsListResponse,
  CustomOpStopResponse,
  ListCustomOpsQuery,
  PublishCustomOpRequest,
  RedeployCustomOpRequest,
  StopCustomOpRequest,
} from './dto/ops.dto.js';
import type { CustomOpRevisionEntity } from './entities/custom-op-revision.entity.js';
import type { CustomOpEntity } from './entities/custom-op.entity.js';
import { OpRegistry } from './op-registry.service.js';
import { OpsErrors } from './ops.errors.js';
import { CUSTOM_OP_REVISIONS, OpsRepository } from './ops.repository.js';
import { registeredView, summary } from './ops.mapper.js';
import { DEPLOY_JOB } from './ops.jobs.js';

const DEFAULT_TIMEOUT_MS = 30_000;

/** A revision's documented outcome: its check's state, unless a later revision superseded it. */
const REVISION_STATES = defineStateVocabulary(['deploying', 'active', 'failed', 'superseded'], {
  queued: 'deploying',
  running: 'deploying',
  succeeded: 'active',
  failed: 'failed',
  cancelled: 'failed',
});

/**
 * Custom ops: a workspace's own operation service. Publishing and redeploying add a revision in
 * `deploying`; a queued health check moves it to `active` or `failed` (the reason kept); `stop`
 * takes it out of use; only a stopped op no metric config scores with can be deleted.
 */
@Injectable()
export class CustomOpsService {
  constructor(
    private readonly ops: OpsRepository,
    private readonly registry: OpRegistry,
    private readonly queue: JobQueue,
    private readonly secretReferences: SecretReferences,
    private readonly secrets: SecretsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
    private readonly tracked: TrackedRecords,
  ) {}

  async list(access: WorkspaceAccess, query: ListCustomOpsQuery): Promise<CustomOpsListResponse> {
    const [rows, total] = await this.ops.pageCustomOps(access.workspaceId, query.state, pageWindow(query));
    return pageOf(rows, total, query, summary);
  }

  async detail(access: WorkspaceAccess, name: string): Promise<CustomOpDetailResponse> {
    const op = await this.ops.findCustomOp(access.workspaceId, name);
    if (!op) throw new NotFoundError('custom op', name);
    const [revisions, registered] = await Promise.all([
      this.ops.revisions(op.id),
      this.ops.registered(access.workspaceId),
    ]);
    const served = new Map<string, typeof registered>();
    for (const r of registered.filter((r) => r.customOpId === op.id))
      served.set(r.name.toLowerCase(), [...(served.get(r.name.toLowerCase()) ?? []), r]);
    return {
      ...summary(op),
      revisions: revisions.map(revisionDto),
      ops: [...served.values()].map((versions) => registeredView(versions, op)),
    };
  }

  /** Creates the op (revision 1, deploying), registers the op of the same name, and queues its health check. */
  async publish(
    access: WorkspaceAccess,
    body: PublishCustomOpRequest,
    caller: Principal,
  ): Promise<CustomOpPublishResponse> {
    const { jobId } = await this.transactions.run(async () => {
      if (await this.ops.findCustomOp(access.workspaceId, body.name))
        throw new DomainError(
          OpsErrors.custom_op_name_taken,
          `The workspace already has custom op "${body.name}"; redeploy it with PATCH`,
        );
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      const op = await this.ops.saveCustomOp({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        state: 'deploying',
        stateReason: 'health check queued',
        revision: 1,
        endpointUrl: body.endpoint_url,
        healthUrl: body.health_url ?? '',
        timeoutMs: body.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        secretId: body.secret_id ?? null,
        createdBy: caller.userId,
      });
      await this.registry.registerVersion(
        access.workspaceId,
        {
          name: body.name,
          kind: body.kind,
          description: body.description,
          params_schema: body.params_schema,
          customOpId: op.id,
        },
        caller,
      );
      const job = await this.deploy(access.workspaceId, op, caller);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'custom_op.published',
        targetType: 'custom_op',
        targetId: op.id,
        details: { name: op.name, endpoint_url: op.endpointUrl },
      });
      return { jobId: job };
    });
    const detail = await this.detail(access, body.name);
    return {
      custom_op: detail,
      op: detail.ops.find((o) => o.name.toLowerCase() === body.name.toLowerCase())!,
      job_id: jobId,
    };
  }

  /** A new revision (what the body leaves out stays) and a new health check; a new schema registers a new op version. */
  async redeploy(
    access: WorkspaceAccess,
    name: string,
    body: RedeployCustomOpRequest,
    caller: Principal,
  ): Promise<CustomOpRedeployResponse> {
    const { revision, jobId } = await this.transactions.run(async () => {
      const op = await this.ops.findCustomOp(access.workspaceId, name, true);
      if (!op) throw new NotFoundError('custom op', name);
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      const before = op.endpointUrl;
      op.endpointUrl = body.endpoint_url ?? op.endpointUrl;
      op.healthUrl = body.health_url ?? op.healthUrl;
      op.timeoutMs = body.timeout_ms ?? op.timeoutMs;
      op.description = body.description ?? op.description;
      op.secretId = body.secret_id === undefined ? op.secretId : body.secret_id;
      if (op.secretId && op.endpointUrl !== before)
        this.secretReferences.requireAdmin(access, 'point a custom op that sends a secret elsewhere');
      op.revision += 1;
      op.state = 'deploying';
      op.stateReason = 'health check queued';
      await this.ops.saveCustomOp(op);
      if (body.params_schema) {
        const [own] = await this.ops.versionsOf(access.workspaceId, op.name);
        await this.registry.registerVersion(
          access.workspaceId,
          {
            name: op.name,
            kind: own?.kind ?? 'metric',
            description: body.description,
            params_schema: body.params_schema,
            customOpId: op.id,
          },
          caller,
        );
      }
      const job = await this.deploy(access.workspaceId, op, caller);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'custom_op.redeployed',
        targetType: 'custom_op',
        targetId: op.id,
        details: { name: op.name, revision: op.revision, endpoint_url: { from: before, to: op.endpointUrl } },
      });
      return { revision: op.revision, jobId: job };
    });
    return { custom_op: await this.detail(access, name), revision, job_id: jobId };
  }

  /** Takes the op out of use (runs can no longer call it); stopping a stopped op changes nothing. */
  async stop(
    access: WorkspaceAccess,
    name: string,
    body: StopCustomOpRequest,
    caller: Principal,
  ): Promise<CustomOpStopResponse> {
    return this.transactions.run(async () => {
      const op = await this.ops.findCustomOp(access.workspaceId, name, true);
      if (!op) throw new NotFoundError('custom op', name);
      const previous = op.state;
      if (previous !== 'stopped') {
        op.state = 'stopped';
        op.stateReason = body.reason ? `stopped by ${caller.email}: ${body.reason}` : `stopped by ${caller.email}`;
        await this.ops.saveCustomOp(op);
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'custom_op.stopped',
          targetType: 'custom_op',
          targetId: op.id,
          details: { name: op.name, previous_state: previous, reason: body.reason ?? null },
        });
      }
      return { custom_op: summary(op), previous_state: previous };
    });
  }

  /**
   * The ops a stopped custom op serves, its row locked for the deletion that follows in the same
   * unit of work (the metric configs family asks who scores with them: DELETE …/custom_ops/{name}).
   */
  async servedOps(access: WorkspaceAccess, name: string): Promise<string[]> {
    const op = await this.stoppedForDeletion(access, name);
    return this.ops.opNamesServedBy(access.workspaceId, op.id);
  }

  /** Deletes a stopped op with its revisions and registered ops; refused while metric configs (`users`) score with them. */
  async delete(access: WorkspaceAccess, name: string, caller: Principal, users: string[]): Promise<void> {
    await this.transactions.run(async () => {
      const op = await this.stoppedForDeletion(access, name);
      if (users.length)
        throw new DomainError(
          OpsErrors.custom_op_in_use,
          `Metric configs score with ops of "${op.name}": ${users.join(', ')}`,
          { used_by: users },
        );
      await this.ops.deleteCustomOp(op.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'custom_op.deleted',
        targetType: 'custom_op',
        targetId: op.id,
        details: { name: op.name },
      });
    });
  }

  private async stoppedForDeletion(access: WorkspaceAccess, name: string) {
    const op = await this.ops.findCustomOp(access.workspaceId, name, true);
    if (!op) throw new NotFoundError('custom op', name);
    if (op.state !== 'stopped')
      throw new DomainError(
        OpsErrors.custom_op_not_stopped,
        `Custom op "${op.name}" is ${op.state}; stop it first (PATCH /workspaces/${access.workspaceId}/custom_ops/${op.name}/stop)`,
      );
    return op;
  }

  /**
   * The health check of one revision (the queue marks the revision running and ends it when the
   * job ends without it: `tracks`). A revision superseded, or an op stopped, before its check
   * ran ends unchecked; one superseded while it was checked keeps its result, as superseded.
   */
  @JobHandler(DEPLOY_JOB, { maxAttempts: 1, tracks: CUSTOM_OP_REVISIONS })
  async checkRevision({
    payload,
    signal,
  }: JobContext<typeof DEPLOY_JOB>): Promise<{ state: string; reason: string | null }> {
    const target = await this.transactions.run(() => this.ops.findCustomOpForUpdateUnscoped(payload.custom_op_id));
    if (!target || target.revision !== payload.revision || target.state !== 'deploying') {
      await this.transactions.run(async () => {
        const replaced = !target || target.revision !== payload.revision;
        await this.tracked.fail(
          CUSTOM_OP_REVISIONS,
          payload.revision_id,
          {
            code: 'not_checked',
            message: replaced
              ? `revision ${payload.revision} was replaced before its health check ran`
              : 'the op was stopped before the health check ran',
          },
          'cancelled',
        );
        if (replaced) await this.ops.markSuperseded(payload.revision_id);
      });
      return { state: 'superseded', reason: null };
    }
    const secret = target.secretId ? await this.secrets.resolveValue(target.workspaceId, target.secretId) : null;
    signal.throwIfAborted();
    const health = await checkCustomOpHealth(
      { endpoint_url: target.endpointUrl, health_url: target.healthUrl, timeout_ms: target.timeoutMs, secret },
      target.name,
    );
    return this.transactions.run(async () => {
      const op = await this.ops.findCustomOpForUpdateUnscoped(payload.custom_op_id);
      const revision = await this.ops.findRevision(payload.custom_op_id, payload.revision);
      if (!op || !revision) return { state: 'superseded', reason: null };
      await this.ops.saveRevision(
        Object.assign(revision, {
          health: {
            status_code: health.status_code,
            latency_ms: health.latency_ms,
            method: health.method,
            url: health.url,
          },
        }),
      );
      if (health.healthy) await this.tracked.succeed(CUSTOM_OP_REVISIONS, revision.id);
      else
        await this.tracked.fail(CUSTOM_OP_REVISIONS, revision.id, {
          code: 'unhealthy',
          message: health.reason ?? 'the health check failed',
        });
      if (op.revision !== payload.revision) await this.ops.markSuperseded(revision.id);
      if (op.revision !== payload.revision || op.state !== 'deploying') return { state: 'superseded', reason: null };
      const outcome = health.healthy ? 'active' : 'failed';
      if (health.healthy) await this.ops.supersedeBefore(op.id, op.revision);
      await this.ops.saveCustomOp(
        Object.assign(op, {
          state: outcome,
          stateReason: health.healthy ? `revision ${op.revision} passed its health check` : health.reason,
          lastCheckedAt: new Date(),
        }),
      );
      return { state: outcome, reason: health.reason };
    });
  }

  /** A check that never finished (worker lost, cancelled) fails its op too; its revision the queue ended (`tracks`). */
  @OnJobSettled(DEPLOY_JOB)
  async onDeploySettled(job: JobOf<typeof DEPLOY_JOB>): Promise<void> {
    if (job.status === 'succeeded') return;
    const op = await this.ops.findCustomOpForUpdateUnscoped(job.payload.custom_op_id);
    if (!op || op.revision !== job.payload.revision || op.state !== 'deploying') return;
    await this.ops.saveCustomOp(
      Object.assign(op, {
        state: 'failed',
        stateReason: `the health check did not finish: ${job.error?.message ?? job.status}`,
      }),
    );
  }

  private async deploy(workspaceId: string, op: CustomOpEntity, caller: Principal): Promise<string> {
    const revision = await this.ops.saveRevision({
      workspaceId,
      customOpId: op.id,
      revision: op.revision,
      endpointUrl: op.endpointUrl,
      healthUrl: op.healthUrl,
      timeoutMs: op.timeoutMs,
      createdBy: caller.userId,
    });
    const { job } = await this.queue.enqueue({
      type: DEPLOY_JOB,
      payload: { custom_op_id: op.id, revision: op.revision, revision_id: revision.id },
      workspaceId,
      targetType: 'custom_op',
      targetId: op.id,
    });
    return job.id;
  }
}

function revisionDto(r: CustomOpRevisionEntity) {
  const outcome = r.supersededAt ? 'superseded' : REVISION_STATES.show(r.tracked.state);
  // Checked: the check answered (a revision ended unchecked has no health).
  return {
    revision: r.revision,
    endpoint_url: r.endpointUrl,
    health_url: r.healthUrl || null,
    timeout_ms: r.timeoutMs,
    outcome,
    reason: r.tracked.failure?.message ?? null,
    health: r.health,
    created_by: r.createdBy,
    created_at: r.createdAt,
    checked_at: r.health ? r.tracked.finished_at : null,
  };
}
