import { Injectable } from '@nestjs/common';
import { jsonrepair } from 'jsonrepair';
import { callJudge } from '#libs/evaluation/judges/judge-client.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { isTerminal, type JobContext } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import { judgeConnection, JudgesService } from '../catalogues/judges/judges.service.js';
import { GeneratedRowsService } from '../datasets/rows/generated-rows.service.js';
import { SecretsService } from '../secrets/secrets.service.js';
import type { SdgRunEntity } from './entities/sdg-run.entity.js';
import { combinations, renderSdgTemplate } from './sdg-template.js';
import type { LlmSpec, TemplateSpec } from './sdg.types.js';
import { SdgErrors } from './sdg.errors.js';
import { SDG_RUNS, SdgRepository } from './sdg.repository.js';
import { SDG_JOB } from './sdg.jobs.js';

const MAX_ERRORS = 20;

/** Generates an SDG run's rows (templates, or an LLM through a judge connection) and adds them to the target as a new candidate version. */
@Injectable()
export class SdgGenerator {
  constructor(
    private readonly sdg: SdgRepository,
    private readonly judges: JudgesService,
    private readonly secrets: SecretsService,
    private readonly generatedRows: GeneratedRowsService,
    private readonly tracked: TrackedRecords,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The queue marks the run running and ends it when the job ends without it (`tracks`). */
  @JobHandler(SDG_JOB, { maxAttempts: 2, tracks: SDG_RUNS })
  async generate({
    payload,
    signal,
  }: JobContext<typeof SDG_JOB>): Promise<{ generated: number; version_id: string | null }> {
    const run = await this.sdg.findRunUnscoped(payload.sdg_run_id);
    if (!run || isTerminal(run.tracked.state))
      return { generated: run?.generated ?? 0, version_id: run?.versionId ?? null };
    const adapter = await this.sdg.find(run.workspaceId, run.adapterId);
    if (!adapter) throw new JobFailure('the SDG adapter was deleted', { code: 'adapter_gone', retry: false });
    const seeds = run.params.seed
      ? (
          await this.sdg.seedRows(run.params.seed.dataset_id, run.params.seed.version_number, run.params.seed.limit)
        ).map((r) => r.data)
      : [{}];
    const combos = combinations(adapter.spec.dimensions);
    const perPrompt = adapter.kind === 'llm' ? (adapter.spec as LlmSpec).count : 1;
    const planned = seeds.length * combos.length * perPrompt;
    if (planned > run.params.max_rows)
      throw new JobFailure(
        `${seeds.length} seed rows x ${combos.length} dimension combinations${perPrompt > 1 ? ` x ${perPrompt} rows per prompt` : ''} = ${planned} rows, over max_rows ${run.params.max_rows}`,
        { code: SdgErrors.sdg_too_many_rows, retry: false },
      );

    const rows: Array<Record<string, unknown>> = [];
    const errors: string[] = [];
    let dropped = 0;
    const drop = (reason: string) => {
      dropped++;
      if (errors.length < MAX_ERRORS) errors.push(reason);
    };
    let index = 0;
    for (const seed of seeds) {
      for (const dim of combos) {
        signal.throwIfAborted();
        const dimColumns = adapter.spec.dimension_columns ? dim : {};
        if (adapter.kind === 'template') {
          const row: Record<string, unknown> = { ...dimColumns };
          const missing: string[] = [];
          for (const [column, template] of Object.entries((adapter.spec as TemplateSpec).columns)) {
            const rendered = renderSdgTemplate(template, { seed, dim, index });
            missing.push(...rendered.missing);
            row[column] = rendered.text;
          }
          if (missing.length) drop(`row ${index}: the seed row has no ${[...new Set(missing)].join(', ')}`);
          else rows.push(row);
          index++;
          continue;
        }
        const spec = adapter.spec as LlmSpec;
        const generated = await this.askLlm(
          adapter.judgeId!,
          run,
          spec,
          renderSdgTemplate(spec.prompt, { seed, dim, index }).text,
          signal,
        );
        if ('error' in generated) drop(`prompt ${index}: ${generated.error}`);
        else {
          for (const candidate of generated.rows) {
            const missing = spec.columns.filter((c) => !(c in candidate));
            if (missing.length) drop(`prompt ${index}: a generated row lacks ${missing.join(', ')}`);
            else rows.push({ ...dimColumns, ...Object.fromEntries(spec.columns.map((c) => [c, candidate[c]])) });
          }
        }
        index++;
      }
    }
    if (!rows.length)
      throw new JobFailure(`no row was generated: ${errors.slice(0, 3).join('; ') || 'nothing to generate'}`, {
        code: 'nothing_generated',
        retry: false,
      });
    const version = await this.generatedRows.appendVersion(
      run.workspaceId,
      run.targetDatasetId,
      rows,
      run.params.message,
      run.createdBy,
    );
    await this.transactions.run(async () => {
      await this.sdg.saveRun(Object.assign(run, { generated: rows.length, dropped, errors, versionId: version.id }));
      await this.tracked.succeed(SDG_RUNS, run.id);
    });
    return { generated: rows.length, version_id: version.id };
  }

  /** One prompt's rows from the LLM: a JSON object {rows: [...]} (or an array), repaired when slightly malformed. */
  private async askLlm(
    judgeId: string,
    run: SdgRunEntity,
    spec: LlmSpec,
    prompt: string,
    signal: AbortSignal,
  ): Promise<{ rows: Array<Record<string, unknown>> } | { error: string }> {
    const judge = await this.judges.find(run.workspaceId, judgeId);
    if (!judge) throw new JobFailure('the judge of the SDG adapter was deleted', { code: 'judge_gone', retry: false });
    const key = judge.secretId ? await this.secrets.resolveValue(run.workspaceId, judge.secretId) : null;
    const system = `You generate test data for evaluating an AI application. Answer with only a JSON object {"rows": [...]} holding exactly ${spec.count} objects, each with exactly the keys ${spec.columns.map((c) => `"${c}"`).join(', ')} and string values.`;
    const call = await callJudge(
      judgeConnection(judge),
      key,
      [
        { role: 'system', content: system },
        { role: 'user', content: prompt },
      ],
      { signal },
    );
    if (!call.ok || call.text === null) return { error: `the LLM call failed: ${call.error?.message ?? 'no text'}` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(call.text);
    } catch {
      try {
        const start = call.text.search(/[[{]/);
        parsed = JSON.parse(jsonrepair(start >= 0 ? call.text.slice(start) : call.text));
      } catch {
        return { error: `the LLM answer is not JSON: ${call.text.slice(0, 200)}` };
      }
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { rows?: unknown })?.rows;
    if (!Array.isArray(list)) return { error: 'the LLM answer has no rows array' };
    return {
      rows: list
        .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && !Array.isArray(r))
        .slice(0, spec.count),
    };
  }
}
