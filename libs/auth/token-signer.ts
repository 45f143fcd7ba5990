import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '#libs/config/app-config.js';

export interface TokenClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
}

/** Signs the service's bearer tokens (HS256 JWTs); each token's jti is a revocable session. */
@Injectable()
export class TokenSigner {
  /**
   * Tokens whose signature has been checked, by their exact text: a request with a token seen
   * before skips the HMAC, the base64 and the JSON parse (jsonwebtoken: about 4 % of a GET's CPU).
   * Expiry is checked on every use; revocation is the session's business (AccessGuard).
   */
  private readonly verified = new LRUCache<string, Readonly<TokenClaims>>({ max: 10_000 });

  constructor(
    private readonly jwt: JwtService,
    private readonly config: AppConfig,
  ) {}

  sign(userId: string): { token: string; tokenId: string; expiresAt: Date; ttlSeconds: number } {
    const tokenId = randomUUID();
    const ttlSeconds = this.config.env.TOKEN_TTL_SECONDS;
    // The key is the module's (auth-lib.module.ts): HS256 with JWT_SECRET.
    const token = this.jwt.sign({ sub: userId }, { jwtid: tokenId, expiresIn: ttlSeconds, algorithm: 'HS256' });
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
    return { token, tokenId, expiresAt, ttlSeconds };
  }

  /** The claims of a well-signed, unexpired token; undefined otherwise. */
  verify(token: string): Readonly<TokenClaims> | undefined {
    try {
      return this.claims(token);
    } catch {
      return undefined;
    }
  }

  /** The claims of a well-signed (HS256), unexpired token; throws jsonwebtoken's error otherwise (`TokenExpiredError` when expired). */
  claims(token: string): Readonly<TokenClaims> {
    const known = this.verified.get(token);
    // An expired one is verified again, so that jsonwebtoken throws its TokenExpiredError.
    if (known && known.exp * 1000 > Date.now()) return known;
    const claims = Object.freeze(this.jwt.verify<TokenClaims>(token, { algorithms: ['HS256'] }));
    this.verified.set(token, claims);
    return claims;
  }
}
