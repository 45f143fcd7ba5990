import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Names this process among the workers (`host:pid:random`) and hands out one claim token per
 * claim (`<worker>#<n>`), stored as the job's `lease_owner`: a lease is one claim, so even two
 * attempts of the same job in the same process cannot act for each other.
 */
export class WorkerIdentity {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private claims = 0;

  nextClaimToken(): string {
    this.claims += 1;
    return `${this.workerId}#${this.claims}`;
  }
}
