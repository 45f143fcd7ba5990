import { afterAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ResourceLimits } from 'node:worker_threads';
import { within } from '../../test/utils/within.js';
import type { SequenceInput } from '../../test/utils/threads/sequence-worker.js';
import { endIdleThreads, generatorOnThread, siblingModule } from './thread-generator.js';

// A real worker thread running test/utils/threads/sequence-worker.ts (loaded through the
// TypeScript hooks jest's setup names, as the application's worker modules are under jest).
const WORKER = siblingModule(import.meta.url, '../../test/utils/threads/sequence-worker');

type Value = { i: number; bytes: Uint8Array };
type Result = { total: number; thread?: number; youngMb?: number };

function run(input: Omit<SequenceInput, 'progress'>, ahead?: number, resourceLimits?: ResourceLimits) {
  const progress = new Int32Array(new SharedArrayBuffer(8));
  const values = generatorOnThread<Value, Result>(
    WORKER,
    { ...input, progress: progress.buffer },
    {
      ahead,
      resourceLimits,
      errors: {
        SequenceError: (fields, message) => Object.assign(new Error(message), { name: 'SequenceError', ...fields }),
      },
    },
  );
  return { values, made: () => progress[0], moved: () => progress[1] };
}

async function drain(values: AsyncGenerator<Value, Result>) {
  const seen: Value[] = [];
  for (;;) {
    const step = await values.next();
    if (step.done) return { seen, result: step.value };
    seen.push(step.value);
  }
}

describe('generatorOnThread', () => {
  afterAll(endIdleThreads);

  it("hands over the thread's values in order with their bytes, then its return value", async () => {
    const { values, moved } = run({ count: 50 });
    const { seen, result } = await drain(values);
    expect(seen.map((v) => v.i)).toEqual([...Array(50).keys()]);
    expect(seen.every((v) => v.bytes.length === 8 && v.bytes.every((b) => b === v.i))).toBe(true);
    expect(result).toEqual({ total: 50 });
    // Moved, not copied: every buffer the thread handed over is empty there afterwards.
    expect(moved()).toBe(50);
  });

  it('lets the thread run at most `ahead` values ahead of the consumer', async () => {
    const { values, made } = run({ count: 100 }, 3);
    expect((await values.next()).value).toMatchObject({ i: 0 });
    // Three granted (the one taken among them) and a fourth made, waiting for credit.
    await within(2000, async () => made() === 4);
    await sleep(200);
    expect(made()).toBe(4);
    // Asking for the next grants one more.
    await values.next();
    await within(2000, async () => made() === 5);
    await values.return({ total: 0 });
  });

  it('ends the thread when the consumer stops early', async () => {
    const { values, made } = run({ count: 1_000_000 }, 1);
    for await (const value of values) if (value.i === 2) break;
    const stopped = made();
    await sleep(200);
    expect(made()).toBe(stopped);
    expect(stopped).toBeLessThanOrEqual(5);
  });

  it("throws the thread's error to the consumer: as its own class where one is named, with its fields", async () => {
    const failing = run({ count: 10, failAt: 4 });
    const seen: number[] = [];
    const caught = await (async () => {
      for await (const value of failing.values) seen.push(value.i);
    })().catch((err: unknown) => err);
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(caught).toMatchObject({ name: 'SequenceError', message: 'failed at item 4', where: 'item 4', at: 4 });

    const plain = await drain(run({ count: 10, plainFailAt: 1 }).values).catch((err: unknown) => err);
    expect(plain).toBeInstanceOf(Error);
    expect(plain).toMatchObject({ name: 'RangeError', message: 'no item 1' });
    expect((plain as Error).stack).toContain('(on a worker thread)');
  });

  it('runs the next run on the thread the last one left, and a fresh thread after one cut short', async () => {
    const a = await drain(run({ count: 3, threadId: true }).values);
    for (let i = 0; i < 12; i++) {
      const next = await drain(run({ count: 3, threadId: true }).values);
      expect(next.result.thread).toBe(a.result.thread);
    }
    const cut = run({ count: 100, threadId: true });
    await cut.values.next();
    await cut.values.return({ total: 0 });
    const c = await drain(run({ count: 3, threadId: true }).values);
    expect(c.result.thread).not.toBe(a.result.thread);
  });

  it('starts a thread with the heap limits asked for', async () => {
    await endIdleThreads();
    const { result } = await drain(run({ count: 1, limits: true }, 2, { maxYoungGenerationSizeMb: 8 }).values);
    expect(result.youngMb).toBe(8);
  });

  it('fails, naming the module, when the thread dies before it finishes', async () => {
    const caught = await drain(run({ count: 10, exitAt: 2 }).values).catch((err: unknown) => err);
    expect(String(caught)).toMatch(
      /the worker thread of .*sequence-worker\.ts stopped \(exit code 3\) before it finished/,
    );
  });
});
