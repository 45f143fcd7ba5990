import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import pLimit, { type LimitFunction } from 'p-limit';
import { AppConfig } from '#libs/config/app-config.js';
import { DomainError } from '#libs/common/domain-error.js';
import { defineErrorCodes } from '#libs/common/error-codes.js';
import { requestContext } from '#libs/common/request-context.js';

/** Password length limits for every place that sets one. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

export const PasswordHashErrors = defineErrorCodes('auth', {
  auth_busy: {
    status: 429,
    title: 'Authentication busy',
    description:
      'Every password-hashing slot and its short queue are taken (a burst of logins); nothing was checked or counted. Retry after the seconds in Retry-After. ' +
      'Only callers without a bearer token get it: logins, reset-token grants, accepting an invitation with a password.',
  },
});

/**
 * argon2id with the library's defaults (m=64 MiB, t=3, p=4), per OWASP's recommendation.
 *
 * At most PASSWORD_HASH_CONCURRENCY hashes or verifies run at once, so a flood of guesses
 * cannot exhaust memory or stall real logins behind it. Callers without a verified bearer token
 * (anyone can send those) may wait in a short queue of PASSWORD_HASH_QUEUE; beyond it they get
 * 429 auth_busy at once. Authenticated callers (admins creating users or resetting passwords)
 * and work outside a request (the first admin at boot) always wait for a slot.
 */
@Injectable()
export class PasswordHasher {
  /** A hash that never verifies, compared against when the user does not exist (equal timing). */
  private dummy?: Promise<string>;
  private readonly slots: LimitFunction;
  private readonly queue: number;
  private readonly options: { type: typeof argon2.argon2id; memoryCost: number; timeCost: number; parallelism: number };

  constructor(config: AppConfig) {
    this.slots = pLimit(config.env.PASSWORD_HASH_CONCURRENCY);
    this.queue = config.env.PASSWORD_HASH_QUEUE ?? 2 * config.env.PASSWORD_HASH_CONCURRENCY;
    const {
      PASSWORD_HASH_MEMORY_KIB: memoryCost,
      PASSWORD_HASH_TIME_COST: timeCost,
      PASSWORD_HASH_PARALLELISM: parallelism,
    } = config.env;
    this.options = { type: argon2.argon2id, memoryCost, timeCost, parallelism };
  }

  hash(password: string): Promise<string> {
    return this.gated(() => argon2.hash(password, this.options));
  }

  verify(hash: string | null | undefined, password: string): Promise<boolean> {
    return this.gated(async () => {
      const target = hash ?? (await (this.dummy ??= argon2.hash('not-a-real-password', this.options)));
      try {
        return (await argon2.verify(target, password)) && !!hash;
      } catch {
        return false;
      }
    });
  }

  /**
   * Throws 429 auth_busy when this caller would be refused a slot now: lets a login refuse a
   * burst before it spends queries on it. hash() and verify() check again.
   */
  ensureCapacity(): void {
    if (this.slots.activeCount + this.slots.pendingCount < this.slots.concurrency + this.queue) return;
    const ctx = requestContext.getStore();
    if (ctx && !ctx.userId) throw busy();
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    this.ensureCapacity();
    return this.slots(work);
  }
}

function busy(): DomainError {
  return new DomainError(
    PasswordHashErrors.auth_busy,
    'Too many logins are being checked at once; retry in a second',
    { retry_after_seconds: 1 },
    { 'Retry-After': '1' },
  );
}
