import type { CoverageDimension, CoverageGap, CoveragePair } from './dto/insights.dto.js';
import type { DimensionCount, PairCount } from '../datasets/dimensions/dimensions.service.js';
import type { ProjectDimension } from './entities/project.entity.js';

export interface CoverageReport {
  dimensions: CoverageDimension[];
  pairs: CoveragePair[];
  gaps: CoverageGap[];
  coverage_ratio: number | null;
}

const share = (rows: number, total: number) => (total ? Math.round((rows / total) * 10_000) / 10_000 : 0);

/**
 * Coverage of a project's dimensions from per-value row counts: every listed value with its
 * rows (zero when none), values in the data the project does not list, rows without a value,
 * the crossed pairs asked for, and the gaps (values under `minRows`), fewest rows first.
 */
export function buildCoverage(
  dimensions: readonly ProjectDimension[],
  counts: readonly DimensionCount[],
  totalRows: number,
  minRows: number,
  pairs: ReadonlyArray<[string, string]>,
  pairCounts: readonly PairCount[],
): CoverageReport {
  const gaps: CoverageGap[] = [];
  let covered = 0;
  let total = 0;
  const out = dimensions.map((d): CoverageDimension => {
    const mine = counts.filter((c) => c.dimension === d.name);
    const listed = new Set(d.values.map((v) => v.value));
    const values = d.values.map((v) => {
      const rows = mine.find((c) => c.value === v.value)?.rows ?? 0;
      if (rows < minRows) gaps.push({ dimension: d.name, value: v.value, rows, missing: minRows - rows });
      return { value: v.value, rows, covered: rows >= minRows, share: share(rows, totalRows) };
    });
    const other = mine
      .filter((c) => !listed.has(c.value))
      .sort((a, b) => b.rows - a.rows || a.value.localeCompare(b.value))
      .map((c) => ({ value: c.value, rows: c.rows, covered: c.rows >= minRows, share: share(c.rows, totalRows) }));
    const assigned = mine.reduce((n, c) => n + c.rows, 0);
    const coveredValues = values.filter((v) => v.covered).length;
    covered += coveredValues;
    total += values.length;
    return {
      name: d.name,
      values,
      covered_values: coveredValues,
      total_values: values.length,
      unassigned_rows: Math.max(0, totalRows - assigned),
      other_values: other,
    };
  });
  const crossed = pairs.map(([a, b]): CoveragePair => {
    const va = dimensions.find((d) => d.name === a)?.values.map((v) => v.value) ?? [];
    const vb = dimensions.find((d) => d.name === b)?.values.map((v) => v.value) ?? [];
    const cells = va.flatMap((x) =>
      vb.map((y) => {
        const rows =
          pairCounts.find(
            (p) => p.dimensions[0] === a && p.dimensions[1] === b && p.values[0] === x && p.values[1] === y,
          )?.rows ?? 0;
        return { values: [x, y] as [string, string], rows, covered: rows >= minRows };
      }),
    );
    return {
      dimensions: [a, b],
      cells,
      covered_cells: cells.filter((c) => c.covered).length,
      total_cells: cells.length,
    };
  });
  gaps.sort((x, y) => x.rows - y.rows || x.dimension.localeCompare(y.dimension) || x.value.localeCompare(y.value));
  return {
    dimensions: out,
    pairs: crossed,
    gaps,
    coverage_ratio: total ? Math.round((covered / total) * 10_000) / 10_000 : null,
  };
}

/** `topic:persona,topic:language` into pairs; duplicates dropped. Throws the names that are not listed. */
export function parsePairs(
  text: string | undefined,
  known: ReadonlySet<string>,
): { pairs: Array<[string, string]>; errors: string[] } {
  if (!text) return { pairs: [], errors: [] };
  const pairs: Array<[string, string]> = [];
  const errors: string[] = [];
  for (const part of text.split(',').filter(Boolean)) {
    const [a, b, extra] = part.split(':');
    if (!a || !b || extra !== undefined) errors.push(`"${part}" is not dimension:dimension`);
    else if (a === b) errors.push(`"${part}" crosses a dimension with itself`);
    else if (!known.has(a) || !known.has(b)) errors.push(`"${part}" names a dimension the project does not have`);
    else if (!pairs.some(([x, y]) => x === a && y === b)) pairs.push([a, b]);
  }
  if (pairs.length > 5) errors.push('at most 5 pairs');
  return { pairs, errors };
}
