import type { ItemResult } from '#libs/evaluation/runs/run.types.js';

/** A run item the SUT answered (`done`, output `x`, no scores or verdict) with the fields a test sets. */
export function answeredItem(row_id: string, fields: Partial<ItemResult> = {}): ItemResult {
  return {
    row_id,
    repetition: 0,
    status: 'done',
    output: 'x',
    latency_ms: null,
    cost_usd: null,
    error: null,
    scores: {},
    passed: null,
    ...fields,
  };
}
