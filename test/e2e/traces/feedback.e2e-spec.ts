import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TraceFeedbackService } from '#src/modules/traces/feedback/feedback.service.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import { landingSettled } from '../../utils/traces.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

/** One LLM span as a plain span record. */
const span = (traceId: string, spanId: string) => ({
  trace_id: traceId,
  span_id: spanId,
  name: 'ChatCompletion',
  start_time: '2026-11-01T12:00:00.000Z',
  end_time: '2026-11-01T12:00:00.400Z',
  attributes: { 'openinference.span.kind': 'LLM', 'input.value': 'hi', 'output.value': 'hello' },
});

describe('trace feedback', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let other: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let key: Record<string, string>;
  let otherKey: Record<string, string>;

  const apiKey = async (workspaceId: string, auth: Record<string, string>, role = 'member') => ({
    Authorization: `Bearer ${
      (
        await t.http
          .post(`/workspaces/${workspaceId}/api-keys`)
          .set(auth)
          .send({ name: `app-backend-${role}`, role })
          .expect(201)
      ).body.key
    }`,
  });

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    other = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    key = await apiKey(ws, r.member.auth);
    otherKey = await apiKey(other.workspace.id, other.member.auth);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores feedback posted with an API key, before its trace lands, ids as the traces family stores them', async () => {
    const sent = {
      span_id: SPAN,
      name: 'thumbs',
      value: false,
      comment: 'The link had expired.',
      user_ref: 'customer-1',
      metadata: { channel: 'web' },
    };
    const res = await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ trace_id: TRACE.toUpperCase(), ...sent })
      .expect(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toEqual({
      id: expect.any(String),
      workspace_id: ws,
      trace_id: TRACE,
      ...sent,
      client_key: null,
      created_by: r.member.id,
      created_at: expect.any(String),
      replayed: false,
    });
    const got = await t.http.get(`/traces/feedback/${res.body.id}`).set(r.viewer.auth).expect(200);
    expect(got.body).toEqual(res.body);
  });

  it("takes a user's token with workspace_id, which a token must name", async () => {
    const res = await t.http
      .post('/traces/feedback')
      .set(r.member.auth)
      .send({ workspace_id: ws, trace_id: 'langfuse-trace-42', name: 'user_rating', value: 4 })
      .expect(201);
    expect(res.body).toMatchObject({ workspace_id: ws, trace_id: 'langfuse-trace-42', span_id: null, value: 4 });
    expectProblem(
      await t.http.post('/traces/feedback').set(r.member.auth).send({ trace_id: TRACE, name: 'x', value: 1 }),
      400,
      'validation_failed',
    );
    // Viewers read, members post.
    expectProblem(
      await t.http
        .post('/traces/feedback')
        .set(r.viewer.auth)
        .send({ workspace_id: ws, trace_id: TRACE, name: 'x', value: 1 }),
      403,
      'forbidden',
    );
  });

  it('answers a retry with the stored feedback (200, Idempotent-Replayed) and a reused key with other content 409', async () => {
    const body = { trace_id: TRACE, name: 'user_rating', value: 2.5, client_key: 'retry-1', metadata: { a: 1, b: 2 } };
    const first = await t.http.post('/traces/feedback').set(key).send(body).expect(201);
    const again = await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ ...body, metadata: { b: 2, a: 1 } })
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ ...first.body, replayed: true });
    const conflict = await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ ...body, value: 3 });
    expectProblem(conflict, 409, 'trace_feedback_key_conflict');
    expect(conflict.body.feedback_id).toBe(first.body.id);
    // The key is the workspace's: another workspace may use it for its own feedback.
    await t.http.post('/traces/feedback').set(otherKey).send(body).expect(201);
  });

  it('stores one record for 20 parallel posts with one client key', async () => {
    const body = { trace_id: TRACE, name: 'resolved', value: 'yes', client_key: 'parallel-1' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.http.post('/traces/feedback').set(key).send(body)),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const listed = await t.http
      .get('/traces/feedback')
      .query({ workspace_id: ws, name: 'resolved' })
      .set(r.viewer.auth);
    expect(listed.body.total).toBe(1);
  });

  it('takes a batch, each item idempotent, and answers each outcome', async () => {
    const items = [
      { trace_id: TRACE, name: 'thumbs', value: true, client_key: 'batch-1' },
      { trace_id: TRACE, name: 'thumbs', value: true, client_key: 'batch-1' },
      { trace_id: TRACE, name: 'thumbs', value: false, client_key: 'batch-1' },
    ];
    const res = await t.http.post('/traces/feedback:batch').set(key).send({ items }).expect(200);
    expect(res.body.items.map((i: { outcome: string; status: number }) => [i.outcome, i.status])).toEqual([
      ['created', 201],
      ['replayed', 200],
      ['conflict', 409],
    ]);
    expect(res.body.items[2]).toMatchObject({ feedback: null, error_code: 'trace_feedback_key_conflict' });
    const refused = await t.http
      .post('/traces/feedback:batch')
      .set(key)
      .send({
        items: [
          { trace_id: TRACE, name: 'thumbs', value: true, client_key: 'batch-bad' },
          { trace_id: TRACE, name: 'thumbs', value: null },
        ],
      });
    expectProblem(refused, 400, 'validation_failed');
    expect(refused.body.errors.map((e: { field: string }) => e.field)).toEqual(['items.1.value']);
    const stored = await t.http.get('/traces/feedback').query({ name: 'thumbs' }).set(key).expect(200);
    expect(stored.body.items.some((i: { client_key: string }) => i.client_key === 'batch-bad')).toBe(false);
    const tooMany = Array.from({ length: 101 }, () => items[0]);
    expectProblem(
      await t.http.post('/traces/feedback:batch').set(key).send({ items: tooMany }),
      400,
      'validation_failed',
    );
  });

  it('lists with filters and pages, newest first', async () => {
    const trace = '1f0e2d3c4b5a69788796a5b4c3d2e1f0';
    for (const [i, value] of [1, 2, 3, 4, 5].entries())
      await t.http
        .post('/traces/feedback')
        .set(key)
        .send({ trace_id: trace, name: 'score', value, user_ref: i % 2 ? 'odd' : 'even' })
        .expect(201);
    const list = (query: Record<string, unknown>) =>
      t.http
        .get('/traces/feedback')
        .query({ workspace_id: ws, trace_id: trace, ...query })
        .set(r.viewer.auth)
        .expect(200)
        .then((res) => res.body);
    const values = (page: { items: Array<{ value: number }> }) => page.items.map((i) => i.value);
    expect(values(await list({}))).toEqual([5, 4, 3, 2, 1]);
    expect(values(await list({ sort: 'created_at' }))).toEqual([1, 2, 3, 4, 5]);
    expect(values(await list({ min_value: 2, max_value: 4 }))).toEqual([4, 3, 2]);
    expect(values(await list({ value: '3' }))).toEqual([3]);
    expect(values(await list({ user_ref: 'odd' }))).toEqual([4, 2]);
    const page2 = await list({ page: 2, page_size: 2 });
    expect(page2).toMatchObject({ total: 5, page: 2, page_size: 2 });
    expect(values(page2)).toEqual([3, 2]);
    expect(values(await list({ created_after: new Date(Date.now() + 60_000).toISOString() }))).toEqual([]);
    expect(values(await list({ created_before: new Date(Date.now() + 60_000).toISOString() }))).toHaveLength(5);
    // An API key reads its own workspace without naming it.
    const byKey = await t.http.get('/traces/feedback').query({ trace_id: trace }).set(key).expect(200);
    expect(byKey.body.total).toBe(5);
    const thumbsDown = await t.http
      .get('/traces/feedback')
      .query({ workspace_id: ws, name: 'thumbs', value: 'false' })
      .set(r.viewer.auth)
      .expect(200);
    expect(thumbsDown.body.items.every((i: { value: unknown }) => i.value === false)).toBe(true);
    expect(thumbsDown.body.total).toBeGreaterThan(0);
  });

  it('shows each trace’s feedback with its enrichment once the trace lands', async () => {
    const landed = 'aa00000000000000000000000000bb01';
    await t.http.post('/traces/feedback').set(key).send({ trace_id: landed, name: 'thumbs', value: true }).expect(201);
    await t.http.post('/traces/feedback').set(key).send({ trace_id: landed, name: 'thumbs', value: false }).expect(201);
    await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ trace_id: landed, name: 'user_rating', value: 4 })
      .expect(201);
    await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ trace_id: landed, name: 'user_rating', value: 5 })
      .expect(201);
    const run = (
      await t.http
        .post('/traces/land:inline')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          dataset_name: 'feedback-traces',
          records: [span(landed, 'cc00000000000001'), span('aa00000000000000000000000000bb02', 'cc00000000000002')],
        })
        .expect(202)
    ).body;
    const done = await landingSettled(t, r.member.auth, run.id);
    expect(done.state).toBe('succeeded');
    const base = `/datasets/${done.dataset_id}/versions/${done.version_id}/trace-enrichment`;
    for (let i = 0; i < 400; i++) {
      const status = (await t.http.get(base).set(r.viewer.auth).expect(200)).body;
      if (status.state === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const results = (await t.http.get(`${base}/results`).set(r.viewer.auth).expect(200)).body;
    const byTrace = Object.fromEntries(
      results.items.map((item: { trace_id: string; feedback: unknown }) => [item.trace_id, item.feedback]),
    );
    expect(byTrace[landed]).toEqual({
      thumbs: { count: 2, mean: null, thumbs_up: 1, thumbs_down: 1 },
      user_rating: { count: 2, mean: 4.5, thumbs_up: 0, thumbs_down: 0 },
    });
    expect(byTrace['aa00000000000000000000000000bb02']).toEqual({});
    // Traces selected by their feedback.
    const traceIds = async (query: Record<string, string>) =>
      (await t.http.get(`${base}/results`).query(query).set(r.viewer.auth).expect(200)).body.items.map(
        (item: { trace_id: string }) => item.trace_id,
      );
    expect(await traceIds({ feedback_name: 'thumbs', feedback_value: 'false' })).toEqual([landed]);
    expect(await traceIds({ feedback_name: 'user_rating', feedback_value: '4.5' })).toEqual([]);
    expect(await traceIds({ feedback_value: '5' })).toEqual([landed]);
    expect(await traceIds({ feedback_name: 'resolved' })).toEqual([]);
  });

  it('selects traces by feedback for other families, in a stable order', async () => {
    const service = t.app.get(TraceFeedbackService);
    const ids = ['cafe0000000000000000000000000003', 'cafe0000000000000000000000000001'];
    for (const id of ids) {
      await t.http.post('/traces/feedback').set(key).send({ trace_id: id, name: 'pick', value: false }).expect(201);
      await t.http
        .post('/traces/feedback')
        .set(key)
        .send({ trace_id: id, span_id: 'cafe000000000001', name: 'pick', value: false })
        .expect(201);
    }
    await t.http.post('/traces/feedback').set(key).send({ trace_id: ids[0], name: 'pick', value: true }).expect(201);
    await t.http.post('/traces/feedback').set(key).send({ trace_id: ids[0], name: 'pick', value: false }).expect(201);
    expect(await service.traceIdsWithFeedback(ws, { name: 'pick', value: false, limit: 10 })).toEqual([
      { trace_id: ids[1], span_id: null },
      { trace_id: ids[1], span_id: 'cafe000000000001' },
      { trace_id: ids[0], span_id: null },
      { trace_id: ids[0], span_id: 'cafe000000000001' },
    ]);
    expect(await service.traceIdsWithFeedback(ws, { name: 'pick', value: true, limit: 10 })).toEqual([
      { trace_id: ids[0], span_id: null },
    ]);
    expect(await service.traceIdsWithFeedback(ws, { name: 'user_rating', min: 4.5, limit: 10 })).toEqual([
      { trace_id: 'aa00000000000000000000000000bb01', span_id: null },
    ]);
    expect(await service.traceIdsWithFeedback(other.workspace.id, { name: 'pick', limit: 10 })).toEqual([]);
  });

  it('keeps workspaces apart', async () => {
    const mine = (
      await t.http.post('/traces/feedback').set(key).send({ trace_id: TRACE, name: 'isolated', value: 1 }).expect(201)
    ).body;
    // Another workspace's key: 403 on this workspace's list, 404 on its records, its posts land in its own workspace.
    expectProblem(await t.http.get('/traces/feedback').query({ workspace_id: ws }).set(otherKey), 403, 'forbidden');
    expectProblem(await t.http.get(`/traces/feedback/${mine.id}`).set(otherKey), 403);
    expectProblem(await t.http.delete(`/traces/feedback/${mine.id}`).set(otherKey), 403);
    expectProblem(
      await t.http
        .post('/traces/feedback')
        .set(otherKey)
        .send({ workspace_id: ws, trace_id: TRACE, name: 'isolated', value: 2 }),
      403,
    );
    const theirs = (
      await t.http
        .post('/traces/feedback')
        .set(otherKey)
        .send({ trace_id: TRACE, name: 'isolated', value: 3 })
        .expect(201)
    ).body;
    expect(theirs.workspace_id).toBe(other.workspace.id);
    const listed = await t.http.get('/traces/feedback').query({ name: 'isolated' }).set(otherKey).expect(200);
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([theirs.id]);
    // Outsiders with a token see nothing either.
    expectProblem(await t.http.get('/traces/feedback').query({ workspace_id: ws }).set(r.outsider.auth), 403);
  });

  it('deletes (members), records it in the audit trail, and frees the client key', async () => {
    const body = { trace_id: TRACE, name: 'thumbs', value: true, client_key: 'deleted-1' };
    const created = (await t.http.post('/traces/feedback').set(key).send(body).expect(201)).body;
    expectProblem(await t.http.delete(`/traces/feedback/${created.id}`).set(r.viewer.auth), 403, 'forbidden');
    await t.http.delete(`/traces/feedback/${created.id}`).set(r.member.auth).expect(204);
    expectProblem(await t.http.get(`/traces/feedback/${created.id}`).set(r.viewer.auth), 404, 'not_found');
    const audit = await t.dataSource.query(
      `SELECT actor_id, workspace_id, details FROM audit_events WHERE action = 'trace_feedback.deleted' AND target_id = $1`,
      [created.id],
    );
    expect(audit).toEqual([
      {
        actor_id: r.member.id,
        workspace_id: ws,
        details: { trace_id: TRACE, span_id: null, name: 'thumbs', client_key: 'deleted-1' },
      },
    ]);
    await t.http.post('/traces/feedback').set(key).send(body).expect(201);
  });

  it('refuses hostile input with 4xx problems', async () => {
    const post = (body: unknown) =>
      t.http
        .post('/traces/feedback')
        .set(key)
        .send(body as object);
    const base = { trace_id: TRACE, name: 'thumbs', value: true };
    const bad: Array<[string, unknown]> = [
      ['short hex trace id', { ...base, trace_id: '0af7651916cd43dd8448' }],
      ['all-zero trace id', { ...base, trace_id: '0'.repeat(32) }],
      ['hex span id of 32', { ...base, span_id: TRACE }],
      ['id with spaces', { ...base, trace_id: 'a trace' }],
      ['id too long', { ...base, trace_id: 'x'.repeat(129) }],
      ['empty name', { ...base, name: '' }],
      ['name with spaces', { ...base, name: 'thumbs up' }],
      ['null value', { ...base, value: null }],
      ['object value', { ...base, value: { up: true } }],
      ['long string value', { ...base, value: 'x'.repeat(201) }],
      ['long comment', { ...base, comment: 'x'.repeat(4001) }],
      ['huge metadata', { ...base, metadata: { blob: 'x'.repeat(9000) } }],
      [
        'metadata with many members',
        { ...base, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
      ],
      ['metadata as a list', { ...base, metadata: [1, 2] }],
      ['unknown member', { ...base, score_id: 'x' }],
      ['server-owned member', { ...base, created_by: r.owner.id }],
      ['client key with spaces', { ...base, client_key: 'a key' }],
    ];
    for (const [what, body] of bad) {
      const res = await post(body);
      expect([what, res.status]).toEqual([what, 400]);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    for (const value of ['NaN', '1e400', '-Infinity']) {
      const res = await t.http
        .post('/traces/feedback')
        .set({ ...key, 'Content-Type': 'application/json' })
        .send(`{"trace_id":"${TRACE}","name":"x","value":${value}}`);
      expect([value, res.status]).toEqual([value, 400]);
    }
    expectProblem(await t.http.get('/traces/feedback').query({ min_value: 'NaN' }).set(key), 400, 'validation_failed');
    expectProblem(await t.http.get('/traces/feedback/not-a-uuid').set(key), 400, 'invalid_identifier');
    expectProblem(
      await t.http.get('/traces/feedback').query({ workspace_id: ws, page_size: 201 }).set(r.viewer.auth),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .post('/traces/feedback')
        .set(key)
        .send({ ...base, comment: 'nul \u0000 here' }),
      400,
      'validation_failed',
    );
  });

  it("is kept no longer than the workspace's trace retention", async () => {
    const old = (
      await t.http.post('/traces/feedback').set(key).send({ trace_id: TRACE, name: 'aged', value: true }).expect(201)
    ).body;
    const recent = (
      await t.http.post('/traces/feedback').set(key).send({ trace_id: TRACE, name: 'aged', value: false }).expect(201)
    ).body;
    await t.dataSource.query(`UPDATE trace_feedback SET created_at = now() - interval '40 days' WHERE id = $1`, [
      old.id,
    ]);
    await t.http.put(`/workspaces/${ws}/trace-retention`).set(r.admin.auth).send({ retention_days: 30 }).expect(200);
    const swept = (await t.http.post(`/workspaces/${ws}/trace-retention:sweep`).set(r.admin.auth).expect(200)).body;
    expect(swept.feedback_deleted).toBe(1);
    expectProblem(await t.http.get(`/traces/feedback/${old.id}`).set(r.viewer.auth), 404, 'not_found');
    await t.http.get(`/traces/feedback/${recent.id}`).set(r.viewer.auth).expect(200);
  });

  it('takes an API key that names its own workspace', async () => {
    const res = await t.http
      .post('/traces/feedback')
      .set(key)
      .send({ workspace_id: ws, trace_id: TRACE, name: 'named', value: 1 })
      .expect(201);
    expect(res.body.workspace_id).toBe(ws);
    await t.http.get('/traces/feedback').query({ workspace_id: ws, name: 'named' }).set(key).expect(200);
  });
});
