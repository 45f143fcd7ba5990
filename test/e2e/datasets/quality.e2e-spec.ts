import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { expectProblem } from '../../utils/problem.js';
import { uploadRows } from '../../utils/datasets.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const ROWS = [
  { question: 'How do I reset my password?', answer: 'Use the reset link on the login page.' },
  { question: 'How do I reset my password?', answer: 'Use the reset link on the login page.' },
  { question: 'Email me at sam@example.org about my order', answer: 'We will reply by email shortly.' },
  { question: 'What is the refund policy?', answer: '' },
  { question: 'The answer is Paris. What is the capital of France?', answer: 'The answer is Paris.' },
];

describe('datasets: quality checks and data-operation runs', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let datasetId: string;
  let versionId: string;
  let ids: string[];
  const base = () => `/datasets/${datasetId}/versions/${versionId}`;

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ({ datasetId, versionId, rowIds: ids } = await uploadRows(t, r.member.auth, r.workspace.id, ROWS, 'faq.json'));
  });
  afterAll(async () => t?.close());

  it('lists the checks with whether each applies, and suggests checks for the schema', async () => {
    const before = await t.http.get(`/datasets/${datasetId}/available-checks`).set(r.viewer.auth).expect(200);
    const leakage = before.body.checks.find((c: { id: string }) => c.id === 'label_leakage');
    expect(leakage).toEqual(
      expect.objectContaining({ applicable: false, reason: expect.stringMatching(/needs expected_output/) }),
    );
    expect(before.body.checks.map((c: { id: string }) => c.id)).toEqual([
      'exact_duplicates',
      'near_duplicates',
      'empty_fields',
      'pii',
      'length_outliers',
      'language_mismatch',
      'label_leakage',
    ]);
    expect(before.body.checks[0].params.fail_ratio).toEqual({
      type: 'number',
      default: 0.05,
      description: expect.any(String),
    });
    await t.http
      .post(`${base()}/map`)
      .set(r.member.auth)
      .send({ input: 'question', expected_output: 'answer' })
      .expect(200);
    const after = await t.http
      .get(`/datasets/${datasetId}/available-checks`)
      .query({ version_id: versionId })
      .set(r.viewer.auth)
      .expect(200);
    expect(after.body.checks.find((c: { id: string }) => c.id === 'label_leakage')).toEqual(
      expect.objectContaining({ applicable: true, columns: ['answer', 'question'] }),
    );
    const suggestions = await t.http
      .get('/check-suggestions')
      .query({ dataset_id: datasetId })
      .set(r.viewer.auth)
      .expect(200);
    expect(suggestions.body).toEqual(expect.objectContaining({ dataset_id: datasetId, version_id: versionId }));
    expect(suggestions.body.suggestions.map((s: { check: string }) => s.check)).toContain('label_leakage');
    expectProblem(await t.http.get('/check-suggestions').set(r.viewer.auth), 400);
    expectProblem(await t.http.get('/check-suggestions').query({ dataset_id: 'x' }).set(r.viewer.auth), 400);
    expectProblem(await t.http.get('/check-suggestions').query({ dataset_id: datasetId }).set(r.outsider.auth), 403);
    expectProblem(await t.http.get('/check-suggestions').query({ dataset_id: randomUUID() }).set(r.viewer.auth), 404);
    expectProblem(await t.http.get('/check-suggestions').query({ dataset_id: datasetId }), 401);
  });

  it('runs checks, answers a verdict with findings pointing at rows, and keeps the run', async () => {
    expectProblem(await t.http.get(`${base()}/quality-checks`).set(r.viewer.auth), 404, 'no_quality_run');
    const res = await t.http
      .post(`${base()}/quality-checks:run`)
      .set(r.member.auth)
      .send({
        checks: [
          { check: 'exact_duplicates' },
          { check: 'pii' },
          { check: 'empty_fields' },
          { check: 'label_leakage' },
        ],
      })
      .expect(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        dataset_id: datasetId,
        version_id: versionId,
        version_number: 1,
        verdict: 'fail',
        rows_checked: 5,
        run_id: expect.any(String),
      }),
    );
    const byCheck = Object.fromEntries(res.body.checks.map((c: { check: string }) => [c.check, c]));
    expect(byCheck.exact_duplicates.findings[0].row_ids).toEqual([ids[0], ids[1]]);
    expect(byCheck.pii.findings).toEqual([
      expect.objectContaining({
        row_ids: [ids[2]],
        column: 'question',
        detail: { kind: 'email', excerpt: expect.not.stringContaining('sam@example.org') },
      }),
    ]);
    expect(byCheck.empty_fields.findings).toEqual([expect.objectContaining({ row_ids: [ids[3]], column: 'answer' })]);
    expect(byCheck.label_leakage.findings).toEqual([expect.objectContaining({ row_ids: [ids[4]] })]);
    expect(Object.values(byCheck).every((c) => (c as { status: string }).status === 'fail')).toBe(true);

    const latest = await t.http.get(`${base()}/quality-checks`).set(r.viewer.auth).expect(200);
    expect(latest.body).toEqual(res.body);
    const all = await t.http.post(`${base()}/quality-checks:run`).set(r.member.auth).send({}).expect(200);
    expect(all.body.checks.map((c: { check: string }) => c.check)).toEqual([
      'exact_duplicates',
      'near_duplicates',
      'empty_fields',
      'pii',
      'length_outliers',
      'language_mismatch',
      'label_leakage',
    ]);

    const runs = await t.http.get(`${base()}/quality-checks/runs`).set(r.viewer.auth).expect(200);
    expect(runs.body).toEqual(expect.objectContaining({ total: 2, page: 1 }));
    expect(runs.body.items[0]).toEqual(
      expect.objectContaining({
        id: all.body.run_id,
        kind: 'quality_checks',
        state: 'succeeded',
        verdict: 'fail',
        created_by: r.member.id,
        finished_at: expect.any(String),
      }),
    );
    const one = await t.http.get(`${base()}/quality-checks/runs/${res.body.run_id}`).set(r.viewer.auth).expect(200);
    expect(one.body.result).toEqual(res.body);
    expect(one.body.params.checks.map((c: { check: string }) => c.check)).toEqual([
      'exact_duplicates',
      'pii',
      'empty_fields',
      'label_leakage',
    ]);
    const perVersion = await t.http
      .get(`/datasets/${datasetId}/versions/quality-checks`)
      .set(r.viewer.auth)
      .expect(200);
    expect(perVersion.body).toEqual([all.body]);
  });

  it('answers 400, 401, 403 and 404 on the quality operations', async () => {
    const run = (auth: Record<string, string> | undefined, body: unknown, url = `${base()}/quality-checks:run`) => {
      const req = t.http.post(url);
      return (auth ? req.set(auth) : req).send(body as object);
    };
    const unknown = await run(r.member.auth, { checks: [{ check: 'spelling' }] });
    expectProblem(unknown, 400, 'validation_failed');
    expect(unknown.body.detail).toMatch(/unknown check "spelling"; the checks are/);
    expectProblem(
      await run(r.member.auth, { checks: [{ check: 'pii', params: { kinds: ['dna'] } }] }),
      400,
      'validation_failed',
    );
    expectProblem(await run(r.member.auth, { checks: 'pii' }), 400, 'validation_failed');
    expectProblem(await run(r.viewer.auth, {}), 403);
    expectProblem(await run(r.outsider.auth, {}), 403);
    expectProblem(
      await run(r.member.auth, {}, `/datasets/${datasetId}/versions/${randomUUID()}/quality-checks:run`),
      404,
      'version_not_found',
    );
    expectProblem(await run(undefined, {}), 401);
    expectProblem(
      await t.http.get(`${base()}/quality-checks/runs/${randomUUID()}`).set(r.viewer.auth),
      404,
      'operation_run_not_found',
    );
    expectProblem(await t.http.get(`${base()}/quality-checks/runs`).query({ page_size: 500 }).set(r.viewer.auth), 400);
    expectProblem(await t.http.get(`${base()}/quality-checks/runs`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/datasets/${datasetId}/versions/quality-checks`).set(r.outsider.auth), 403);
    expectProblem(await t.http.get(`/datasets/${randomUUID()}/available-checks`).set(r.viewer.auth), 404);
    expectProblem(await t.http.get(`/datasets/${datasetId}/available-checks`), 401);
  });
});
