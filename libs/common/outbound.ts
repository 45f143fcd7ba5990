/**
 * Every call the service makes to a URL a workspace chose (SUTs, judges, embeddings, custom ops,
 * webhooks, trace sources) goes through `outboundFetch`. The address is checked when the socket
 * connects, after DNS resolution, so a name that resolves (or rebinds) to a forbidden address is
 * refused too. Link-local and cloud metadata addresses are never called: a SUT or trace source
 * pointed at 169.254.169.254 would otherwise hand the host's cloud credentials to a tenant.
 * Loopback and private ranges are refused when OUTBOUND_BLOCK_PRIVATE is on (self-hosted teams
 * usually evaluate systems on their private network, so it is off by default).
 */
import ipaddr from 'ipaddr.js';
import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import {
  Agent,
  buildConnector,
  type Dispatcher,
  fetch as undiciFetch,
  interceptors,
  request as undiciRequest,
} from 'undici';

export interface OutboundPolicy {
  blockPrivate: boolean;
}

/** Ranges (ipaddr.js names) never called, whatever the policy. */
const ALWAYS_BLOCKED = new Set(['linkLocal', 'unspecified', 'multicast', 'broadcast']);
/** Metadata services outside link-local: AWS over IPv6, Alibaba Cloud. */
const METADATA_ADDRESSES = new Set(['fd00:ec2::254', '100.100.100.200']);
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

let policy: OutboundPolicy = { blockPrivate: false };
let agent: Agent | null = null;
let following: Dispatcher | null = null;

/** Sets the policy of this process (the composition root calls it with the configuration). */
export function configureOutbound(next: OutboundPolicy): void {
  if (agent && next.blockPrivate === policy.blockPrivate) return;
  policy = { ...next };
  void agent?.close();
  agent = null;
  following = null;
}

/** Why calling `address` is refused, or null when it is allowed. */
export function outboundRefusal(address: string, p: OutboundPolicy = policy): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return null;
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const normal = ip.toNormalizedString();
  const canonical = ip.kind() === 'ipv6' ? ipaddr.IPv6.parse(normal).toString() : normal;
  const range = ip.range();
  if (METADATA_ADDRESSES.has(canonical) || ALWAYS_BLOCKED.has(range))
    return `${address} is a ${METADATA_ADDRESSES.has(canonical) ? 'cloud metadata' : range} address; the service never calls one`;
  if (p.blockPrivate && PRIVATE_RANGES.has(range))
    return `${address} is a ${range} address and OUTBOUND_BLOCK_PRIVATE is on`;
  return null;
}

class OutboundBlocked extends Error {
  readonly code = 'EOUTBOUND_BLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that refuses a name when any of its addresses is refused. */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.map((a) => outboundRefusal(a.address)).find((r) => r !== null);
    if (refused) return callback(new OutboundBlocked(`${hostname}: ${refused}`), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

function guardedAgent(): Agent {
  if (agent) return agent;
  const connect = buildConnector({ lookup: guardedLookup as never });
  agent = new Agent({
    connect: (options, callback) => {
      // An address written in the URL is never looked up: check it here.
      const host = options.hostname.replace(/^\[|\]$/g, '');
      const refused = isIP(host) ? outboundRefusal(host) : null;
      if (refused) return callback(new OutboundBlocked(refused), null);
      connect(options, callback);
    },
  });
  return agent;
}

/** What `outboundRequest` answers: the status, the whole body as text, and a header by its name. */
export interface OutboundResponse {
  status: number;
  text: string;
  header(name: string): string | null;
}

export interface OutboundRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Aborts the call, the body's reading included. */
  signal?: AbortSignal;
}

/** Redirects are followed as `fetch` follows them (up to 20), each hop's address checked like the first. */
const MAX_REDIRECTIONS = 20;

/**
 * One HTTP exchange under the outbound policy, its body read whole: undici's `request` (Node
 * streams) rather than `fetch` (WHATWG Request, Response and streams), for the calls made by the
 * thousand (a run's SUT calls): in a CPU profile of a run, fetch and its streams took about a
 * quarter of the worker's time.
 */
export async function outboundRequest(url: string, init: OutboundRequestInit): Promise<OutboundResponse> {
  following ??= guardedAgent().compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));
  const response = await undiciRequest(url, {
    method: init.method as Dispatcher.HttpMethod,
    headers: init.headers,
    body: init.body,
    signal: init.signal,
    dispatcher: following,
  });
  const text = await response.body.text();
  const headers = response.headers;
  return {
    status: response.statusCode,
    text,
    header: (name) => {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** `fetch` under the outbound policy: same arguments and answer as the global one. */
export const outboundFetch: typeof fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
  undiciFetch(input as never, { ...(init as object), dispatcher: guardedAgent() } as never)) as unknown as typeof fetch;
