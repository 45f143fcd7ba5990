import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import { roleAtLeast, type Principal, type WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import { RunReadService } from '../runs/run-read.service.js';
import { MembersService } from '../workspaces/members.service.js';
import type {
  CreateReviewQueueRequest,
  ListReviewItemsQuery,
  ListReviewQueuesQuery,
  ReviewItemResponse,
  ReviewQueueResponse,
  RubricDto,
  RubricVersionList,
  UpdateReviewQueueRequest,
} from './dto/review.dto.js';
import { ReviewErrors } from './review.errors.js';
import { toItemResponse, toQueueResponse, toRubricResponse } from './review.mapper.js';
import {
  ReviewRepository,
  type ItemRow,
  type QueueChanges,
  type QueueRow,
  type RubricRow,
} from './review.repository.js';
import { consensus, rubricProblems, type RubricField } from './review.rules.js';

/** Review queues: their settings, rubric versions and items as listed (adding items is ReviewItemsService's). */
@Injectable()
export class ReviewQueuesService {
  constructor(
    private readonly review: ReviewRepository,
    private readonly members: MembersService,
    private readonly datasets: DatasetsService,
    private readonly versions: VersionsService,
    private readonly runs: RunReadService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The workspace's queue, or 404. */
  async require(access: WorkspaceAccess, id: string, lock = false): Promise<QueueRow> {
    const queue = await this.review.findQueue(access.workspaceId, id, lock);
    if (!queue) throw new NotFoundError('review queue', id);
    return queue;
  }

  /** The queue's rubric version (its current one unless told). */
  async rubric(queue: QueueRow, version = queue.rubric_version): Promise<RubricRow> {
    return (await this.review.rubrics(queue.id, version))[0];
  }

  async create(
    access: WorkspaceAccess,
    body: CreateReviewQueueRequest,
    caller: Principal,
  ): Promise<ReviewQueueResponse> {
    const fields = this.checkRubric(body.rubric);
    const queue = await this.transactions.run(async () => {
      await this.checkSource(access, body.source.kind, body.source.id);
      await this.checkMembers(access, [...(body.reviewers ?? []), ...(body.adjudicators ?? [])]);
      const created = await this.review.insertQueue({
        workspace_id: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        source_kind: body.source.kind,
        source_id: body.source.id,
        overlap: body.overlap ?? 1,
        reviewers: body.reviewers ? [...new Set(body.reviewers)] : null,
        adjudicators: body.adjudicators ? [...new Set(body.adjudicators)] : null,
        lease_seconds: (body.lease_minutes ?? 15) * 60,
        show_verdicts: body.show_verdicts ?? false,
        created_by: caller.userId,
      });
      await this.review.insertRubric(created.id, 1, fields, caller.userId);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.created',
        targetType: 'review_queue',
        targetId: created.id,
        details: { name: created.name, source: body.source, overlap: created.overlap },
      });
      return created;
    });
    return this.get(access, queue.id);
  }

  async list(access: WorkspaceAccess, query: ListReviewQueuesQuery): Promise<Page<ReviewQueueResponse>> {
    const [rows, total] = await this.review.pageQueues(access.workspaceId, query.state, pageWindow(query));
    const counts = await this.review.itemCounts(rows.map((r) => r.id));
    const rubrics = await Promise.all(rows.map((r) => this.rubric(r)));
    return pageOf(
      rows.map((r, i) => ({ r, rubric: rubrics[i] })),
      total,
      query,
      ({ r, rubric }) => toQueueResponse(r, rubric, counts.get(r.id)),
    );
  }

  async get(access: WorkspaceAccess, id: string): Promise<ReviewQueueResponse> {
    const queue = await this.require(access, id);
    const counts = await this.review.itemCounts([id]);
    return toQueueResponse(queue, await this.rubric(queue), counts.get(id));
  }

  /** Changes the settings; a rubric given is the next rubric version. */
  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateReviewQueueRequest,
    caller: Principal,
  ): Promise<ReviewQueueResponse> {
    const fields = body.rubric ? this.checkRubric(body.rubric) : null;
    await this.transactions.run(async () => {
      const queue = await this.require(access, id, true);
      await this.checkMembers(access, [...(body.reviewers ?? []), ...(body.adjudicators ?? [])]);
      const changes: QueueChanges = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.description !== undefined) changes.description = body.description;
      if (body.state !== undefined) changes.state = body.state;
      if (body.overlap !== undefined) changes.overlap = body.overlap;
      if (body.reviewers !== undefined) changes.reviewers = body.reviewers ? [...new Set(body.reviewers)] : null;
      if (body.adjudicators !== undefined)
        changes.adjudicators = body.adjudicators ? [...new Set(body.adjudicators)] : null;
      if (body.lease_minutes !== undefined) changes.lease_seconds = body.lease_minutes * 60;
      if (body.show_verdicts !== undefined) changes.show_verdicts = body.show_verdicts;
      if (fields) {
        changes.rubric_version = queue.rubric_version + 1;
        await this.review.insertRubric(id, queue.rubric_version + 1, fields, caller.userId);
      }
      await this.review.updateQueue(id, changes);
      // A lower overlap: items that already have as many labels are settled now.
      if (body.overlap !== undefined && body.overlap < queue.overlap) {
        const lowered = {
          ...queue,
          overlap: body.overlap,
          rubric_version: changes.rubric_version ?? queue.rubric_version,
        };
        for (const item of await this.review.allItems(id))
          if (item.state === 'pending' && item.labelled >= body.overlap)
            await this.settle(lowered as QueueRow, item, item.labelled);
      }
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.updated',
        targetType: 'review_queue',
        targetId: id,
        details: { fields: Object.keys(changes) },
      });
    });
    return this.get(access, id);
  }

  /** Deletes the queue with its items and labels. */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const queue = await this.require(access, id, true);
      await this.review.deleteQueue(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.deleted',
        targetType: 'review_queue',
        targetId: id,
        details: { name: queue.name },
      });
    });
  }

  async rubricVersions(access: WorkspaceAccess, id: string): Promise<RubricVersionList> {
    await this.require(access, id);
    return { items: (await this.review.rubrics(id)).map(toRubricResponse) };
  }

  async items(access: WorkspaceAccess, id: string, query: ListReviewItemsQuery): Promise<Page<ReviewItemResponse>> {
    const queue = await this.require(access, id);
    const [rows, total] = await this.review.pageItems(id, query.state, pageWindow(query));
    return pageOf(rows, total, query, (i) => toItemResponse(i, runIdOf(queue), queue.show_verdicts));
  }

  /** The item's outcome once `labelled` labels are in: final when they agree on every required field, else in disagreement. */
  async settle(queue: QueueRow, item: ItemRow, labelled: number): Promise<void> {
    if (labelled < queue.overlap) {
      await this.review.setItemOutcome(item.id, {
        state: 'pending',
        labelled,
        final_label: null,
        final_source: null,
        final_rubric_version: null,
      });
      return;
    }
    const labels = await this.review.labelsOf([item.id]);
    const rubric = await this.rubric(queue, Math.max(...labels.map((l) => l.rubric_version)));
    const agreed = consensus(
      rubric.fields,
      labels.map((l) => l.values ?? {}),
    );
    await this.review.setItemOutcome(item.id, {
      state: agreed ? 'final' : 'disagreement',
      labelled,
      final_label: agreed,
      final_source: agreed ? 'consensus' : null,
      final_rubric_version: agreed ? rubric.version : null,
    });
  }

  private checkRubric(rubric: RubricDto): RubricField[] {
    const fields: RubricField[] = rubric.fields.map((f) => ({
      name: f.name,
      type: f.type,
      required: f.required ?? false,
      ...(f.description !== undefined ? { description: f.description } : {}),
      ...(f.options !== undefined ? { options: f.options } : {}),
      ...(f.min !== undefined ? { min: f.min } : {}),
      ...(f.max !== undefined ? { max: f.max } : {}),
    }));
    const errors = rubricProblems(fields);
    if (errors.length)
      throw new DomainError(ReviewErrors.review_rubric_invalid, `The rubric does not hold: ${errors[0].message}`, {
        errors,
      });
    return fields;
  }

  /** The source is the workspace's run, or dataset version of the right kind. */
  private async checkSource(access: WorkspaceAccess, kind: string, id: string): Promise<void> {
    const unknown = (detail: string) =>
      new DomainError(ReviewErrors.unknown_review_source, detail, { field: 'source' });
    if (kind === 'run') {
      if (!(await this.runs.find(access.workspaceId, id))) throw unknown(`The workspace has no run ${id}`);
      return;
    }
    const version = await this.versions.findById(access.workspaceId, id);
    if (!version) throw unknown(`The workspace has no dataset version ${id}`);
    const dataset = await this.datasets.require(access, version.datasetId);
    const wants = kind === 'dataset_version' ? 'rows' : 'traces';
    if (dataset.kind !== wants)
      throw unknown(`A ${kind} source needs a version of a ${wants} dataset; ${dataset.name} holds ${dataset.kind}`);
  }

  /** Every user named is a member of the workspace with role member or above. */
  private async checkMembers(access: WorkspaceAccess, userIds: string[]): Promise<void> {
    if (!userIds.length) return;
    const roles = new Map((await this.members.list(access)).map((m) => [m.user_id, m.role]));
    const refused = [...new Set(userIds)].filter((u) => !roles.has(u) || !roleAtLeast(roles.get(u)!, 'member'));
    if (refused.length)
      throw new DomainError(
        ReviewErrors.reviewer_not_member,
        `User ${refused[0]} is not a member of the workspace with role member or above`,
        { user_ids: refused },
      );
  }
}

/** The run a queue's items are rows of, for a run source. */
export function runIdOf(queue: QueueRow): string | null {
  return queue.source_kind === 'run' ? queue.source_id : null;
}
