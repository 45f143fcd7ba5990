import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../../src/config/app-config.js';

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
    const token = this.jwt.sign({ sub: userId }, { jwtid: tokenId, expiresIn: ttlSeconds, secret: this.config.keys.jwtSecret, algorithm: 'HS256' });
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttlSeconds) * 1000);
    return { token, tokenId, expiresAt, ttlSeconds };
  }

  /** The claims of a well-signed, unexpired token; undefined otherwise. */
  verify(token: string): TokenClaims | undefined {
    try {
      return this.jwt.verify<TokenClaims>(token, { secret: this.config.keys.jwtSecret, algorithms: ['HS256'] });
    } catch {
      return undefined;
    }
  }
}
