import { Body, Controller, Get, Injectable, Module, Param, Post } from '@nestjs/common';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { DataSource } from 'typeorm';
import { Db } from '#libs/database/unit-of-work.js';
import { Public } from '#libs/auth/access.decorators.js';
import { NotFoundError } from '#libs/common/domain-error.js';
import { AcceptedAt } from '#libs/queue/accepted.decorator.js';
import { JobResponse } from '#libs/queue/dto/job.dto.js';
import { JobHandler, OnJobSettled } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { toJobResponse } from '#libs/queue/job.mapper.js';
import type { Job, JobContext } from '#libs/queue/job.types.js';

declare module '#libs/queue/job.types.js' {
  interface JobPayloads {
    'test.echo': { value?: string };
    'test.flaky': { fail_times: number };
    'test.permanent': Record<string, never>;
    'test.wait-for-abort': Record<string, never>;
    'test.sleep': { ms: number };
    'test.stall-first': Record<string, never>;
    'test.gated': Record<string, never>;
  }
}

/**
 * Test-only job handlers. Every invocation is written to `test_job_invocations` and every
 * settled job to `test_job_settled` (tables made by `createProbeTables`), so tests can count
 * what ran where, across processes.
 */
export async function createProbeTables(dataSource: DataSource): Promise<void> {
  await dataSource.query(`CREATE TABLE IF NOT EXISTS test_job_invocations (
    job_id uuid NOT NULL, attempt int NOT NULL, worker text NOT NULL, note text, at timestamptz NOT NULL DEFAULT now())`);
  await dataSource.query(`CREATE TABLE IF NOT EXISTS test_job_settled (
    job_id uuid NOT NULL, status text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

@Injectable()
export class TestJobs {
  /** Gates of `test.gated` attempts, opened by the test: key `${jobId}/${attempt}`. */
  private readonly gates = new Map<string, { open: () => void; opened: Promise<void> }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly db: Db,
    private readonly queue: JobQueue,
  ) {}

  private async record(ctx: Pick<JobContext, 'job'>, note: string | null = null): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO test_job_invocations (job_id, attempt, worker, note) VALUES ($1, $2, $3, $4)',
      [ctx.job.id, ctx.job.attempts, this.queue.workerId, note],
    );
  }

  private gate(key: string) {
    let entry = this.gates.get(key);
    if (!entry) {
      let open: () => void = () => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      entry = { open, opened };
      this.gates.set(key, entry);
    }
    return entry;
  }

  openGate(jobId: string, attempt: number): void {
    this.gate(`${jobId}/${attempt}`).open();
  }

  @JobHandler('test.echo')
  async echo(ctx: JobContext<'test.echo'>) {
    await this.record(ctx);
    await ctx.progress({ stage: 'echoing' });
    return { echo: ctx.payload.value ?? null, attempt: ctx.job.attempts, worker: this.queue.workerId };
  }

  @JobHandler('test.flaky', { maxAttempts: 4 })
  async flaky(ctx: JobContext<'test.flaky'>) {
    // The claimed job still carries the previous attempt's error.
    await this.record(ctx, ctx.job.error ? `previous: ${ctx.job.error.message}` : null);
    if (ctx.job.attempts <= ctx.payload.fail_times)
      throw new JobFailure(`planned failure ${ctx.job.attempts}`, { code: 'planned_failure' });
    return { attempt: ctx.job.attempts };
  }

  @JobHandler('test.permanent')
  async permanent(ctx: JobContext<'test.permanent'>) {
    await this.record(ctx);
    throw new JobFailure('the dataset is gone', { code: 'dataset_missing', retry: false });
  }

  /** Runs until its signal aborts, and records why. */
  @JobHandler('test.wait-for-abort')
  async waitForAbort(ctx: JobContext<'test.wait-for-abort'>) {
    await this.record(ctx, 'started');
    await ctx.progress({ stage: 'waiting' });
    try {
      await sleep(60_000, ctx.signal);
    } catch (err) {
      await this.record(ctx, `aborted:${(err as { reason?: string }).reason}`);
      throw err;
    }
    return { waited: true };
  }

  @JobHandler('test.sleep')
  async sleep(ctx: JobContext<'test.sleep'>) {
    await this.record(ctx);
    await sleep(ctx.payload.ms, ctx.signal);
    return { slept: ctx.payload.ms, worker: this.queue.workerId };
  }

  /** The first attempt hangs (ignoring its signal) until the process dies; later ones succeed. */
  @JobHandler('test.stall-first')
  async stallFirst(ctx: JobContext<'test.stall-first'>) {
    await this.record(ctx);
    if (ctx.job.attempts === 1) await new Promise<never>(() => undefined);
    return { attempt: ctx.job.attempts, worker: this.queue.workerId };
  }

  /** Each attempt waits for its gate, ignoring its signal (a handler that does not cooperate). */
  @JobHandler('test.gated')
  async gated(ctx: JobContext<'test.gated'>) {
    await this.record(ctx);
    await this.gate(`${ctx.job.id}/${ctx.job.attempts}`).opened;
    return { attempt: ctx.job.attempts };
  }

  @OnJobSettled('test.echo', 'test.flaky', 'test.permanent')
  @OnJobSettled('test.gated', 'test.wait-for-abort', 'test.stall-first')
  async settled(job: Job) {
    await this.db.query('INSERT INTO test_job_settled (job_id, status) VALUES ($1, $2)', [job.id, job.status]);
  }
}

class StartEchoRequest {
  @IsString()
  value: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  priority?: number;
}

/** A family-shaped controller: a 202 start with Location, and the record to poll. */
@Controller('test-jobs')
class TestJobsController {
  constructor(private readonly queue: JobQueue) {}

  @Post('echo')
  @Public()
  @AcceptedAt({ type: JobResponse, location: (job) => `/test-jobs/${job.id}` })
  async start(@Body() body: StartEchoRequest): Promise<JobResponse> {
    const { job } = await this.queue.enqueue({
      type: 'test.echo',
      payload: { value: body.value },
      priority: body.priority,
    });
    return toJobResponse(job);
  }

  @Get(':id')
  @Public()
  async get(@Param('id') id: string): Promise<JobResponse> {
    const job = await this.queue.get(id);
    if (!job) throw new NotFoundError('job', id);
    return toJobResponse(job);
  }
}

@Module({ providers: [TestJobs], controllers: [TestJobsController] })
export class TestJobsModule {}
