import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';
import type { Actor } from '../../factories/factory.js';

const PNG_1X1 =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const svgUrl = (svg: string) => `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;

const valid = {
  product_name: '  Acme Eval  ',
  tagline: 'Ship assistants you can trust',
  primary_color: '#0f766e',
  accent_color: '#F97316',
  logo_url: 'https://cdn.acme.example/logo.svg',
  favicon_url: PNG_1X1,
  support_url: 'mailto:help@acme.example',
};

describe('branding: GET and PUT /branding', () => {
  let t: TestApp;
  let admin: Actor;
  let user: Actor;
  beforeAll(async () => {
    t = await startTestApp();
    [admin, user] = await Promise.all([t.factory.actor({ systemRole: 'admin' }), t.factory.actor()]);
  });
  afterAll(async () => {
    await t?.close();
  });

  let defaultsEtag: string;
  it('serves the built-in defaults (version 0) without a token, with a strong ETag', async () => {
    const res = await t.http.get('/branding').expect(200);
    defaultsEtag = res.headers.etag as string;
    expect(res.body).toEqual({
      product_name: 'Evaluation Workspace',
      tagline: expect.any(String),
      primary_color: '#1E3A8A',
      accent_color: '#F59E0B',
      logo_url: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
      favicon_url: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
      support_url: null,
      updated_at: null,
      version: 0,
    });
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.headers['cache-control']).toBe('no-cache');
    // The defaults are stable: the same ETag on every read.
    const again = await t.http.get('/branding').expect(200);
    expect(again.headers.etag).toBe(res.headers.etag);
  });

  it('answers 304 with an empty body to a matching If-None-Match (strong, weak or in a list), 200 otherwise', async () => {
    const { headers } = await t.http.get('/branding').expect(200);
    const etag = headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await t.http.get('/branding').set('If-None-Match', header);
      expect(res.status).toBe(304);
      expect(res.text ?? '').toBe('');
      expect(res.headers.etag).toBe(etag);
    }
    const stale = await t.http.get('/branding').set('If-None-Match', '"something-else"').expect(200);
    expect(stale.body.version).toBeGreaterThanOrEqual(0);
  });

  it('PUT is 401 without a token and 403 for a user who is not a system admin', async () => {
    expectProblem(await t.http.put('/branding').send(valid), 401, 'unauthenticated');
    expectProblem(await t.http.put('/branding').set(user.auth).send(valid), 403, 'forbidden');
    const res = await t.http.get('/branding').expect(200);
    expect(res.body.version).toBe(0);
  });

  it('PUT is 400 listing each invalid field, and changes nothing', async () => {
    const res = await t.http
      .put('/branding')
      .set(admin.auth)
      .send({
        ...valid,
        product_name: '   ',
        primary_color: 'teal',
        accent_color: '#12345',
        logo_url: 'http://cdn.acme.example/logo.png',
        support_url: 'javascript:alert(1)',
      });
    expectProblem(res, 400, 'validation_failed');
    const fields = (res.body.errors as Array<{ field: string }>).map((e) => e.field).sort();
    expect(fields).toEqual(['accent_color', 'logo_url', 'primary_color', 'product_name', 'support_url']);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([{ field: 'logo_url', message: 'logo_url must be an https URL' }]),
    );

    expectProblem(
      await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...valid, product_name: undefined }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...valid, version: 7 }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...valid, product_name: 'x'.repeat(81) }),
      400,
      'validation_failed',
    );
    const after = await t.http.get('/branding').expect(200);
    expect(after.body.version).toBe(0);
  });

  it('PUT refuses data URLs that are not what they claim, too large, or SVG with script', async () => {
    const cases: Array<[string, RegExp]> = [
      ['data:image/gif;base64,R0lGODlhAQABAAAAACw=', /data URL of the form/],
      [svgUrl('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), /script/],
      [svgUrl('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'), /event handlers/],
      [`data:image/png;base64,${Buffer.from('<svg></svg>').toString('base64')}`, /does not hold image\/png data/],
      [
        `data:image/jpeg;base64,${Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300 * 1024)]).toString('base64')}`,
        /at most 262144 bytes/,
      ],
      ['data:image/png;base64,iVBORw0KGgo', /wrong length/],
    ];
    for (const [logo, message] of cases) {
      const res = await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...valid, logo_url: logo });
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors).toEqual([{ field: 'logo_url', message: expect.stringMatching(message) }]);
    }
  });

  let firstEtag: string;
  it('PUT as a system admin saves the whole branding (version 1), and GET serves it with the same ETag', async () => {
    const res = await t.http.put('/branding').set(admin.auth).send(valid).expect(200);
    expect(res.body).toEqual({
      product_name: 'Acme Eval',
      tagline: 'Ship assistants you can trust',
      primary_color: '#0F766E',
      accent_color: '#F97316',
      logo_url: 'https://cdn.acme.example/logo.svg',
      favicon_url: PNG_1X1,
      support_url: 'mailto:help@acme.example',
      updated_at: expect.any(String),
      version: 1,
    });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    firstEtag = res.headers.etag as string;
    expect(firstEtag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const read = await t.http.get('/branding').expect(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.etag).toBe(firstEtag);
    await t.http.get('/branding').set('If-None-Match', firstEtag).expect(304);

    const [audit] = await t.dataSource.query(
      `SELECT actor_id, details FROM audit_events WHERE action = 'branding.updated' ORDER BY created_at DESC LIMIT 1`,
    );
    expect(audit.actor_id).toBe(admin.id);
    expect(audit.details).toEqual({
      version: 1,
      changed_fields: expect.arrayContaining(['product_name', 'primary_color', 'logo_url', 'support_url']),
    });
  });

  it('the ETag of the defaults no longer matches after a change', async () => {
    expect(firstEtag).not.toBe(defaultsEtag);
    const res = await t.http.get('/branding').set('If-None-Match', defaultsEtag).expect(200);
    expect(res.body.version).toBe(1);
  });

  it('PUT with a stale If-Match is 412 and changes nothing; with the current one it saves', async () => {
    const stale = await t.http
      .put('/branding')
      .set(admin.auth)
      .set('If-Match', '"stale-etag"')
      .send({ ...valid, product_name: 'Lost update' });
    expectProblem(stale, 412, 'precondition_failed');
    expect(stale.body.current_etag).toBe(firstEtag);
    expect((await t.http.get('/branding').expect(200)).body.product_name).toBe('Acme Eval');

    // Omitted optional fields become null: PUT replaces the whole branding.
    const res = await t.http
      .put('/branding')
      .set(admin.auth)
      .set('If-Match', firstEtag)
      .send({ product_name: 'Acme Evaluations', primary_color: '#111827', accent_color: '#22C55E', logo_url: PNG_1X1 })
      .expect(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        product_name: 'Acme Evaluations',
        tagline: null,
        favicon_url: null,
        support_url: null,
        version: 2,
      }),
    );
    expect(res.headers.etag).not.toBe(firstEtag);
    expectProblem(
      await t.http.put('/branding').set(admin.auth).set('If-Match', firstEtag).send(valid),
      412,
      'precondition_failed',
    );
  });

  it('of two admins saving with the same If-Match at once, exactly one wins', async () => {
    const { headers } = await t.http.get('/branding').expect(200);
    const etag = headers.etag as string;
    const other = await t.factory.actor({ systemRole: 'admin' });
    const results = await Promise.all([
      t.http
        .put('/branding')
        .set(admin.auth)
        .set('If-Match', etag)
        .send({ ...valid, product_name: 'From admin A' }),
      t.http
        .put('/branding')
        .set(other.auth)
        .set('If-Match', etag)
        .send({ ...valid, product_name: 'From admin B' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const winner = results.find((r) => r.status === 200)!;
    const read = await t.http.get('/branding').expect(200);
    expect(read.body.product_name).toBe(winner.body.product_name);
    expect(read.body.version).toBe(3);
  });

  it('accepts inline SVG, PNG and JPEG logos, and https support links', async () => {
    const svg = svgUrl(
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#000"/></svg>',
    );
    const jpeg = `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64')}`;
    for (const logo of [svg, PNG_1X1, jpeg]) {
      const res = await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...valid, logo_url: logo, support_url: 'https://help.acme.example/contact' })
        .expect(200);
      expect(res.body.logo_url).toBe(logo);
    }
  });
});
