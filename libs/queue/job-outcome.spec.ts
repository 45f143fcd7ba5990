import { describe, expect, it } from '@jest/globals';
import { bullJobId, bullPriority } from './drivers/bullmq.driver.js';
import { sweepIntervalMs } from './drivers/driver-support.js';
import { decideAfterError, decideAfterLeaseExpiry, JobFailure, retryDelayMs, toJobError } from './job-outcome.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const noJitter = () => 0;

describe('job outcomes', () => {
  it('backs off exponentially from the base delay, capped at 10 minutes, with at most 10 % jitter', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, noJitter))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(30, 1000, noJitter)).toBe(600_000);
    expect(retryDelayMs(1, 1000, () => 0.999)).toBe(1100);
    expect(retryDelayMs(3, 0, noJitter)).toBe(0);
  });

  it('records a thrown error with its message, its code when it has one, the attempt and the time', () => {
    expect(toJobError(new Error('boom'), 2, now)).toEqual({
      message: 'boom',
      attempts: 2,
      at: '2026-11-22T10:00:00.000Z',
    });
    expect(toJobError(Object.assign(new Error('nope'), { code: 'dataset_missing' }), 1, now)).toEqual(
      expect.objectContaining({ code: 'dataset_missing' }),
    );
    expect(toJobError('plain string', 1, now).message).toBe('plain string');
    expect(toJobError(new Error(''), 1, now).message).toBe('the handler failed without a message');
    expect(toJobError(new Error('x'.repeat(5000)), 1, now).message).toHaveLength(2000);
  });

  it('after an error: retries while attempts remain, fails on the last one or on a non-retryable failure', () => {
    const options = { now, retryBaseMs: 1000, random: noJitter };
    expect(
      decideAfterError({ attempts: 1, maxAttempts: 3, cancelRequestedAt: null }, new Error('flaky'), options),
    ).toEqual({
      status: 'queued',
      delayMs: 1000,
      error: { message: 'flaky', attempts: 1, at: now.toISOString() },
    });
    expect(
      decideAfterError({ attempts: 3, maxAttempts: 3, cancelRequestedAt: null }, new Error('flaky'), options),
    ).toEqual(expect.objectContaining({ status: 'failed', error: expect.objectContaining({ attempts: 3 }) }));
    const permanent = new JobFailure('bad payload', { code: 'invalid_payload', retry: false });
    expect(decideAfterError({ attempts: 1, maxAttempts: 5, cancelRequestedAt: null }, permanent, options)).toEqual(
      expect.objectContaining({ status: 'failed', error: expect.objectContaining({ code: 'invalid_payload' }) }),
    );
  });

  it('after an error with a cancellation requested: cancelled, never retried', () => {
    expect(
      decideAfterError({ attempts: 1, maxAttempts: 3, cancelRequestedAt: now }, new Error('aborted'), {
        now,
        retryBaseMs: 10,
      }),
    ).toEqual(expect.objectContaining({ status: 'cancelled', error: expect.objectContaining({ code: 'cancelled' }) }));
  });

  it('after a lost worker: queued again at once, failed with the reason on the last attempt, or cancelled when asked', () => {
    const lost = { attempts: 1, maxAttempts: 3, cancelRequestedAt: null, leaseOwner: 'host:42:abcdef#7' };
    expect(decideAfterLeaseExpiry(lost, now)).toEqual({
      status: 'queued',
      delayMs: 0,
      error: {
        message: 'worker lost (lease expired) during attempt 1; queued again',
        code: 'worker_lost',
        attempts: 1,
        at: now.toISOString(),
        worker: 'host:42:abcdef',
      },
    });
    expect(decideAfterLeaseExpiry({ ...lost, attempts: 3 }, now)).toEqual({
      status: 'failed',
      error: {
        message: 'worker lost (lease expired) after 3 attempts',
        code: 'worker_lost',
        attempts: 3,
        at: now.toISOString(),
        worker: 'host:42:abcdef',
      },
    });
    expect(decideAfterLeaseExpiry({ ...lost, maxAttempts: 1 }, now).error.message).toBe(
      'worker lost (lease expired) after 1 attempt',
    );
    expect(decideAfterLeaseExpiry({ ...lost, cancelRequestedAt: now }, now).status).toBe('cancelled');
  });
});

describe('driver details', () => {
  it('one BullMQ id per queued state of a row; higher priorities run first', () => {
    const id = '6f0c1c1e-8a59-4d7a-9d4e-1d2a3b4c5d6e';
    expect(bullJobId({ id, runAfter: now })).toBe(`${id}.${now.getTime()}`);
    expect(bullJobId({ id, runAfter: new Date(now.getTime() + 1) })).not.toBe(bullJobId({ id, runAfter: now }));
    expect(bullJobId({ id, runAfter: now })).not.toContain(':');
    expect(bullPriority(10)).toBeLessThan(bullPriority(0));
    expect(bullPriority(-5_000_000)).toBe(2_097_152);
    expect(bullPriority(5_000_000)).toBe(1);
  });

  it('sweeps a third of the lease, between 1 and 15 seconds', () => {
    expect(sweepIntervalMs(5)).toBe(1667);
    expect(sweepIntervalMs(30)).toBe(10_000);
    expect(sweepIntervalMs(3600)).toBe(15_000);
  });
});
