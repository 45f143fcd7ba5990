import { describe, expect, it } from '@jest/globals';
import { PNG } from 'pngjs';
import { diffRowSvg, renderDiffRowPng, wrap } from './diff-image.js';

const row = {
  row_id: 'a1b2',
  status: 'regressed',
  input: 'What is the capital of France? <b>bold</b> & more',
  expected_output: 'Paris',
  base: { label: 'run 1', output: 'Paris', passed: true, error: null },
  candidate: { label: 'run 2', output: 'Lyon', passed: false, error: null },
  metrics: [{ name: 'exact_match', base: 1, candidate: 0, delta: -1 }],
};

describe('diff row image', () => {
  it('wraps words to the width, cuts long words and caps the lines', () => {
    expect(wrap('one two three four', 8 * 9)).toEqual(['one two', 'three', 'four']);
    expect(wrap('x'.repeat(20), 8 * 9)).toEqual(['xxxxxxxx', 'xxxxxxxx', 'xxxx']);
    expect(wrap('a\nb', 1000)).toEqual(['a', 'b']);
    const many = wrap(Array.from({ length: 40 }, (_, i) => `line${i}`).join('\n'), 1000);
    expect(many).toHaveLength(12);
    expect(many[11].endsWith('…')).toBe(true);
  });

  it('escapes text into the SVG and shows both sides and the deltas', () => {
    const svg = diffRowSvg(row);
    expect(svg).toContain('&lt;b&gt;bold&lt;/b&gt; &amp; more');
    expect(svg).toContain('REGRESSED');
    expect(svg).toContain('Base: run 1 (PASS)');
    expect(svg).toContain('Candidate: run 2 (FAIL)');
    expect(svg).toContain('>-1<');
  });

  it('renders a PNG whose text is drawn (dark glyph pixels on white)', () => {
    const png = PNG.sync.read(renderDiffRowPng(row));
    expect(png.width).toBe(1200);
    expect(png.height).toBeGreaterThan(200);
    let dark = 0;
    for (let i = 0; i < png.data.length; i += 4)
      if (png.data[i] < 100 && png.data[i + 1] < 100 && png.data[i + 2] < 100) dark++;
    // Hundreds of glyphs: thousands of dark pixels; a blank or missing-font render has none.
    expect(dark).toBeGreaterThan(2000);
    const blank = PNG.sync.read(
      renderDiffRowPng({ ...row, input: '', expected_output: '', base: null, candidate: null, metrics: [] }),
    );
    let blankDark = 0;
    for (let i = 0; i < blank.data.length; i += 4)
      if (blank.data[i] < 100 && blank.data[i + 1] < 100 && blank.data[i + 2] < 100) blankDark++;
    expect(dark).toBeGreaterThan(blankDark * 2);
  });
});
