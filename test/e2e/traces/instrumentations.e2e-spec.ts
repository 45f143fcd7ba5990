import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FakeUpstream } from '../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { toolCallingModel } from '../../utils/tool-calling-model.js';

const AGENT = fileURLToPath(new URL('../../utils/instrumented-agent.mjs', import.meta.url));
const run = promisify(execFile);

/**
 * Instrumentations nobody here wrote, as a team's application runs them: OpenInference's and
 * OpenLLMetry's instrumentation of the `openai` client, in an agent process of its own talking to
 * a tool-calling model and exporting to the OTLP receiver with an API key. What lands is what
 * those packages emit, mapped by the convention each is detected as.
 */
describe('spans of third-party instrumentations of the openai client', () => {
  let t: TestApp;
  let model: FakeUpstream;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    r = await t.factory.workspaceWithRoles();
    key = (
      await t.http
        .post(`/workspaces/${r.workspace.id}/api-keys`)
        .set(r.member.auth)
        .send({ name: 'agent', role: 'member' })
        .expect(201)
    ).body.key;
    model = await toolCallingModel(() => ({
      rounds: [[{ name: 'get_weather', arguments: { city: 'Paris' } }]],
      answer: 'Sunny in Paris.',
    }));
  });
  afterAll(async () => {
    await model?.close();
    await t?.close();
  });

  /** Runs the agent under the instrumentation and answers its trace's landed spans, by start. */
  const landedSpans = async (instrumentation: string): Promise<Array<Record<string, any>>> => {
    const dataset = `agent-${instrumentation}`;
    const { stdout } = await run(process.execPath, [AGENT], {
      env: {
        ...process.env,
        INSTRUMENTATION: instrumentation,
        MODEL_URL: model.url('/v1'),
        OTLP_URL: `${await t.app.getUrl()}/v1/traces`,
        API_KEY: key,
        DATASET: dataset,
        TASK: 'What is the weather in Paris?',
      },
    });
    const { trace_id: traceId, answer } = JSON.parse(stdout);
    expect(answer).toBe('Sunny in Paris.');
    const datasets = (await t.http.get('/datasets').query({ workspace_id: r.workspace.id }).set(r.member.auth)).body
      .items as Array<{ id: string; name: string }>;
    const datasetId = datasets.find((d) => d.name === dataset)!.id;
    for (let i = 0; i < 200; i++) {
      const live = (await t.http.get(`/traces/datasets/${datasetId}/live`).set(r.member.auth)).body;
      if (live.pending_spans === 0 && live.head_spans >= 3) {
        const page = await t.http
          .get(`/datasets/${datasetId}/versions/${live.head_version_id}/span-tree/by-depth`)
          .query({ trace_id: traceId, max_depth: 5 })
          .set(r.viewer.auth)
          .expect(200);
        return page.body.items.map((i: { span: Record<string, any> }) => i.span);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the spans of ${instrumentation} did not land`);
  };

  for (const [instrumentation, convention] of [
    ['openinference', 'openinference'],
    // OpenLLMetry's instrumentation of openai (0.27) writes the GenAI conventions' attributes, not llm.*.
    ['openllmetry', 'genai'],
  ] as const)
    it(`${instrumentation}: two model calls under the agent, the first with the tool call, tokens and messages`, async () => {
      const spans = await landedSpans(instrumentation);
      const llm = spans.filter((s) => s.kind === 'llm');
      expect(llm).toHaveLength(2);
      for (const s of llm) {
        expect(s.convention).toBe(convention);
        expect(s.model).toMatch(/^gpt-4o-mini/);
        expect(s.tokens_input).toBeGreaterThan(0);
        expect(s.tokens_output).toBe(7);
        expect(JSON.stringify(s.input)).toContain('What is the weather in Paris?');
      }
      const [first, second] = llm.sort((a, b) => a.start_time.localeCompare(b.start_time));
      expect(first.tool_calls).toEqual([
        expect.objectContaining({ name: 'get_weather', arguments: { city: 'Paris' } }),
      ]);
      expect(second.tool_calls).toEqual([]);
      expect(JSON.stringify(second.output)).toContain('Sunny in Paris.');
      const agent = spans.find((s) => s.name === 'weather-agent')!;
      expect(llm.every((s) => s.parent_span_id === agent.span_id)).toBe(true);
    });
});
