import { describe, expect, it } from '@jest/globals';
import { SSO_LOGIN_SECONDS, SsoLoginCookie } from './sso-login-cookie.js';

const login = { state: 's1', nonce: 'n1', codeVerifier: 'v'.repeat(43), redirectUri: 'https://evals.example.com/cb' };

describe('the SSO login cookie', () => {
  const cookies = new SsoLoginCookie('a-jwt-secret');

  it('opens what it sealed, and nothing the browser can read', () => {
    const sealed = cookies.seal(login);
    expect(cookies.open(sealed)).toEqual(login);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('n1');
  });

  it('refuses an altered, foreign, expired or missing cookie', () => {
    const now = Date.now();
    const sealed = cookies.seal(login, now);
    const flipped = Buffer.from(sealed, 'base64url');
    flipped[flipped.length - 1] ^= 1;
    expect(cookies.open(flipped.toString('base64url'))).toBeUndefined();
    expect(new SsoLoginCookie('another-secret').open(sealed)).toBeUndefined();
    expect(cookies.open(sealed, now + SSO_LOGIN_SECONDS * 1000 + 1)).toBeUndefined();
    expect(cookies.open(undefined)).toBeUndefined();
    expect(cookies.open('short')).toBeUndefined();
  });
});
