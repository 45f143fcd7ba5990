import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cohensKappa, krippendorffAlpha } from '#libs/evaluation/statistics/agreement.js';
import { EXPECTED, planted } from './review-queue-planted.js';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The figures the review e2e test expects for its planted labels: the independent Python
 * definitions give them (where python3 has NumPy and SciPy), and so does the library.
 */
describe('the review queue planted labels', () => {
  const labels = planted();
  const pf = (side: 'a' | 'b') => labels.map((l) => (l[side].correct ? 'pass' : 'fail'));
  const sc = (side: 'a' | 'b') => labels.map((l) => l[side].score);

  it('the library gives the expected figures', () => {
    expect(labels.filter((l) => l.a.correct !== l.b.correct)).toHaveLength(EXPECTED.disagreements);
    expect(cohensKappa(pf('a'), pf('b')).value).toBeCloseTo(EXPECTED.correct.cohens_kappa, 12);
    const pairs = (a: Array<string | number>, b: Array<string | number>) => a.map((x, i) => [x, b[i]]);
    expect(krippendorffAlpha(pairs(pf('a'), pf('b')), 'nominal').value).toBeCloseTo(EXPECTED.correct.alpha_nominal, 12);
    expect(cohensKappa(sc('a'), sc('b')).value).toBeCloseTo(EXPECTED.score.cohens_kappa, 12);
    expect(krippendorffAlpha(pairs(sc('a'), sc('b')), 'interval').value).toBeCloseTo(EXPECTED.score.alpha_interval, 12);
    expect(krippendorffAlpha(pairs(sc('a'), sc('b')), 'ordinal').value).toBeCloseTo(EXPECTED.score.alpha_ordinal, 12);
  });

  const python = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
  (python.status === 0 ? it : it.skip)('review-queue-planted.py (independent definitions) prints them', () => {
    const run = spawnSync('python3', [join(here, 'review-queue-planted.py')], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(EXPECTED);
  });
});
