import { Injectable } from '@nestjs/common';
import { hash } from 'node:crypto';
import { REPORTED_FIELDS } from '#libs/traces/conventions.js';
import type { CanonicalSpan } from '#libs/traces/span.types.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import type { DatasetEntity, DatasetKind } from '../datasets/entities/dataset.entity.js';
import { KeyedRowsService } from '../datasets/keyed-rows.service.js';
import type { TreeCursor, TreeKeys, TreeRow } from '../datasets/tree-rows.types.js';
import { QueryService } from '../datasets/rows/query.service.js';
import type { Filter } from '#libs/database/query-language.js';
import { TraceErrors } from './traces.errors.js';

/** The columns of a trace dataset version, in this order (attributes last). */
export const SPAN_COLUMNS: Array<keyof CanonicalSpan> = [...REPORTED_FIELDS, 'convention', 'attributes'];

/** How a trace version maps onto the canonical fields runs and partitions use. */
export const TRACE_MAPPING = { input: 'input', session_id: 'session_id' };

/** A span's row id: the same trace and span in the same dataset always get the same id, so landing twice writes once. */
export function spanRowId(datasetId: string, traceId: string, spanId: string): string {
  // A name-based UUID (version 5 bits over SHA-1), built from the digest's hex: one call per span.
  const x = hash('sha1', `${datasetId}\u0000${traceId}\u0000${spanId}`, 'hex');
  const variant = '89ab'[parseInt(x[16], 16) & 3];
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-5${x.slice(13, 16)}-${variant}${x.slice(17, 20)}-${x.slice(20, 32)}`;
}

/** The key of a span row's data its trace is under: a trace is the spans that share it. */
const TRACE_KEY = 'trace_id';
/** What makes a row of a trace dataset a span (rows without it are not read as spans). */
const SPAN_KEYS = ['span_id'];
/** A trace as a tree: spans under their parent span, siblings in start order. */
const SPAN_TREE: TreeKeys = { group: TRACE_KEY, id: 'span_id', parent: 'parent_span_id', sort: 'start_time' };

/**
 * Trace datasets as the traces family asks the datasets family for them: found (by name, created
 * on first use, where landings and OTLP exports name their target; by id; every one of some
 * workspaces) and their versions' rows read as spans, trace by trace. The meaning of a trace (the
 * spans sharing a `trace_id`) is held here; the datasets family reads its rows by key.
 */
@Injectable()
export class TraceDatasets {
  constructor(
    private readonly datasets: DatasetWritesService,
    private readonly datasetsService: DatasetsService,
    private readonly keyed: KeyedRowsService,
    private readonly query: QueryService,
  ) {}

  /**
   * The id of the workspace's dataset of this name (compared case-insensitively), created as a
   * trace dataset when there is none; null when a test-case dataset has the name. Inside a unit
   * of work: concurrent first uses of one name create one dataset.
   */
  findOrCreate(
    workspaceId: string,
    name: string,
    createdBy: string | null,
    description: string,
  ): Promise<string | null> {
    return this.datasets.findOrCreateByName(workspaceId, name, {
      kind: 'traces',
      description,
      tags: ['traces'],
      createdBy,
    });
  }

  /** The kind of the workspace's dataset of this name (compared case-insensitively), or null when the name is free. */
  kindOfName(workspaceId: string, name: string): Promise<DatasetKind | null> {
    return this.datasetsService.kindByName(workspaceId, name);
  }

  /** The id of the workspace's trace dataset of this name (compared case-insensitively); null when there is none (yet). */
  async idByName(workspaceId: string, name: string): Promise<string | null> {
    const found = await this.datasetsService.findByName(workspaceId, name);
    return found?.kind === 'traces' ? found.id : null;
  }

  /** The workspace's dataset (of any kind: the caller answers a test-case one), locked for the caller's unit of work; null when missing. */
  findLocked(workspaceId: string, datasetId: string): Promise<DatasetEntity | null> {
    return this.datasetsService.findLocked(workspaceId, datasetId);
  }

  /** The caller's trace dataset (404 when missing); a test-case dataset is refused, `purpose` saying what needs a trace dataset. */
  async require(access: WorkspaceAccess, datasetId: string, purpose: string): Promise<DatasetEntity> {
    const dataset = await this.datasetsService.require(access, datasetId);
    if (dataset.kind !== 'traces')
      throw new DomainError(
        TraceErrors.trace_dataset_invalid,
        `Dataset ${datasetId} is a test-case dataset; ${purpose}`,
        { field: 'dataset_id' },
      );
    return dataset;
  }

  /** The caller's dataset of any kind (404 when missing or another workspace's): what a filter by dataset names. */
  async requireAnyKind(access: WorkspaceAccess, datasetId: string): Promise<void> {
    await this.datasetsService.require(access, datasetId);
  }

  /** The trace datasets of these workspaces (every workspace when null), by workspace then id. */
  inWorkspaces(workspaceIds: string[] | null): Promise<Array<{ workspace_id: string; dataset_id: string }>> {
    return this.datasetsService.ofKind('traces', workspaceIds);
  }

  // A version's spans

  /** The version's spans in pages, trace by trace (a trace's spans in row order): what topology and enrichment read. */
  spansByTrace(datasetId: string, number: number): AsyncGenerator<Array<Record<string, unknown>>> {
    return this.keyed.byKey(datasetId, number, TRACE_KEY, SPAN_KEYS);
  }

  /** The version's spans in pages, session by session (spans outside any session left out): what runs over recorded sessions read. */
  spansBySession(datasetId: string, number: number): AsyncGenerator<Array<Record<string, unknown>>> {
    return this.keyed.byKey(datasetId, number, 'session_id', SPAN_KEYS);
  }

  /** The trace's spans directly under `parentSpanId` (its roots and orphans when null), a page in start order, each with its child count. */
  spanChildren(
    datasetId: string,
    number: number,
    traceId: string,
    parentSpanId: string | null,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    return this.keyed.treeChildren(datasetId, number, SPAN_TREE, traceId, parentSpanId, after, limit);
  }

  /** The trace's spans at depth `maxDepth` or above (a root is 1), a page by depth then start, each with its depth and child count. */
  spansToDepth(
    datasetId: string,
    number: number,
    traceId: string,
    maxDepth: number,
    after: TreeCursor | null,
    limit: number,
  ): Promise<TreeRow[]> {
    return this.keyed.treeToDepth(datasetId, number, SPAN_TREE, traceId, maxDepth, after, limit);
  }

  /** Whether the version's trace holds this span. */
  holdsSpan(datasetId: string, number: number, traceId: string, spanId: string): Promise<boolean> {
    return this.keyed.treeHolds(datasetId, number, SPAN_TREE, traceId, spanId);
  }

  /** How many traces the version holds. */
  countTraces(datasetId: string, number: number): Promise<number> {
    return this.keyed.countDistinct(datasetId, number, TRACE_KEY);
  }

  /** Which of these trace ids the version holds. */
  knownTraces(datasetId: string, number: number, traceIds: string[]): Promise<Set<string>> {
    return this.keyed.presentValues(datasetId, number, TRACE_KEY, traceIds, SPAN_KEYS);
  }

  // What lands, as it lands

  /** A filter of the query language over spans, compiled (400 invalid_filter pointing under `root`). */
  spanFilter(filter: unknown, root: string): Filter {
    return this.query.compileWith(this.query.columnsContext(SPAN_COLUMNS), filter, root);
  }

  /**
   * Spans the dataset shows now past ordinal `after`, in landing order (at most `limit`), each with
   * whether `filter` holds (with `onlyMatching`, only those it holds for): how online evaluation
   * follows a dataset without touching its landing.
   */
  spansLandedAfter(
    datasetId: string,
    after: number,
    limit: number,
    filter?: Filter,
    onlyMatching = false,
  ): Promise<Array<{ ordinal: number; span: Record<string, unknown>; matched: boolean }>> {
    return this.keyed
      .landedAfter(datasetId, after, limit, filter, onlyMatching)
      .then((rows) => rows.map((r) => ({ ordinal: r.ordinal, span: r.data, matched: r.matched })));
  }

  /** The spans the dataset shows now of these traces (or sessions, by `session_id`), grouped by the key, in row order. */
  currentSpans(
    datasetId: string,
    key: 'trace_id' | 'session_id',
    values: string[],
  ): Promise<Array<Record<string, unknown>>> {
    return this.keyed.currentWithValues(datasetId, key, values, SPAN_KEYS);
  }
}
