import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow, type PageQueryDto } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import type { CommitRowsRequest, UpdateRowsRequest } from '../datasets/dto/rows.dto.js';
import { RowsService } from '../datasets/rows/rows.service.js';
import { VersionsService } from '../datasets/versions/versions.service.js';
import { RunReadService } from '../runs/run-read.service.js';
import { TraceVersionsService } from '../traces/trace-versions.service.js';
import { TraceErrors } from '../traces/traces.errors.js';
import {
  MAX_ITEMS_PER_REQUEST,
  type AgreementQuery,
  type AgreementResponse,
  type FinalLabelResponse,
  type ReviewExportRequest,
  type ReviewExportResponse,
  type ReviewSourceKind,
} from './dto/review.dto.js';
import { ReviewErrors } from './review.errors.js';
import { toExportResponse, toFinalLabelResponse } from './review.mapper.js';
import { ReviewQueuesService, runIdOf } from './review-queues.service.js';
import { ReviewItemsService } from './review-items.service.js';
import { ReviewRepository, type QueueRow } from './review.repository.js';
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
    /** Each reviewer's label of the item (skips left out), in reviewer id order. */
    reviews: LabelValues[];
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
    private readonly versions: VersionsService,
    private readonly rows: RowsService,
    private readonly runs: RunReadService,
    private readonly reader: ReviewItemsService,
    private readonly traceVersions: TraceVersionsService,
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
    const reviews = new Map<string, LabelValues[]>();
    for (const l of await this.review.queueLabels(queue.id))
      reviews.set(l.item_id, [...(reviews.get(l.item_id) ?? []), l.values ?? {}]);
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
        reviews: reviews.get(i.id) ?? [],
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
   * Writes the queue's final labels into a dataset, in one unit of work: with `dataset_name`, as
   * new rows of a new candidate version of that test-case dataset (ToTestCases); without, as
   * label columns added to the source dataset's rows in its next version (inPlace).
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
      const result = body.ground_truth
        ? await this.groundTruth(access, queue, rubric.fields, body, caller)
        : body.dataset_name !== undefined
          ? await this.appendTestCases(
              access,
              queue,
              rubric.fields,
              body.dataset_name,
              body.create_dataset ?? false,
              caller,
            )
          : await this.inPlace(access, queue, caller);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'review_queue.exported',
        targetType: 'review_queue',
        targetId: queue.id,
        details: { dataset_id: result.dataset_id, version_id: result.version_id, rows: result.rows },
      });
      return result;
    });
  }

  /**
   * The final labels as the trace version's next ground truth, through the traces family: the
   * newest ground truth's items with each labelled trace's item replaced by the queue's (its
   * expected output from the free-text field named, or the earlier one when the label has none;
   * the final label's values as its labels).
   */
  private async groundTruth(
    access: WorkspaceAccess,
    queue: QueueRow,
    fields: RubricField[],
    body: ReviewExportRequest,
    caller: Principal,
  ): Promise<ReviewExportResponse> {
    const { expected_output_field: name, message } = body.ground_truth!;
    if (queue.source_kind !== 'traces' || body.dataset_name !== undefined)
      throw invalid(
        queue.source_kind !== 'traces'
          ? `A ground truth holds traces: queue ${queue.name} is over ${queue.source_kind}`
          : 'Export to a dataset (dataset_name) or to the ground truth, not both',
      );
    if (fields.find((f) => f.name === name)?.type !== 'free_text')
      throw new DomainError(
        ReviewErrors.export_field_invalid,
        `The queue's rubric has no free-text field ${name} (free-text fields: ${fields
          .filter((f) => f.type === 'free_text')
          .map((f) => f.name)
          .join(', ')})`,
        { field: name },
      );
    const { dataset, version } = await this.traceVersions.byId(access, queue.source_id);
    const earlier = await this.traceVersions.groundTruth(access, version.id, undefined).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === TraceErrors.ground_truth_not_found) return null;
      throw err;
    });
    const items = new Map((earlier?.items ?? []).map((i) => [i.trace_id, i]));
    const finals = (await this.review.allItems(queue.id)).filter((i) => i.state === 'final');
    const unwritten: string[] = [];
    for (const item of finals) {
      const values = item.final_label ?? {};
      const before = items.get(item.ref);
      const expected = values[name] ?? before?.expected_output;
      if (expected === undefined || expected === null) {
        unwritten.push(item.ref);
        continue;
      }
      items.set(item.ref, {
        trace_id: item.ref,
        expected_output: expected,
        ...(before?.notes !== undefined ? { notes: before.notes } : {}),
        labels: values,
      });
    }
    if (items.size === 0)
      throw invalid(
        `No final label of queue ${queue.name} has an expected output in ${name}, and no earlier ground truth`,
      );
    if (items.size > MAX_GROUND_TRUTH_ITEMS)
      throw invalid(`A ground truth holds at most ${MAX_GROUND_TRUTH_ITEMS} traces; this one would hold ${items.size}`);
    const created = await this.traceVersions.createGroundTruth(
      access,
      version.id,
      { items: [...items.values()], message: message ?? `Final labels of review queue ${queue.name}` },
      caller,
    );
    return {
      ...toExportResponse(dataset.id, version, finals.length - unwritten.length, 0, unwritten),
      ground_truth_number: created.number,
    };
  }

  /** New rows of the named test-case dataset: input, expected output, output, reference and label columns. */
  private async appendTestCases(
    access: WorkspaceAccess,
    queue: QueueRow,
    fields: RubricField[],
    name: string,
    create: boolean,
    caller: Principal,
  ): Promise<ReviewExportResponse> {
    const kind = await this.datasets.kindByName(access.workspaceId, name);
    if (kind === 'traces') throw invalid(`${name} is a trace dataset`);
    if (kind === null && !create) throw invalid(`The workspace has no dataset ${name}; ask create_dataset: true`);
    const datasetId = await this.writes.findOrCreateByName(access.workspaceId, name, {
      kind: 'rows',
      description: `Labels confirmed in review queue ${queue.name}`,
      tags: ['review'],
      createdBy: caller.userId,
    });
    if (!datasetId) throw invalid(`${name} is a trace dataset`);
    const dataset = (await this.datasets.findLocked(access.workspaceId, datasetId))!;
    if (await this.writes.isReserved(dataset.id))
      throw invalid(`${name} is being written by a landing; try again when it ends`);
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
        fields.map((f) => f.name),
      ),
    );
    return toExportResponse(dataset.id, landed ? version : null, landed, taken - landed, []);
  }

  /**
   * The final labels as columns `label_<field>` of the source dataset's rows, committed as its
   * next (candidate) version through the datasets family's row edits. Refused while the dataset
   * has staged edits (the commit would take them too); rows its newest version no longer has are
   * listed, not written.
   */
  private async inPlace(access: WorkspaceAccess, queue: QueueRow, caller: Principal): Promise<ReviewExportResponse> {
    if (queue.source_kind !== 'dataset_version' && queue.source_kind !== 'run')
      throw invalid('A trace or session queue exports to a test-case dataset: name it in dataset_name');
    const datasetId =
      queue.source_kind === 'run'
        ? (await this.runs.find(access.workspaceId, queue.source_id))?.datasetId
        : (await this.versions.findById(access.workspaceId, queue.source_id))?.datasetId;
    if (!datasetId) throw invalid("The queue's source is gone");
    if ((await this.rows.staged(access, datasetId)).length)
      throw invalid('The source dataset has staged row edits: commit or discard them first');
    const dataset = await this.datasets.require(access, datasetId);
    const newest = (await this.versions.findByNumber(access.workspaceId, datasetId, dataset.latestVersion))!;
    const items = (await this.review.allItems(queue.id)).filter((i) => i.state === 'final');
    const present = new Set<string>();
    for (let i = 0; i < items.length; i += MAX_ITEMS_PER_REQUEST) {
      const ids = items.slice(i, i + MAX_ITEMS_PER_REQUEST).map((item) => item.ref);
      for (const row of await this.reader.readRows(newest, { field: '_row_id', op: 'in', value: ids }, '/rows'))
        present.add(String(row._row_id));
    }
    const written = items.filter((i) => present.has(i.ref));
    if (!written.length) throw invalid("The source dataset's newest version has none of the labelled rows");
    for (let i = 0; i < written.length; i += MAX_ITEMS_PER_REQUEST) {
      const chunk = written.slice(i, i + MAX_ITEMS_PER_REQUEST);
      const rows = Object.fromEntries(
        chunk.map((item) => [
          item.ref,
          Object.fromEntries(Object.entries(item.final_label ?? {}).map(([k, v]) => [`label_${k}`, v])),
        ]),
      );
      await this.rows.update(access, datasetId, { rows, mode: 'merge' } as UpdateRowsRequest, caller);
    }
    const committed = await this.rows.commit(
      access,
      datasetId,
      { message: `Final labels of review queue ${queue.name}` } as CommitRowsRequest,
      caller,
    );
    const missing = items.filter((i) => !present.has(i.ref)).map((i) => i.ref);
    return toExportResponse(datasetId, committed.version, committed.updated, 0, missing);
  }
}

/** Traces a ground truth holds at most (as POST /traces/versions/{version_id}/ground-truth takes them). */
const MAX_GROUND_TRUTH_ITEMS = 10_000;

function invalid(detail: string): DomainError {
  return new DomainError(ReviewErrors.export_target_invalid, detail);
}
