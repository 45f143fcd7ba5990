import { extractText, getDocumentProxy } from 'unpdf';
import { uploadRows, type UploadedDataset } from '../../../utils/datasets.js';
import { FakeUpstream } from '../../../utils/fake-upstream.js';
import { startTestApp, type TestApp } from '../../../utils/test-app.js';

export type Section = {
  key: string;
  title: string;
  markdown: string;
  data: Record<string, unknown>;
  generated_by: string;
  judge_error: string | null;
  edited: boolean;
  questions: string[];
};
export type Report = {
  id: string;
  run_id: string;
  title: string;
  version: number;
  judge_id: string | null;
  baseline_run_id: string | null;
  section_keys: string[];
  sections: Section[];
};

export const MISSING = '6d1f8a0e-5b4c-4c1e-9a52-0f7b6f3f9c10';

/**
 * The reports suites' world: a six-row quiz dataset with a topic dimension and a partition, an
 * offline SUT with two finished runs (a baseline and a candidate that regresses on two rows and
 * fixes one), and a judge pointed at a local fake LLM.
 */
export interface ReportWorld {
  t: TestApp;
  r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  ws: string;
  llm: FakeUpstream;
  data: UploadedDataset;
  baseRun: string;
  run: string;
  judgeId: string;
  partitionId: string;
  close(): Promise<void>;
}

const ROWS = [
  { question: '2+2?', answer: '4' },
  { question: '3+3?', answer: '6' },
  { question: 'capital of France?', answer: 'Paris' },
  { question: 'capital of Peru?', answer: 'Lima' },
  { question: 'colour of the sky?', answer: 'blue' },
  { question: 'colour of grass?', answer: 'green' },
];
const TOPICS = ['math', 'math', 'geo', 'geo', 'misc', 'misc'];

export async function startReportWorld(): Promise<ReportWorld> {
  const t = await startTestApp();
  const llm = await FakeUpstream.start();
  const r = await t.factory.workspaceWithRoles();
  const ws = r.workspace.id;
  const data = await uploadRows(t, r.member.auth, ws, ROWS, 'quiz.json');
  await t.http
    .post(`/datasets/${data.datasetId}/versions/${data.versionId}/map`)
    .set(r.member.auth)
    .send({ input: 'question', expected_output: 'answer' })
    .expect(200);
  for (const topic of ['math', 'geo', 'misc']) {
    await t.http
      .post(`/datasets/${data.datasetId}/dimensions:assign`)
      .set(r.member.auth)
      .send({ dimension: 'topic', value: topic, row_ids: data.rowIds.filter((_, i) => TOPICS[i] === topic) })
      .expect(201);
  }
  const partitionId = (
    await t.http
      .post(`/datasets/${data.datasetId}/versions/${data.versionId}/partitions`)
      .set(r.member.auth)
      .send({ name: 'geography', dimension_values: { topic: ['geo'] } })
      .expect(201)
  ).body.id;
  const sutId = (await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'quiz-bot' }).expect(201))
    .body.id;
  const connectionId = (
    await t.http
      .post(`/suts/${sutId}/connections`)
      .set(r.member.auth)
      .send({ name: 'uploads', kind: 'offline' })
      .expect(201)
  ).body.id;
  async function finishedRun(outputs: string[], name: string): Promise<string> {
    const id = (
      await t.http
        .post('/runs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name,
          dataset_id: data.datasetId,
          sut_id: sutId,
          connection_id: connectionId,
          metrics: ['exact_match'],
        })
        .expect(202)
    ).body.id as string;
    await t.http
      .put(`/runs/${id}/upload`)
      .set(r.member.auth)
      .send({
        results: data.rowIds.map((row_id, i) => ({ row_id, output: outputs[i], latency_ms: (i + 1) * 100 })),
        complete: true,
      })
      .expect(202);
    for (let i = 0; i < 400; i++) {
      const state = (await t.http.get(`/runs/${id}`).set(r.viewer.auth).expect(200)).body.state;
      if (state === 'succeeded') return id;
      if (state === 'failed' || state === 'cancelled') throw new Error(`run ${name} ended ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${name} did not end`);
  }
  // Baseline: all right but the grass. Candidate: 3+3 and Peru go wrong, the grass is fixed.
  const baseRun = await finishedRun(['4', '6', 'Paris', 'Lima', 'blue', 'purple'], 'nightly-1');
  const run = await finishedRun(['4', '7', 'Paris', 'Cusco', 'blue', 'green'], 'nightly-2');
  const judgeId = (
    await t.http
      .post('/judges')
      .set(r.member.auth)
      .send({
        workspace_id: ws,
        name: 'writer',
        provider: 'openai_compatible',
        base_url: llm.url('/v1'),
        model: 'writer-1',
        timeout_ms: 2000,
        max_attempts: 1,
      })
      .expect(201)
  ).body.id;
  const close = async () => {
    await llm.close();
    await t.close();
  };
  return { t, r, ws, llm, data, baseRun, run, judgeId, partitionId, close };
}

/** A signed download, as bytes with its content type. */
export async function binary(t: TestApp, url: string): Promise<{ status: number; body: Buffer; type: string }> {
  const u = new URL(url);
  const res = await t.http
    .get(u.pathname + u.search)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  return { status: res.status, body: res.body as Buffer, type: String(res.headers['content-type']) };
}

export const section = (rep: { sections: Section[] }, key: string) => rep.sections.find((s) => s.key === key)!;

/** The text of a PDF's pages, merged. */
export async function pdfText(body: Buffer): Promise<string> {
  return (await extractText(await getDocumentProxy(new Uint8Array(body)), { mergePages: true })).text;
}
