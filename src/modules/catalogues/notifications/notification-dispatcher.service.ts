import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { SIGNATURE_HEADER, signWebhook } from '#libs/common/webhook-signature.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext } from '#libs/queue/job.types.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { NotificationConfigsRepository } from './notification-configs.repository.js';
import { outboundFetch } from '#libs/common/outbound.js';
import { DELIVERY_JOB } from '../catalogues.jobs.js';

const DELIVERY_TIMEOUT_MS = 10_000;
/** Attempts per delivery; the queue backs off between them. */
const DELIVERY_ATTEMPTS = 5;

/**
 * Webhook delivery: an event of a workspace becomes one delivery per enabled config that wants
 * it, queued with the change that caused it; each is POSTed signed (X-EWS-Signature) and retried
 * with backoff until it is accepted (2xx) or its attempts run out. Every delivery and its outcome
 * is recorded.
 */
@Injectable()
export class NotificationDispatcher {
  constructor(
    private readonly configs: NotificationConfigsRepository,
    private readonly secrets: SecretsService,
    private readonly queue: JobQueue,
  ) {}

  /** Queues the event's deliveries inside the caller's transaction. */
  async dispatch(workspaceId: string, event: string, data: Record<string, unknown>): Promise<number> {
    const targets = await this.configs.subscribed(workspaceId, event);
    for (const config of targets) {
      const id = randomUUID();
      const payload = { id, event, workspace_id: workspaceId, created_at: new Date().toISOString(), data };
      await this.configs.insertDelivery({ id, workspaceId, configId: config.id, event, payload });
      await this.queue.enqueue({
        type: DELIVERY_JOB,
        payload: { delivery_id: id },
        workspaceId,
        targetType: 'notification_config',
        targetId: config.id,
        maxAttempts: DELIVERY_ATTEMPTS,
      });
    }
    return targets.length;
  }

  @JobHandler(DELIVERY_JOB, { maxAttempts: DELIVERY_ATTEMPTS })
  async deliver({ payload, job, signal }: JobContext<typeof DELIVERY_JOB>): Promise<{ status_code: number }> {
    const delivery = await this.configs.delivery(payload.delivery_id);
    if (!delivery || delivery.status === 'delivered') return { status_code: delivery?.last_status_code ?? 0 };
    const secret = await this.secrets.resolveValue(delivery.workspace_id, delivery.secret_id);
    const body = JSON.stringify(delivery.payload);
    const last = job.attempts >= job.maxAttempts;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await outboundFetch(delivery.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'evaluation-workspace-service',
          [SIGNATURE_HEADER]: signWebhook(secret, body),
          'x-ews-event': delivery.event,
          'x-ews-delivery': delivery.id,
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), signal]),
      });
      status = response.status;
      await response.body?.cancel();
      if (!response.ok) error = `the receiver answered ${status}`;
    } catch (err) {
      error =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${DELIVERY_TIMEOUT_MS} ms`
          : `${(err as Error).message}${(err as Error).cause instanceof Error ? `: ${((err as Error).cause as Error).message}` : ''}`;
    }
    await this.configs.recordAttempt(delivery.id, {
      attempts: job.attempts,
      statusCode: status,
      error,
      final: error === null ? 'delivered' : last ? 'failed' : null,
    });
    if (error)
      throw new JobFailure(`delivery ${delivery.id} to ${delivery.url}: ${error}`, {
        code: 'delivery_failed',
        retry: !last && (status === null || status >= 500 || status === 429 || status === 408),
      });
    return { status_code: status! };
  }
}
