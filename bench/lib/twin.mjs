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
  // AccessRepository.findSessionWithAccess for a record of a table-registered kind.
  const [session] = await query(
    `SELECT t.user_id, u.email, u.display_name, u.system_role, t.expires_at,
            r.workspace_id AS workspace_id, w.id IS NOT NULL AS workspace_exists, m.role
       FROM auth_tokens t JOIN users u ON u.id = t.user_id
       LEFT JOIN datasets r ON r.id = $2 LEFT JOIN workspaces w ON w.id = r.workspace_id
       LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = t.user_id
      WHERE t.id = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND u.status = 'active'`,
    [claims.jti, datasetId],
  );
  if (!session || session.user_id !== claims.sub || !session.workspace_id || !session.role) return undefined;
  // DatasetsRepository.findView.
  const [view] = await query(
    `SELECT d.id, d.workspace_id, d.name, d.description, d.kind, d.tags, d.current_version_id, d.created_by, d.created_at, d.updated_at, d.version,
            (SELECT count(*)::int FROM dataset_versions c WHERE c.dataset_id = d.id) AS version_count,
            (SELECT count(*)::int FROM dataset_staged_edits s WHERE s.dataset_id = d.id) AS staged_edits,
            v.id AS v_id, v.number AS v_number, v.state AS v_state, v.message AS v_message, v.source AS v_source,
            v.parent_version_id AS v_parent_version_id, v.row_count AS v_row_count,
            jsonb_path_query_array(v.columns, '$[*].name') AS v_column_names, v.mapping AS v_mapping,
            v.content_sha256 AS v_content_sha256, v.upload AS v_upload, v.changes AS v_changes, v.created_by AS v_created_by,
            v.created_at AS v_created_at, v.promoted_at AS v_promoted_at, v.retired_at AS v_retired_at
       FROM datasets d LEFT JOIN dataset_versions v ON v.dataset_id = d.id AND v.number = d.latest_version
      WHERE d.id = $1 AND d.workspace_id = $2`,
    [datasetId, session.workspace_id],
  );
  return view;
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
