import type { Actor } from '../../factories/factory.js';
import type { TestApp } from '../../utils/test-app.js';

export interface Outcome {
  status: number;
  ms: number;
  /** problem+json whose status member equals the HTTP status */
  problem: boolean;
  code?: string;
}

/** Concurrent clients calling database-backed routes until `stop` resolves. */
export async function loadUntil(
  t: TestApp,
  actor: Actor,
  stop: Promise<void>,
  boundMs: number,
  clients = 6,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let done = false;
  void stop.then(() => (done = true));
  const client = async () => {
    for (let i = 0; !done; i++) {
      const started = Date.now();
      const res = await t.http
        .get(i % 2 ? '/auth/me' : '/workspaces')
        .set(actor.auth)
        .timeout(boundMs);
      outcomes.push({
        status: res.status,
        ms: Date.now() - started,
        problem:
          /^application\/problem\+json/.test(res.headers['content-type'] ?? '') && res.body.status === res.status,
        code: res.body?.error_code,
      });
      // Keeps the clients from spinning on instant 503s.
      if (res.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return outcomes;
}

/** Counts by status, and the outcomes that break the rule "200, or 503 problem+json service_unavailable". */
export function summarise(outcomes: Outcome[]): {
  byStatus: Record<number, number>;
  violations: Outcome[];
  slowest: number;
} {
  const byStatus = outcomes.reduce<Record<number, number>>(
    (acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }),
    {},
  );
  const violations = outcomes.filter(
    (o) => o.status !== 200 && !(o.status === 503 && o.problem && o.code === 'service_unavailable'),
  );
  return { byStatus, violations, slowest: Math.max(0, ...outcomes.map((o) => o.ms)) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
