import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { JwtService } from '@nestjs/jwt';
import { createSecretKey } from 'node:crypto';
import type { AppConfig } from '#libs/config/app-config.js';
import { TokenSigner } from './token-signer.js';

/** TokenSigner remembers tokens it has verified by their text; expiry, tampering and other keys still fail. */
describe('TokenSigner', () => {
  const key = createSecretKey(Buffer.from('a-secret-of-the-tests-32-bytes-long', 'utf8'));
  const signerWith = (k = key, ttl = 60) =>
    new TokenSigner(new JwtService({ secretOrKeyProvider: () => k }), {
      env: { TOKEN_TTL_SECONDS: ttl },
    } as unknown as AppConfig);

  afterEach(() => {
    jest.useRealTimers();
  });

  it('answers the claims of a token it signed, twice the same (the second from memory)', () => {
    const signer = signerWith();
    const { token, tokenId } = signer.sign('user-1');
    const first = signer.claims(token);
    expect(first).toMatchObject({ sub: 'user-1', jti: tokenId });
    expect(signer.claims(token)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('refuses a token once it has expired, though it was verified before', () => {
    jest.useFakeTimers({ now: new Date('2026-11-25T00:00:00Z'), doNotFake: ['nextTick', 'setImmediate'] });
    const signer = signerWith(key, 60);
    const { token } = signer.sign('user-1');
    expect(signer.claims(token).sub).toBe('user-1');
    jest.setSystemTime(new Date('2026-11-25T00:01:00Z'));
    expect(() => signer.claims(token)).toThrow(expect.objectContaining({ name: 'TokenExpiredError' }));
    expect(signer.verify(token)).toBeUndefined();
  });

  it('refuses a token with a changed payload or signature, and one signed with another key', () => {
    const signer = signerWith();
    const { token } = signer.sign('user-1');
    signer.claims(token);
    const [header, payload, signature] = token.split('.');
    const otherPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'user-2' }),
    ).toString('base64url');
    expect(signer.verify(`${header}.${otherPayload}.${signature}`)).toBeUndefined();
    expect(signer.verify(`${header}.${payload}.${signature.slice(0, -2)}AA`)).toBeUndefined();
    const foreign = signerWith(createSecretKey(Buffer.from('another-secret-of-32-bytes-or-more!', 'utf8'))).sign(
      'user-1',
    );
    expect(signer.verify(foreign.token)).toBeUndefined();
  });
});
