import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { expectProblem } from '../../utils/problem.js';
import { followLocation } from '../../utils/accepted.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const TOPICS: Record<string, string[]> = {
  cooking: [
    'cook the pasta recipe in the kitchen',
    'a quick pasta recipe to cook at home',
    'cook garlic for the pasta sauce recipe',
    'the kitchen recipe needs pasta and garlic',
    'how long to cook pasta for this recipe',
  ],
  football: [
    'the football team scored a goal in the match',
    'a late goal won the football match',
    'the team celebrated the goal after the match',
    'football fans cheered the winning goal',
    'the match ended with a football goal',
  ],
  markets: [
    'stock market shares fell on earnings',
    'investors sold shares as the stock market dropped',
    'the stock market rallied and shares rose',
    'shares of the company lifted the stock market',
    'stock market investors bought shares today',
  ],
};

describe('analyses and clustering of a version', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let data: UploadedDataset;
  const base = () => `/datasets/${data.datasetId}/versions/${data.versionId}`;

  async function settled(path: string) {
    for (let i = 0; i < 300; i++) {
      const run = (await t.http.get(path).set(r.viewer.auth).expect(200)).body;
      if (['succeeded', 'failed'].includes(run.state)) return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${path} did not finish`);
  }

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const rows = Object.entries(TOPICS).flatMap(([topic, texts], t) =>
      texts.map((text, i) => ({
        question: text,
        topic,
        rater_a: i % 2 ? 'relevant' : 'irrelevant',
        rater_b: i % 2 || t === 2 ? 'relevant' : 'irrelevant',
        note: i === 0 ? '' : 'ok',
      })),
    );
    rows.push({
      question: 'Le chat est assis sur le tapis dans la cuisine de la maison.',
      topic: 'other',
      rater_a: 'relevant',
      rater_b: 'relevant',
      note: 'ok',
    });
    data = await uploadRows(t, r.member.auth, ws, rows);
  });
  afterAll(async () => t?.close());

  it('computes text, annotation and visual analyses through a run, readable and queryable by row', async () => {
    const created = await t.http
      .post(`${base()}/analysis-runs`)
      .set(r.member.auth)
      .send({ text_columns: ['question'], label_columns: ['rater_a', 'rater_b'], seed: 5 })
      .expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        state: 'queued',
        kinds: ['text', 'annotation', 'visual'],
        params: expect.objectContaining({ seed: 5, text_columns: ['question'] }),
      }),
    );
    const run = await settled(`${base()}/analysis-runs/${created.body.id}`);
    expect(run).toEqual(
      expect.objectContaining({ state: 'succeeded', progress: expect.objectContaining({ rows: 16 }) }),
    );
    expect(
      (await t.http.get(`${base()}/analysis-runs`).set(r.viewer.auth).expect(200)).body.map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual([created.body.id]);

    const text = (await t.http.get(`${base()}/analysis/text`).set(r.viewer.auth).expect(200)).body;
    expect(text).toEqual(expect.objectContaining({ run_id: created.body.id, rows: 16 }));
    const question = text.columns[0];
    expect(question.column).toBe('question');
    // Short sentences: the detector may miss one or two, but French is found and English leads.
    expect(question.languages[0]).toEqual(expect.objectContaining({ language: 'en' }));
    expect(question.languages[0].count).toBeGreaterThanOrEqual(13);
    expect(question.languages).toEqual(expect.arrayContaining([{ language: 'fr', count: 1, share: 0.0625 }]));
    // The topic words appear five times each (ties alphabetical); the next ones four times.
    expect(question.top_terms.slice(0, 6)).toEqual(
      ['goal', 'market', 'pasta', 'recipe', 'shares', 'stock'].map((term) => ({ term, count: 5 })),
    );
    expect(question.top_terms[6].count).toBe(4);
    expect(question.chars.summary.max).toBe('Le chat est assis sur le tapis dans la cuisine de la maison.'.length);

    const french = (
      await t.http
        .post(`${base()}/analysis/text/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'question.language', op: 'eq', value: 'fr' } })
        .expect(200)
    ).body;
    expect(french).toEqual([
      expect.objectContaining({
        row_id: data.rowIds[15],
        question: expect.objectContaining({ language: 'fr', words: 13, chars: 60 }),
      }),
    ]);
    const long = (
      await t.http
        .post(`${base()}/analysis/text/query`)
        .set(r.viewer.auth)
        .send({
          filter: { field: 'question.words', op: 'gte', value: 9 },
          sort: [{ field: 'question.words', direction: 'desc' }],
        })
        .expect(200)
    ).body;
    expect(long[0].row_id).toBe(data.rowIds[15]);

    const annotation = (await t.http.get(`${base()}/analysis/annotation`).set(r.viewer.auth).expect(200)).body;
    expect(annotation.label_columns).toEqual(['rater_a', 'rater_b']);
    expect(annotation.agreement).toEqual(
      expect.objectContaining({ method: 'cohen', rows: 16, kappa: expect.any(Number) }),
    );
    expect(annotation.columns[0].distribution).toEqual([
      { label: 'irrelevant', count: 9, share: 0.5625 },
      { label: 'relevant', count: 7, share: 0.4375 },
    ]);
    const disagreements = (
      await t.http
        .post(`${base()}/analysis/annotation/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'agree', op: 'eq', value: false } })
        .expect(200)
    ).body;
    expect(disagreements).toHaveLength(3);

    const visual = (await t.http.get(`${base()}/analysis/visual`).set(r.viewer.auth).expect(200)).body;
    expect(visual).toEqual(
      expect.objectContaining({ column: 'question', embedder: 'local-char-ngram', projection: 'pca' }),
    );
    expect(visual.points).toHaveLength(16);
    const cluster0 = (
      await t.http
        .post(`${base()}/analysis/visual/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'cluster', op: 'eq', value: 0 } })
        .expect(200)
    ).body;
    expect(cluster0.length).toBe(visual.clusters[0].size);

    const schema = (await t.http.get(`${base()}/analysis/schema`).set(r.viewer.auth).expect(200)).body;
    expect(schema).toEqual(
      expect.objectContaining({
        text_columns: expect.arrayContaining(['question']),
        label_columns: expect.arrayContaining(['rater_a', 'rater_b', 'topic']),
        visual_column: 'question',
        latest_runs: { text: created.body.id, annotation: created.body.id, visual: created.body.id },
      }),
    );
    expect(
      (await t.http.get('/analysis/properties/text').set(r.outsider.auth).expect(200)).body.map(
        (p: { name: string }) => p.name,
      ),
    ).toEqual(expect.arrayContaining(['chars', 'tokens', 'language', 'flesch_reading_ease']));
    expect(
      (await t.http.get('/analysis/properties/annotation').set(r.viewer.auth).expect(200)).body.length,
    ).toBeGreaterThan(3);
    expect(
      (await t.http.get('/analysis/properties/visual').set(r.viewer.auth).expect(200)).body.map(
        (p: { name: string }) => p.name,
      ),
    ).toEqual(expect.arrayContaining(['x', 'y', 'cluster']));
  });

  it('clusters a column into its known topics, named by their terms, the same for a seed', async () => {
    const availability = (await t.http.get(`${base()}/cluster-runs/availability`).set(r.viewer.auth).expect(200)).body;
    expect(availability).toEqual(
      expect.objectContaining({
        available: true,
        reason: null,
        suggested_column: 'question',
        embedder: 'local-char-ngram',
        rows: 16,
      }),
    );
    expect((await t.http.get(`${base()}/cluster-runs/latest`).set(r.viewer.auth).expect(200)).body).toBeNull();

    const body = { column: 'question', seed: 11, k: 3 };
    const accepted = await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send(body).expect(202);
    await followLocation(t, accepted, r.viewer.auth);
    const started = accepted.body;
    expect(started).toEqual(expect.objectContaining({ state: 'queued', column: 'question', k_requested: 3, seed: 11 }));
    const done = await settled(`${base()}/cluster-runs/${started.id}`);
    expect(done).toEqual(
      expect.objectContaining({ state: 'succeeded', summary: expect.objectContaining({ k: 3, rows: 16 }) }),
    );
    expect((await t.http.get(`${base()}/cluster-runs/latest`).set(r.viewer.auth).expect(200)).body.id).toBe(started.id);
    const result = (await t.http.get(`${base()}/cluster-runs/${started.id}/result`).set(r.viewer.auth).expect(200))
      .body;
    const topicOf = new Map(
      data.rowIds.map((id, i) => [id, i < 15 ? Object.keys(TOPICS)[Math.floor(i / 5)] : 'other']),
    );
    // Each cluster holds one topic (the lone French row joins one of them); together they hold all three.
    const found = result.clusters.map(
      (cluster: { id: number }) =>
        new Set(
          result.points
            .filter((p: { cluster: number }) => p.cluster === cluster.id)
            .map((p: { row_id: string }) => topicOf.get(p.row_id))
            .filter((topic: string) => topic !== 'other'),
        ),
    );
    for (const topics of found) expect(topics.size).toBe(1);
    expect(new Set(found.flatMap((topics: Set<string>) => [...topics]))).toEqual(new Set(Object.keys(TOPICS)));
    expect(result.clusters.map((c: { name: string }) => c.name).join(' ')).toMatch(/football|goal|match/);

    const again = (await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send(body).expect(202)).body;
    const second =
      (await settled(`${base()}/cluster-runs/${again.id}`),
      (await t.http.get(`${base()}/cluster-runs/${again.id}/result`).set(r.viewer.auth).expect(200)).body);
    expect({ ...second, run_id: undefined }).toEqual({ ...result, run_id: undefined });

    const auto = (
      await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send({ column: 'question' }).expect(202)
    ).body;
    expect((await settled(`${base()}/cluster-runs/${auto.id}`)).summary.k).toBeGreaterThanOrEqual(3);
  });

  it('answers 400, 401, 403, 404 and 409', async () => {
    expectProblem(
      await t.http
        .post(`${base()}/analysis-runs`)
        .set(r.member.auth)
        .send({ text_columns: ['nope'] }),
      400,
      'unknown_column',
    );
    expectProblem(
      await t.http
        .post(`${base()}/analysis-runs`)
        .set(r.member.auth)
        .send({ kinds: ['audio'] }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send({ column: 'nope' }),
      400,
      'unknown_column',
    );
    expectProblem(
      await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send({ k: 1 }),
      400,
      'validation_failed',
    );
    const empty = await uploadRows(t, r.member.auth, ws, [{ n: 1 }, { n: 2 }], 'numbers.json');
    const emptyBase = `/datasets/${empty.datasetId}/versions/${empty.versionId}`;
    expect((await t.http.get(`${emptyBase}/cluster-runs/availability`).set(r.viewer.auth).expect(200)).body).toEqual(
      expect.objectContaining({ available: false, reason: 'the version has no text column' }),
    );
    expectProblem(await t.http.post(`${emptyBase}/cluster-runs`).set(r.member.auth).send({}), 400, 'not_clusterable');
    expectProblem(await t.http.get(`${emptyBase}/analysis/text`).set(r.viewer.auth), 404, 'analysis_not_computed');
    expectProblem(
      await t.http.post(`${emptyBase}/analysis/text/query`).set(r.viewer.auth).send({}),
      404,
      'analysis_not_computed',
    );
    const pending = (
      await t.http.post(`${base()}/cluster-runs`).set(r.member.auth).send({ column: 'question' }).expect(202)
    ).body;
    const early = await t.http.get(`${base()}/cluster-runs/${pending.id}/result`).set(r.viewer.auth);
    expect([200, 409]).toContain(early.status);
    expectProblem(
      await t.http
        .post(`${base()}/analysis/text/query`)
        .set(r.viewer.auth)
        .send({ filter: { field: 'nope.chars', op: 'gt', value: 1 } }),
      400,
      'invalid_filter',
    );
    expectProblem(await t.http.post(`${base()}/analysis-runs`).set(r.viewer.auth).send({}), 403);
    expectProblem(await t.http.post(`${base()}/cluster-runs`).set(r.viewer.auth).send({}), 403);
    expectProblem(await t.http.get(`${base()}/analysis/text`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`${base()}/analysis-runs`), 401);
    expectProblem(await t.http.get('/analysis/properties/text'), 401);
    expectProblem(await t.http.get(`${base()}/analysis-runs/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get(`${base()}/cluster-runs/${randomUUID()}`).set(r.viewer.auth), 404);
    expectProblem(
      await t.http.get(`/datasets/${data.datasetId}/versions/${randomUUID()}/analysis/schema`).set(r.viewer.auth),
      404,
    );
  });
});
