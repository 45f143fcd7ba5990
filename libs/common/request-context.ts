import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
  userId?: string;
  /** The API key the caller authenticated with, if any (audit entries name it). */
  apiKeyId?: string;
  /** Work nobody waits on: a job run by a worker (its context names the job). Queued behind requests for a connection (libs/database/priority-pool.ts). */
  background?: boolean;
}

/** Carries the request id (and caller) to every log line written while serving a request. */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentApiKeyId(): string | undefined {
  return requestContext.getStore()?.apiKeyId;
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
