import { Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '#libs/config/app-config.js';
import { DomainError } from './domain-error.js';
import { CommonErrors } from './error-codes.js';

export interface SignedUrl {
  url: string;
  expires_at: Date;
}

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/**
 * URLs the service itself serves without a bearer token (downloads): an HMAC-SHA256 under the
 * URL-signing key over the path, the signed query parameters (sorted) and the expiry. Changing
 * any of them, or using the URL after `expires`, fails the check.
 */
@Injectable()
export class UrlSigner {
  constructor(private readonly config: AppConfig) {}

  /** A URL to `path` signed with `params`, at the caller's origin (`@RequestOrigin()`) unless PUBLIC_BASE_URL names the service's. */
  sign(origin: string, path: string, params: Record<string, string>, ttlSeconds: number): SignedUrl {
    const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
    const query = new URLSearchParams({ ...params, expires: String(expires) });
    query.sort();
    query.set('signature', this.mac(path, query));
    return { url: `${this.baseUrl(origin)}${path}?${query.toString()}`, expires_at: new Date(expires * 1000) };
  }

  /** Throws 403 invalid_signature or url_expired unless the query signs this path and has not expired. */
  assertValid(path: string, rawQuery: Record<string, unknown>): void {
    const check = this.check(path, rawQuery);
    if (check === 'invalid')
      throw new DomainError(CommonErrors.invalid_signature, 'The URL signature does not match; ask for a new URL');
    if (check === 'expired') throw new DomainError(CommonErrors.url_expired, 'The URL has expired; ask for a new one');
  }

  check(path: string, rawQuery: Record<string, unknown>): SignatureCheck {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(rawQuery)) {
      if (typeof value !== 'string') return 'invalid';
      if (key !== 'signature') query.set(key, value);
    }
    query.sort();
    const given = Buffer.from(typeof rawQuery.signature === 'string' ? rawQuery.signature : '', 'utf8');
    const expected = Buffer.from(this.mac(path, query), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    const expires = Number(query.get('expires'));
    return Number.isFinite(expires) && expires * 1000 > Date.now() ? 'valid' : 'expired';
  }

  private mac(path: string, query: URLSearchParams): string {
    return createHmac('sha256', this.config.keys.urlSigningKey)
      .update(`GET\n${path}\n${query.toString()}`)
      .digest('base64url');
  }

  private baseUrl(origin: string): string {
    const configured = this.config.env.PUBLIC_BASE_URL;
    return configured ? configured.replace(/\/$/, '') : origin;
  }
}
