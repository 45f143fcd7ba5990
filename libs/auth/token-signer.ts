import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';

export interface TokenClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
}

/** Signs the service's bearer tokens (HS256 JWTs); each token's jti is a revocable session. */
@Injectable()
export class TokenSigner {
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
  verify(token: string): TokenClaims | undefined {
    try {
      return this.claims(token);
    } catch {
      return undefined;
    }
  }

  /** The claims of a well-signed (HS256), unexpired token; throws jsonwebtoken's error otherwise (`TokenExpiredError` when expired). */
  claims(token: string): TokenClaims {
    return this.jwt.verify<TokenClaims>(token, { algorithms: ['HS256'] });
  }
}
