import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { OnlineRepository } from '#src/modules/online/online.repository.js';
import { OnlineScoring } from '#src/modules/online/online-scoring.service.js';
import { TraceScoresService } from '#src/modules/traces/scores/scores.service.js';
import { chatCompletion, FakeUpstream } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

const TRACES = 40;
const traceId = (i: number) => `${(0x1000 + i).toString(16)}${'9e107d9d372bb6826bd81d3542a419d6'.slice(4)}`;

/**
 * The ledger's guarantee, under the worst the workers can do: two workers claiming the same
 * evaluator's targets at once, and a worker whose lease ran out (it hung, or died) coming back to
 * write what another already wrote. Every target ends with one score per metric, and its judge
 * is asked once unless a lease ran out.
 */
describe('Online evaluation: each target scored once', () => {
  let t: TestApp;
  let judge: FakeUpstream;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let evaluatorId: string;
  let datasetId: string;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    const ws = r.workspace.id;
    judge = await FakeUpstream.start();
    judge.on('POST', '/v1/chat/completions', () => ({
      json: chatCompletion('{"score": 4, "reason": "fine"}'),
      delayMs: 20,
    }));
    const judgeId = (
      await t.http
        .post('/judges')
        .set(r.admin.auth)
        .send({
          workspace_id: ws,
          name: 'j',
          provider: 'openai_compatible',
          base_url: judge.url('/v1'),
          model: 'm',
          max_attempts: 1,
        })
        .expect(201)
    ).body.id;
    await t.http
      .post('/metric-configs')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'grader',
        kind: 'judged',
        metric: 'llm_judge',
        judged: { rubric: 'Is {{output}} right?', scale: { type: 'numeric', min: 1, max: 5 }, judge_id: judgeId },
      })
      .expect(201);
    const records = Array.from({ length: TRACES }, (_, i) => ({
      trace_id: traceId(i),
      span_id: `${(i + 1).toString(16).padStart(16, '0')}`,
      name: 'answer',
      start_time: `2026-11-10T10:${String(i % 60).padStart(2, '0')}:00.000Z`,
      end_time: `2026-11-10T10:${String(i % 60).padStart(2, '0')}:01.000Z`,
      attributes: { 'openinference.span.kind': 'CHAIN', 'input.value': `question ${i}`, 'output.value': `answer ${i}` },
    }));
    const run = (
      await t.http
        .post('/traces/land:inline')
        .set(r.member.auth)
        .send({ workspace_id: ws, dataset_name: 'once', records })
        .expect(202)
    ).body;
    datasetId = (await landingSettled(t, r.member.auth, run.id)).dataset_id as string;
    evaluatorId = (
      await t.http
        .post('/online-evaluators')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: datasetId,
          name: 'once',
          metrics: [{ name: 'grader' }, { name: 'exact_match' }],
          state: 'paused',
        })
        .expect(201)
    ).body.id;
  });
  afterAll(async () => {
    await t?.close();
    await judge?.close();
  });

  it('two workers claiming together score every target once, and a late writer after a lost lease writes nothing', async () => {
    const repo = t.app.get(OnlineRepository);
    const scoring = t.app.get(OnlineScoring);
    const tx = t.app.get(TransactionRunner);
    const evaluator = (await repo.findUnscoped(evaluatorId))!;
    const prepared = await scoring.prepare(evaluator, 1);
    // The spans landed before the evaluator; a backfill's reading takes them into the ledger.
    const backfill = await tx.run(() =>
      repo.insertBackfill({
        workspace_id: evaluator.workspace_id,
        evaluator_id: evaluatorId,
        evaluator_version: 1,
        from_time: new Date('2026-11-10T00:00:00Z'),
        to_time: new Date('2026-11-11T00:00:00Z'),
      }),
    );
    const read = await scoring.offerRange(
      evaluator,
      prepared,
      backfill.id,
      { from: backfill.from_time, to: backfill.to_time },
      -1,
    );
    expect(read).toEqual(expect.objectContaining({ spans: TRACES, sampled: TRACES }));

    // A worker takes five targets and hangs past its lease.
    const hung = await tx.run(() => repo.claim(evaluatorId, 1, 5, 1, backfill.id));
    expect(hung).toHaveLength(5);
    await new Promise((resolve) => setTimeout(resolve, 1100));

    // Two workers at once, each claiming in turn until nothing is ready.
    const signal = new AbortController().signal;
    const rounds = await Promise.all([
      scoring.scoreReady(evaluator, prepared, backfill.id, signal, Date.now() + 60_000),
      scoring.scoreReady(evaluator, prepared, backfill.id, signal, Date.now() + 60_000),
    ]);
    expect(rounds[0].scored + rounds[1].scored).toBe(TRACES);
    expect(rounds[0].claimed + rounds[1].claimed).toBe(TRACES);
    expect(await repo.counts(evaluatorId, 1, backfill.id)).toEqual({
      pending: 0,
      scored: TRACES,
      skipped: 0,
      failed: 0,
    });

    // The hung worker comes back and writes what it scored: nothing is kept twice.
    const scores = t.app.get(TraceScoresService);
    const late = hung.map((target) => ({
      workspace_id: evaluator.workspace_id,
      dataset_id: datasetId,
      evaluator_id: evaluatorId,
      evaluator_name: 'once',
      evaluator_version: 1,
      level: 'trace',
      target_key: target.target_key,
      trace_id: target.trace_id,
      metric: 'grader',
      score: 1,
      passed: false,
      observed_at: new Date(),
    }));
    const outcome = await tx.run(async () => ({
      kept: await scores.record(late),
      finished: await repo.finishMany(
        evaluatorId,
        1,
        hung.map((h) => h.target_key),
        'scored',
        null,
      ),
    }));
    expect(outcome).toEqual({ kept: 0, finished: new Set() });

    const rows = await scores.forTraces(
      evaluator.workspace_id,
      datasetId,
      Array.from({ length: TRACES }, (_, i) => traceId(i)),
    );
    expect(rows).toHaveLength(TRACES * 2);
    const perTarget = new Map<string, number>();
    for (const row of rows)
      perTarget.set(`${row.target_key} ${row.metric}`, (perTarget.get(`${row.target_key} ${row.metric}`) ?? 0) + 1);
    expect([...perTarget.values()].every((n) => n === 1)).toBe(true);
    expect(rows.filter((s) => s.metric === 'grader').map((s) => [s.score, s.passed, s.error])).toEqual(
      Array(TRACES).fill([4, true, null]),
    );
    // One judge call per target: the hung worker never called it.
    expect(judge.requests).toHaveLength(TRACES);
  });
});
