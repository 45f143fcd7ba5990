import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { uploadRows } from '../../utils/datasets.js';
import { chatCompletion, FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { endedRun } from '../../utils/suts.js';

/** Multi-turn rows through an OpenAI-compatible SUT that rate-limits and sometimes answers garbage, graded by an LLM judge. */
describe('runs: conversations, judges, rate limits and malformed answers', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let sut: FakeUpstream;
  let judge: FakeUpstream;

  const settled = (id: string) => endedRun<{ state: string }>(t, r.viewer.auth, id, 20_000);

  beforeAll(async () => {
    t = await startTestApp();
    sut = await FakeUpstream.start();
    judge = await FakeUpstream.start();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => {
    await sut?.close();
    await judge?.close();
    await t?.close();
  });

  it('sends each turn with the conversation so far, retries 429s, records malformed answers, and grades with the judge', async () => {
    let throttled = false;
    sut.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
      const messages = (req.body as { messages: Array<{ role: string; content: string }> }).messages;
      const last = messages.at(-1)!.content;
      if (last === 'trigger a rate limit' && !throttled) {
        throttled = true;
        return { status: 429, json: { error: 'slow down' }, headers: { 'retry-after': '0' } };
      }
      if (last === 'break the model') return { text: '<html>502 Bad Gateway</html>' };
      return { json: chatCompletion(`reply ${messages.length} to: ${last}`) };
    });
    // The judge passes an answer that mentions the question, and fails the others; one verdict is unparseable.
    judge.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
      const prompt = (req.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1)!.content;
      if (prompt.includes('second question')) return { json: chatCompletion('I would rather not say.') };
      return {
        json: chatCompletion(
          prompt.includes('reply') ? '{"score": 5, "reason": "on topic"}' : '{"score": 1, "reason": "off"}',
        ),
      };
    });
    const data = await uploadRows(t, r.member.auth, ws, [
      { conv: 'c1', text: 'hello there', expected_output: 'x' },
      { conv: 'c1', text: 'second question', expected_output: 'x' },
      { conv: 'c2', text: 'trigger a rate limit', expected_output: 'x' },
      { conv: 'c2', text: 'break the model', expected_output: 'x' },
      { conv: 'c2', text: 'after the break', expected_output: 'x' },
    ]);
    await t.http
      .post(`/datasets/${data.datasetId}/versions/${data.versionId}/map`)
      .set(r.member.auth)
      .send({ input: 'text', expected_output: 'expected_output', session_id: 'conv' })
      .expect(200);
    const sutId = (
      await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'chatbot' }).expect(201)
    ).body.id;
    const connection = (
      await t.http
        .post(`/suts/${sutId}/connections`)
        .set(r.member.auth)
        .send({
          name: 'chat',
          kind: 'openai_chat',
          openai_chat: { base_url: sut.url('/v1'), model: 'bot' },
          retry: { max_attempts: 3, initial_backoff_ms: 1 },
        })
        .expect(201)
    ).body.id;
    const judgeId = (
      await t.http
        .post('/judges')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'grader',
          provider: 'openai_compatible',
          base_url: judge.url('/v1'),
          model: 'g',
          max_attempts: 1,
        })
        .expect(201)
    ).body.id;

    const run = (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: connection,
          metrics: ['answer_relevance', 'length'],
          judge_id: judgeId,
        })
        .expect(202)
    ).body;
    expect(run.metrics[0]).toEqual(
      expect.objectContaining({ name: 'answer_relevance', kind: 'judged', judge_id: judgeId }),
    );
    const done = await settled(run.id);
    expect(done).toEqual(
      expect.objectContaining({
        state: 'succeeded',
        progress: expect.objectContaining({ total: 5, completed: 4, errored: 1 }),
      }),
    );

    // Turn 2 of c1 saw turn 1 and its answer; turn 3 of c2 saw the failed turn with an empty answer.
    const calls = sut
      .received('POST', '/v1/chat/completions')
      .map((q) => (q.body as { messages: Array<{ role: string; content: string }> }).messages);
    const second = calls.find((m) => m.at(-1)!.content === 'second question')!;
    expect(second).toEqual([
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'reply 1 to: hello there' },
      { role: 'user', content: 'second question' },
    ]);
    expect(calls.filter((m) => m.at(-1)!.content === 'trigger a rate limit')).toHaveLength(2);
    expect(calls.find((m) => m.at(-1)!.content === 'after the break')).toHaveLength(5);

    const session = (await t.http.get(`/runs/${run.id}/sessions/c2`).set(r.viewer.auth).expect(200)).body;
    expect(
      session.turns.map((x: { turn: number; status: string; error: { code: string } | null }) => [
        x.turn,
        x.status,
        x.error?.code ?? null,
      ]),
    ).toEqual([
      [1, 'done', null],
      [2, 'error', 'response_not_json'],
      [3, 'done', null],
    ]);
    const c1 = (await t.http.get(`/runs/${run.id}/sessions/c1`).set(r.viewer.auth).expect(200)).body;
    expect(c1.turns[0].scores.answer_relevance).toEqual(
      expect.objectContaining({ score: 5, passed: true, normalized: 1, reason: 'on topic' }),
    );
    expect(c1.turns[1].scores.answer_relevance).toEqual(
      expect.objectContaining({ score: null, passed: null, error: expect.stringContaining('unparseable_verdict') }),
    );
    expect(c1.turns[1].scores.length.score).toBeGreaterThan(0);
    // The judged rubric (1..5) is summarised on its 0..1 scale, with the raw mean beside; length has no scale.
    const metricsOf = (await t.http.get(`/runs/${run.id}/results`).set(r.viewer.auth).expect(200)).body.summary
      .metrics as Array<{ name: string; scale: string; mean: number; raw_mean: number; max: number }>;
    const relevance = metricsOf.find((m) => m.name === 'answer_relevance')!;
    expect(relevance.scale).toBe('normalized');
    expect(relevance.max).toBeLessThanOrEqual(1);
    expect(relevance.raw_mean).toBeGreaterThanOrEqual(1);
    expect(relevance.mean).toBeCloseTo((relevance.raw_mean - 1) / 4, 9);
    expect(metricsOf.find((m) => m.name === 'length')).toEqual(expect.objectContaining({ scale: 'raw' }));
    const table = (
      await t.http
        .post(`/runs/${run.id}/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: '_score.answer_relevance', op: 'eq', value: 1 } })
        .expect(200)
    ).body.items as Array<Record<string, unknown>>;
    expect(table.length).toBeGreaterThan(0);
    expect(table.every((row) => row['_score.answer_relevance'] === 1)).toBe(true);
    const events = (await t.http.get(`/runs/${run.id}/events`).set(r.viewer.auth).expect(200)).body as Array<{
      type: string;
      data: Record<string, unknown>;
    }>;
    expect(events.filter((e) => e.type === 'judge_error')).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ metric: 'answer_relevance', judge: 'grader', code: 'unparseable_verdict' }),
      }),
    ]);
    expect(events.filter((e) => e.type === 'row_error')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ code: 'response_not_json' }) }),
    ]);
  });
});
