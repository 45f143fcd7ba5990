import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOB_HANDLER, JobHandler, OnJobSettled, type JobHandlerMetadata } from '#libs/queue/job-handler.decorator.js';
import type { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext, JobOf } from '#libs/queue/job.types.js';
import { trackedRecord } from '#libs/queue/tracked-job.js';
import { TRACE_LIVE_LAND_JOB, TRACE_LIVE_SEAL_JOB } from '#src/modules/traces/traces.jobs.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

/**
 * The job map's promises, kept by the compiler: each `@ts-expect-error` below is a pairing the
 * compiler must refuse. Were a check to stop working, its directive would be unused and the
 * tests' build (which type-checks this file) would fail.
 */
class Pairings {
  @JobHandler(TRACE_LIVE_SEAL_JOB)
  async right({ payload }: JobContext<typeof TRACE_LIVE_SEAL_JOB>) {
    return payload.version_id;
  }

  // @ts-expect-error a handler whose context names another job type
  @JobHandler(TRACE_LIVE_LAND_JOB)
  async otherType(ctx: JobContext<typeof TRACE_LIVE_SEAL_JOB>) {
    return ctx.payload.version_id;
  }

  // @ts-expect-error a settled listener for another job type
  @OnJobSettled(TRACE_LIVE_LAND_JOB)
  async otherSettled(job: JobOf<typeof TRACE_LIVE_SEAL_JOB>) {
    void job;
  }

  // @ts-expect-error a tracked record whose key is not a member of the payload
  @JobHandler(TRACE_LIVE_LAND_JOB, { tracks: trackedRecord('runs', 'run_id') })
  async wrongKey() {
    return null;
  }

  async enqueues(queue: JobQueue) {
    await queue.enqueue({ type: TRACE_LIVE_SEAL_JOB, payload: { dataset_id: 'd', version_id: 'v' } });
    // @ts-expect-error a payload missing a member its type declares
    await queue.enqueue({ type: TRACE_LIVE_SEAL_JOB, payload: { dataset_id: 'd' } });
    // @ts-expect-error a type nobody declared
    await queue.enqueue({ type: 'traces.nobody', payload: {} });
  }
}

describe('the job map', () => {
  it('registers the handler under its declared type', () => {
    const metadata = Reflect.getMetadata(JOB_HANDLER, Pairings.prototype.right) as JobHandlerMetadata;
    expect(metadata.type).toBe(TRACE_LIVE_SEAL_JOB);
  });

  it("has every job declared in a family's *.jobs.ts and handled by exactly one method, named by its constant", () => {
    const modules = join(root, 'src', 'modules');
    const declared = new Map<string, string>();
    const handled: string[] = [];
    for (const family of readdirSync(modules)) {
      for (const file of readdirSync(join(modules, family), { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
        const text = readFileSync(join(modules, family, file), 'utf8');
        // The family's own, and a sub-folder's (src/modules/online/alerts/alerts.jobs.ts).
        if (file === `${family}.jobs.ts` || /\/[\w-]+\.jobs\.ts$/.test(file))
          for (const [, name, type] of text.matchAll(/export const (\w+_JOB) = '([^']+)';/g)) declared.set(name, type);
        for (const [, argument] of text.matchAll(/@JobHandler\(([^,)]+)/g)) handled.push(argument.trim());
      }
    }
    expect(declared.size).toBeGreaterThanOrEqual(13);
    // Constants, not string literals, and each declared job handled once.
    expect(handled.filter((h) => !declared.has(h))).toEqual([]);
    expect([...handled].sort()).toEqual([...declared.keys()].sort());
  });
});
