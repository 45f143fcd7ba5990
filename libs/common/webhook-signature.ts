import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header outbound notifications carry, in the form Stripe made familiar: `t=<unix seconds>,v1=<hex>`. */
export const SIGNATURE_HEADER = 'X-EWS-Signature';

/** HMAC-SHA256 under the config's secret over `<t>.<body>`: the body cannot be altered nor an old delivery replayed unnoticed. */
export function signWebhook(secret: string, body: string, timestamp: number = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver does: recompute, compare in constant time, and refuse deliveries older than the tolerance. */
export function verifyWebhook(
  secret: string,
  body: string,
  header: string,
  toleranceSeconds = 300,
  now: number = Math.floor(Date.now() / 1000),
): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(now - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, body, t).split('v1=')[1], 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
