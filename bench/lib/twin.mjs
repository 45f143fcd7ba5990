// A bare twin of the product's `GET /datasets/{dataset_id}`: Express 5, a JWT check (HS256
// against a createSecretKey KeyObject, what passport-jwt does minus passport) and SQL, nothing else
// (no logger, no guard, no validation, no Nest). Run as a process of its own by bench/http-get.mjs:
//
//   node bench/lib/twin.mjs <indexed|product-sql> <postgres://… | a PGlite data directory>
//
// JWT_SECRET comes from the environment (the product's). It prints `listening <port>` once ready.
//   indexed      one indexed lookup: the dataset's row by primary key
//   product-sql  the statements the product issues for the same request (PRODUCT_SQL below),
//                in the same order and with the same concurrency
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';

const [kind, target] = process.argv.slice(2);
if (!['indexed', 'product-sql'].includes(kind) || !target) {
  console.error('usage: node bench/lib/twin.mjs <indexed|product-sql> <postgres-url | pglite-dir>');
  process.exit(2);
}

/** `query(sql, params)` answering rows: a pg pool of the product's size, or PGlite in process (one connection, as the product has). */
async function connect() {
  if (/^postgres(ql)?:/.test(target)) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: target, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
    return { query: async (sql, params) => (await pool.query(sql, params)).rows, close: () => pool.end() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { pgcrypto } = await import('@electric-sql/pglite/contrib/pgcrypto');
  const db = await PGlite.create(target, { extensions: { pgcrypto } });
  return { query: async (sql, params) => (await db.query(sql, params)).rows, close: () => db.close() };
}

/**
 * What the product sends to the database for one authenticated `GET /datasets/{id}` by a
 * workspace member, as its statement log shows. Keep in step with the product: this twin
 * measures what the framework costs around the same SQL.
 */
export const PRODUCT_SQL = async (query, claims, datasetId) => {
  const [session] = await query(
    `SELECT t.user_id, u.email, u.display_name, u.system_role, t.expires_at
       FROM auth_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.id = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND u.status = 'active'`,
    [claims.jti],
  );
  if (!session || session.user_id !== claims.sub) return undefined;
  const [owner] = await query('SELECT workspace_id FROM datasets WHERE id = $1', [datasetId]);
  if (!owner) return undefined;
  const [member] = await query(
    `SELECT m.role FROM workspaces w LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2 WHERE w.id = $1`,
    [owner.workspace_id, claims.sub],
  );
  if (!member?.role) return undefined;
  const [dataset] = await query('SELECT * FROM datasets WHERE id = $1 LIMIT 1', [datasetId]);
  const [[counts], [latest]] = await Promise.all([
    query(
      `SELECT d.id, (SELECT count(*)::int FROM dataset_versions v WHERE v.dataset_id = d.id) AS count,
              (SELECT count(*)::int FROM dataset_staged_edits s WHERE s.dataset_id = d.id) AS staged
         FROM datasets d WHERE d.id = ANY($1::uuid[])`,
      [[datasetId]],
    ),
    query('SELECT v.* FROM dataset_versions v INNER JOIN datasets d ON d.id = v.dataset_id AND d.latest_version = v.number WHERE v.dataset_id IN ($1)', [datasetId]),
  ]);
  return { ...dataset, latest_version: latest ?? null, version_count: counts.count, staged_edits: counts.staged };
};

/** One indexed lookup: the row by its primary key. */
const INDEXED_SQL = async (query, _claims, datasetId) => (await query('SELECT * FROM datasets WHERE id = $1', [datasetId]))[0];

const db = await connect();
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));
const work = kind === 'indexed' ? INDEXED_SQL : PRODUCT_SQL;
const app = express();
app.disable('x-powered-by');
app.get('/datasets/:id', async (req, res) => {
  let claims;
  try {
    claims = jwt.verify((req.headers.authorization ?? '').replace(/^Bearer /, ''), key, { algorithms: ['HS256'] });
  } catch {
    return res.status(401).json({ status: 401 });
  }
  try {
    const body = await work(db.query, claims, req.params.id);
    if (!body) return res.status(404).json({ status: 404 });
    res.json(body);
  } catch (err) {
    res.status(500).json({ status: 500, detail: String(err) });
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => db.close().then(() => process.exit(0))));
