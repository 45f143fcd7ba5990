import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Xoshiro128 } from '#libs/evaluation/statistics/bootstrap.js';
import { wilsonInterval } from '#libs/evaluation/statistics/judge-validity.js';
import { isSampled, rejectionThreshold, traceRandomness } from './sampling.js';

/** A W3C trace id whose first 18 hex digits are `prefix`-filled and whose rightmost 56 bits are `r`. */
function idWithRandomness(r: bigint, prefix = '4bf92f3577b34da6a3'): string {
  return prefix + r.toString(16).padStart(14, '0');
}

function randomTraceId(random: Xoshiro128): string {
  let id = '';
  for (let i = 0; i < 4; i++) id += random.nextUint32().toString(16).padStart(8, '0');
  return id;
}

describe('trace sampling', () => {
  it('takes the rightmost 56 bits of a W3C trace id, in either case', () => {
    expect(traceRandomness('4bf92f3577b34da6a3ce929d0e0e4736')).toBe(0xce929d0e0e4736n);
    expect(traceRandomness('4BF92F3577B34DA6A3CE929D0E0E4736')).toBe(0xce929d0e0e4736n);
  });

  it('takes the first 56 bits of SHA-256 for any other id', () => {
    const hex = createHash('sha256').update('run-42/item-7').digest('hex');
    expect(traceRandomness('run-42/item-7')).toBe(BigInt(`0x${hex.slice(0, 14)}`));
    // 31 hex digits or a non-hex digit is not a W3C id.
    const short = '4bf92f3577b34da6a3ce929d0e0e473';
    expect(traceRandomness(short)).toBe(BigInt(`0x${createHash('sha256').update(short).digest('hex').slice(0, 14)}`));
  });

  it('has exact thresholds: 2^56 at rate 0, 0 at rate 1, 2^55 at one half, 2^52 * 15 at 1/16', () => {
    expect(rejectionThreshold(0)).toBe(1n << 56n);
    expect(rejectionThreshold(1)).toBe(0n);
    expect(rejectionThreshold(0.5)).toBe(1n << 55n);
    expect(rejectionThreshold(1 / 16)).toBe(15n << 52n);
    // The specification's example: 10% keeps R >= 0xe6666666666666.
    expect(rejectionThreshold(0.1)).toBe(0xe6666666666666n);
    // Exact rational arithmetic (Python's fractions: round((1 - Fraction(r)) * 2**56)) agrees.
    expect(rejectionThreshold(0.3)).toBe(0xb3333333333334n);
    expect(rejectionThreshold(0.01)).toBe(0xfd70a3d70a3d71n);
    expect(rejectionThreshold(1e-20)).toBe(1n << 56n);
    expect(rejectionThreshold(0.9999999999999999)).toBe(8n);
    expect(() => rejectionThreshold(1.5)).toThrow(RangeError);
    expect(() => rejectionThreshold(Number.NaN)).toThrow(RangeError);
  });

  it('samples nothing at rate 0 and everything at rate 1, even at the extremes of R', () => {
    const top = idWithRandomness((1n << 56n) - 1n);
    const bottom = idWithRandomness(0n);
    expect([isSampled(top, 0), isSampled(bottom, 0)]).toEqual([false, false]);
    expect([isSampled(top, 1), isSampled(bottom, 1)]).toEqual([true, true]);
  });

  it('samples an id exactly at the threshold and not one just below it', () => {
    const threshold = rejectionThreshold(0.1);
    expect(isSampled(idWithRandomness(threshold), 0.1)).toBe(true);
    expect(isSampled(idWithRandomness(threshold - 1n), 0.1)).toBe(false);
    expect(isSampled(idWithRandomness(1n << 55n), 0.5)).toBe(true);
    expect(isSampled(idWithRandomness((1n << 55n) - 1n), 0.5)).toBe(false);
  });

  it('ignores the leading 72 bits: two ids with the same rightmost 56 bits decide alike', () => {
    const r = rejectionThreshold(0.3);
    for (const rate of [0.1, 0.3, 0.31]) {
      expect(isSampled(idWithRandomness(r, '000000000000000000'), rate)).toBe(
        isSampled(idWithRandomness(r, 'ffffffffffffffffff'), rate),
      );
    }
  });

  it('nests: an id sampled at a rate is sampled at every higher rate', () => {
    const random = new Xoshiro128(20261129);
    const rates = [0.001, 0.01, 0.1, 0.25, 0.5, 0.9, 1];
    let sampledAtTenth = 0;
    for (let i = 0; i < 20_000; i++) {
      const id = i % 2 ? randomTraceId(random) : `trace-${random.nextUint32()}`;
      const decisions = rates.map((rate) => isSampled(id, rate));
      // Once true, true for every higher rate.
      expect(decisions.slice(decisions.indexOf(true))).not.toContain(false);
      if (isSampled(id, 0.1)) {
        sampledAtTenth++;
        expect(isSampled(id, 0.5)).toBe(true);
      }
    }
    expect(sampledAtTenth).toBeGreaterThan(1_500);
  });

  it.each([0.01, 0.1, 0.5])(
    'samples a share of 100,000 random ids inside the 99.9%% binomial interval of rate %p',
    (rate) => {
      const random = new Xoshiro128(7 + rate * 1000);
      const n = 100_000;
      let w3c = 0;
      let other = 0;
      for (let i = 0; i < n; i++) {
        if (isSampled(randomTraceId(random), rate)) w3c++;
        if (isSampled(`span-${random.nextUint32()}-${i}`, rate)) other++;
      }
      // The sampled count is Binomial(n, rate): the observed share's 99.9% Wilson interval holds the rate.
      for (const count of [w3c, other]) {
        const interval = wilsonInterval(count, n, 0.999)!;
        expect({ rate, count, inside: interval.low <= rate && rate <= interval.high }).toEqual({
          rate,
          count,
          inside: true,
        });
      }
    },
    60_000,
  );
});
