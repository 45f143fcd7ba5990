import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import type { Response } from 'supertest';
import { expectProblem } from '../utils/problem.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { agentTrace, otlpJson, recordTraces } from '../utils/otel-traces.js';
import { landingSettled } from '../utils/traces.js';

/** Tables a refused request may still write to: the audit trail, queued jobs, tokens and the login throttle. */
const LOG_TABLES = new Set(['audit_events', 'jobs', 'auth_tokens', 'login_throttle']);

const nested = (levels: number, shape: 'array' | 'object' = 'array') =>
  shape === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/**
 * Hostile input (docs/security.md, Limits; docs/api-conventions.md): JSON nested thousands of
 * levels deep, unpaired UTF-16 surrogates, arrays where objects belong, null in optional
 * members, numbers past 2^53 or a double's range, deep rows in uploaded files, and a few more
 * (long URLs, `__proto__` keys, duplicate keys, bodies that are not objects). Each is a 400
 * problem+json (431 for the URL) naming what is wrong, and writes nothing.
 */
describe('security: hostile input is a 400 problem, never a 500', () => {
  let t: TestApp;
  let r: Awaited<ReturnType<TestApp['factory']['workspaceWithRoles']>>;
  let admin: Awaited<ReturnType<TestApp['factory']['actor']>>;
  let ws: string;
  let datasetId: string;
  let versionId: string;
  let countAll: string;

  const rowCounts = async (): Promise<Record<string, number>> => (await t.dataSource.query(countAll))[0];
  /** Runs `send`, asserts its problem, and that no table (but the logs) gained or lost a row. */
  const refusedWithoutWrites = async (
    send: () => PromiseLike<Response>,
    status: number,
    code: string,
  ): Promise<Response> => {
    const before = await rowCounts();
    const res = await send();
    expectProblem(res, status, code);
    expect(await rowCounts()).toEqual(before);
    return res;
  };
  const fieldsOf = (res: Response) => [...new Set((res.body.errors ?? []).map((e: { field: string }) => e.field))];
  /** A landing, and the enrichment it queues, run to their end: no background write lands in a later test's row counts. */
  const landed = async (runId: string): Promise<Record<string, any>> => {
    const run = await landingSettled(t, r.viewer.auth, runId);
    for (let i = 0; run.state === 'succeeded' && i < 400; i++) {
      const status = (
        await t.http
          .get(`/datasets/${run.dataset_id}/versions/${run.version_id}/trace-enrichment`)
          .set(r.viewer.auth)
          .expect(200)
      ).body;
      if (['succeeded', 'failed'].includes(status.state)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return run;
  };
  const json = (method: 'post' | 'put' | 'patch', url: string, auth: Record<string, string>, body: string) =>
    t.http[method](url).set(auth).set('Content-Type', 'application/json').send(body);

  beforeAll(async () => {
    t = await startTestApp();
    r = await t.factory.workspaceWithRoles();
    admin = await t.factory.actor({ systemRole: 'admin' });
    ws = r.workspace.id;
    const tables: Array<{ table_name: string }> = await t.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    countAll = `SELECT ${tables
      .filter((x) => !LOG_TABLES.has(x.table_name))
      .map((x) => `(SELECT count(*)::int FROM "${x.table_name}") AS "${x.table_name}"`)
      .join(', ')}`;
    const ds = await t.http
      .post('/datasets/upload')
      .query({ workspace_id: ws })
      .set(r.member.auth)
      .attach(
        'file',
        Buffer.from('question,answer,topic\nWhat is 2+2?,4,math\nCapital of France?,Paris,geo\n'),
        'qa.csv',
      )
      .expect(201);
    datasetId = ds.body.id;
    versionId = ds.body.latest_version.id;
  });
  afterAll(async () => t?.close());

  describe('JSON nested deeper than 64 levels', () => {
    it('is 400 json_too_deep before parsing, on the public token route too, for arrays and objects', async () => {
      for (const body of [
        nested(100_000),
        nested(100_000, 'object'),
        nested(65),
        `{"email": "a@b.c", "password": "x", "extra": ${nested(5_000, 'object')}}`,
      ]) {
        const res = await refusedWithoutWrites(() => json('post', '/auth/token', {}, body), 400, 'json_too_deep');
        expect(res.body).toEqual(
          expect.objectContaining({ max_depth: 64, detail: expect.stringContaining('64 levels') }),
        );
      }
      await refusedWithoutWrites(
        () => json('post', '/workspaces', r.member.auth, `{"name": "deep", "description": ${nested(100_000)}}`),
        400,
        'json_too_deep',
      );
      // The same body as application/*+json goes through the same check.
      await refusedWithoutWrites(
        () =>
          t.http
            .post('/workspaces')
            .set(r.member.auth)
            .set('Content-Type', 'application/merge-patch+json')
            .send(nested(1_000)),
        400,
        'json_too_deep',
      );
    });

    it('counts only real nesting: 64 levels pass the check (and meet the body rules), brackets inside strings do not count', async () => {
      // 64 levels: the body, `description`, and 62 more; refused by the DTO (a string is expected), not by the depth check.
      const res = await json('post', '/workspaces', r.member.auth, `{"name": "edge", "description": ${nested(63)}}`);
      expectProblem(res, 400, 'validation_failed');
      expect(fieldsOf(res)).toEqual(['description']);
      const brackets = await json(
        'post',
        '/workspaces',
        r.member.auth,
        JSON.stringify({ name: 'brackets', description: '[{'.repeat(1000) }),
      ).expect(201);
      expect(brackets.body.description).toBe('[{'.repeat(1000));
    });

    it('leaves room for legitimate nesting: a query filter at its own 10-level limit and an OTLP payload with nested attributes', async () => {
      let filter: Record<string, unknown> = { field: 'answer', op: 'eq', value: 4 };
      for (let i = 0; i < 10; i++) filter = i % 2 ? { and: [filter] } : { not: filter };
      const page = await t.http
        .post(`/datasets/${datasetId}/query`)
        .set(r.viewer.auth)
        .send({ filter, limit: 5 })
        .expect(200);
      expect(page.body.items).toEqual(expect.any(Array));
      const request = otlpJson(recordTraces([agentTrace('s-deep', 'how deep?')]));
      // Eight levels of kvlist inside a span attribute: 36 levels of JSON under the span, 48 in the body.
      let value: Record<string, unknown> = { stringValue: 'leaf' };
      for (let i = 0; i < 8; i++) value = { kvlistValue: { values: [{ key: `k${i}`, value }] } };
      const span = (
        request.resourceSpans as Array<{ scopeSpans: Array<{ spans: Array<{ attributes: unknown[] }> }> }>
      )[0].scopeSpans[0].spans[0];
      span.attributes.push({ key: 'nested', value });
      const started = await t.http
        .post('/traces/land:inline')
        .set(r.member.auth)
        .send({ workspace_id: ws, dataset_name: 'nested attributes', records: [request] })
        .expect(202);
      const run = await landed(started.body.id);
      expect(run.state).toBe('succeeded');
      expect(run.counts.dropped).toBe(0);
    });

    it('holds JSON Lines bodies to the limit line by line, naming the line', async () => {
      const body = `{"row_id": "x", "output": "ok"}\n${nested(100_000, 'object')}\n`;
      const res = await refusedWithoutWrites(
        () =>
          t.http
            .put(`/runs/00000000-0000-4000-8000-000000000000/upload`)
            .set(r.member.auth)
            .set('Content-Type', 'application/x-ndjson')
            .send(body),
        400,
        'json_too_deep',
      );
      expect(res.body).toEqual(expect.objectContaining({ line: 2, max_depth: 64 }));
    });
  });

  describe('unpaired UTF-16 surrogates', () => {
    it('are 400 validation_failed naming the member, however deep, in values and in member names', async () => {
      let res = await refusedWithoutWrites(
        () => json('post', '/workspaces', r.member.auth, '{"name": "team \\ud800"}'),
        400,
        'validation_failed',
      );
      expect(fieldsOf(res)).toEqual(['name']);
      res = await refusedWithoutWrites(
        () => json('post', '/auth/token', {}, '{"email": "a\\udc00@example.com", "password": "whatever-1"}'),
        400,
        'validation_failed',
      );
      expect(fieldsOf(res)).toEqual(['email']);
      res = await refusedWithoutWrites(
        () =>
          json(
            'post',
            `/datasets/${datasetId}/rows/insert`,
            r.member.auth,
            '{"rows": [{"question": "ok"}, {"question": "high then high \\ud83d\\ud83d"}]}',
          ),
        400,
        'validation_failed',
      );
      expect(fieldsOf(res)).toEqual(['rows.1.question']);
      res = await refusedWithoutWrites(
        () => json('post', `/datasets/${datasetId}/rows/insert`, r.member.auth, '{"rows": [{"col\\udfff": 1}]}'),
        400,
        'validation_failed',
      );
      expect(fieldsOf(res)).toEqual(['rows.0.col\uFFFD']);
      expect(res.body.detail).toMatch(/unpaired UTF-16 surrogate/);
    });

    it('accepts a surrogate pair, escaped or raw', async () => {
      const res = await json('post', '/workspaces', r.member.auth, '{"name": "smile \\ud83d\\ude00 😀"}').expect(201);
      expect(res.body.name).toBe('smile 😀 😀');
    });

    it('are refused in JSON Lines bodies naming the line; query strings and paths cannot carry them', async () => {
      const res = await refusedWithoutWrites(
        () =>
          t.http
            .put(`/runs/00000000-0000-4000-8000-000000000000/upload`)
            .set(r.member.auth)
            .set('Content-Type', 'application/x-ndjson')
            .send('{"row_id": "a", "output": "\\ud800"}\n'),
        400,
        'validation_failed',
      );
      expect(fieldsOf(res)).toEqual(['line 1']);
      // A percent-encoded surrogate is not UTF-8: the query decodes it as U+FFFD, a path refuses it.
      const found = await t.http.get('/datasets').query('q=%ED%A0%80').set(r.member.auth).expect(200);
      expect(found.body.items).toEqual([]);
      expectProblem(await t.http.get('/datasets/%ED%A0%80').set(r.member.auth), 400);
    });
  });

  describe('an array (or null, or a scalar) where an object belongs', () => {
    it('is 400 validation_failed naming the element, in lists of nested objects and in single nested objects', async () => {
      const base = { workspace_id: ws, name: 'cfg', metrics: [{ config_name: 'exact_match' }] };
      for (const [metrics, named] of [
        [[[{ config_name: 'exact_match' }]], 'metrics.0 must be an object, found an array'],
        [[[]], 'metrics.0 must be an object, found an array'],
        [[{ config_name: 'exact_match' }, [1, 2]], 'metrics.1 must be an object, found an array'],
        [[null], 'metrics.0 must be an object, found null'],
      ] as const) {
        const res = await refusedWithoutWrites(
          () =>
            t.http
              .post('/eval-configs')
              .set(r.member.auth)
              .send({ ...base, metrics }),
          400,
          'validation_failed',
        );
        expect(res.body.errors).toEqual(expect.arrayContaining([{ field: 'metrics', message: named }]));
      }
      const rule = await refusedWithoutWrites(
        () =>
          t.http
            .post('/eval-configs')
            .set(r.member.auth)
            .send({ ...base, pass_rule: [] }),
        400,
        'validation_failed',
      );
      expect(rule.body.errors).toEqual(
        expect.arrayContaining([{ field: 'pass_rule', message: 'pass_rule must be an object, found an array' }]),
      );
      // Nested two lists deep: a project's dimension values.
      const project = await refusedWithoutWrites(
        () =>
          t.http
            .post('/projects')
            .set(r.member.auth)
            .send({ workspace_id: ws, name: 'p', dimensions: [{ name: 'topic', description: 'd', values: [[]] }] }),
        400,
        'validation_failed',
      );
      expect(project.body.errors).toEqual(
        expect.arrayContaining([
          { field: 'dimensions.0.values', message: 'values.0 must be an object, found an array' },
        ]),
      );
    });

    it('is 400 in lists of plain objects (rows) too', async () => {
      await refusedWithoutWrites(
        () =>
          t.http
            .post(`/datasets/${datasetId}/rows/insert`)
            .set(r.member.auth)
            .send({ rows: [[1, 2]] }),
        400,
        'validation_failed',
      );
      await refusedWithoutWrites(
        () =>
          t.http
            .post(`/datasets/${datasetId}/rows/insert`)
            .set(r.member.auth)
            .send({ rows: [null] }),
        400,
        'validation_failed',
      );
    });
  });

  describe('null in optional members', () => {
    it('is 400 naming the member where the document does not say nullable (PATCH and POST alike)', async () => {
      const target = await t.factory.actor();
      for (const member of ['email', 'display_name', 'system_role']) {
        const res = await refusedWithoutWrites(
          () =>
            t.http
              .patch(`/users/${target.id}`)
              .set(admin.auth)
              .send({ [member]: null }),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toEqual([member]);
      }
      const secret = await t.http
        .post(`/workspaces/${ws}/secrets`)
        .set(r.admin.auth)
        .send({ name: 'API_KEY', value: 'v-1' })
        .expect(201);
      for (const member of ['name', 'value', 'description']) {
        const res = await refusedWithoutWrites(
          () =>
            t.http
              .patch(`/workspaces/${ws}/secrets/${secret.body.id}`)
              .set(r.admin.auth)
              .send({ [member]: null }),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toEqual([member]);
      }
      const query = await refusedWithoutWrites(
        () => t.http.post(`/datasets/${datasetId}/query`).set(r.viewer.auth).send({ limit: null }),
        400,
        'validation_failed',
      );
      expect(fieldsOf(query)).toEqual(['limit']);
    });

    it('clears the value where the document says nullable', async () => {
      const put = {
        product_name: 'Acme Evals',
        primary_color: '#0F766E',
        accent_color: '#F97316',
        logo_url: 'https://example.com/logo.svg',
      };
      const res = await t.http
        .put('/branding')
        .set(admin.auth)
        .send({ ...put, tagline: null, support_url: null, favicon_url: null })
        .expect(200);
      expect(res.body).toEqual(expect.objectContaining({ tagline: null, support_url: null }));
    });
  });

  describe('numbers past 2^53, past a double, or not numbers at all', () => {
    it('are 400 naming the member in bodies', async () => {
      const dims = `/datasets/${datasetId}/versions/${versionId}/dimensions/query`;
      for (const raw of ['1e308', '9007199254740993', '-1e308', '1e-308', '1e400', '2147483648']) {
        const res = await refusedWithoutWrites(
          () => json('post', dims, r.viewer.auth, `{"offset": ${raw}}`),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toEqual(['offset']);
      }
      const limit = await refusedWithoutWrites(
        () => json('post', `/datasets/${datasetId}/query`, r.viewer.auth, '{"limit": 9007199254740993}'),
        400,
        'validation_failed',
      );
      expect(fieldsOf(limit)).toEqual(['limit']);
      const version = await refusedWithoutWrites(
        () =>
          json(
            'post',
            '/eval-configs',
            r.member.auth,
            `{"workspace_id": "${ws}", "name": "big", "metrics": [{"config_name": "exact_match", "config_version": 9007199254740993}]}`,
          ),
        400,
        'validation_failed',
      );
      expect(fieldsOf(version)).toEqual(['metrics.0.config_version']);
    });

    it('are 400 naming the parameter in query strings', async () => {
      await t.http
        .post(`/datasets/${datasetId}/dimensions:assign`)
        .set(r.member.auth)
        .send({ dimension: 'topic', value: 'math', rule: { field: 'topic', op: 'eq', value: 'math' } })
        .expect(201);
      const partition = await t.http
        .post(`/datasets/${datasetId}/versions/${versionId}/partitions`)
        .set(r.member.auth)
        .send({ name: 'math', dimension_values: { topic: ['math'] } })
        .expect(201);
      const resolve = `/datasets/${datasetId}/versions/${versionId}/partitions/${partition.body.id}/resolve`;
      for (const [name, value] of [
        ['offset', '1e308'],
        ['offset', '9007199254740993'],
        ['limit', '1e400'],
        ['limit', 'NaN'],
        ['offset', 'Infinity'],
        ['offset', '-1e308'],
      ]) {
        const res = await refusedWithoutWrites(
          () => t.http.post(resolve).query(`${name}=${value}`).set(r.viewer.auth).send({}),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toContain(name);
      }
      for (const value of ['1e400', 'NaN', '9007199254740993', '-1']) {
        const res = await refusedWithoutWrites(
          () => t.http.get('/datasets').query(`page=${value}`).set(r.viewer.auth),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toEqual(['page']);
      }
    });
  });

  describe('uploads with rows nested too deep', () => {
    const upload = (file: string, filename: string) =>
      t.http
        .post('/datasets/upload')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .attach('file', Buffer.from(file), filename);

    it('is 400 malformed_file naming the line (JSON Lines) or the row (JSON), and creates nothing', async () => {
      for (const levels of [33, 5_000, 100_000]) {
        const res = await refusedWithoutWrites(
          () => upload(`{"q": "fine"}\n{"q": ${nested(levels)}}\n`, 'deep.jsonl'),
          400,
          'malformed_file',
        );
        expect(res.body).toEqual(
          expect.objectContaining({
            where: 'line 2',
            reason: 'the row nests arrays and objects deeper than 32 levels',
          }),
        );
      }
      const array = await refusedWithoutWrites(
        () => upload(`[{"q": "fine"}, {"q": ${nested(5_000, 'object')}}]`, 'deep.json'),
        400,
        'malformed_file',
      );
      expect(array.body.where).toBe('row 2');
      // 32 levels, the row object included, are kept.
      const ok = await upload(`{"q": ${nested(31)}}\n`, 'edge.jsonl').expect(201);
      expect(ok.body.latest_version.row_count).toBe(1);
    });

    it('is 400 malformed_file naming the line and column for an unpaired surrogate', async () => {
      const res = await refusedWithoutWrites(
        () => upload('{"q": "fine"}\n{"q": "bad \\ud800"}\n', 'lone.jsonl'),
        400,
        'malformed_file',
      );
      expect(res.body).toEqual(
        expect.objectContaining({
          where: 'line 2',
          reason: expect.stringContaining('column q holds an unpaired UTF-16 surrogate'),
        }),
      );
    });
  });

  describe('trace files with records nested too deep', () => {
    it('drop those records as malformed_record and land the rest', async () => {
      const good = JSON.stringify({
        trace_id: 't-1',
        span_id: 's-1',
        name: 'fine',
        start_time: '2026-11-01T00:00:00Z',
        end_time: '2026-11-01T00:00:01Z',
      });
      const deep = `{"trace_id": "t-1", "span_id": "s-2", "name": "deep", "attributes": {"x": ${nested(100_000)}}}`;
      const uploaded = await t.http
        .post('/traces/uploads')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .attach('file', Buffer.from(`${good}\n${deep}\n`), 'spans.jsonl')
        .expect(201);
      await t.http.post(`/traces/uploads/${uploaded.body.id}:detect`).set(r.viewer.auth).send({}).expect(200);
      const started = await t.http
        .post('/traces/land')
        .set(r.member.auth)
        .send({ workspace_id: ws, upload_id: uploaded.body.id, dataset_name: 'deep spans' })
        .expect(202);
      const run = await landed(started.body.id);
      expect(run.state).toBe('succeeded');
      expect(run.counts).toEqual(expect.objectContaining({ landed: 1, dropped: 1 }));
      const drops = (await t.http.get(`/traces/runs/${run.id}/drops`).set(r.viewer.auth).expect(200)).body;
      expect(drops.items).toEqual([
        expect.objectContaining({
          reason: 'malformed_record',
          source_ref: 'line 2',
          detail: 'nests arrays and objects deeper than 64 levels',
        }),
      ]);

      // An OTLP/JSON document read as a stream: the deep span is dropped, its siblings land.
      const request = otlpJson(recordTraces([agentTrace('s-otlp', 'deep?')]));
      const spans = (
        request.resourceSpans as Array<{ scopeSpans: Array<{ spans: Array<{ attributes: unknown[] }> }> }>
      )[0].scopeSpans[0].spans;
      spans[0].attributes.push({ key: 'deep', value: { stringValue: '__DEEP__' } });
      const text = JSON.stringify(request).replace(
        '{"stringValue":"__DEEP__"}',
        `{"arrayValue":{"values":[${nested(5_000, 'object')}]}}`,
      );
      const otlp = await t.http
        .post('/traces/uploads')
        .query({ workspace_id: ws })
        .set(r.member.auth)
        .attach('file', Buffer.from(text), 'export.json')
        .expect(201);
      const otlpRun = await landed(
        (
          await t.http
            .post('/traces/land')
            .set(r.member.auth)
            .send({ workspace_id: ws, upload_id: otlp.body.id, dataset_name: 'deep otlp' })
            .expect(202)
        ).body.id,
      );
      expect(otlpRun.state).toBe('succeeded');
      expect(otlpRun.counts).toEqual(expect.objectContaining({ dropped: 1, received: spans.length }));
      expect(otlpRun.drop_reasons).toEqual({ malformed_record: 1 });
    });
  });

  describe('and the rest', () => {
    it('answers a request line over 16 KB with 431 problem+json', async () => {
      const res = await t.http
        .get('/datasets')
        .query({ q: 'x'.repeat(20_000) })
        .set(r.member.auth);
      expectProblem(res, 431, 'headers_too_large');
    });

    it('answers a request Node cannot parse as HTTP with 400 problem+json, not a bare status line', async () => {
      const server = t.app.getHttpServer() as Server;
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write('GET /live HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('utf8')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(raw).toMatch(/Content-Type: application\/problem\+json/);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual(
        expect.objectContaining({ status: 400, error_code: 'malformed_request', type: '/problems/malformed-request' }),
      );
    });

    it('refuses members named __proto__ or constructor anywhere (class-transformer would drop them unseen), and pollutes nothing', async () => {
      for (const [body, field] of [
        ['{"name": "p", "__proto__": {"role": "owner"}}', '__proto__'],
        ['{"name": "p", "\\u005f_proto__": {"role": "owner"}}', '__proto__'],
        ['{"name": "p", "constructor": {"prototype": {"polluted": true}}}', 'constructor'],
      ]) {
        const res = await refusedWithoutWrites(
          () => json('post', '/workspaces', r.member.auth, body),
          400,
          'validation_failed',
        );
        expect(fieldsOf(res)).toEqual([field]);
      }
      const row = await refusedWithoutWrites(
        () =>
          json(
            'post',
            `/datasets/${datasetId}/rows/insert`,
            r.member.auth,
            '{"rows": [{"q": 1, "constructor": "kept nowhere"}]}',
          ),
        400,
        'validation_failed',
      );
      expect(fieldsOf(row)).toEqual(['rows.0.constructor']);
      // As text they are only text.
      await json('post', '/workspaces', r.member.auth, '{"name": "constructor", "description": "__proto__"}').expect(
        201,
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).role).toBeUndefined();
    });

    it('takes the last of duplicate members (JSON.parse), as documented', async () => {
      const res = await json('post', '/workspaces', r.member.auth, '{"name": "first", "name": "last"}').expect(201);
      expect(res.body.name).toBe('last');
    });

    it('refuses bodies that are not objects: a string, a number or null is malformed_json, an array a validation failure', async () => {
      for (const body of ['"x"', '42', 'null', 'true'])
        await refusedWithoutWrites(() => json('post', '/workspaces', r.member.auth, body), 400, 'malformed_json');
      await refusedWithoutWrites(
        () => json('post', '/workspaces', r.member.auth, '[{"name": "x"}]'),
        400,
        'validation_failed',
      );
    });

    it('answers a JSON body under another Content-Type with 415', async () => {
      await refusedWithoutWrites(
        () => t.http.post('/workspaces').set(r.member.auth).set('Content-Type', 'text/plain').send('{"name": "x"}'),
        415,
        'unsupported_media_type',
      );
    });

    it('answers long or percent-garbled path parameters with 400', async () => {
      for (const id of ['x'.repeat(10_000), '%E0%A4%A', '%', '%00', '..%2F..%2Fetc', '__proto__']) {
        const res = await t.http.get(`/datasets/${id}`).set(r.member.auth);
        expect(res.status).toBe(400);
        expectProblem(res, 400);
      }
    });

    it('answers text path parameters and conditional headers past their documented bound with 400 naming them', async () => {
      const fields = (res: { body: { errors?: Array<{ field: string }> } }) => res.body.errors?.map((e) => e.field);
      for (const [url, name] of [
        [`/templates/${'x'.repeat(101)}`, 'name'],
        [`/sdk/versions/${'9'.repeat(33)}/download`, 'version'],
      ]) {
        const res = await t.http.get(url).set(r.member.auth);
        expectProblem(res, 400);
        expect([res.body.error_code, fields(res)]).toEqual(['validation_failed', [name]]);
      }
      const etags = Array.from({ length: 40 }, (_, i) => `"etag-${i}-0123456789abcdef"`).join(', ');
      const res = await t.http.get('/branding').set('If-None-Match', etags);
      expectProblem(res, 400);
      expect([etags.length > 1024, res.body.error_code, fields(res)]).toEqual([
        true,
        'validation_failed',
        ['If-None-Match'],
      ]);
      // At the bound, a text parameter reaches the operation (an unknown template is its own 404).
      expect((await t.http.get(`/templates/${'x'.repeat(100)}`).set(r.member.auth)).status).toBe(404);
    });
  });
});
