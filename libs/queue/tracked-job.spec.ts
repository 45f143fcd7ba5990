import { describe, expect, it } from '@jest/globals';
import {
  defineStateVocabulary,
  failureOf,
  failureOfJob,
  JOB_STATE_VOCABULARY,
  trackedIdOf,
  trackedRecord,
  UNCANCELLABLE_VOCABULARY,
  type TrackedTable,
} from './tracked-job.js';

describe('tracked-job model', () => {
  it('shows the common states in each documented vocabulary, and finds the common states behind a documented one', () => {
    expect(JOB_STATE_VOCABULARY.states).toEqual(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
    expect(JOB_STATE_VOCABULARY.show('cancelled')).toBe('cancelled');
    expect(UNCANCELLABLE_VOCABULARY.states).toEqual(['queued', 'running', 'succeeded', 'failed']);
    expect(UNCANCELLABLE_VOCABULARY.show('cancelled')).toBe('failed');
    expect(UNCANCELLABLE_VOCABULARY.commonOf('failed')).toEqual(['failed', 'cancelled']);
  });

  it('refuses a vocabulary that shows a state it does not document', () => {
    expect(() =>
      defineStateVocabulary(['running', 'done'], {
        queued: 'running',
        running: 'running',
        succeeded: 'done',
        failed: 'failed' as 'done',
        cancelled: 'done',
      }),
    ).toThrow(/failed shows as failed/);
  });

  it('takes the record id from the payload, and refuses table names that are not identifiers', () => {
    const record = trackedRecord('sdg_runs', 'sdg_run_id');
    expect(trackedIdOf(record, { type: 'sdg.generate', payload: { sdg_run_id: 'a' } })).toBe('a');
    expect(() => trackedIdOf(record, { type: 'sdg.generate', payload: {} })).toThrow(/names no sdg_run_id/);
    // The type admits only the schema's tracked tables; a name forced past it is still refused.
    expect(() => trackedRecord('runs; DROP TABLE x' as TrackedTable, 'id')).toThrow(/not a table name/);
  });

  it('gives every failure one shape', () => {
    expect(failureOfJob({ status: 'succeeded', error: null })).toBeNull();
    expect(
      failureOfJob({ status: 'failed', error: { message: 'worker lost', code: 'worker_lost', attempts: 3, at: '' } }),
    ).toEqual({ code: 'worker_lost', message: 'worker lost' });
    expect(failureOfJob({ status: 'cancelled', error: null })).toEqual({ code: 'cancelled', message: 'cancelled' });
    expect(failureOf(Object.assign(new Error('bad column'), { code: 'unknown_column' }))).toEqual({
      code: 'unknown_column',
      message: 'bad column',
    });
    expect(failureOf(new Error('boom'), 'quality_checks_failed')).toEqual({
      code: 'quality_checks_failed',
      message: 'boom',
    });
  });
});
