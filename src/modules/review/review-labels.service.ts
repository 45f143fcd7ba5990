import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow, type PageQueryDto } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import type {
  AgreementQuery,
  AgreementResponse,
  FinalLabelResponse,
  ReviewExportRequest,
  ReviewExportResponse,
  ReviewSourceKind,
} from './dto/review.dto.js';
import { ReviewErrors } from './review.errors.js';
import { toFinalLabelResponse } from './review.mapper.js';
import { ReviewQueuesService, runIdOf } from './review-queues.service.js';
import { ReviewRepository } from './review.repository.js';
import { fieldAgreement, type LabelValues, type RubricField } from './review.rules.js';

/** What another family reads of a queue's final labels (judge validation): the rubric and each item's reference and final label. */
export interface QueueFinalLabels {
  queueId: string;
  source: { kind: ReviewSourceKind; id: string };
  rubricVersion: number;
  rubric: RubricField[];
  items: Array<{
    itemId: string;
    /** The reference into the source, each filled as the source has it. */
    reference: { runId: string | null; rowId: string | null; traceId: string | null; sessionId: string | null };
    values: LabelValues;
    source: 'consensus' | 'adjudication';
    rubricVersion: number;
  }>;
}

/**
 * A queue's results: its final labels (for people, and for other families through `finalLabels`),
 * the reviewers' agreement, and exports of the final labels into a test-case dataset.
 */
@Injectable()
export class ReviewLabelsService {
  constructor(
    private readonly review: ReviewRepository,
    private readonly queues: ReviewQueuesService,
    private readonly datasets: DatasetsService,
    private readonly writes: DatasetWritesService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The queue's rubric and every finally labelled item's reference and label; null when the workspace has no such queue. */
  async finalLabels(workspaceId: string, queueId: string): Promise<QueueFinalLabels | null> {
    const queue = await this.review.findQueue(workspaceId, queueId);
    if (!queue) return null;
    const rubric = await this.queues.rubric(queue);
    const kind = queue.source_kind as ReviewSourceKind;
    const items = (await this.review.allItems(queue.id)).filter((i) => i.state === 'final');
    return {
      queueId: queue.id,
      source: { kind, id: queue.source_id },
      rubricVersion: rubric.version,
      rubric: rubric.fields,
      items: items.map((i) => ({
        itemId: i.id,
        reference: {
          runId: runIdOf(queue),
          rowId: kind === 'run' || kind === 'dataset_version' ? i.ref : null,
          traceId: kind === 'traces' ? i.ref : null,
          sessionId: kind === 'sessions' ? i.ref : null,
        },
        values: i.final_label ?? {},
        source: i.final_source ?? 'consensus',
        rubricVersion: i.final_rubric_version ?? rubric.version,
      })),
    };
  }

  async list(access: WorkspaceAccess, queueId: string, query: PageQueryDto): Promise<Page<FinalLabelResponse>> {
    const queue = await this.queues.require(access, queueId);
    const [items, total] = await this.review.pageItems(queue.id, 'final', pageWindow(query));
    return pageOf(items, total, query, (i) => toFinalLabelResponse(i, runIdOf(queue)));
  }

  /** The reviewers' agreement per rated field of the current rubric, over every item labelled. */
  async agreement(access: WorkspaceAccess, queueId: string, query: AgreementQuery): Promise<AgreementResponse> {
    const queue = await this.queues.require(access, queueId);
    const rubric = await this.queues.rubric(queue);
    const items = await this.review.allItems(queue.id);
    const labels = await this.review.queueLabels(queue.id);
    const index = new Map(items.map((i, n) => [i.id, n]));
    const reviewers = [...new Set(labels.map((l) => l.reviewer_id))].sort();
    const confidence = query.confidence ?? 0.95;
    const fields = fieldAgreement(
      rubric.fields,
      items.length,
      reviewers,
      labels.map((l) => ({ item: index.get(l.item_id)!, reviewer: l.reviewer_id, values: l.values ?? {} })),
      items.map((i) => i.final_label),
      { seed: query.seed, confidence },
    );
    return {
      queue_id: queue.id,
      items: items.length,
      reviewers,
      disagreements: items.filter((i) => i.state === 'disagreement').length,
      seed: query.seed ?? null,
      confidence,
      fields: fields as unknown as AgreementResponse['fields'],
    };
  }

  /**
   * Writes the queue's final labels as rows of a new candidate version of a test-case dataset:
   * the item's input, expected output and output, its reference, and a `label_<field>` column
   * per rubric field. An item exported before is not written again.
   */
  async export(
    access: WorkspaceAccess,
    queueId: string,
    body: ReviewExportRequest,
    caller: Principal,
  ): Promise<ReviewExportResponse> {
    return this.transactions.run(async () => {
      const queue = await this.queues.require(access, queueId);
      const rubric = await this.queues.rubric(queue);
      const finals = (await this.review.itemCounts([queue.id])).get(queue.id)?.final ?? 0;
      if (!finals) throw new DomainError(ReviewErrors.nothing_to_export, `Queue ${queue.name} has no final label yet`);
      const invalid = (detail: string) => new DomainError(ReviewErrors.export_target_invalid, detail);
      const kind = await this.datasets.kindByName(access.workspaceId, body.dataset_name);
      if (kind === 'traces') throw invalid(`${body.dataset_name} is a trace dataset`);
      if (kind === null && !body.create_dataset)
        throw invalid(`The workspace has no dataset ${body.dataset_name}; ask create_dataset: true`);
      const datasetId = await this.writes.findOrCreateByName(access.workspaceId, body.dataset_name, {
        kind: 'rows',
        description: `Labels confirmed in review queue ${queue.name}`,
        tags: ['review'],
        createdBy: caller.userId,
      });
      if (!datasetId) throw invalid(`${body.dataset_name} is a trace dataset`);
      const dataset = (await this.datasets.findLocked(access.workspaceId, datasetId))!;
      if (await this.writes.isReserved(dataset.id))
        throw invalid(`${body.dataset_name} is being written by a landing; try again when it ends`);
      const { taken, landed, version } = await this.writes.appendFrom(
        dataset,
        {
          leadingColumns: ['input', 'expected_output', 'output'],
          fields: { source: 'commit', message: `Final labels of review queue ${queue.name}` },
          createdBy: caller.userId,
          mapping: { input: 'input', expected_output: 'expected_output' },
        },
        this.review.finalLabelSource(
          queue.id,
          rubric.fields.map((f) => f.name),
        ),
      );
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.exported',
        targetType: 'review_queue',
        targetId: queue.id,
        details: { dataset_id: dataset.id, version_id: version?.id ?? null, rows: landed },
      });
      return {
        dataset_id: dataset.id,
        version_id: landed ? (version?.id ?? null) : null,
        version_number: landed ? (version?.number ?? null) : null,
        rows: landed,
        already_exported: taken - landed,
      };
    });
  }
}
