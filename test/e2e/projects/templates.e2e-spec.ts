import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Actor } from '../../factories/factory.js';
import { expectProblem } from '../../utils/problem.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const REQUIRED = [
  'customer-support-assistant',
  'rag-question-answering',
  'summarisation',
  'code-assistant',
  'agentic-workflow',
];

describe('templates: GET /templates and GET /templates/{name}', () => {
  let t: TestApp;
  let user: Actor;
  beforeAll(async () => {
    t = await startTestApp();
    user = await t.factory.actor();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is 401 without a token', async () => {
    expectProblem(await t.http.get('/templates'), 401, 'unauthenticated');
    expectProblem(await t.http.get('/templates/summarisation'), 401, 'unauthenticated');
    expectProblem(await t.http.get('/templates/no-such-template'), 401, 'unauthenticated');
  });

  it('lists the built-in templates to any authenticated user, the five core ones included', async () => {
    const res = await t.http.get('/templates').set(user.auth).expect(200);
    expect(Array.isArray(res.body)).toBe(true);
    const names = res.body.map((s: { name: string }) => s.name);
    expect(names).toEqual(expect.arrayContaining(REQUIRED));
    expect(new Set(names).size).toBe(names.length);
    for (const summary of res.body) {
      expect(summary).toEqual({
        name: expect.stringMatching(/^[a-z][a-z0-9-]*$/),
        title: expect.any(String),
        description: expect.any(String),
        use_case: expect.stringMatching(/^[a-z_]+$/),
        dimension_count: expect.any(Number),
      });
      expect(summary.description.length).toBeGreaterThan(40);
    }
  });

  it('serves every listed template in full, consistent with its summary', async () => {
    const { body: summaries } = await t.http.get('/templates').set(user.auth).expect(200);
    for (const summary of summaries) {
      const { body } = await t.http.get(`/templates/${summary.name}`).set(user.auth).expect(200);
      expect(body).toEqual(
        expect.objectContaining({
          name: summary.name,
          title: summary.title,
          description: summary.description,
          use_case: summary.use_case,
        }),
      );
      expect(body.dimensions).toHaveLength(summary.dimension_count);
      expect(body.dimensions.length).toBeGreaterThanOrEqual(4);
      for (const dimension of body.dimensions) {
        expect(Object.keys(dimension).sort()).toEqual(['description', 'name', 'values']);
        expect(dimension.values.length).toBeGreaterThanOrEqual(3);
        expect(dimension.values.length).toBeLessThanOrEqual(10);
        for (const value of dimension.values) {
          expect(value).toEqual({ value: expect.stringMatching(/^[a-z][a-z0-9_]*$/), description: expect.any(String) });
        }
      }
      expect(body.suggested_metrics.length).toBeGreaterThanOrEqual(3);
      for (const metric of body.suggested_metrics) {
        expect(metric).toEqual({
          name: expect.stringMatching(/^[a-z][a-z0-9_]*$/),
          kind: expect.stringMatching(/^(deterministic|judged)$/),
          description: expect.any(String),
          threshold:
            metric.threshold === null
              ? null
              : { operator: expect.stringMatching(/^(>=|<=)$/), value: expect.any(Number) },
        });
      }
    }
  });

  it('gives the customer-support template its real dimensions', async () => {
    const { body } = await t.http.get('/templates/customer-support-assistant').set(user.auth).expect(200);
    const topic = body.dimensions.find((d: { name: string }) => d.name === 'topic');
    expect(topic.values.map((v: { value: string }) => v.value)).toEqual(
      expect.arrayContaining(['billing', 'account_access', 'returns_refunds']),
    );
    expect(body.dimensions.map((d: { name: string }) => d.name)).toEqual(
      expect.arrayContaining(['topic', 'intent', 'customer_persona', 'difficulty', 'channel', 'language']),
    );
  });

  it('is 404 template_not_found for an unknown name, listing the available names in detail and in `available`', async () => {
    const { body: summaries } = await t.http.get('/templates').set(user.auth).expect(200);
    const names = summaries.map((s: { name: string }) => s.name);
    for (const unknown of ['no-such-template', 'Summarisation', 'summarisation%20', '..%2F..%2Fetc']) {
      const res = await t.http.get(`/templates/${unknown}`).set(user.auth);
      expectProblem(res, 404, 'template_not_found');
      for (const name of names) expect(res.body.detail).toContain(name);
      expect(res.body.available).toEqual(names);
    }
  });
});
