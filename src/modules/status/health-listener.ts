import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { DomainError } from '#libs/common/domain-error.js';
import { CommonErrors } from '#libs/common/error-codes.js';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '#libs/common/problem.js';
import type { StatusService } from './status.service.js';

function send(res: ServerResponse, status: number, type: string, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

async function answer(status: StatusService, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/live' && path !== '/ready')
    return send(
      res,
      404,
      PROBLEM_CONTENT_TYPE,
      buildProblem(CommonErrors.not_found, `${path} is not served here: a worker answers /live and /ready`),
    );
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(
      res,
      405,
      PROBLEM_CONTENT_TYPE,
      buildProblem(CommonErrors.method_not_allowed, `${req.method} ${path}: only GET and HEAD`),
      { Allow: 'GET, HEAD' },
    );
  if (path === '/live') return send(res, 200, 'application/json', status.live());
  try {
    send(res, 200, 'application/json', await status.ready());
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    send(res, 503, PROBLEM_CONTENT_TYPE, buildProblem(err.code, err.detail, err.extensions), err.headers);
  }
}

/**
 * The health probes of a process that serves no API (a worker): GET /live and GET /ready on
 * `port` of `host`, answered as the API answers them (the same StatusService, so /ready checks the
 * database and the queue and turns 503 once shutdown begins). Nothing else is served. The
 * listener does not keep the process alive.
 */
export async function serveHealth(status: StatusService, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    answer(status, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain', 'health probe failed');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
  return server;
}
