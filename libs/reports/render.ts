/**
 * Renders a report as Markdown, HTML (charts as inline SVG) and PDF (pdfkit, charts as vector
 * drawing, text in the DejaVu fonts shipped as a dependency so no system fonts are needed).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { lazyRequire } from '#libs/common/lazy-require.js';
import type { ReportSection } from './report.types.js';
import { pct } from './sections.js';

const require = createRequire(import.meta.url);
const FONT_DIR = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONTS = {
  regular: join(FONT_DIR, 'DejaVuSans.ttf'),
  bold: join(FONT_DIR, 'DejaVuSans-Bold.ttf'),
  italic: join(FONT_DIR, 'DejaVuSans-Oblique.ttf'),
  mono: join(FONT_DIR, 'DejaVuSansMono.ttf'),
};

/** What the renderers need of a report. */
export interface RenderableReport {
  id: string;
  title: string;
  run_id: string;
  generated_at: string;
  sections: ReportSection[];
}

/** A horizontal bar chart of shares (0..1). */
export interface BarChart {
  title: string;
  bars: Array<{ label: string; value: number | null }>;
}

// pdfkit (with fontkit) and markdown-it load with the first report rendered, not at every start.
const PDFDocument = lazyRequire<typeof import('pdfkit')>('pdfkit');
const markdownIt = lazyRequire<typeof import('markdown-it').default>('markdown-it');
type MarkdownIt = InstanceType<ReturnType<typeof markdownIt>>;
let parser: MarkdownIt | undefined;
// html: false so edited content cannot inject markup into the HTML export.
const md = (): MarkdownIt => (parser ??= new (markdownIt())({ html: false, linkify: false, typographer: false }));

/** The charts a section carries: pass rate per metric, and per value of each dimension. */
export function chartsOf(section: ReportSection): BarChart[] {
  const data = section.data as Record<string, unknown>;
  if (section.key === 'metrics_overview') {
    const metrics = (data.metrics ?? []) as Array<{ name: string; pass_rate: number | null }>;
    return metrics.length
      ? [{ title: 'Pass rate by metric', bars: metrics.map((m) => ({ label: m.name, value: m.pass_rate })) }]
      : [];
  }
  if (section.key === 'results_by_dimension') {
    const dims = (data.dimensions ?? []) as Array<{
      dimension: string;
      values: Array<{ value: string | null; pass_rate: number | null }>;
    }>;
    return dims.map((d) => ({
      title: `Pass rate by ${d.dimension}`,
      bars: d.values.map((v) => ({ label: v.value ?? '(none)', value: v.pass_rate })),
    }));
  }
  if (section.key === 'summary' && typeof data.rows === 'number' && data.rows > 0) {
    const rows = data.rows;
    return [
      {
        title: 'Rows',
        bars: [
          { label: 'passed', value: Number(data.passed_rows) / rows },
          { label: 'failed', value: Number(data.failed_rows) / rows },
          { label: 'errored', value: Number(data.errored) / rows },
        ],
      },
    ];
  }
  return [];
}

export function reportMarkdown(report: RenderableReport): string {
  return (
    [
      `# ${report.title}`,
      `_Run \`${report.run_id}\`, generated ${report.generated_at}._`,
      ...report.sections.map((s) => s.markdown.trim()),
    ].join('\n\n') + '\n'
  );
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const BAR = { width: 640, label: 180, bar: 360, row: 24, top: 30 };

export function chartSvg(chart: BarChart): string {
  const height = BAR.top + chart.bars.length * BAR.row + 10;
  const parts = [`<text x="0" y="18" font-size="14" font-weight="bold">${escapeXml(chart.title)}</text>`];
  chart.bars.forEach((b, i) => {
    const y = BAR.top + i * BAR.row;
    const w = Math.max(0, Math.min(1, b.value ?? 0)) * BAR.bar;
    parts.push(`<text x="0" y="${y + 15}" font-size="12">${escapeXml(b.label.slice(0, 28))}</text>`);
    parts.push(`<rect x="${BAR.label}" y="${y + 3}" width="${BAR.bar}" height="16" fill="#eceff1"/>`);
    parts.push(
      `<rect x="${BAR.label}" y="${y + 3}" width="${w.toFixed(1)}" height="16" fill="${barColour(b.value)}"/>`,
    );
    parts.push(`<text x="${BAR.label + BAR.bar + 8}" y="${y + 15}" font-size="12">${escapeXml(pct(b.value))}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(chart.title)}" width="${BAR.width}" height="${height}" viewBox="0 0 ${BAR.width} ${height}" font-family="DejaVu Sans, sans-serif">${parts.join('')}</svg>`;
}

function barColour(value: number | null): string {
  if (value === null) return '#b0bec5';
  return value >= 0.8 ? '#2e7d32' : value >= 0.5 ? '#ef6c00' : '#c62828';
}

export function reportHtml(report: RenderableReport): string {
  const sections = report.sections.map(
    (s) =>
      `<section id="${escapeXml(s.key)}">${md().render(s.markdown)}${chartsOf(s)
        .map((c) => `<figure>${chartSvg(c)}</figure>`)
        .join('')}</section>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(report.title)}</title>
<style>body{font-family:"DejaVu Sans",Arial,sans-serif;max-width:960px;margin:2em auto;color:#263238;line-height:1.45}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #cfd8dc;padding:4px 8px;text-align:left}th{background:#eceff1}figure{margin:1em 0}code{background:#f5f5f5;padding:0 3px}</style>
</head><body><h1>${escapeXml(report.title)}</h1><p><em>Run <code>${escapeXml(report.run_id)}</code>, generated ${escapeXml(report.generated_at)}.</em></p>
${sections.join('\n')}
</body></html>
`;
}

type Token = ReturnType<MarkdownIt['parse']>[number];

function inlineText(token: Token | undefined): string {
  if (!token) return '';
  if (!token.children) return token.content;
  return token.children
    .map((c) =>
      c.type === 'softbreak'
        ? ' '
        : c.type === 'hardbreak'
          ? '\n'
          : c.type === 'text' || c.type === 'code_inline'
            ? c.content
            : '',
    )
    .join('');
}

/** The report as a PDF: headings, paragraphs, lists, tables and bar charts, all vector. */
export function reportPdf(report: RenderableReport): Promise<Buffer> {
  const doc = new (PDFDocument())({
    size: 'A4',
    margin: 50,
    info: { Title: report.title, Producer: 'Evaluation Workspace Service' },
  });
  doc.registerFont('regular', FONTS.regular);
  doc.registerFont('bold', FONTS.bold);
  doc.registerFont('italic', FONTS.italic);
  doc.registerFont('mono', FONTS.mono);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const bottom = () => doc.page.height - doc.page.margins.bottom;
  const ensure = (h: number) => {
    if (doc.y + h > bottom()) doc.addPage();
  };

  doc.font('bold').fontSize(20).text(report.title, { width });
  doc
    .moveDown(0.3)
    .font('italic')
    .fontSize(9)
    .fillColor('#546e7a')
    .text(`Run ${report.run_id}, generated ${report.generated_at}`)
    .fillColor('#000000');
  doc.moveDown();

  for (const section of report.sections) {
    writeMarkdown(doc, section.markdown, { left, width, ensure });
    for (const chart of chartsOf(section)) drawChart(doc, chart, { left, width, ensure });
    doc.moveDown();
  }
  doc.end();
  return done;
}

interface Layout {
  left: number;
  width: number;
  ensure: (h: number) => void;
}

function writeMarkdown(doc: PDFKit.PDFDocument, markdown: string, l: Layout): void {
  const tokens = md().parse(markdown, {});
  const lists: Array<{ ordered: boolean; n: number }> = [];
  let table: string[][] | null = null;
  let row: string[] | null = null;
  let headerRows = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    switch (t.type) {
      case 'heading_open': {
        const size = t.tag === 'h1' ? 18 : t.tag === 'h2' ? 15 : 12;
        l.ensure(size * 3);
        doc
          .moveDown(0.4)
          .font('bold')
          .fontSize(size)
          .text(inlineText(tokens[i + 1]), l.left, doc.y, { width: l.width });
        doc.moveDown(0.3);
        i++;
        break;
      }
      case 'bullet_list_open':
      case 'ordered_list_open':
        lists.push({ ordered: t.type === 'ordered_list_open', n: Number(t.attrGet('start') ?? 1) });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        doc.moveDown(0.3);
        break;
      case 'inline': {
        if (row) {
          row.push(inlineText(t));
          break;
        }
        const list = lists.at(-1);
        const text = inlineText(t);
        doc.font('regular').fontSize(10);
        l.ensure(doc.heightOfString(text, { width: l.width }) + 4);
        if (list) {
          const marker = list.ordered ? `${list.n++}.` : '•';
          const indent = 14 * lists.length;
          doc.text(`${marker} ${text}`, l.left + indent, doc.y, { width: l.width - indent });
        } else doc.text(text, l.left, doc.y, { width: l.width });
        break;
      }
      case 'paragraph_close':
        if (!lists.length) doc.moveDown(0.5);
        break;
      case 'fence':
      case 'code_block':
        doc.font('mono').fontSize(9);
        l.ensure(doc.heightOfString(t.content, { width: l.width }));
        doc.text(t.content, l.left, doc.y, { width: l.width });
        doc.moveDown(0.5);
        break;
      case 'table_open':
        table = [];
        headerRows = 0;
        break;
      case 'tr_open':
        row = [];
        break;
      case 'tr_close':
        if (table && row) table.push(row);
        row = null;
        break;
      case 'thead_close':
        headerRows = table?.length ?? 0;
        break;
      case 'table_close':
        if (table) drawTable(doc, table, headerRows, l);
        table = null;
        break;
      case 'hr':
        doc
          .moveTo(l.left, doc.y)
          .lineTo(l.left + l.width, doc.y)
          .strokeColor('#b0bec5')
          .stroke();
        doc.moveDown(0.5);
        break;
      default:
        break;
    }
  }
}

function drawTable(doc: PDFKit.PDFDocument, rows: string[][], headerRows: number, l: Layout): void {
  const columns = Math.max(...rows.map((r) => r.length));
  if (!columns) return;
  // Columns share the width by their longest cell, each at least a minimum.
  const longest = Array.from({ length: columns }, (_, c) =>
    Math.max(4, ...rows.map((r) => Math.min(40, (r[c] ?? '').length))),
  );
  const total = longest.reduce((a, b) => a + b, 0);
  const widths = longest.map((n) => (n / total) * l.width);
  const pad = 3;
  doc.fontSize(8.5);
  rows.forEach((r, ri) => {
    const header = ri < headerRows;
    doc.font(header ? 'bold' : 'regular');
    const height = Math.max(...widths.map((w, c) => doc.heightOfString(r[c] ?? '', { width: w - 2 * pad }))) + 2 * pad;
    l.ensure(height);
    const y = doc.y;
    let x = l.left;
    widths.forEach((w, c) => {
      if (header) doc.rect(x, y, w, height).fill('#eceff1');
      doc.rect(x, y, w, height).strokeColor('#cfd8dc').lineWidth(0.5).stroke();
      doc.fillColor('#000000').text(r[c] ?? '', x + pad, y + pad, { width: w - 2 * pad });
      x += w;
    });
    doc.x = l.left;
    doc.y = y + height;
  });
  doc.moveDown(0.6);
}

function drawChart(doc: PDFKit.PDFDocument, chart: BarChart, l: Layout): void {
  const row = 16;
  const labelWidth = 140;
  const barWidth = Math.min(300, l.width - labelWidth - 60);
  l.ensure(24 + chart.bars.length * row);
  doc.font('bold').fontSize(10).fillColor('#000000').text(chart.title, l.left, doc.y, { width: l.width });
  let y = doc.y + 4;
  for (const b of chart.bars) {
    const w = Math.max(0, Math.min(1, b.value ?? 0)) * barWidth;
    doc
      .font('regular')
      .fontSize(8.5)
      .fillColor('#000000')
      .text(b.label.slice(0, 28), l.left, y + 2, { width: labelWidth - 6, lineBreak: false });
    doc.rect(l.left + labelWidth, y, barWidth, row - 4).fill('#eceff1');
    if (w > 0) doc.rect(l.left + labelWidth, y, w, row - 4).fill(barColour(b.value));
    doc.fillColor('#000000').text(pct(b.value), l.left + labelWidth + barWidth + 6, y + 2, { lineBreak: false });
    y += row;
  }
  doc.x = l.left;
  doc.y = y + 6;
}
