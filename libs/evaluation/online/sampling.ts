/**
 * Which traces online evaluation scores: a decision from the trace id alone, so it is the same in
 * every process and worker, on every run, and nests with the application's own OpenTelemetry
 * sampler.
 *
 * The rule is OpenTelemetry's consistent probability sampling ("TraceState: Probability
 * Sampling", https://opentelemetry.io/docs/specs/otel/trace/tracestate-probability-sampling/, and
 * the TraceIdRatioBased sampler built on it): the randomness R is the trailing 7 bytes (the
 * rightmost 56 bits) of the W3C trace id, the rejection threshold for a rate r is
 * T = round((1 - r) * 2^56), and a trace is sampled when R >= T. A trace kept at a rate is kept
 * at every higher rate (its R clears every lower threshold), so the traces we score at 10% are a
 * subset of those the application keeps at 50%, and R is uniform over [0, 2^56) for random ids,
 * so the share kept is r.
 *
 * There is no salt: a salt would change R, and the sample would no longer nest with the
 * application's. Ids that are not 32 hex digits (other tracing systems, our own imports) take R
 * from the first 56 bits of the id's SHA-256, which keeps the decision reproducible and uniform.
 */
import { createHash } from 'node:crypto';

/** 2^56: R lies in [0, 2^56). */
export const RANDOMNESS_RANGE = 1n << 56n;

const W3C_TRACE_ID = /^[0-9a-f]{32}$/i;

/** The 56 random bits a decision is made from: the trace id's rightmost 56 bits, or the first 56 bits of SHA-256 of another id. */
export function traceRandomness(traceId: string): bigint {
  if (W3C_TRACE_ID.test(traceId)) return BigInt(`0x${traceId.slice(18)}`);
  return BigInt(`0x${createHash('sha256').update(traceId, 'utf8').digest('hex').slice(0, 14)}`);
}

/**
 * The rejection threshold T = round((1 - r) * 2^56), exact for the double r: 2^56 at rate 0
 * (nothing is at or above it), 0 at rate 1 (everything is). `1 - r` in doubles would round (0.9 is
 * not a double), so it is taken apart instead: s = r * 2^56 is exact (scaling by a power of two),
 * its integer part i and fraction f are exact, and (1 - r) * 2^56 = (2^56 - i) - f, which rounds
 * (half up) to 2^56 - i, less one when f > 1/2. At 10% this gives the specification's
 * 0xe6666666666666.
 */
export function rejectionThreshold(rate: number): bigint {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`a sampling rate lies in [0, 1]; got ${rate}`);
  const scaled = rate * 2 ** 56;
  const whole = Math.floor(scaled);
  return RANDOMNESS_RANGE - BigInt(whole) - (scaled - whole > 0.5 ? 1n : 0n);
}

/** Whether the trace is sampled at this rate (in [0, 1]): its randomness at or above the rejection threshold. */
export function isSampled(traceId: string, rate: number): boolean {
  return traceRandomness(traceId) >= rejectionThreshold(rate);
}
