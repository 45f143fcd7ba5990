import { describe, expect, it } from '@jest/globals';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import supertest from 'supertest';
import { bodyParser, requestMiddleware } from './http-pipeline.js';
import { createRootLogger } from './logger.js';
import { requestPressure } from './request-pressure.js';

describe('requestMiddleware', () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createRootLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, logger };
  };

  it('logs one access line per request: its id, method, path without the query, status and duration', async () => {
    const { lines, logger } = capture();
    const app = express();
    app.use(requestMiddleware(logger));
    app.get('/things/:id', (_req, res) => void res.status(204).end());
    const res = await supertest(app).get('/things/7?token=secret-in-query').set('X-Request-Id', 'req-42').expect(204);
    expect(res.headers['x-request-id']).toBe('req-42');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        service: 'ews',
        msg: 'request',
        request_id: 'req-42',
        method: 'GET',
        path: '/things/7',
        status: 204,
        duration_ms: expect.any(Number),
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-in-query');
  });

  it('counts the request as in flight until its response is done (background work gives way meanwhile)', async () => {
    const { logger } = capture();
    const app = express();
    app.use(requestMiddleware(logger));
    const before = requestPressure.requestsInFlight;
    let during = -1;
    app.get('/slow', (_req, res) => {
      during = requestPressure.requestsInFlight;
      res.json({ ok: true });
    });
    await supertest(app).get('/slow').expect(200);
    expect(during).toBe(before + 1);
    expect(requestPressure.requestsInFlight).toBe(before);
  });

  it('logs a request whose client went away before the answer as aborted, and stops counting it', async () => {
    const { lines, logger } = capture();
    const app = express();
    app.use(requestMiddleware(logger));
    const before = requestPressure.requestsInFlight;
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    app.get('/hang', (_req, _res) => arrived());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET /hang HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-1\r\n\r\n');
    await arrival;
    expect(requestPressure.requestsInFlight).toBe(before + 1);
    socket.destroy();
    while (!lines.length) await new Promise((resolve) => setTimeout(resolve, 5));
    server.close();
    expect(lines).toEqual([expect.objectContaining({ request_id: 'gone-1', path: '/hang', aborted: true })]);
    expect(requestPressure.requestsInFlight).toBe(before);
  });

  it('leaves the root logger redacting: a password or token logged elsewhere is censored', () => {
    const { lines, logger } = capture();
    requestMiddleware(logger);
    logger.info({ body: { password: 'hunter2', token: 't0k3n', name: 'kept' } }, 'login');
    expect(lines[0].body).toEqual({ password: '[redacted]', token: '[redacted]', name: 'kept' });
  });
});

describe('bodyParser', () => {
  const app = express();
  app.use(bodyParser('1kb'));
  app.all('/echo', (req, res) => void res.json({ body: req.body ?? null }));

  it('reads JSON, form and JSON Lines bodies through one layer', async () => {
    await supertest(app)
      .post('/echo')
      .send({ a: 1 })
      .expect(200, { body: { a: 1 } });
    await supertest(app)
      .post('/echo')
      .type('form')
      .send('a=1')
      .expect(200, { body: { a: '1' } });
    await supertest(app)
      .post('/echo')
      .set('Content-Type', 'application/x-ndjson')
      .send('{"a":1}\n{"b":2}')
      .expect(200, { body: '{"a":1}\n{"b":2}' });
  });

  it('passes a request without a body untouched, and still refuses a bad one as problem+json', async () => {
    await supertest(app).get('/echo').expect(200, { body: null });
    const res = await supertest(app).post('/echo').set('Content-Type', 'application/json').send('{"a":').expect(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.error_code).toBe('malformed_json');
    await supertest(app)
      .post('/echo')
      .send({ big: 'x'.repeat(2048) })
      .expect(413);
  });
});
