import { Injectable } from '@nestjs/common';
import { jsonrepair } from 'jsonrepair';
import { callJudge } from '#libs/evaluation/judges/judge-client.js';
import { valueAt } from '#libs/evaluation/row-context.js';
import type { ConfigSection, ReportSection, SectionKey } from '#libs/reports/report.types.js';
import {
  BUILTIN_PROMPTS,
  draftSections,
  renderPrompt,
  REPORT_TEXT_KEPT,
  sectionMarkdown,
  type ReportInput,
  type ReportItem,
  type SectionDraft,
} from '#libs/reports/sections.js';
import type { JudgeEntity } from '../catalogues/entities/judge.entity.js';
import { judgeConnection } from '../catalogues/judges/judges.service.js';
import type { RunEntity } from '../runs/entities/run.entity.js';
import { RunReadService, type RunItemRow } from '../runs/run-read.service.js';
import { itemResult } from '../runs/execution/run-summaries.service.js';
import { SecretsService } from '../secrets/secrets.service.js';

const SYSTEM_PROMPT =
  'You write one section of an evaluation report about an AI application. Use only the figures and examples you are given; never invent numbers. ' +
  'Answer with a JSON object {"markdown": "..."} whose value is the section narrative in Markdown, without a heading.';

/** Builds a report's sections from a run: figures from its results, narratives from the judge or the template. */
@Injectable()
export class ReportBuilder {
  constructor(
    private readonly runs: RunReadService,
    private readonly secrets: SecretsService,
  ) {}

  /**
   * The run, its recorded results and those of the baseline run, as the section builders take
   * them: read a page at a time, each item kept without its row data and with its texts cut to what
   * a section shows (REPORT_TEXT_KEPT), so a report holds a few hundred bytes per item.
   */
  async input(run: RunEntity, baseline: RunEntity | null): Promise<ReportInput> {
    const items = async (r: RunEntity): Promise<ReportItem[]> => {
      const kept: ReportItem[] = [];
      for await (const page of this.runs.itemPages(r.id))
        for (const i of page) if (i.status !== 'pending') kept.push(reportItem(i, r));
      return kept;
    };
    return {
      run: {
        id: run.id,
        name: run.name,
        state: run.state,
        sut_name: run.snapshot.sut.name,
        dataset_name: run.snapshot.dataset.name,
        version_number: run.snapshot.dataset.version_number,
        created_at: run.createdAt.toISOString(),
        finished_at: run.finishedAt?.toISOString() ?? null,
        pass_rule: run.snapshot.pass_rule,
        metrics: run.snapshot.metrics.map((m) => ({
          name: m.name,
          better: m.better,
          gating: m.gating,
          min_pass_rate: m.min_pass_rate,
        })),
        validations: await this.runs.judgeValidations(run),
      },
      items: await items(run),
      baseline: baseline
        ? {
            id: baseline.id,
            name: baseline.name,
            created_at: baseline.createdAt.toISOString(),
            metrics: baseline.snapshot.metrics.map((m) => ({
              name: m.name,
              better: m.better,
              gating: m.gating,
              min_pass_rate: m.min_pass_rate,
            })),
            items: await items(baseline),
          }
        : null,
    };
  }

  /** The baseline run: the one named, else the previous succeeded run of the same SUT on the same dataset. */
  async baseline(run: RunEntity, namedId?: string | null): Promise<RunEntity | null> {
    const id = namedId ?? (await this.runs.previousSucceededId(run));
    if (!id) return null;
    return this.runs.find(run.workspaceId, id);
  }

  /**
   * The planned sections built from the input. With a judge, each narrative comes from its
   * section prompt through the judge (in parallel); a failed call falls back to the template and
   * says why in `judge_error`.
   */
  async sections(
    workspaceId: string,
    input: ReportInput,
    planned: ConfigSection[],
    judge: JudgeEntity | null,
    prompts: Map<string, string>,
    only?: Set<SectionKey>,
  ): Promise<ReportSection[]> {
    const drafts = draftSections(input, planned).filter((d) => !only || only.has(d.key));
    let key: string | null = null;
    let keyError: string | null = null;
    if (judge?.secretId) {
      try {
        key = await this.secrets.resolveValue(workspaceId, judge.secretId);
      } catch {
        keyError = "the judge's secret could not be read";
      }
    }
    return Promise.all(
      drafts.map(async (draft): Promise<ReportSection> => {
        let narrative = draft.narrative;
        let generatedBy: 'judge' | 'template' = 'template';
        let judgeError: string | null = null;
        if (judge) {
          const answer = keyError
            ? { error: keyError }
            : await this.narrate(
                judge,
                key,
                renderPrompt(prompts.get(draft.key) ?? BUILTIN_PROMPTS[draft.key], input, draft),
              );
          if ('text' in answer) {
            narrative = answer.text;
            generatedBy = 'judge';
          } else judgeError = answer.error;
        }
        return section(draft, narrative, generatedBy, judgeError);
      }),
    );
  }

  private async narrate(
    judge: JudgeEntity,
    key: string | null,
    prompt: string,
  ): Promise<{ text: string } | { error: string }> {
    const call = await callJudge(judgeConnection(judge), key, [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: prompt },
    ]);
    if (!call.ok || call.text === null)
      return { error: `the judge call failed (${call.error?.code ?? 'no_text'}: ${call.error?.message ?? 'no text'})` };
    const text = narrativeOf(call.text);
    return text ? { text } : { error: 'the judge answered without a narrative' };
  }
}

function section(
  draft: SectionDraft,
  narrative: string,
  generatedBy: 'judge' | 'template',
  judgeError: string | null,
): ReportSection {
  return {
    key: draft.key,
    title: draft.title,
    questions: draft.questions,
    markdown: sectionMarkdown(draft.title, narrative, draft.figures, judgeError),
    data: draft.data,
    generated_by: generatedBy,
    judge_error: judgeError,
    edited: false,
    edited_at: null,
    edited_by: null,
  };
}

/** The narrative in a judge's answer: `{"markdown": ...}` (repaired when slightly malformed), else the text itself without code fences. */
export function narrativeOf(text: string): string {
  const trimmed = text.trim();
  const start = trimmed.search(/[{]/);
  if (start >= 0) {
    for (const attempt of [
      () => JSON.parse(trimmed.slice(start)),
      () => JSON.parse(jsonrepair(trimmed.slice(start))),
    ]) {
      try {
        const parsed = attempt() as { markdown?: unknown; narrative?: unknown; text?: unknown };
        const value = parsed.markdown ?? parsed.narrative ?? parsed.text;
        if (typeof value === 'string') return value.trim();
      } catch {
        // not JSON: fall through to the plain text
      }
    }
  }
  return trimmed
    .replace(/^```[a-z]*\n?/i, '')
    .replace(/\n?```$/, '')
    .trim();
}

/** The value as text, cut to what a report shows of it. */
function text(v: unknown): string | null {
  const whole = v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
  return whole === null ? null : whole.slice(0, REPORT_TEXT_KEPT);
}

function reportItem(i: RunItemRow, run: RunEntity): ReportItem {
  const mapping = run.snapshot.mapping;
  return {
    ...itemResult({ ...i, output: text(i.output) }),
    input: text(valueAt(i.data, mapping.input ?? 'input')),
    expected_output: text(valueAt(i.data, mapping.expected_output ?? 'expected_output')),
  };
}
