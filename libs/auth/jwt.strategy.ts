import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AppConfig } from '../../src/config/app-config.js';
import { UnauthenticatedError } from '../common/domain-error.js';
import { AccessRepository } from './access.repository.js';
import type { Principal } from './roles.js';
import type { TokenClaims } from './token-signer.js';

/** Verifies the bearer JWT, then checks its session is live (not logged out, user active). */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    config: AppConfig,
    private readonly access: AccessRepository,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: config.keys.jwtSecret,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  async validate(claims: TokenClaims): Promise<Principal> {
    if (!claims.jti || !claims.sub) throw new UnauthenticatedError('The token is malformed');
    const session = await this.access.findActiveSession(claims.jti);
    if (!session || session.userId !== claims.sub) {
      throw new UnauthenticatedError('The token has been revoked, or its user is deactivated');
    }
    return {
      userId: session.userId,
      email: session.email,
      displayName: session.displayName,
      systemRole: session.systemRole,
      tokenId: claims.jti,
      tokenExpiresAt: session.expiresAt,
    };
  }
}
