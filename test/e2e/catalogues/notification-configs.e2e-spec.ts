import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { signWebhook, verifyWebhook } from '#libs/common/webhook-signature.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

describe('notification configs (webhooks)', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let ws: string;
  const body = (extra: Record<string, unknown> = {}) => ({
    workspace_id: ws,
    name: 'ci-alerts',
    url: 'https://hooks.example.com/ews',
    events: ['run.failed', 'quality_check.failed'],
    ...extra,
  });

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
  });
  afterAll(async () => t?.close());

  it('creates a webhook with a generated signing secret that only reveal shows, and documents the signature', async () => {
    const created = await t.http
      .post('/notifications/config')
      .set(r.admin.auth)
      .send(body({ events: ['run.failed', 'run.failed', 'quality_check.failed'] }))
      .expect(201);
    expect(created.body).toEqual(
      expect.objectContaining({
        workspace_id: ws,
        name: 'ci-alerts',
        url: 'https://hooks.example.com/ews',
        events: ['run.failed', 'quality_check.failed'],
        enabled: true,
        secret_created: true,
        signing: {
          algorithm: 'HMAC-SHA256',
          header: 'X-EWS-Signature',
          format: expect.stringContaining('<t>.<raw body>'),
        },
        created_by: r.admin.id,
      }),
    );
    const secret = await t.http
      .get(`/workspaces/${ws}/secrets/${created.body.secret_id}`)
      .set(r.admin.auth)
      .expect(200);
    expect(secret.body.name).toBe('webhook-ci-alerts');
    const value = (
      await t.http.post(`/workspaces/${ws}/secrets/${created.body.secret_id}/reveal`).set(r.admin.auth).expect(200)
    ).body.value as string;
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(created.body)).not.toContain(value);
    // What a receiver does with a delivery signed under that secret.
    const payload = JSON.stringify({ event: 'run.failed' });
    expect(verifyWebhook(value, payload, signWebhook(value, payload))).toBe(true);
    // The secret signs deliveries: it cannot be deleted while the webhook exists.
    expectProblem(await t.http.delete(`/workspaces/${ws}/secrets/${created.body.secret_id}`).set(r.admin.auth), 409);
  });

  it('uses a named secret, lists for admins, deletes, and audits', async () => {
    const secretId = (
      await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'SLACK_SIGNING', value: 'shared-secret' })
        .expect(201)
    ).body.id;
    const named = await t.http
      .post('/notifications/config')
      .set(r.owner.auth)
      .send(body({ name: 'slack', secret_id: secretId, enabled: false, events: ['run.succeeded'] }))
      .expect(201);
    expect(named.body).toEqual(expect.objectContaining({ secret_id: secretId, secret_created: false, enabled: false }));
    const list = await t.http.get('/notifications/config').query({ workspace_id: ws }).set(r.admin.auth).expect(200);
    expect(list.body).toEqual(expect.objectContaining({ total: 2, page: 1 }));
    expect(list.body.items.map((c: { name: string }) => c.name)).toEqual(['ci-alerts', 'slack']);
    expect(list.body.items[0].secret_created).toBeUndefined();
    await t.http.delete(`/notifications/config/${named.body.id}`).set(r.admin.auth).expect(204);
    expectProblem(await t.http.delete(`/notifications/config/${named.body.id}`).set(r.admin.auth), 404);
    await t.http.delete(`/workspaces/${ws}/secrets/${secretId}`).set(r.admin.auth).expect(204);
    const audit = await t.dataSource.query(
      `SELECT action FROM audit_events WHERE target_type = 'notification_config' ORDER BY created_at`,
    );
    expect(audit.map((a: { action: string }) => a.action)).toEqual([
      'notification_config.created',
      'notification_config.created',
      'notification_config.deleted',
    ]);
  });

  it('answers 400, 401, 403, 404 and 409', async () => {
    const post = (auth: Record<string, string> | undefined, b: Record<string, unknown>) => {
      const req = t.http.post('/notifications/config');
      return (auth ? req.set(auth) : req).send(b);
    };
    expectProblem(await post(r.admin.auth, body({ name: 'CI-ALERTS' })), 409, 'notification_config_name_taken');
    expectProblem(await post(r.admin.auth, body({ name: 'x', events: ['run.exploded'] })), 400, 'validation_failed');
    expectProblem(await post(r.admin.auth, body({ name: 'x', events: [] })), 400, 'validation_failed');
    expectProblem(
      await post(r.admin.auth, body({ name: 'x', url: 'mailto:ops@example.com' })),
      400,
      'validation_failed',
    );
    expectProblem(await post(r.admin.auth, body({ name: 'x', secret_id: randomUUID() })), 400, 'unknown_secret');
    expectProblem(await post(r.admin.auth, body({ name: 'x', secret: 'inline' })), 400, 'validation_failed');
    expectProblem(await post(r.member.auth, body({ name: 'x' })), 403);
    expectProblem(await post(r.outsider.auth, body({ name: 'x' })), 403);
    expectProblem(await post(undefined, body({ name: 'x' })), 401);
    expectProblem(await t.http.get('/notifications/config').query({ workspace_id: ws }).set(r.member.auth), 403);
    expectProblem(await t.http.get('/notifications/config').set(r.admin.auth), 400);
    expectProblem(await t.http.get('/notifications/config').query({ workspace_id: ws }), 401);
    const id = (await t.http.get('/notifications/config').query({ workspace_id: ws }).set(r.admin.auth).expect(200))
      .body.items[0].id;
    expectProblem(await t.http.delete(`/notifications/config/${id}`).set(r.member.auth), 403);
    expectProblem(await t.http.delete(`/notifications/config/${id}`).set(r.outsider.auth), 403);
    expectProblem(await t.http.delete(`/notifications/config/${randomUUID()}`).set(r.admin.auth), 404);
    expectProblem(await t.http.delete('/notifications/config/nope').set(r.admin.auth), 400);
    expectProblem(await t.http.delete(`/notifications/config/${id}`), 401);
  });
});
