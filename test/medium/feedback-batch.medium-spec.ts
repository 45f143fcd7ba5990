import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreateTraceFeedbackBatchRequest } from '#src/modules/traces/dto/feedback.dto.js';
import { TraceFeedbackService } from '#src/modules/traces/feedback/feedback.service.js';
import { TracesModule } from '#src/modules/traces/traces.module.js';
import { startMedium, type Caller, type Medium } from './medium.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/**
 * A feedback batch is one unit of work: a database failure on a later item (planted as a trigger
 * refusing one feedback name) stores none of the batch, and a retry of the same batch after the
 * failure is gone stores each item once, as its client keys say.
 */
describe('service tier: feedback batches are atomic', () => {
  let s: Medium;
  let feedback: TraceFeedbackService;
  let caller: Caller;

  beforeAll(async () => {
    s = await startMedium([TracesModule]);
    feedback = s.get(TraceFeedbackService);
    caller = await s.caller();
  });
  afterAll(async () => {
    await s?.close();
  });

  const stored = async () =>
    (
      await s.query<{ name: string }>('SELECT name FROM trace_feedback WHERE workspace_id = $1 ORDER BY name', [
        caller.workspaceId,
      ])
    ).map((row) => row.name);

  it('stores none of a batch whose later item the database refuses, and all of it on a retry', async () => {
    await s.query(`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'planted failure'; END IF; RETURN NEW; END $$`);
    await s.query(
      'CREATE TRIGGER refuse_boom BEFORE INSERT ON trace_feedback FOR EACH ROW EXECUTE FUNCTION refuse_boom()',
    );
    const batch = {
      items: [
        { trace_id: TRACE, name: 'thumbs', value: false, client_key: 'k-1' },
        { trace_id: TRACE, name: 'rating', value: 2, client_key: 'k-2' },
        { trace_id: TRACE, name: 'boom', value: true, client_key: 'k-3' },
      ],
    } as CreateTraceFeedbackBatchRequest;
    await expect(feedback.createBatch(caller.access, caller.principal, batch)).rejects.toThrow();
    expect(await stored()).toEqual([]);

    await s.query('DROP TRIGGER refuse_boom ON trace_feedback');
    const first = await feedback.createBatch(caller.access, caller.principal, batch);
    expect(first.items.map((i) => i.outcome)).toEqual(['created', 'created', 'created']);
    expect(await stored()).toEqual(['boom', 'rating', 'thumbs']);
    // Per-item idempotency holds inside the unit of work: the same batch again is replayed.
    const again = await feedback.createBatch(caller.access, caller.principal, batch);
    expect(again.items.map((i) => i.outcome)).toEqual(['replayed', 'replayed', 'replayed']);
    expect(await stored()).toEqual(['boom', 'rating', 'thumbs']);
  });
});
