import { Injectable } from '@nestjs/common';
import { annotationAnalysis, labelColumns } from '#libs/dataset-analysis/annotation.js';
import { analyzeTextColumn, textColumns, textProperties } from '#libs/dataset-analysis/text.js';
import { clusterTexts } from '#libs/dataset-analysis/clustering.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { isTerminal, type JobContext } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { EmbeddingConfigsService } from '../catalogues/embedding-configs/embedding-configs.service.js';
import { ANALYSIS_RUNS, AnalysisRepository, CLUSTER_RUNS, type AnalysisKind } from './analysis.repository.js';
import { MAX_ANALYSIS_ROWS } from './dto/analysis.dto.js';
import { ANALYSIS_JOB, CLUSTER_JOB } from './analysis.jobs.js';

/** Non-empty texts a column needs to be clustered. */
export const MIN_CLUSTER_ROWS = 2;

type Row = { row_id: string; ordinal: string; data: Record<string, unknown>; dims: Record<string, string> };

/** Text as the analyses read a value: strings as they are, other values as JSON, missing as ''. */
export function textOf(value: unknown): string {
  return value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
}

/** The column to embed: the one asked for, else the mapped input, else the text column with the longest values. */
export function embeddingColumn(
  rows: Array<{ data: Record<string, unknown> }>,
  mappedInput: string | undefined,
  asked: string | undefined,
): string | null {
  if (asked) return asked;
  const candidates = textColumns(rows.map((r) => r.data));
  if (mappedInput && candidates.includes(mappedInput)) return mappedInput;
  const meanLength = (c: string) => rows.reduce((n, r) => n + textOf(r.data[c]).length, 0) / Math.max(1, rows.length);
  return [...candidates].sort((a, b) => meanLength(b) - meanLength(a) || a.localeCompare(b))[0] ?? null;
}

/**
 * Computes analysis runs (text, annotation, visual) and cluster runs from a version's rows,
 * storing column-level results and per-row properties; both run through the queue.
 */
@Injectable()
export class AnalysisRunner {
  constructor(
    private readonly analysis: AnalysisRepository,
    private readonly embeddings: EmbeddingConfigsService,
    private readonly tracked: TrackedRecords,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The queue marks the run running, records the progress reported and ends it when the job ends without it (`tracks`). */
  @JobHandler(ANALYSIS_JOB, { maxAttempts: 2, tracks: ANALYSIS_RUNS })
  async analyse({
    payload,
    signal,
    progress,
  }: JobContext<typeof ANALYSIS_JOB>): Promise<{ kinds: string[]; rows: number }> {
    const run = await this.analysis.find('analysis_runs', payload.run_id);
    if (!run || isTerminal(run.state)) return { kinds: [], rows: 0 };
    const params = run.params as {
      version_number: number;
      mapped_input?: string;
      text_columns?: string[];
      label_columns?: string[];
      visual_column?: string;
      seed: number;
    };
    const rows = await this.analysis.versionRows(run.dataset_id, params.version_number, MAX_ANALYSIS_ROWS);
    const data = rows.map((r) => r.data);
    // A lost lease shows in the signal, checked before each kind.
    const report = (step: string, done: number) =>
      progress({ step, done, total: run.kinds.length }).catch(() => undefined);
    let done = 0;
    for (const kind of run.kinds as AnalysisKind[]) {
      signal.throwIfAborted();
      await report(kind, done);
      if (kind === 'text') await this.text(run.id, rows, params.text_columns ?? textColumns(data));
      if (kind === 'annotation') await this.annotation(run.id, rows, params.label_columns ?? labelColumns(data));
      if (kind === 'visual')
        await this.visual(
          run.id,
          run.workspace_id,
          rows,
          embeddingColumn(rows, params.mapped_input, params.visual_column),
          params.seed,
          signal,
        );
      done++;
    }
    await this.tracked.succeed(ANALYSIS_RUNS, run.id, {
      step: 'done',
      done,
      total: run.kinds.length,
      rows: rows.length,
      truncated: rows.length === MAX_ANALYSIS_ROWS,
    });
    return { kinds: run.kinds, rows: rows.length };
  }

  @JobHandler(CLUSTER_JOB, { maxAttempts: 2, tracks: CLUSTER_RUNS })
  async cluster({ payload, signal, progress }: JobContext<typeof CLUSTER_JOB>): Promise<{ k: number; rows: number }> {
    const run = await this.analysis.find('cluster_runs', payload.run_id);
    if (!run || isTerminal(run.state)) return { k: 0, rows: 0 };
    const params = run.params as { version_number: number; column: string; k: number | null; seed: number };
    const rows = (await this.analysis.versionRows(run.dataset_id, params.version_number, MAX_ANALYSIS_ROWS)).filter(
      (r) => textOf(r.data[params.column]).trim(),
    );
    if (rows.length < MIN_CLUSTER_ROWS)
      throw new JobFailure(
        `column ${params.column} has ${rows.length} non-empty values; clustering needs at least ${MIN_CLUSTER_ROWS}`,
        { code: 'not_clusterable', retry: false },
      );
    const embedder = await this.embeddings.embedderFor(run.workspace_id);
    await progress({ step: 'embedding', rows: rows.length }).catch(() => undefined);
    const texts = rows.map((r) => textOf(r.data[params.column]));
    const vectors = await embedder.embed(texts, signal);
    signal.throwIfAborted();
    await progress({ step: 'clustering', rows: rows.length }).catch(() => undefined);
    const result = await clusterTexts(
      rows.map((r, i) => ({ row_id: r.row_id, text: texts[i] })),
      vectors,
      { seed: params.seed, ...(params.k ? { k: params.k } : {}) },
    );
    await this.transactions.run(async () => {
      await this.analysis.saveClusterResult(run.id, {
        ...result,
        column: params.column,
        embedder: embedder.name,
        rows: rows.length,
      });
      await this.tracked.succeed(CLUSTER_RUNS, run.id, { step: 'done', rows: rows.length });
    });
    return { k: result.k, rows: rows.length };
  }

  private async text(runId: string, rows: Row[], columns: string[]): Promise<void> {
    const analyses = columns.map((c) =>
      analyzeTextColumn(
        c,
        rows.map((r) => r.data[c]),
      ),
    );
    await this.analysis.saveResult(runId, 'text', { rows: rows.length, columns: analyses });
    await this.analysis.saveRowProperties(
      runId,
      'text',
      rows.map((r) => ({
        row_id: r.row_id,
        ordinal: Number(r.ordinal),
        props: Object.fromEntries(columns.map((c) => [c, textProperties(textOf(r.data[c]))])),
      })),
    );
  }

  private async annotation(runId: string, rows: Row[], columns: string[]): Promise<void> {
    const dimensionNames = [...new Set(rows.flatMap((r) => Object.keys(r.dims)))];
    const dimensions = Object.fromEntries(dimensionNames.map((d) => [d, rows.map((r) => r.dims[d] ?? null)]));
    const result = annotationAnalysis(
      rows.map((r) => r.data),
      { labelColumns: columns, dimensions },
    );
    await this.analysis.saveResult(runId, 'annotation', { rows: rows.length, label_columns: columns, ...result });
    await this.analysis.saveRowProperties(
      runId,
      'annotation',
      rows.map((r) => {
        const labels = columns.map((c) => (r.data[c] === undefined || r.data[c] === null ? null : String(r.data[c])));
        const given = labels.filter((l): l is string => l !== null);
        return {
          row_id: r.row_id,
          ordinal: Number(r.ordinal),
          props: {
            ...Object.fromEntries(columns.map((c, i) => [c, labels[i]])),
            labelled: given.length,
            agree: columns.length > 1 && given.length > 1 ? new Set(given).size === 1 : null,
          },
        };
      }),
    );
  }

  private async visual(
    runId: string,
    workspaceId: string,
    rows: Row[],
    column: string | null,
    seed: number,
    signal: AbortSignal,
  ): Promise<void> {
    if (!column) {
      await this.analysis.saveResult(runId, 'visual', {
        column: null,
        reason: 'the version has no text column to embed',
        points: [],
        clusters: [],
      });
      return;
    }
    const usable = rows.filter((r) => textOf(r.data[column]).trim());
    const embedder = await this.embeddings.embedderFor(workspaceId);
    const texts = usable.map((r) => textOf(r.data[column]));
    const vectors = await embedder.embed(texts, signal);
    const result = await clusterTexts(
      usable.map((r, i) => ({ row_id: r.row_id, text: texts[i] })),
      vectors,
      { seed },
    );
    const points = result.points;
    await this.analysis.saveResult(runId, 'visual', {
      column,
      embedder: embedder.name,
      projection: result.projection,
      points,
      clusters: result.clusters.map((c) => ({ id: c.id, size: c.size, name: c.name })),
    });
    const ordinals = new Map(usable.map((r) => [r.row_id, Number(r.ordinal)]));
    await this.analysis.saveRowProperties(
      runId,
      'visual',
      points.map((p) => ({
        row_id: p.row_id,
        ordinal: ordinals.get(p.row_id)!,
        props: { x: p.x, y: p.y, cluster: p.cluster },
      })),
    );
  }
}
