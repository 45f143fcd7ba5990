import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { RateGate } from './rate-gate.js';

describe('RateGate', () => {
  it('spaces call starts to its rate, in call order', async () => {
    const gate = new RateGate(50);
    const started: number[] = [];
    const t0 = performance.now();
    await Promise.all([0, 1, 2].map(async (i) => (await gate.wait(), (started[i] = performance.now() - t0))));
    expect(started[1]).toBeGreaterThanOrEqual(18);
    expect(started[2]).toBeGreaterThanOrEqual(38);
  });

  it('leaves no listener on the signal once a slot came (a run signal outlives its calls)', async () => {
    const gate = new RateGate(200);
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) await gate.wait(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('ends a wait early when the signal aborts', async () => {
    const gate = new RateGate(1);
    const controller = new AbortController();
    await gate.wait(controller.signal);
    const t0 = performance.now();
    const waiting = gate.wait(controller.signal);
    controller.abort();
    await waiting;
    expect(performance.now() - t0).toBeLessThan(900);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('does not wait without a rate', async () => {
    const controller = new AbortController();
    await new RateGate(null).wait(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
