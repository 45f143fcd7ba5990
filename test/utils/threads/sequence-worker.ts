/**
 * A worker module for libs/common/thread-generator.spec.ts: yields `count` values, each with a
 * buffer of its own, counting in `progress` (shared memory) the values made [0] and the buffers
 * found moved once handed over [1]; fails or dies at the item asked.
 */
import { resourceLimits, threadId } from 'node:worker_threads';
import { serveGenerator } from '#libs/common/thread-generator.js';

export class SequenceError extends Error {
  constructor(
    readonly where: string,
    readonly at: number,
  ) {
    super(`failed at ${where}`);
  }
}

export interface SequenceInput {
  count: number;
  progress: SharedArrayBuffer;
  failAt?: number;
  plainFailAt?: number;
  exitAt?: number;
  /** Answer the thread's id with the total. */
  threadId?: boolean;
  /** Answer the thread's young generation limit with the total. */
  limits?: boolean;
}

async function* sequence(
  input: SequenceInput,
): AsyncGenerator<{ i: number; bytes: Uint8Array }, { total: number; thread?: number }> {
  const progress = new Int32Array(input.progress);
  for (let i = 0; i < input.count; i++) {
    if (i === input.failAt) throw new SequenceError(`item ${i}`, i);
    if (i === input.plainFailAt) throw new RangeError(`no item ${i}`);
    if (i === input.exitAt) process.exit(3);
    const bytes = new Uint8Array(8).fill(i);
    Atomics.add(progress, 0, 1);
    yield { i, bytes };
    if (bytes.byteLength === 0) Atomics.add(progress, 1, 1);
  }
  return {
    total: input.count,
    ...(input.threadId ? { thread: threadId } : {}),
    ...(input.limits ? { youngMb: resourceLimits.maxYoungGenerationSizeMb } : {}),
  };
}

serveGenerator(sequence, (value) => [value.bytes.buffer as ArrayBuffer]);
