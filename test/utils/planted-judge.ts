import { chatCompletion, type FakeUpstream, type RecordedRequest } from './fake-upstream.js';
import { sutWithConnection } from './suts.js';
import type { TestApp } from './test-app.js';

/**
 * A world whose judge's verdicts are planted: the fake SUT answers `answer <i>` to
 * `question <i>`; the fake judge (a local server speaking the OpenAI chat protocol) scores 5 of 5
 * where `passes(i, prompt)` says so and 1 otherwise; the workspace gets the SUT, the judge and
 * the judged metric config `grader` (numeric 1..5, passing at 0.75) over that judge.
 */
export async function plantedGrader(
  t: TestApp,
  auth: Record<string, string>,
  workspaceId: string,
  upstream: { sut: FakeUpstream; judge: FakeUpstream; passes: (i: number, prompt: string) => boolean },
): Promise<{ sutId: string; connectionId: string }> {
  const { sut, judge, passes } = upstream;
  sut.on('POST', '/answer', (req: RecordedRequest) => {
    const i = Number(/question (\d+)/.exec((req.body as { question: string }).question)?.[1]);
    return { json: { answer: `answer ${i}` } };
  });
  judge.on('POST', '/v1/chat/completions', (req: RecordedRequest) => {
    const prompt = (req.body as { messages: Array<{ content: string }> }).messages.map((m) => m.content).join('\n');
    const i = Number(/answer (\d+)/.exec(prompt)?.[1]);
    const verdict = passes(i, prompt) ? '{"score": 5, "reason": "right"}' : '{"score": 1, "reason": "wrong"}';
    return { json: chatCompletion(verdict) };
  });
  const ids = await sutWithConnection(t, auth, workspaceId, {
    name: 'bot',
    connection: { name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 4 },
  });
  const judgeId = (
    await t.http
      .post('/judges')
      .set(auth)
      .send({
        workspace_id: workspaceId,
        name: 'planted',
        provider: 'openai_compatible',
        base_url: judge.url('/v1'),
        model: 'j',
        max_attempts: 1,
      })
      .expect(201)
  ).body.id;
  await t.http
    .post('/metric-configs')
    .set(auth)
    .send({
      workspace_id: workspaceId,
      name: 'grader',
      kind: 'judged',
      metric: 'llm_judge',
      judged: {
        rubric: 'Is {{output}} right?',
        scale: { type: 'numeric', min: 1, max: 5 },
        pass_threshold: 0.75,
        judge_id: judgeId,
      },
    })
    .expect(201);
  return ids;
}
