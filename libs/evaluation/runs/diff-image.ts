import { Resvg } from '@resvg/resvg-js';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One row of a diff as the image shows it. */
export interface DiffImageRow {
  row_id: string;
  status: string;
  input: string | null;
  expected_output: string | null;
  base: { label: string; output: string | null; passed: boolean | null; error: string | null } | null;
  candidate: { label: string; output: string | null; passed: boolean | null; error: string | null } | null;
  metrics: Array<{ name: string; base: number | null; candidate: number | null; delta: number | null }>;
}

const WIDTH = 1200;
const MARGIN = 32;
const FONT_SIZE = 15;
const LINE = 21;
/** DejaVu Sans advances about 0.6 em per character on average: enough to wrap without measuring. */
const CHAR_WIDTH = FONT_SIZE * 0.6;
const MAX_LINES = 12;
const STATUS_COLOURS: Record<string, string> = {
  regressed: '#c62828',
  improved: '#2e7d32',
  changed: '#ef6c00',
  unchanged: '#546e7a',
  new: '#1565c0',
  missing: '#6a1b9a',
};

const require = createRequire(import.meta.url);
const FONT_DIR = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONTS = [join(FONT_DIR, 'DejaVuSans.ttf'), join(FONT_DIR, 'DejaVuSans-Bold.ttf')];

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Words wrapped into lines of at most `width` pixels (long words cut), at most MAX_LINES with an ellipsis. */
export function wrap(text: string, width: number): string[] {
  const perLine = Math.max(8, Math.floor(width / CHAR_WIDTH));
  const lines: string[] = [];
  for (const paragraph of text.replace(/\r/g, '').split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      for (let rest = word; rest.length;) {
        const room = line ? perLine - line.length - 1 : perLine;
        if (rest.length <= room) {
          line = line ? `${line} ${rest}` : rest;
          rest = '';
        } else if (line) {
          lines.push(line);
          line = '';
        } else {
          lines.push(rest.slice(0, perLine));
          rest = rest.slice(perLine);
        }
      }
    }
    lines.push(line);
  }
  while (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines.length > MAX_LINES
    ? [...lines.slice(0, MAX_LINES - 1), `${lines[MAX_LINES - 1].slice(0, perLine - 1)}…`]
    : lines;
}

function format(value: number | null): string {
  if (value === null) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}

/** The SVG of one diff row: status, input, expected output, both outputs side by side, and the metric deltas. */
export function diffRowSvg(row: DiffImageRow): string {
  const parts: string[] = [];
  let y = MARGIN;
  const text = (x: number, at: number, value: string, opts: { bold?: boolean; colour?: string; size?: number } = {}) =>
    parts.push(
      `<text x="${x}" y="${at}" font-family="DejaVu Sans" font-size="${opts.size ?? FONT_SIZE}"${opts.bold ? ' font-weight="bold"' : ''} fill="${opts.colour ?? '#212121'}">${escape(value)}</text>`,
    );
  const block = (x: number, top: number, width: number, title: string, body: string | null, colour?: string) => {
    text(x, top, title, { bold: true, colour: '#424242' });
    const lines = wrap(body ?? '(none)', width);
    lines.forEach((line, i) => text(x, top + LINE * (i + 1), line, { colour: body === null ? '#9e9e9e' : colour }));
    return top + LINE * (lines.length + 1);
  };

  const colour = STATUS_COLOURS[row.status] ?? '#424242';
  parts.push(
    `<rect x="${MARGIN}" y="${y}" width="${row.status.length * 11 + 24}" height="28" rx="6" fill="${colour}"/>`,
  );
  text(MARGIN + 12, y + 20, row.status.toUpperCase(), { bold: true, colour: '#ffffff' });
  text(MARGIN + row.status.length * 11 + 40, y + 20, `row ${row.row_id}`, { colour: '#616161' });
  y += 60;
  y = block(MARGIN, y, WIDTH - 2 * MARGIN, 'Input', row.input) + 10;
  y = block(MARGIN, y, WIDTH - 2 * MARGIN, 'Expected output', row.expected_output) + 10;
  const column = (WIDTH - 3 * MARGIN) / 2;
  const side = (s: DiffImageRow['base'], x: number, name: string) => {
    const verdict = s === null ? 'absent' : s.passed === null ? 'no verdict' : s.passed ? 'PASS' : 'FAIL';
    return block(
      x,
      y,
      column,
      `${name}: ${s?.label ?? ''} (${verdict})`,
      s ? (s.error ? `error: ${s.error}` : s.output) : null,
      s?.passed === false ? '#b71c1c' : undefined,
    );
  };
  y = Math.max(side(row.base, MARGIN, 'Base'), side(row.candidate, 2 * MARGIN + column, 'Candidate')) + 10;
  if (row.metrics.length) {
    text(MARGIN, y, 'Metric', { bold: true, colour: '#424242' });
    text(MARGIN + 420, y, 'Base', { bold: true, colour: '#424242' });
    text(MARGIN + 620, y, 'Candidate', { bold: true, colour: '#424242' });
    text(MARGIN + 820, y, 'Delta', { bold: true, colour: '#424242' });
    for (const m of row.metrics) {
      y += LINE;
      text(MARGIN, y, m.name);
      text(MARGIN + 420, y, format(m.base));
      text(MARGIN + 620, y, format(m.candidate));
      text(MARGIN + 820, y, m.delta === null ? '—' : `${m.delta > 0 ? '+' : ''}${format(m.delta)}`, {
        colour: m.delta === null || m.delta === 0 ? undefined : m.delta > 0 ? '#2e7d32' : '#c62828',
      });
    }
    y += LINE;
  }
  const height = y + MARGIN;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}"><rect width="100%" height="100%" fill="#ffffff"/>${parts.join('')}</svg>`;
}

/** The diff row as a PNG, text set in the bundled DejaVu Sans (no system fonts needed). */
export function renderDiffRowPng(row: DiffImageRow): Buffer {
  const svg = diffRowSvg(row);
  return new Resvg(svg, {
    font: { fontFiles: FONTS, loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' },
    fitTo: { mode: 'original' },
  })
    .render()
    .asPng();
}
