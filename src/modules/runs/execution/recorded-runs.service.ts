import { Injectable } from '@nestjs/common';
import { v5 as nameUuid } from 'uuid';
import type { TargetLevel, TargetMapping } from '#libs/evaluation/online/targets.js';
import { recordedItem, type RecordedItem } from '#libs/evaluation/runs/recorded-items.js';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { targetMapping } from '../../traces/dto/span-mapping.dto.js';
import { TraceDatasets } from '../../traces/trace-datasets.service.js';
import type { CreateRunRequest } from '../dto/run.dto.js';
import { RunErrors } from '../runs.errors.js';
import type { RunSource } from '../../datasets/run-source.service.js';
import { RecordedItemsRepository } from './recorded-items.repository.js';

/** What a run over recorded traces takes a row to be, and how it reads one (kept in its snapshot). */
export interface RecordedSpec {
  level: Extract<TargetLevel, 'trace' | 'session'>;
  mapping: TargetMapping;
}

/** Items written per statement. */
const BATCH = 200;
/** The namespace of recorded rows' ids: the same trace (or session) is the same row in every run, so runs over it pair. */
const RECORDED_ROWS = '5b8f4f6e-1c7a-5d2e-9a43-0e7d2c1b9f60';

/** The row id of a trace or session: the same in every version and dataset it appears in. */
export function recordedRowId(level: RecordedSpec['level'], key: string): string {
  return nameUuid(`${level}:${key}`, RECORDED_ROWS);
}

/**
 * Runs over recorded traces (docs/agents.md#recorded-traces): the items of a trace dataset version
 * are its traces (or sessions), answered already, so the run scores them without calling anything.
 */
@Injectable()
export class RecordedRuns {
  constructor(
    private readonly traces: TraceDatasets,
    private readonly items: RecordedItemsRepository,
  ) {}

  /**
   * What a request for a run over recorded traces asks for, checked: the source is a whole version
   * of a trace dataset, read once per row (no partition, sample or repetitions).
   */
  async spec(access: WorkspaceAccess, body: CreateRunRequest): Promise<RecordedSpec> {
    await this.traces.require(access, body.dataset_id, 'a run over recorded traces reads a trace dataset');
    const refuse = (field: string, detail: string) =>
      new DomainError(RunErrors.run_input_invalid, `A run over recorded traces ${detail}`, { field });
    if (body.partition_id) throw refuse('partition_id', 'reads a whole version: leave out partition_id');
    if (body.sample) throw refuse('sample', 'reads every trace of the version: leave out sample');
    if ((body.repetitions ?? 1) > 1)
      throw refuse('repetitions', 'has one recorded answer per row: leave out repetitions');
    return { level: body.traces?.level ?? 'trace', mapping: targetMapping(body.traces?.mapping) };
  }

  /** Writes one answered item per trace (or session) of the source version, in batches; answers their count. */
  async materialize(runId: string, workspaceId: string, source: RunSource, spec: RecordedSpec): Promise<number> {
    const key = spec.level === 'session' ? 'session_id' : 'trace_id';
    const pages =
      spec.level === 'session'
        ? this.traces.spansBySession(source.datasetId, source.versionNumber)
        : this.traces.spansByTrace(source.datasetId, source.versionNumber);
    let written = 0;
    let batch: Array<RecordedItem & { row_id: string }> = [];
    let group: Array<Record<string, unknown>> = [];
    let current: string | null = null;
    const close = async () => {
      if (current === null || !group.length) return;
      batch.push({
        ...recordedItem(group, spec.level, current, spec.mapping),
        row_id: recordedRowId(spec.level, current),
      });
      if (batch.length >= BATCH) await flush();
    };
    const flush = async () => {
      await this.items.insert(runId, workspaceId, batch, written);
      written += batch.length;
      batch = [];
    };
    // A page holds whole groups or ends inside one: a group closes when the key changes.
    for await (const page of pages)
      for (const span of page) {
        const value = String(span[key]);
        if (value !== current) {
          await close();
          current = value;
          group = [];
        }
        group.push(span);
      }
    await close();
    await flush();
    return written;
  }
}
