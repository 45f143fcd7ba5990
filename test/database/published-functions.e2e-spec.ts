import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Db } from '#libs/database/unit-of-work.js';
import { openScratchDatabase, type ScratchDatabase } from '../utils/scratch-database.js';

/**
 * The SQL functions a family publishes (docs/architecture.md#what-families-offer-each-other):
 * the same rows as the tables they read, and inlined, so a caller's plan is the one it had when it
 * named the tables itself.
 */
describe('published functions', () => {
  let scratch: ScratchDatabase;
  let db: Db;
  let dataset: string;

  /** The plan without costs, as lines. */
  const plan = async (sql: string, params: unknown[]) =>
    ((await db.query(`EXPLAIN (COSTS OFF) ${sql}`, params)) as Array<{ 'QUERY PLAN': string }>).map(
      (r) => r['QUERY PLAN'],
    );

  beforeAll(async () => {
    scratch = await openScratchDatabase('published');
    await scratch.dataSource.runMigrations({ transaction: 'each' });
    db = new Db(scratch.dataSource);
    const one = async (sql: string, params: unknown[] = []) =>
      ((await db.query(sql, params)) as Array<{ id: string }>)[0].id;
    const workspace = await one(`INSERT INTO workspaces (name) VALUES ('w') RETURNING id`);
    dataset = await one(`INSERT INTO datasets (workspace_id, name) VALUES ($1, 'd') RETURNING id`, [workspace]);
    // 300 rows added in version 1; every 7th removed in 2; 20 more added in 3; every other row has a topic.
    await db.query(
      `INSERT INTO dataset_rows (dataset_id, row_id, added_in, removed_in, ordinal, data)
       SELECT $1, gen_random_uuid(), CASE WHEN g > 300 THEN 3 ELSE 1 END, CASE WHEN g % 7 = 0 AND g <= 300 THEN 2 END, g,
              jsonb_build_object('q', 'question ' || g)
         FROM generate_series(1, 320) g`,
      [dataset],
    );
    await db.query(`INSERT INTO dataset_dimensions (dataset_id, name) VALUES ($1, 'topic'), ($1, 'tone')`, [dataset]);
    await db.query(
      `INSERT INTO dataset_row_dimensions (dataset_id, row_id, dimension, value)
       SELECT dataset_id, row_id, 'topic', 't' || (ordinal % 3) FROM dataset_rows WHERE dataset_id = $1 AND ordinal % 2 = 0
       UNION ALL
       SELECT dataset_id, row_id, 'tone', 'warm' FROM dataset_rows WHERE dataset_id = $1 AND ordinal % 5 = 0`,
      [dataset],
    );
    await db.query('ANALYZE dataset_rows');
    await db.query('ANALYZE dataset_row_dimensions');
  });

  afterAll(async () => {
    await scratch?.close();
  });

  const direct = `SELECT r.row_id, r.ordinal, r.data,
         (SELECT coalesce(jsonb_object_agg(d.dimension, d.value), '{}'::jsonb) FROM dataset_row_dimensions d WHERE d.dataset_id = r.dataset_id AND d.row_id = r.row_id) AS dimensions
    FROM dataset_rows r WHERE r.dataset_id = $1 AND r.added_in <= $2 AND (r.removed_in IS NULL OR r.removed_in > $2)`;
  const published = 'SELECT r.row_id, r.ordinal, r.data, r.dimensions FROM dataset_version_rows($1, $2) r';

  it("dataset_version_rows answers a version's visible rows in each version, with their dimension values", async () => {
    for (const [version, visible] of [
      [1, 300],
      [2, 258],
      [3, 278],
    ]) {
      const expected = await db.query(`${direct} ORDER BY r.ordinal`, [dataset, version]);
      const got = await db.query(`${published} ORDER BY r.ordinal`, [dataset, version]);
      expect(got).toEqual(expected);
      expect(got).toHaveLength(visible);
    }
    const [first] = (await db.query(`${published} WHERE r.ordinal = 10`, [dataset, 3])) as Array<{
      dimensions: Record<string, string>;
    }>;
    expect(first.dimensions).toEqual({ topic: 't1', tone: 'warm' });
  });

  it('dataset_version_rows is inlined: the plan is the one of the tables, with no function scan', async () => {
    for (const tail of ['ORDER BY r.ordinal LIMIT 20', 'AND r.data @> \'{"q": "question 4"}\' ORDER BY r.ordinal']) {
      const where = tail.startsWith('AND') ? ` WHERE TRUE ${tail}` : ` ${tail}`;
      const expected = await plan(`${direct} ${tail}`, [dataset, 2]);
      const got = await plan(`${published}${where}`, [dataset, 2]);
      expect(got.join('\n')).not.toContain('Function Scan');
      expect(got).toEqual(expected);
    }
  });

  it("trace_score_of answers a trace's newest score of an evaluator's metric, and is inlined beside the rows", async () => {
    const workspace = (
      (await db.query(`SELECT workspace_id AS id FROM datasets WHERE id = $1`, [dataset])) as Array<{ id: string }>
    )[0].id;
    // Trace t1: version 1 then version 2 of "quality"; t2: only an error; 400 other traces' scores around them.
    await db.query(
      `INSERT INTO trace_scores (workspace_id, dataset_id, evaluator_id, evaluator_name, evaluator_version, level, target_key,
                                 trace_id, metric, score, passed, label, error, observed_at)
       VALUES ($1, $2, gen_random_uuid(), 'quality', 1, 'trace', 't1', 't1', 'helpfulness', 0.9, true, 'good', NULL, now()),
              ($1, $2, gen_random_uuid(), 'quality', 2, 'trace', 't1', 't1', 'helpfulness', 0.2, false, 'bad', NULL, now()),
              ($1, $2, gen_random_uuid(), 'quality', 1, 'trace', 't2', 't2', 'helpfulness', NULL, NULL, NULL, 'timeout', now())`,
      [workspace, dataset],
    );
    await db.query(
      `INSERT INTO trace_scores (workspace_id, dataset_id, evaluator_id, evaluator_name, evaluator_version, level, target_key,
                                 trace_id, metric, score, passed, observed_at)
       SELECT $1, $2, gen_random_uuid(), 'quality', 1, 'trace', 'x' || g, 'x' || g, 'helpfulness', g / 400.0, g % 2 = 0, now()
         FROM generate_series(1, 400) g`,
      [workspace, dataset],
    );
    await db.query('ANALYZE trace_scores');
    const of = (trace: string) =>
      db.query(`SELECT s FROM trace_score_of($1, $2, 'quality', 'helpfulness') s`, [dataset, trace]);
    expect(await of('t1')).toEqual([{ s: { score: 0.2, passed: false, label: 'bad' } }]);
    expect(await of('t2')).toEqual([{ s: { score: null, passed: null, label: null } }]);
    expect(await of('t3')).toEqual([]);
    // As the query language calls it: per row, in a FROM clause of a scalar subquery.
    const direct = await plan(
      `SELECT r.row_id FROM dataset_rows r WHERE r.dataset_id = $1 AND coalesce((SELECT (v.s->>'passed')::boolean FROM (
         SELECT jsonb_build_object('score', s.score, 'passed', s.passed, 'label', s.label) AS s FROM trace_scores s
          WHERE s.dataset_id = r.dataset_id AND s.trace_id = r.data->>'q' AND s.evaluator_name = $2 AND s.metric = $3
          ORDER BY s.evaluator_version DESC, s.scored_at DESC, s.id LIMIT 1) v), false)`,
      [dataset, 'quality', 'helpfulness'],
    );
    const published = await plan(
      `SELECT r.row_id FROM dataset_rows r WHERE r.dataset_id = $1 AND coalesce((SELECT (v.s->>'passed')::boolean
         FROM trace_score_of(r.dataset_id, r.data->>'q', $2::text, $3::text) AS v(s)), false)`,
      [dataset, 'quality', 'helpfulness'],
    );
    expect(published.join('\n')).not.toContain('Function Scan');
    expect(published.join('\n')).toContain('trace_scores_of_idx');
    expect(published).toEqual(direct);
  });

  it("user_identities answers who a user is, and the API key check's join on it is the join on users", async () => {
    const user = (
      (await db.query(
        `INSERT INTO users (email, display_name, status) VALUES ('ada@example.com', 'Ada', 'deactivated') RETURNING id`,
      )) as Array<{ id: string }>
    )[0].id;
    expect(
      await db.query('SELECT email, display_name, system_role, active FROM user_identities() WHERE id = $1', [user]),
    ).toEqual([{ email: 'ada@example.com', display_name: 'Ada', system_role: 'user', active: false }]);
    const direct = await plan(
      `SELECT k.id, u.email, u.system_role, u.status = 'active' AS active FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1`,
      ['abc'],
    );
    const published = await plan(
      'SELECT k.id, u.email, u.system_role, u.active FROM api_keys k JOIN user_identities() u ON u.id = k.user_id WHERE k.prefix = $1',
      ['abc'],
    );
    expect(published.join('\n')).not.toContain('Function Scan');
    expect(published).toEqual(direct);
  });
});
