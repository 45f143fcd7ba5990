import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { roleAtLeast, type Principal, type WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import type { PageQueryDto } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import type {
  DisagreementResponse,
  LeasedItemResponse,
  ReviewItemResponse,
  ReviewLabelResponse,
} from './dto/review.dto.js';
import { ReviewErrors } from './review.errors.js';
import { toItemResponse, toLabelResponse, toRubricResponse } from './review.mapper.js';
import { ReviewQueuesService, runIdOf } from './review-queues.service.js';
import { ReviewRepository, type ItemRow, type QueueRow } from './review.repository.js';
import { cleanValues, labelProblems, type LabelValues, type RubricField } from './review.rules.js';

/** Candidate items one request of `items:next` tries before answering that there is nothing to do. */
const CANDIDATES = 20;

/**
 * A reviewer's work on a queue: the next item on a lease, labels (submitted, edited, skipped),
 * leases released; an adjudicator's final labels and the disagreements they see.
 */
@Injectable()
export class ReviewWorkService {
  constructor(
    private readonly review: ReviewRepository,
    private readonly queues: ReviewQueuesService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /**
   * The next item the caller should label, on a lease of one of its free slots; null when there
   * is none. A lease the caller still holds in this queue is answered again. The item carries its
   * context and the rubric, never other reviewers' labels.
   */
  async next(access: WorkspaceAccess, queueId: string, caller: Principal): Promise<LeasedItemResponse | null> {
    return this.transactions.run(async () => {
      const queue = await this.openQueue(access, queueId);
      this.checkReviewer(queue, caller);
      await this.review.freeExpired(queue.id);
      const held = await this.review.heldLease(queue.id, caller.userId);
      if (held) return this.leased(queue, held.item_id, held.expires_at);
      for (const candidate of await this.review.candidates(queue.id, caller.userId, queue.overlap, CANDIDATES)) {
        for (let slot = 0; slot < queue.overlap; slot++) {
          if (candidate.taken.includes(slot)) continue;
          const expires = await this.review.takeSlot(candidate.id, slot, caller.userId, queue.lease_seconds);
          if (expires) return this.leased(queue, candidate.id, expires);
        }
      }
      return null;
    });
  }

  /** Submits the lease holder's label: validated against the rubric version in force; the item's outcome follows. */
  async submit(
    access: WorkspaceAccess,
    queueId: string,
    itemId: string,
    values: Record<string, unknown>,
    caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.transactions.run(async () => {
      const queue = await this.openQueue(access, queueId);
      const item = await this.requireItem(queue, itemId, true);
      if (await this.review.findLabel(item.id, caller.userId))
        throw new DomainError(ReviewErrors.already_labelled, `You have already labelled or skipped item ${itemId}`);
      if (item.state !== 'pending' || !(await this.review.liveLease(item.id, caller.userId)))
        throw new DomainError(ReviewErrors.no_lease, `You hold no live lease on item ${itemId}`);
      const rubric = await this.queues.rubric(queue);
      const clean = this.validate(rubric.fields, values);
      const label = await this.review.insertLabel({
        item_id: item.id,
        queue_id: queue.id,
        reviewer_id: caller.userId,
        kind: 'label',
        values: clean,
        reason: null,
        rubric_version: rubric.version,
      });
      await this.review.keepSlot(item.id, caller.userId);
      await this.queues.settle(queue, item, item.labelled + 1);
      await this.recordLabel(access, caller, 'review_label.submitted', item, label.id);
      return toLabelResponse(label);
    });
  }

  /** Edits the caller's own label; the earlier values go to its history. */
  async edit(
    access: WorkspaceAccess,
    queueId: string,
    itemId: string,
    values: Record<string, unknown>,
    caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.transactions.run(async () => {
      const queue = await this.openQueue(access, queueId);
      const item = await this.requireItem(queue, itemId, true);
      const label = await this.review.findLabel(item.id, caller.userId, true);
      if (!label || label.kind !== 'label')
        throw new DomainError(ReviewErrors.no_label, `You have not labelled item ${itemId}`);
      const rubric = await this.queues.rubric(queue, label.rubric_version);
      const clean = this.validate(rubric.fields, values);
      const history = [
        ...label.history,
        { values: label.values, by: caller.userId, at: label.updated_at.toISOString() },
      ];
      const updated = await this.review.updateLabel(label.id, clean, label.rubric_version, history);
      if (item.final_source !== 'adjudication') await this.queues.settle(queue, item, item.labelled);
      await this.recordLabel(access, caller, 'review_label.edited', item, label.id);
      return toLabelResponse(updated);
    });
  }

  /** Skips the item (with a reason): the caller's slot is freed for another reviewer, and the item is not offered to the caller again. */
  async skip(
    access: WorkspaceAccess,
    queueId: string,
    itemId: string,
    reason: string | undefined,
    caller: Principal,
  ): Promise<ReviewLabelResponse> {
    return this.transactions.run(async () => {
      const queue = await this.openQueue(access, queueId);
      const item = await this.requireItem(queue, itemId, true);
      if (await this.review.findLabel(item.id, caller.userId))
        throw new DomainError(ReviewErrors.already_labelled, `You have already labelled or skipped item ${itemId}`);
      if (!(await this.review.releaseSlot(item.id, caller.userId)))
        throw new DomainError(ReviewErrors.no_lease, `You hold no lease on item ${itemId}`);
      const label = await this.review.insertLabel({
        item_id: item.id,
        queue_id: queue.id,
        reviewer_id: caller.userId,
        kind: 'skip',
        values: null,
        reason: reason ?? null,
        rubric_version: queue.rubric_version,
      });
      await this.recordLabel(access, caller, 'review_item.skipped', item, label.id);
      return toLabelResponse(label);
    });
  }

  /** A reviewer's label written, changed or a skip, in the audit trail (the values stay with the label and its history). */
  private recordLabel(
    access: WorkspaceAccess,
    caller: Principal,
    action: 'review_label.submitted' | 'review_label.edited' | 'review_item.skipped',
    item: ItemRow,
    labelId: string,
  ): Promise<unknown> {
    return this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action,
      targetType: 'review_item',
      targetId: item.id,
      details: { queue_id: item.queue_id, label_id: labelId },
    });
  }

  /** Releases the caller's lease on the item, freeing its slot. */
  async release(access: WorkspaceAccess, queueId: string, itemId: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const queue = await this.queues.require(access, queueId);
      const item = await this.requireItem(queue, itemId);
      if (!(await this.review.releaseSlot(item.id, caller.userId)))
        throw new DomainError(ReviewErrors.no_lease, `You hold no lease on item ${itemId}`);
    });
  }

  /** The adjudicator's final label of an item in disagreement. */
  async adjudicate(
    access: WorkspaceAccess,
    queueId: string,
    itemId: string,
    values: Record<string, unknown>,
    caller: Principal,
  ): Promise<ReviewItemResponse> {
    return this.transactions.run(async () => {
      const queue = await this.queues.require(access, queueId);
      this.checkAdjudicator(access, queue, caller);
      const item = await this.requireItem(queue, itemId, true);
      if (item.state !== 'disagreement')
        throw new DomainError(ReviewErrors.not_in_disagreement, `Item ${itemId} is ${item.state}, not in disagreement`);
      const rubric = await this.queues.rubric(queue);
      const clean = this.validate(rubric.fields, values);
      await this.review.setItemOutcome(item.id, {
        state: 'final',
        final_label: clean,
        final_source: 'adjudication',
        final_rubric_version: rubric.version,
        adjudicated_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_item.adjudicated',
        targetType: 'review_queue',
        targetId: queue.id,
        details: { item_id: item.id, ref: item.ref, values: clean },
      });
      return toItemResponse((await this.review.findItem(queue.id, item.id))!, runIdOf(queue), queue.show_verdicts);
    });
  }

  /** Items in disagreement with every reviewer's labels (adjudicators). */
  async disagreements(
    access: WorkspaceAccess,
    queueId: string,
    query: PageQueryDto,
    caller: Principal,
  ): Promise<Page<DisagreementResponse>> {
    const queue = await this.queues.require(access, queueId);
    this.checkAdjudicator(access, queue, caller);
    const [items, total] = await this.review.pageItems(queue.id, 'disagreement', pageWindow(query));
    const labels = await this.review.labelsOf(items.map((i) => i.id));
    return pageOf(items, total, query, (i) => ({
      item: toItemResponse(i, runIdOf(queue), queue.show_verdicts),
      labels: labels.filter((l) => l.item_id === i.id).map(toLabelResponse),
    }));
  }

  private async openQueue(access: WorkspaceAccess, queueId: string): Promise<QueueRow> {
    const queue = await this.queues.require(access, queueId);
    if (queue.state !== 'open') throw new DomainError(ReviewErrors.queue_closed, `Queue ${queue.name} is closed`);
    return queue;
  }

  private async requireItem(queue: QueueRow, itemId: string, lock = false): Promise<ItemRow> {
    const item = await this.review.findItem(queue.id, itemId, lock);
    if (!item) throw new NotFoundError('review item', itemId);
    return item;
  }

  private checkReviewer(queue: QueueRow, caller: Principal): void {
    if (queue.reviewers && !queue.reviewers.includes(caller.userId))
      throw new DomainError(ReviewErrors.not_a_reviewer, `You are not a reviewer of queue ${queue.name}`);
  }

  private checkAdjudicator(access: WorkspaceAccess, queue: QueueRow, caller: Principal): void {
    if (!roleAtLeast(access.role, 'admin') && !(queue.adjudicators ?? []).includes(caller.userId))
      throw new DomainError(ReviewErrors.not_an_adjudicator, `You do not adjudicate queue ${queue.name}`);
  }

  private validate(fields: RubricField[], values: Record<string, unknown>): LabelValues {
    const errors = labelProblems(fields, values);
    if (errors.length)
      throw new DomainError(ReviewErrors.label_invalid, `${errors[0].field}: ${errors[0].message}`, { errors });
    return cleanValues(values);
  }

  private async leased(queue: QueueRow, itemId: string, expires: Date): Promise<LeasedItemResponse> {
    const item = (await this.review.findItem(queue.id, itemId))!;
    return {
      item: toItemResponse(item, runIdOf(queue), queue.show_verdicts),
      rubric: toRubricResponse(await this.queues.rubric(queue)),
      lease_expires_at: expires,
    };
  }
}
