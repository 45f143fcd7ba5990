// A bare twin of the product's `GET /datasets/{dataset_id}`: Express 5, a JWT check (HS256
// against a createSecretKey KeyObject, what passport-jwt does minus passport) and SQL, nothing else
// (no logger, no guard, no validation, no Nest). Run as a process of its own by bench/http-get.mjs:
//
//   node bench/lib/twin.mjs <indexed|product-sql> <postgres://… | a PGlite data directory>
//
// JWT_SECRET comes from the environment (the product's). It prints `listening <port>` once ready.
//   indexed      one indexed lookup: the dataset's row by primary key
//   product-sql  the statements the product issues for the same request (PRODUCT_SQL below),
//                in the same order and with the same concurrency: warm, the dataset's only
//   nest-sql     the same statements in a bare NestJS app on the product's stack (NestJS 12 on
//                Express, a global guard checking the JWT, one controller, Nest's logger off):
//                what the framework alone costs, with none of the product's own pipeline
import { createSecretKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { sessionWithAccessSql } from '#libs/auth/access.repository.js';
import { DATASET_VIEW_SQL } from '#src/modules/datasets/datasets.repository.js';

const [kind, target] = process.argv.slice(2);
if (!['indexed', 'product-sql', 'nest-sql'].includes(kind) || !target) {
  console.error('usage: node bench/lib/twin.mjs <indexed|product-sql|nest-sql> <postgres-url | pglite-dir>');
  process.exit(2);
}

/** `query(sql, params)` answering rows: a pg pool of the product's size, or PGlite in process (one connection, as the product has). */
async function connect() {
  if (/^postgres(ql)?:/.test(target)) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: target, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
    // A named statement is prepared once per connection, as the product's Db.prepared does.
    return {
      query: async (sql, params, name) =>
        (await pool.query(name ? { name, text: sql, values: params } : { text: sql, values: params })).rows,
      close: () => pool.end(),
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { pgcrypto } = await import('@electric-sql/pglite/contrib/pgcrypto');
  const db = await PGlite.create(target, { extensions: { pgcrypto } });
  // PGlite's own query() has no named statements: each is parsed and planned again.
  return { query: async (sql, params) => (await db.query(sql, params)).rows, close: () => db.close() };
}

/**
 * What the product sends to the database for one authenticated `GET /datasets/{id}` by a
 * workspace member: the guard's statement (AccessRepository.findSessionWithAccess) and the
 * service's (DatasetsRepository.findView), their text taken from the build, so this twin
 * measures what the framework costs around the same SQL. As in the product, what the guard's
 * statement found is kept in memory (the product's AccessCache) by token and dataset, so a warm
 * request issues only the dataset's statement.
 */
const kept = new Map();
export const PRODUCT_SQL = async (query, claims, datasetId) => {
  const key = `${claims.jti} ${datasetId}`;
  let workspaceId = kept.get(key);
  if (!workspaceId) {
    const [session] = await query(sessionWithAccessSql('datasets'), [claims.jti, datasetId], 'session_access_datasets');
    if (!session || session.user_id !== claims.sub || !session.target_workspace_id || !session.member_role)
      return undefined;
    workspaceId = session.target_workspace_id;
    kept.set(key, workspaceId);
  }
  const [view] = await query(DATASET_VIEW_SQL, [datasetId, workspaceId], 'dataset_view');
  return view;
};

/** One indexed lookup: the row by its primary key. */
const INDEXED_SQL = async (query, _claims, datasetId) =>
  (await query('SELECT * FROM datasets WHERE id = $1', [datasetId]))[0];

const db = await connect();
const key = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? '', 'utf8'));
const work = kind === 'indexed' ? INDEXED_SQL : PRODUCT_SQL;
const verify = (authorization) =>
  jwt.verify((authorization ?? '').replace(/^Bearer /, ''), key, { algorithms: ['HS256'] });

/** A bare NestJS app answering GET /datasets/:id: decorators applied by hand (this file is JavaScript). */
async function nestServer() {
  const common = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  class JwtGuard {
    canActivate(context) {
      const req = context.switchToHttp().getRequest();
      try {
        req.claims = verify(req.headers.authorization);
        return true;
      } catch {
        throw new common.UnauthorizedException();
      }
    }
  }
  class DatasetsTwin {
    async get(id, req) {
      const body = await work(db.query, req.claims, id);
      if (!body) throw new common.NotFoundException();
      return body;
    }
  }
  common.Param('id')(DatasetsTwin.prototype, 'get', 0);
  common.Req()(DatasetsTwin.prototype, 'get', 1);
  common.Get(':id')(DatasetsTwin.prototype, 'get', Object.getOwnPropertyDescriptor(DatasetsTwin.prototype, 'get'));
  common.Controller('datasets')(DatasetsTwin);
  class TwinModule {}
  common.Module({ controllers: [DatasetsTwin] })(TwinModule);
  const app = await NestFactory.create(TwinModule, { logger: false });
  app.useGlobalGuards(new JwtGuard());
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  await app.listen(0, '127.0.0.1');
  return app.getHttpServer();
}

function expressServer() {
  const app = express();
  app.disable('x-powered-by');
  app.get('/datasets/:id', async (req, res) => {
    let claims;
    try {
      claims = verify(req.headers.authorization);
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
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const server = kind === 'nest-sql' ? await nestServer() : await expressServer();
console.log(`listening ${server.address().port}`);
process.on('SIGTERM', () => server.close(() => db.close().then(() => process.exit(0))));
