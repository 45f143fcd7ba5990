import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Response } from 'supertest';
import { uploadRows } from '../../utils/datasets.js';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { DEFAULT_PASSWORD_HASHING, startTestApp, type TestApp } from '../../utils/test-app.js';

jest.setTimeout(300_000);

/**
 * 100 requests at once, as a CI fan-out or a team's script sends them, on the database this file
 * runs on (PostgreSQL, or the embedded one `npm start` uses, which has a single connection). Every
 * request answers, none with a 503 from a pool or a 500, each within ANSWER_BOUND_MS; nothing is
 * lost and nothing is created twice. The figures are in docs/security.md (Concurrency).
 */
const PARALLEL = 100;
/** The bound every answer must meet: generous, for a loaded 2-core CI machine (measured answers are in the docs). */
const ANSWER_BOUND_MS = 60_000;

describe('100 parallel requests', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let admin: Record<string, string>;

  async function timed(send: () => Promise<Response>): Promise<{ res: Response; ms: number }> {
    const started = Date.now();
    const res = await send();
    return { res, ms: Date.now() - started };
  }

  /** Sends the requests at once; every one must answer within the bound, never 5xx. */
  async function burst(
    count: number,
    send: (i: number) => Promise<Response>,
    bound = ANSWER_BOUND_MS,
  ): Promise<Response[]> {
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => timed(() => send(i))));
    const slow = answers.filter((a) => a.ms > bound).map((a) => a.ms);
    expect(slow).toEqual([]);
    expect(
      answers
        .filter((a) => a.res.status >= 500)
        .map((a) => `${a.res.status} ${a.res.body?.error_code ?? ''} ${a.res.body?.detail ?? ''}`),
    ).toEqual([]);
    return answers.map((a) => a.res);
  }

  const statuses = (answers: Response[]) =>
    answers.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {});

  beforeAll(async () => {
    t = await startTestApp(DEFAULT_PASSWORD_HASHING);
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const root = await t.factory.actor({ systemRole: 'admin' });
    admin = root.auth;
  });
  afterAll(async () => t?.close());

  /**
   * Requests that hash a password (argon2id, 64 MiB) queue for the CPU: 100 of them cost 100
   * hashes whatever the database does. Their bound is the same 60 s plus the time of one such
   * request measured alone, times the number sent.
   */
  let hashingBound = ANSWER_BOUND_MS;

  it('user creations: 100 distinct all 201, and 10 of one e-mail make exactly one user', async () => {
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { res, ms } = await timed(() =>
        t.http
          .post('/users')
          .set(admin)
          .send({ email: `alone-${i}@test.local`, display_name: 'Alone', password: 'alone-password-1' }),
      );
      expect(res.status).toBe(201);
      alone.push(ms);
    }
    hashingBound = ANSWER_BOUND_MS + PARALLEL * alone.sort((a, b) => a - b)[1];
    const distinct = await burst(
      PARALLEL,
      (i) =>
        t.http
          .post('/users')
          .set(admin)
          .send({ email: `crowd-${i}@test.local`, display_name: `Crowd ${i}`, password: `crowd-password-${i}` }),
      hashingBound,
    );
    expect(statuses(distinct)).toEqual({ 201: PARALLEL });
    expect(new Set(distinct.map((a) => a.body.id)).size).toBe(PARALLEL);

    const same = await burst(10, () =>
      t.http
        .post('/users')
        .set(admin)
        .send({ email: 'twin@test.local', display_name: 'Twin', password: 'twin-password-1' }),
    );
    expect(statuses(same)).toEqual({ 201: 1, 409: 9 });
    expect(same.filter((a) => a.status === 409).every((a) => a.body.error_code === 'email_taken')).toBe(true);
    const [{ n }] = await t.dataSource.query(
      "SELECT count(*)::int AS n FROM users WHERE email LIKE 'crowd-%' OR email = 'twin@test.local'",
    );
    expect(n).toBe(PARALLEL + 1);
  });

  it('logins: 100 users at once all get a token, a client honouring Retry-After retrying a 429', async () => {
    // A client as SDKs and exporters write them: on 429 it waits Retry-After plus a little jitter
    // and tries again, until the bound (not a fixed number of attempts: with 100 clients and a
    // hashing queue of a few, who gets a slot in each second is luck).
    const deadline = Date.now() + hashingBound - 5_000;
    async function login(i: number): Promise<Response> {
      for (;;) {
        const res = await t.http
          .post('/auth/token')
          .send({ email: `crowd-${i}@test.local`, password: `crowd-password-${i}` });
        if (res.status !== 429 || Date.now() > deadline) return res;
        expect(res.body.error_code).toBe('auth_busy');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        await new Promise((resolve) =>
          setTimeout(resolve, Number(res.headers['retry-after']) * 1000 + Math.random() * 500),
        );
      }
    }
    const answers = await burst(PARALLEL, login, hashingBound);
    expect(statuses(answers)).toEqual({ 200: PARALLEL });
    const [{ n }] = await t.dataSource.query(
      "SELECT count(DISTINCT user_id)::int AS n FROM auth_tokens t JOIN users u ON u.id = t.user_id WHERE u.email LIKE 'crowd-%'",
    );
    expect(n).toBe(PARALLEL);
  });

  it('invitations: 100 distinct all 201, and 10 of one e-mail leave exactly one pending invitation', async () => {
    const distinct = await burst(PARALLEL, (i) =>
      t.http
        .post(`/workspaces/${ws}/invitations`)
        .set(r.admin.auth)
        .send({ email: `invitee-${i}@test.local`, role: 'viewer' }),
    );
    expect(statuses(distinct)).toEqual({ 201: PARALLEL });

    const same = await burst(10, () =>
      t.http.post(`/workspaces/${ws}/invitations`).set(r.admin.auth).send({ email: 'once@test.local', role: 'member' }),
    );
    expect(statuses(same)).toEqual({ 201: 1, 409: 9 });
    expect(same.filter((a) => a.status === 409).every((a) => a.body.error_code === 'invitation_pending')).toBe(true);
    const rows: Array<{ email: string; n: number }> = await t.dataSource.query(
      "SELECT email, count(*)::int AS n FROM workspace_invitations WHERE workspace_id = $1 AND status = 'pending' GROUP BY email",
      [ws],
    );
    expect(rows.length).toBe(PARALLEL + 1);
    expect(rows.every((row) => row.n === 1)).toBe(true);
  });

  it('dataset edits and commits: 100 staged inserts all land, and 100 commits at once make exactly one version', async () => {
    const data = await uploadRows(t, r.member.auth, ws, [{ input: 'seed', expected: 'seed' }], 'crowd.json');
    const staged = await burst(PARALLEL, (i) =>
      t.http
        .post(`/datasets/${data.datasetId}/rows/insert`)
        .set(r.member.auth)
        .send({ rows: [{ input: `q${i}`, expected: `a${i}` }] }),
    );
    expect(statuses(staged)).toEqual({ 200: PARALLEL });

    const commits = await burst(PARALLEL, () =>
      t.http.post(`/datasets/${data.datasetId}/rows/commit`).set(r.member.auth).send({ message: 'crowd' }),
    );
    expect(statuses(commits)).toEqual({ 200: 1, 409: PARALLEL - 1 });
    const winner = commits.find((a) => a.status === 200)!;
    expect(winner.body).toEqual(
      expect.objectContaining({
        inserted: PARALLEL,
        row_count: PARALLEL + 1,
        version: expect.objectContaining({ number: 2 }),
      }),
    );
    expect(commits.filter((a) => a.status === 409).every((a) => a.body.error_code === 'nothing_to_commit')).toBe(true);
    const versions = await t.http.get(`/datasets/${data.datasetId}/versions`).set(r.viewer.auth).expect(200);
    const items = Array.isArray(versions.body) ? versions.body : versions.body.items;
    expect(items.map((v: { number: number }) => v.number).sort()).toEqual([1, 2]);
  });

  describe('run starts', () => {
    let sut: FakeUpstream;
    beforeAll(async () => {
      sut = await FakeUpstream.start();
      sut.on('POST', '/answer', { json: { answer: 'ok' } });
    });
    afterAll(async () => sut?.close());

    it('100 runs started at once are all accepted, each once, and all finish', async () => {
      const data = await uploadRows(
        t,
        r.member.auth,
        ws,
        [
          { input: 'a', expected_output: 'ok' },
          { input: 'b', expected_output: 'ok' },
        ],
        'runs.json',
      );
      const sutId = (
        await t.http.post('/suts').set(r.member.auth).send({ workspace_id: ws, name: 'crowd-bot' }).expect(201)
      ).body.id;
      const connectionId = (
        await t.http
          .post(`/suts/${sutId}/connections`)
          .set(r.member.auth)
          .send({ name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 8 })
          .expect(201)
      ).body.id;
      await t.http
        .post(`/suts/${sutId}/connections/${connectionId}/adapter`)
        .set(r.member.auth)
        .send({ request: { body: { q: '{{input}}' } }, response: { language: 'jsonpath', output: '$.answer' } })
        .expect(201);

      const starts = await burst(PARALLEL, (i) =>
        t.http
          .post('/runs')
          .set(r.member.auth)
          .send({
            workspace_id: ws,
            dataset_id: data.datasetId,
            sut_id: sutId,
            connection_id: connectionId,
            metrics: ['exact_match'],
            tags: [`crowd-${i}`],
          }),
      );
      expect(statuses(starts)).toEqual({ 202: PARALLEL });
      const ids = starts.map((a) => a.body.id as string);
      expect(new Set(ids).size).toBe(PARALLEL);
      const [{ jobs }] = await t.dataSource.query(
        'SELECT count(*)::int AS jobs FROM jobs WHERE target_id = ANY($1::uuid[])',
        [ids],
      );
      expect(jobs).toBe(PARALLEL);

      const deadline = Date.now() + 240_000;
      let states: Record<string, number> = {};
      while (Date.now() < deadline) {
        const rows: Array<{ state: string; n: number }> = await t.dataSource.query(
          'SELECT state, count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) GROUP BY state',
          [ids],
        );
        states = Object.fromEntries(rows.map((row) => [row.state, row.n]));
        if (states.succeeded === PARALLEL) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(states).toEqual({ succeeded: PARALLEL });
      expect(sut.requests.length).toBe(2 * PARALLEL);
    });
  });
});
