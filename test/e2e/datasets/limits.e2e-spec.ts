import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The documented upload limits, crossed: UPLOAD_MAX_BYTES and UPLOAD_MAX_ROWS answer 413 and
 * create nothing, whether the file is parsed on node's own thread or on a worker thread.
 */
describe.each([
  { where: "node's own thread", env: {} as Record<string, string> },
  { where: 'a worker thread', env: { UPLOAD_THREAD_MIN_BYTES: '0' } },
])('datasets: upload limits (files parsed on $where)', ({ env }) => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  const upload = (content: string, name: string) =>
    t.http
      .post('/datasets/upload')
      .query({ workspace_id: r.workspace.id })
      .set(r.member.auth)
      .attach('file', Buffer.from(content), name);

  beforeAll(async () => {
    t = await startTestApp({ UPLOAD_MAX_BYTES: '2048', UPLOAD_MAX_ROWS: '3', ...env });
    r = await t.factory.workspaceWithRoles();
  });
  afterAll(async () => t?.close());

  it('answers 413 beyond UPLOAD_MAX_BYTES and UPLOAD_MAX_ROWS, and accepts what fits', async () => {
    const big = await upload(`a\n${'x'.repeat(3000)}\n`, 'big.csv');
    expectProblem(big, 413, 'payload_too_large');
    expect(big.body.limit_bytes).toBe(2048);
    const many = await upload('a\n1\n2\n3\n4\n', 'many.csv');
    expectProblem(many, 413, 'too_many_rows');
    expect(many.body.detail).toMatch(/more than 3 rows/);
    expect(await t.dataSource.query('SELECT count(*)::int AS n FROM datasets')).toEqual([{ n: 0 }]);
    await upload('a\n1\n2\n3\n', 'fits.csv').expect(201);
    expectProblem(
      await t.http
        .post('/datasets/upload')
        .query({ workspace_id: r.workspace.id })
        .set(r.member.auth)
        .attach('file', Buffer.from('a\n1\n'), 'a.csv')
        .attach('other', Buffer.from('b'), 'b.csv'),
      400,
    );
  });
});
