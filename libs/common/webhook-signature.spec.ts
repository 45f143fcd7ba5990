import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhook } from './webhook-signature.js';

describe('webhook signatures', () => {
  const secret = 'whsec-test';
  const body = '{"event":"run.failed","run_id":"r1"}';

  it('is HMAC-SHA256 over "<t>.<body>", as a receiver recomputes it', () => {
    const header = signWebhook(secret, body, 1_700_000_000);
    expect(header).toBe(`t=1700000000,v1=${createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex')}`);
    expect(verifyWebhook(secret, body, header, 300, 1_700_000_100)).toBe(true);
  });

  it('refuses altered bodies, other secrets, stale or malformed headers', () => {
    const header = signWebhook(secret, body, 1_700_000_000);
    expect(verifyWebhook(secret, `${body} `, header, 300, 1_700_000_000)).toBe(false);
    expect(verifyWebhook('other', body, header, 300, 1_700_000_000)).toBe(false);
    expect(verifyWebhook(secret, body, header, 300, 1_700_000_301)).toBe(false);
    expect(verifyWebhook(secret, body, 'v1=abc', 300, 1_700_000_000)).toBe(false);
    expect(verifyWebhook(secret, body, 't=1700000000,v1=zz', 300, 1_700_000_000)).toBe(false);
  });
});
