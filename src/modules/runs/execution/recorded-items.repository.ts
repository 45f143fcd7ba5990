import { Injectable } from '@nestjs/common';
import type { RecordedItem } from '#libs/evaluation/runs/recorded-items.js';
import { Db } from '#libs/database/unit-of-work.js';

/** The items of a run over recorded traces: written answered, each a trace or a session with what it recorded. */
@Injectable()
export class RecordedItemsRepository {
  constructor(private readonly db: Db) {}

  /** Writes a batch of items at ordinals from `firstOrdinal`, their row ids given. */
  async insert(
    runId: string,
    workspaceId: string,
    items: Array<RecordedItem & { row_id: string }>,
    firstOrdinal: number,
  ): Promise<void> {
    if (!items.length) return;
    const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
    await this.db.typedWrite((q) =>
      q.insertInto('run_items').values(
        items.map((item, i) => ({
          run_id: runId,
          workspace_id: workspaceId,
          row_id: item.row_id,
          repetition: 1,
          ordinal: String(firstOrdinal + i),
          session_id: null,
          turn: null,
          data: json(item.data)!,
          dimensions: json(item.dimensions)!,
          status: item.error ? 'error' : 'done',
          output: item.output,
          latency_ms: item.latency_ms,
          usage: json(item.usage),
          cost_usd: item.cost_usd,
          error: json(item.error),
          attempts: 0,
          trace_id: item.trace_id,
          trajectory: json(item.trajectory),
          called_at: new Date(),
        })),
      ),
    );
  }
}
