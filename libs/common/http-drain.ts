import type { Server } from 'node:http';
import type { Request, Response } from 'express';
import { CommonErrors } from './error-codes.js';
import { buildProblem, writeProblem } from './problem.js';

/** Where a long-lived response (a Server-Sent Events stream) keeps how to end it when the server drains. */
const END_ON_DRAIN = Symbol('endOnDrain');

/** Ends `res` when a shutdown drains the server, instead of holding the shutdown for the whole grace period. */
export function endOnDrain(res: Response, end: () => void): void {
  (res.locals as Record<symbol, () => void>)[END_ON_DRAIN] = end;
}

/** Still answered while draining: the probes say what is going on. */
const PROBE_PATHS = new Set(['/live', '/ready']);

export interface InFlightRequest {
  method: string;
  path: string;
  request_id?: string;
  age_ms: number;
}

/**
 * The HTTP side of a bounded shutdown. Knows the requests in flight; on `drain` the server stops
 * accepting connections, running requests get the grace period and answer with
 * `Connection: close`, and a request that still arrives on an open connection is answered 503
 * (`Connection: close`; the probes still answer, /ready with 503). `closeConnections` then
 * destroys whatever is left.
 */
export class HttpDrain {
  private draining = false;
  private readonly inFlight = new Map<Response, { method: string; path: string; started: number }>();
  private onIdle?: () => void;

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Called first for every request (http-pipeline's requestMiddleware), which calls `done` once its
   * response closes. While draining, a request other than a probe is answered 503 here and `admit`
   * answers false: nothing else may handle it.
   */
  admit(req: Request, res: Response): boolean {
    if (this.draining) {
      res.setHeader('Connection', 'close');
      if (!PROBE_PATHS.has(req.path)) {
        writeProblem(
          res,
          buildProblem(CommonErrors.service_unavailable, 'The service is shutting down; retry on another instance'),
          { 'Retry-After': '5' },
        );
        return false;
      }
    }
    this.inFlight.set(res, { method: req.method, path: req.originalUrl.split('?')[0], started: Date.now() });
    return true;
  }

  /** The response of an admitted request closed. */
  done(res: Response): void {
    this.inFlight.delete(res);
    if (!this.inFlight.size) this.onIdle?.();
  }

  pending(): InFlightRequest[] {
    const now = Date.now();
    return [...this.inFlight].map(([res, r]) => {
      const requestId = res.getHeader('X-Request-Id');
      return {
        method: r.method,
        path: r.path,
        ...(requestId ? { request_id: String(requestId) } : {}),
        age_ms: now - r.started,
      };
    });
  }

  /** Stops accepting connections and waits up to `graceMs` for the requests in flight; returns those left. */
  async drain(server: Server, graceMs: number): Promise<InFlightRequest[]> {
    this.draining = true;
    if (server.listening) server.close();
    server.closeIdleConnections();
    // Node keeps a connection open after its response even once the server is closed: these end with it.
    for (const res of this.inFlight.keys()) if (!res.headersSent) res.setHeader('Connection', 'close');
    for (const res of [...this.inFlight.keys()])
      (res.locals as Record<symbol, (() => void) | undefined>)[END_ON_DRAIN]?.();
    if (this.inFlight.size) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.onIdle = undefined;
    }
    return this.pending();
  }

  /** Destroys every connection left (the requests still running lose theirs). */
  closeConnections(server: Server): void {
    server.closeAllConnections();
  }
}
