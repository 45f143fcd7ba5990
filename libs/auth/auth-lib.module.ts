import { Global, Module } from '@nestjs/common';
import { createSecretKey } from 'node:crypto';
import { AppConfig } from '#libs/config/app-config.js';
import { APP_GUARD } from '@nestjs/core';
import { MediaTypeGuard } from '#libs/common/media-type.guard.js';
import { JwtModule } from '@nestjs/jwt';
import { AccessCache } from './access-cache.js';
import { AccessGuard } from './access.guard.js';
import { AccessRepository } from './access.repository.js';
import { ApiKeyVerifier } from './api-key-verifier.js';
import { PasswordHasher } from './password-hasher.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RateLimiter } from './rate-limiter.js';
import { SessionRepository } from './session.repository.js';
import { TokenSigner } from './token-signer.js';
import { WorkspaceResourceRegistry } from './workspace-resource.registry.js';
import { ApiKeyAccess } from './workspace-access.js';

/** What the families use of the library: provided here and exported as they are. */
const SHARED = [
  AccessCache,
  AccessRepository,
  ApiKeyVerifier,
  ApiKeyAccess,
  WorkspaceResourceRegistry,
  TokenSigner,
  PasswordHasher,
  RateLimiter,
  SessionRepository,
];

/** Authentication and authorization shared by every family; the guard is global. */
@Global()
@Module({
  imports: [
    // HS256 with the key as a KeyObject made once: given the secret as a string, jsonwebtoken
    // makes one (createSecretKey) on every sign and verify, which cost more CPU than the rest of
    // an authenticated GET together (bench/http-get.mjs, docs/performance.md#an-authenticated-get-of-a-record).
    JwtModule.registerAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const key = createSecretKey(Buffer.from(config.keys.jwtSecret, 'utf8'));
        return {
          secretOrKeyProvider: () => key,
          signOptions: { algorithm: 'HS256' },
          verifyOptions: { algorithms: ['HS256'] },
        };
      },
    }),
  ],
  providers: [
    ...SHARED,
    { provide: APP_GUARD, useClass: AccessGuard },
    // Right after the access guard: the caller is known, and a refusal by the checks below counts too.
    { provide: APP_GUARD, useClass: RateLimitGuard },
    // After the access guard, so a request without a token is 401 whatever its Content-Type.
    { provide: APP_GUARD, useClass: MediaTypeGuard },
  ],
  exports: SHARED,
})
export class AuthLibModule {}
