import { Injectable } from '@nestjs/common';
import { UnauthenticatedError } from '#libs/common/domain-error.js';
import type { AccessTarget, Standing } from './access.repository.js';
import type { Principal } from './roles.js';

/** Every API key starts with this; the guard tells keys from JWTs by it. */
export const API_KEY_PREFIX = 'ews_';

/**
 * Checks an API key and answers the principal it acts as, or throws UnauthenticatedError. Given
 * the route's target, it answers the key creator's standing towards it too, found by the same
 * statement (one round trip, as for a user's token).
 */
export type ApiKeyCheck = (
  key: string,
  client: { ip?: string },
  target?: AccessTarget,
) => Promise<{ principal: Principal; standing?: Standing }>;

/**
 * The guard accepts `Authorization: Bearer ews_...` through the check the API keys family
 * registers here (the family owns the keys' table; the guard only asks).
 */
@Injectable()
export class ApiKeyVerifier {
  private check?: ApiKeyCheck;

  register(check: ApiKeyCheck): void {
    if (this.check) throw new Error('the API key check is registered twice');
    this.check = check;
  }

  verify(
    key: string,
    client: { ip?: string },
    target?: AccessTarget,
  ): Promise<{ principal: Principal; standing?: Standing }> {
    if (!this.check) throw new UnauthenticatedError('This process does not accept API keys');
    return this.check(key, client, target);
  }
}

/** The API key in an `Authorization: Bearer ews_...` header, if that is what was sent. */
export function bearerApiKey(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1].startsWith(API_KEY_PREFIX) ? match[1] : undefined;
}
