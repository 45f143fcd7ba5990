import { isIP } from 'node:net';

/** express's (proxy-addr's) names for address ranges. */
export const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'] as const;

/** Why one entry of TRUSTED_PROXIES is not accepted; undefined when it is. */
function entryProblem(entry: string): string | undefined {
  if ((PROXY_RANGE_NAMES as readonly string[]).includes(entry)) return undefined;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  // Zone ids (fe80::1%eth0) are not understood by express's matcher.
  if (family === 0 || address.includes('%') || rest.length > 0) {
    return `entry "${entry}" is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of ${PROXY_RANGE_NAMES.join(', ')}`;
  }
  if (prefix === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  // A /0 would believe every client (express refuses it too).
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) < 1 || Number(prefix) > bits)
    return `entry "${entry}" has a prefix length outside 1-${bits}`;
  return undefined;
}

/**
 * The problem with a TRUSTED_PROXIES value (a comma-separated list of IP addresses, CIDR ranges
 * or range names), or undefined when every entry is well-formed.
 */
export function trustedProxiesProblem(value: string): string | undefined {
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) return 'TRUSTED_PROXIES must be a comma-separated list without empty entries';
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) return `TRUSTED_PROXIES ${problem}`;
  }
  return undefined;
}

/**
 * express's `trust proxy` setting for TRUSTED_PROXIES: the listed proxies, or false (trust no
 * X-Forwarded-* header; `req.ip` is the socket's peer) when unset.
 */
export function trustProxySetting(value: string | undefined): string[] | false {
  return value ? value.split(',').map((e) => e.trim()) : false;
}
