import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { MAX_WAIT_MS, type PressureClock, RequestPressure, YIELD_DELAY_MS } from './request-pressure.js';

/** Keeps the event loop busy: every turn of it, a task that holds it for `ms`. */
const busyLoop = (ms: number) => {
  let running = true;
  const hold = () => {
    if (!running) return;
    const until = performance.now() + ms;
    while (performance.now() < until);
    setImmediate(hold);
  };
  setImmediate(hold);
  return () => {
    running = false;
  };
};

/** A clock of its own: every sleep ends `lateBy(n)` ms after its time (n counts the sleeps). */
const lateClock = (lateBy: (n: number) => number) => {
  let now = 0;
  let sleeps = 0;
  const clock: PressureClock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms + lateBy(sleeps++);
      await Promise.resolve();
    },
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { clock, sleeps: () => sleeps, now: () => now, advance };
};

/** The process's time and sleeps, counted. */
const countingClock = () => {
  let sleeps = 0;
  const clock: PressureClock = {
    now: () => performance.now(),
    sleep: (ms, signal) => {
      sleeps++;
      return sleep(ms, undefined, { signal }).catch(() => undefined);
    },
  };
  return { clock, sleeps: () => sleeps };
};

describe('RequestPressure', () => {
  it('lets background work go at once while no request is in flight, however late the loop runs', async () => {
    const late = lateClock(() => 100);
    const pressure = new RequestPressure(late.clock);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(0);
  });

  it('measures on the process clock how late the loop runs, and holds a turn while a request is in flight', async () => {
    const pressure = new RequestPressure();
    const res = {};
    pressure.begin(res);
    const stop = busyLoop(20);
    try {
      const started = performance.now();
      let waited = 0;
      const waiting = pressure.giveWay().then(() => (waited = performance.now() - started));
      // Besides the busy loop, one turn of it holds past the deadline while the turn waits: its
      // first look finds the loop late for certain (the busy loop alone makes a look late by
      // 0-20 ms, now and then by under YIELD_DELAY_MS, and the turn went on after one sample).
      setImmediate(() => {
        const until = performance.now() + MAX_WAIT_MS + 50;
        while (performance.now() < until);
      });
      await waiting;
      // How much longer it took depends on the machine's load; the bound is the next test's.
      expect(waited).toBeGreaterThanOrEqual(MAX_WAIT_MS - 1);
      expect(pressure.recentDelayMs).toBeGreaterThan(YIELD_DELAY_MS);
    } finally {
      stop();
    }
    pressure.end(res);
    expect(pressure.requestsInFlight).toBe(0);
  });

  it('holds a turn MAX_WAIT_MS at most, to the first wake after it, however late the loop stays', async () => {
    const late = lateClock(() => 20);
    const pressure = new RequestPressure(late.clock);
    pressure.begin({});
    await pressure.giveWay();
    // Sleeps of 50 ms that each end 20 ms late: 70, 140, 210, then the 40 ms left, ending at 270.
    expect(late.sleeps()).toBe(4);
    expect(late.now()).toBe(MAX_WAIT_MS + 20);
    expect(pressure.recentDelayMs).toBe(20);
  });

  it('lets a turn go at the first look that finds the loop on time, and the other turns while the look is fresh', async () => {
    const late = lateClock((n) => (n < 2 ? 30 : 0));
    const pressure = new RequestPressure(late.clock);
    pressure.begin({});
    await pressure.giveWay();
    expect(late.sleeps()).toBe(3);
    expect(late.now()).toBe(3 * 50 + 2 * 30);
    expect(pressure.recentDelayMs).toBeLessThanOrEqual(YIELD_DELAY_MS);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(3);
  });

  it('looks again once the look is stale, and lets every turn go once the last request ended', async () => {
    const late = lateClock(() => 0);
    const pressure = new RequestPressure(late.clock);
    const res = {};
    pressure.begin(res);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(1);
    late.advance(60);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(2);
    pressure.end(res);
    late.advance(60);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(2);
  });

  it('takes two requests begun within a sample period for requests being served, though none is in flight', async () => {
    const late = lateClock(() => 20);
    const pressure = new RequestPressure(late.clock);
    const [a, b, c] = [{}, {}, {}];
    pressure.begin(a);
    pressure.end(a);
    // One arrival alone (a client polling a run's progress) holds nothing back.
    await pressure.giveWay();
    expect(late.sleeps()).toBe(0);
    late.advance(30);
    pressure.begin(b);
    pressure.end(b);
    expect(pressure.requestsInFlight).toBe(0);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(1);
    // Once the sample period since the one before the last arrival has passed, it is over.
    late.advance(200);
    pressure.begin(c);
    pressure.end(c);
    await pressure.giveWay();
    expect(late.sleeps()).toBe(1);
  });

  it('counts a response once however often it ends, and stops waiting when the work is aborted', async () => {
    const counting = countingClock();
    const pressure = new RequestPressure(counting.clock);
    const [a, b] = [{}, {}];
    pressure.begin(a);
    pressure.begin(b);
    pressure.end(a);
    pressure.end(a);
    expect(pressure.requestsInFlight).toBe(1);
    const stop = busyLoop(20);
    try {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 60);
      await pressure.giveWay(abort.signal);
      // The abort came during the second sleep or the third (the busy loop makes the first end
      // late): without it the turn would sleep five times before its deadline. Counted, not
      // timed, so that a loaded machine's slowness does not count against it.
      expect(counting.sleeps()).toBeLessThanOrEqual(3);
    } finally {
      stop();
    }
    pressure.end(b);
    expect(pressure.requestsInFlight).toBe(0);
  });
});
