import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const PLAINTEXT = 'sk-test-5f1c9a0b7e2d4c6a';

describe('workspace secrets', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  let secretId: string;
  /** Every response but reveal is checked for the plaintext. */
  const seen: Response[] = [];
  const track = (res: Response) => {
    seen.push(res);
    return res;
  };

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const res = track(
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'OPENAI_API_KEY', value: PLAINTEXT, description: 'judge key' })
        .expect(201),
    );
    secretId = res.body.id;
  });
  afterAll(async () => {
    for (const res of seen) expect(res.text ?? '').not.toContain(PLAINTEXT);
    await t?.close();
  });

  it('stores the value encrypted: the row holds no plaintext, the response no value', async () => {
    const [row] = await t.dataSource.query(
      'SELECT ciphertext, iv, auth_tag, key_id FROM workspace_secrets WHERE id = $1',
      [secretId],
    );
    expect(Buffer.from(row.ciphertext).toString('utf8')).not.toContain(PLAINTEXT);
    expect(Buffer.from(row.iv)).toHaveLength(12);
    expect(Buffer.from(row.auth_tag)).toHaveLength(16);
    const got = track(await t.http.get(`/workspaces/${ws}/secrets/${secretId}`).set(r.member.auth).expect(200));
    expect(Object.keys(got.body).sort()).toEqual([
      'created_at',
      'created_by',
      'description',
      'id',
      'last_revealed_at',
      'name',
      'updated_at',
      'updated_by',
      'version',
      'workspace_id',
    ]);
  });

  it('lists metadata for members with filters; viewers and outsiders are 403; anonymous 401', async () => {
    track(
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.owner.auth)
        .send({ name: 'anthropic.key', value: 'other-value' })
        .expect(201),
    );
    const list = track(
      await t.http.get(`/workspaces/${ws}/secrets`).set(r.member.auth).query({ q: 'openai' }).expect(200),
    );
    expect(list.body).toEqual(
      expect.objectContaining({ total: 1, items: [expect.objectContaining({ id: secretId, name: 'OPENAI_API_KEY' })] }),
    );
    const sorted = track(
      await t.http.get(`/workspaces/${ws}/secrets`).set(r.member.auth).query({ sort: 'name' }).expect(200),
    );
    expect(sorted.body.items.map((s: { name: string }) => s.name)).toEqual(['anthropic.key', 'OPENAI_API_KEY']);
    expectProblem(track(await t.http.get(`/workspaces/${ws}/secrets`).set(r.viewer.auth)), 403);
    expectProblem(track(await t.http.get(`/workspaces/${ws}/secrets`).set(r.outsider.auth)), 403);
    expectProblem(track(await t.http.get(`/workspaces/${ws}/secrets`)), 401);
  });

  it('reveals to admins only, audited with no value in the audit trail', async () => {
    const res = await t.http.post(`/workspaces/${ws}/secrets/${secretId}/reveal`).set(r.admin.auth).expect(200);
    expect(res.body).toEqual({ id: secretId, name: 'OPENAI_API_KEY', value: PLAINTEXT });
    const audit = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = 'secret.revealed' AND target_id = $1`,
      [secretId],
    );
    expect(audit).toEqual([{ actor_id: r.admin.id, details: { name: 'OPENAI_API_KEY' } }]);
    expect(JSON.stringify(await t.dataSource.query('SELECT details FROM audit_events'))).not.toContain(PLAINTEXT);
    const after = track(await t.http.get(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth).expect(200));
    expect(after.body.last_revealed_at).toEqual(expect.any(String));
    expectProblem(track(await t.http.post(`/workspaces/${ws}/secrets/${secretId}/reveal`).set(r.member.auth)), 403);
    expectProblem(track(await t.http.post(`/workspaces/${ws}/secrets/${secretId}/reveal`)), 401);
  });

  it('refuses duplicate names case-insensitively (409) and bad input (400)', async () => {
    expectProblem(
      track(
        await t.http.post(`/workspaces/${ws}/secrets`).set(r.admin.auth).send({ name: 'openai_api_key', value: 'x' }),
      ),
      409,
      'secret_name_taken',
    );
    expectProblem(
      track(await t.http.post(`/workspaces/${ws}/secrets`).set(r.admin.auth).send({ name: 'has space', value: 'x' })),
      400,
    );
    expectProblem(
      track(await t.http.post(`/workspaces/${ws}/secrets`).set(r.admin.auth).send({ name: 'EMPTY', value: '' })),
      400,
    );
    expectProblem(
      track(
        await t.http
          .post(`/workspaces/${ws}/secrets`)
          .set(r.admin.auth)
          .send({ name: 'BIG', value: 'x'.repeat(65_537) }),
      ),
      400,
    );
    expectProblem(
      track(
        await t.http
          .post(`/workspaces/${ws}/secrets`)
          .set(r.admin.auth)
          .send({ name: 'X', value: 'v', workspace_id: randomUUID() }),
      ),
      400,
    );
    expectProblem(
      track(await t.http.post(`/workspaces/${ws}/secrets`).set(r.member.auth).send({ name: 'X', value: 'v' })),
      403,
    );
  });

  it('updates with If-Match, replaces the value, and 412s on a stale ETag', async () => {
    const read = track(await t.http.get(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth).expect(200));
    const res = track(
      await t.http
        .patch(`/workspaces/${ws}/secrets/${secretId}`)
        .set(r.admin.auth)
        .set('If-Match', read.headers.etag)
        .send({ value: 'rotated-value-1', description: 'rotated' })
        .expect(200),
    );
    expect(res.body).toEqual(
      expect.objectContaining({ description: 'rotated', version: read.body.version + 1, updated_by: r.admin.id }),
    );
    expectProblem(
      track(
        await t.http
          .patch(`/workspaces/${ws}/secrets/${secretId}`)
          .set(r.admin.auth)
          .set('If-Match', read.headers.etag)
          .send({ description: 'lost' }),
      ),
      412,
    );
    const revealed = await t.http.post(`/workspaces/${ws}/secrets/${secretId}/reveal`).set(r.owner.auth).expect(200);
    expect(revealed.body.value).toBe('rotated-value-1');
    await t.http
      .patch(`/workspaces/${ws}/secrets/${secretId}`)
      .set(r.admin.auth)
      .send({ value: PLAINTEXT })
      .expect(200);
    expectProblem(
      track(
        await t.http.patch(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth).send({ name: 'anthropic.KEY' }),
      ),
      409,
    );
  });

  it('answers a tampered or foreign ciphertext with 409 secret_undecryptable, not a 500', async () => {
    const made = track(
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'tampered', value: 'tamper-me' })
        .expect(201),
    );
    await t.dataSource.query(
      `UPDATE workspace_secrets SET ciphertext = (SELECT ciphertext FROM workspace_secrets WHERE id = $1), iv = (SELECT iv FROM workspace_secrets WHERE id = $1), auth_tag = (SELECT auth_tag FROM workspace_secrets WHERE id = $1) WHERE id = $2`,
      [secretId, made.body.id],
    );
    expectProblem(
      track(await t.http.post(`/workspaces/${ws}/secrets/${made.body.id}/reveal`).set(r.admin.auth)),
      409,
      'secret_undecryptable',
    );
  });

  it('keeps workspaces apart: a secret of B under A is 404, and A members are 403 on B', async () => {
    const other = await t.factory.workspaceWithRoles();
    const b = track(
      await t.http
        .post(`/workspaces/${other.workspace.id}/secrets`)
        .set(other.admin.auth)
        .send({ name: 'B_KEY', value: 'b-value' })
        .expect(201),
    );
    expectProblem(track(await t.http.get(`/workspaces/${ws}/secrets/${b.body.id}`).set(r.admin.auth)), 404);
    expectProblem(track(await t.http.post(`/workspaces/${ws}/secrets/${b.body.id}/reveal`).set(r.admin.auth)), 404);
    expectProblem(
      track(await t.http.patch(`/workspaces/${ws}/secrets/${b.body.id}`).set(r.admin.auth).send({ description: 'x' })),
      404,
    );
    expectProblem(track(await t.http.delete(`/workspaces/${ws}/secrets/${b.body.id}`).set(r.admin.auth)), 404);
    expectProblem(
      track(await t.http.post(`/workspaces/${other.workspace.id}/secrets/${b.body.id}/reveal`).set(r.admin.auth)),
      403,
    );
    expectProblem(
      track(await t.http.get(`/workspaces/${ws}/secrets/not-a-uuid`).set(r.admin.auth)),
      400,
      'invalid_identifier',
    );
  });

  it('deletes (admins); then 404', async () => {
    const made = track(
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'temp', value: 'temp-value' })
        .expect(201),
    );
    expectProblem(track(await t.http.delete(`/workspaces/${ws}/secrets/${made.body.id}`).set(r.member.auth)), 403);
    track(await t.http.delete(`/workspaces/${ws}/secrets/${made.body.id}`).set(r.admin.auth).expect(204));
    expectProblem(track(await t.http.get(`/workspaces/${ws}/secrets/${made.body.id}`).set(r.admin.auth)), 404);
    expectProblem(track(await t.http.delete(`/workspaces/${ws}/secrets/${made.body.id}`)), 401);
  });
});
