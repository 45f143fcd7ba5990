import { Injectable } from '@nestjs/common';
import { hash } from 'node:crypto';
import { REPORTED_FIELDS } from '../../../libs/traces/conventions.js';
import type { CanonicalSpan } from '../../../libs/traces/span.types.js';
import { DatasetWritesService } from '../datasets/dataset-writes.service.js';

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

/** Trace datasets found by name, created on first use: where landings and OTLP exports name their target. */
@Injectable()
export class TraceDatasets {
  constructor(private readonly datasets: DatasetWritesService) {}

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
}
