import { describe, expect, it } from '@jest/globals';
import express from 'express';
import supertest from 'supertest';
import { requestIdMiddleware } from './http-pipeline.js';
import { createRootLogger } from './logger.js';
import { requestPressure } from './request-pressure.js';

describe('requestIdMiddleware', () => {
  const capture = () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createRootLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, logger };
  };

  it('logs one access line per request: its id, method, path without the query, status and duration', async () => {
    const { lines, logger } = capture();
    const app = express();
    app.use(requestIdMiddleware(logger));
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
    app.use(requestIdMiddleware(logger));
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

  it('leaves the root logger redacting: a password or token logged elsewhere is censored', () => {
    const { lines, logger } = capture();
    requestIdMiddleware(logger);
    logger.info({ body: { password: 'hunter2', token: 't0k3n', name: 'kept' } }, 'login');
    expect(lines[0].body).toEqual({ password: '[redacted]', token: '[redacted]', name: 'kept' });
  });
});
