/**
 * The types and helpers every fixture file uses (test/security/fixtures.ts and the family files
 * under test/security/fixtures/). See the FIXTURE REGISTRY comment in fixtures.ts.
 */
import type { Actor } from '../factories/factory.js';
import type { TestApp } from '../utils/test-app.js';

export interface FixtureContext {
  t: TestApp;
  label: string;
  workspaceId: string;
  owner: Actor;
  /** A member (role `member`) of the workspace, never the caller of a sweep. */
  member: Actor;
  viewer: Actor;
  /** The ids created so far, by parameter name (holds at least those listed in `needs`). */
  ids: Readonly<Record<string, string>>;
}

export interface Fixture {
  needs?: string[];
  create(ctx: FixtureContext): Promise<string>;
}

/** The body of a response that must have `status`; otherwise an error naming the fixture. */
export async function created(
  res: PromiseLike<{ status: number; body: Record<string, unknown> }>,
  status: number,
  what: string,
): Promise<Record<string, unknown>> {
  const r = await res;
  if (r.status !== status)
    throw new Error(`fixture ${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

/**
 * Fixtures whose value is a name rather than an id: they name a record only as a path
 * parameter. A query parameter or body member spelled the same (a new record's `name`) is text.
 */
export const NAMED_BY_TEXT = new Set([
  'name',
  'trace_id',
  'config_name',
  'metric_name',
  'config_version',
  'parent_id',
  'key',
  'section_key',
  'version',
]);

/** Waits for a queued run the fixtures started to succeed, so the reads the sweeps make find its results. */
export async function settled(t: TestApp, owner: Actor, path: string, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const state = (await created(t.http.get(path).set(owner.auth), 200, what)).state;
    if (state === 'succeeded') return;
    if (state === 'failed') throw new Error(`fixture ${what}: the run failed`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fixture ${what}: the run did not finish`);
}

/**
 * A run through a new offline connection of the SUT, every row given `output`: with `complete`
 * false it stays awaiting more (nothing queued), with true it is scored. Answers the run's id and
 * its rows' ids.
 */
export async function offlineRun(
  { t, owner, workspaceId }: Pick<FixtureContext, 't' | 'owner' | 'workspaceId'>,
  run: { dataset_id: string; version_id?: string; sut_id: string; metrics: string[] },
  outputs: { output: string; complete: boolean },
  what: string,
): Promise<{ run: string; rowIds: string[] }> {
  const connection = (
    await created(
      t.http.post(`/suts/${run.sut_id}/connections`).set(owner.auth).send({ name: 'uploads', kind: 'offline' }),
      201,
      `${what} (connection)`,
    )
  ).id as string;
  const id = (
    await created(
      t.http
        .post('/runs')
        .set(owner.auth)
        .send({ workspace_id: workspaceId, ...run, connection_id: connection }),
      202,
      what,
    )
  ).id as string;
  const items = (
    await created(t.http.post(`/runs/${id}/results/query`).set(owner.auth).send({}), 200, `${what} (items)`)
  ).items as Array<{ row_id: string }>;
  await created(
    t.http
      .put(`/runs/${id}/upload`)
      .set(owner.auth)
      .send({ results: items.map((i) => ({ row_id: i.row_id, output: outputs.output })), complete: outputs.complete }),
    202,
    `${what} (upload)`,
  );
  return { run: id, rowIds: items.map((i) => i.row_id) };
}
