import { Injectable } from '@nestjs/common';
import pLimit from 'p-limit';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { grade } from '#libs/evaluation/judges/grade.js';
import type { GradeResult } from '#libs/evaluation/judges/judge.types.js';
import { MIN_VALIDATION_PAIRS, type JudgePair } from '#libs/evaluation/judge-validation.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobFailure } from '#libs/queue/job-outcome.js';
import { isTerminal, type JobContext } from '#libs/queue/job.types.js';
import { TrackedRecords } from '#libs/queue/tracked-records.service.js';
import type { JudgeValidationSource } from '../../catalogues/entities/judge-validation.entity.js';
import type { JudgedSpec, MetricConfigEntity } from '../../catalogues/entities/metric-config.entity.js';
import { JudgeValidationsService } from '../../catalogues/judge-validations/judge-validations.service.js';
import type { JudgeEntity } from '../../catalogues/entities/judge.entity.js';
import { judgeConnection, JudgesService } from '../../catalogues/judges/judges.service.js';
import { MetricDefaultsService } from '../../catalogues/metrics/metric-defaults.service.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { MembersService } from '../../workspaces/members.service.js';
import { MAX_JUDGE_RUN_ERRORS, MAX_JUDGE_RUN_ITEMS } from '../dto/review-judging.dto.js';
import { ReviewQueuesService } from '../review-queues.service.js';
import { REVIEW_JUDGE_JOB } from '../review.jobs.js';
import { ReviewRepository, type ItemRow } from '../review.repository.js';
import type { RubricField } from '../review.rules.js';
import { humanVerdict, pairOf, textOf, type LabelledItem } from './review-judging.rules.js';
import {
  REVIEW_JUDGE_RUNS,
  ReviewJudgingRepository,
  type JudgeRunCounts,
  type JudgeRunItemError,
  type JudgeRunRow,
} from './review-judging.repository.js';

/** Items graded between two progress reports. */
const PROGRESS_EVERY = 10;
/** An item ready for the judge, with its row (its id and context snapshot). */
type ReadyItem = LabelledItem & { item: ItemRow };

/**
 * Applies a judged metric config version's judge to a review queue's finally labelled items (the
 * item's context snapshot: input, expected output, output), with the judge's max concurrency,
 * pairs each verdict with the final label (and each reviewer's label, for the ceiling) and
 * records the judge validation through the catalogues.
 */
@Injectable()
export class ReviewJudge {
  constructor(
    private readonly judging: ReviewJudgingRepository,
    private readonly review: ReviewRepository,
    private readonly queues: ReviewQueuesService,
    private readonly metricDefaults: MetricDefaultsService,
    private readonly judges: JudgesService,
    private readonly secrets: SecretsService,
    private readonly members: MembersService,
    private readonly validations: JudgeValidationsService,
    private readonly tracked: TrackedRecords,
    private readonly transactions: TransactionRunner,
  ) {}

  /** The queue marks the run running and ends it when the job ends without it (`tracks`). */
  @JobHandler(REVIEW_JUDGE_JOB, { maxAttempts: 2, tracks: REVIEW_JUDGE_RUNS })
  async judge({
    payload,
    signal,
    progress,
  }: JobContext<typeof REVIEW_JUDGE_JOB>): Promise<{ validation_id: string | null }> {
    const run = await this.judging.findRunUnscoped(payload.judge_run_id);
    if (!run || isTerminal(run.state)) return { validation_id: run?.validation_id ?? null };
    const queue = await this.review.findQueue(run.workspace_id, run.queue_id);
    if (!queue) throw stop('the review queue was deleted', 'queue_gone');
    const config = (await this.metricDefaults.inputs(run.workspace_id)).configs.find(
      (c) => c.id === run.metric_config_id,
    );
    if (!config?.judged || !config.judgeId)
      throw stop(`metric config ${run.config_name} v${run.config_version} was deleted or lost its judge`, 'judge_gone');
    const judge = await this.judges.find(run.workspace_id, config.judgeId);
    if (!judge) throw stop(`the judge connection of ${config.name} v${config.configVersion} was deleted`, 'judge_gone');
    const starter = (
      await this.members.list({ workspaceId: run.workspace_id, role: 'owner', viaSystemAdmin: false })
    ).find((m) => m.user_id === run.created_by && m.role !== 'viewer');
    if (!starter) throw stop('the member who asked for the judge run is no longer a member', 'starter_not_member');
    const field = (await this.queues.rubric(queue, run.rubric_version)).fields.find((f) => f.name === run.field);
    if (!field) throw stop(`rubric version ${run.rubric_version} has no field ${run.field}`, 'field_gone');

    const finals = (await this.review.allItems(queue.id)).filter((i) => i.state === 'final');
    if (!finals.length) throw stop(`no item of the queue has a final label yet`, 'no_final_labels');
    const taken = finals.slice(0, MAX_JUDGE_RUN_ITEMS);
    const labelled = await this.labelled(queue.id, taken, field, run.positive, config.judged);
    const counts: JudgeRunCounts = {
      items: taken.length,
      graded: 0,
      ungraded: 0,
      unlabelled: taken.length - labelled.length,
      errors: [],
      validation_id: null,
    };
    if (!labelled.length) {
      await this.judging.saveCounts(run.id, counts);
      throw stop(`no final label has a value of ${field.name}`, 'no_final_labels');
    }

    const results = await this.gradeAll(labelled, judge, config.judged, { signal, progress });
    signal.throwIfAborted();

    const pairs: JudgePair[] = [];
    const errors: JudgeRunItemError[] = [];
    results.forEach((result, n) => {
      const l = labelled[n];
      const verdict = result?.verdict;
      if (!verdict) {
        const error = result?.error ?? { code: 'no_verdict', message: 'the judge gave no verdict' };
        errors.push({ item_id: l.item.id, code: error.code, message: error.message });
        return;
      }
      pairs.push(pairOf(l, verdict, config.judged!, field));
    });
    Object.assign(counts, {
      graded: pairs.length,
      ungraded: errors.length,
      errors: errors.slice(0, MAX_JUDGE_RUN_ERRORS),
    });
    if (!pairs.length) {
      await this.judging.saveCounts(run.id, counts);
      throw stop(
        `the judge graded none of the ${labelled.length} items: ${errors[0]?.code}: ${errors[0]?.message}`,
        'judge_unreachable',
      );
    }
    if (pairs.length < MIN_VALIDATION_PAIRS) {
      await this.judging.saveCounts(run.id, counts);
      throw stop(
        `${pairs.length} items have both a judge verdict and a final label; a validation needs at least ${MIN_VALIDATION_PAIRS}`,
        'too_few_pairs',
      );
    }
    return this.record(run, config, pairs, counts, starter);
  }

  /** Each item's grade (null when the run was cancelled before its call), at the judge's max concurrency, with progress reports. */
  private async gradeAll(
    labelled: ReadyItem[],
    judge: JudgeEntity,
    judged: JudgedSpec,
    { signal, progress }: Pick<JobContext<typeof REVIEW_JUDGE_JOB>, 'signal' | 'progress'>,
  ): Promise<Array<GradeResult | null>> {
    const key = judge.secretId ? await this.secrets.resolveValue(judge.workspaceId, judge.secretId) : null;
    const slots = pLimit(judge.maxConcurrency);
    let done = 0;
    return Promise.all(
      labelled.map((l) =>
        slots(async (): Promise<GradeResult | null> => {
          if (signal.aborted) return null;
          const context = l.item.context;
          const row = context.row && typeof context.row === 'object' ? (context.row as Record<string, unknown>) : null;
          const result = await grade(
            judgeConnection(judge),
            key,
            judged.rubric,
            judged.scale,
            {
              input: context.input,
              expected_output: context.expected_output,
              output: textOf(context.output),
              ...(row ? { row } : {}),
            },
            { signal },
          );
          if (++done % PROGRESS_EVERY === 0 || done === labelled.length)
            await progress({ done, total: labelled.length });
          return result;
        }),
      ),
    );
  }

  /** Records the validation, the counts and the end of the run in one unit of work. */
  private record(
    run: JudgeRunRow,
    config: MetricConfigEntity,
    pairs: JudgePair[],
    counts: JudgeRunCounts,
    starter: { user_id: string; email: string; role: WorkspaceAccess['role'] },
  ): Promise<{ validation_id: string }> {
    const source: JudgeValidationSource = {
      run_id: null,
      kind: 'review_judge_run',
      field: run.field,
      queue_id: run.queue_id,
      rubric_version: run.rubric_version,
      judge_run_id: run.id,
      repetition: 'first',
      unlabelled_rows: counts.unlabelled,
      unmatched_labels: 0,
    };
    return this.transactions.run(async () => {
      const validation = await this.validations.record(
        { workspaceId: run.workspace_id, role: starter.role, viaSystemAdmin: false },
        {
          metricConfigId: config.id,
          metric: config.name,
          source,
          pairs,
          level: run.confidence,
          seed: run.seed,
          dimension: null,
        },
        { userId: starter.user_id, email: starter.email },
      );
      await this.judging.saveCounts(run.id, { ...counts, validation_id: validation.id });
      await this.tracked.succeed(REVIEW_JUDGE_RUNS, run.id, {
        done: pairs.length + counts.ungraded,
        total: pairs.length + counts.ungraded,
      });
      return { validation_id: validation.id };
    });
  }

  /** The taken items whose final label has a value of the field, with its verdict and each reviewer's. */
  private async labelled(
    queueId: string,
    items: ItemRow[],
    field: RubricField,
    positive: string[] | null,
    judged: JudgedSpec,
  ): Promise<ReadyItem[]> {
    const reviews = new Map<string, Array<boolean | null>>();
    for (const label of await this.review.queueLabels(queueId)) {
      const list = reviews.get(label.item_id) ?? [];
      list.push(humanVerdict(label.values?.[field.name], field, positive, judged));
      reviews.set(label.item_id, list);
    }
    return items.flatMap((item) => {
      const value = item.final_label?.[field.name];
      const human = humanVerdict(value, field, positive, judged);
      return human === null || value === undefined
        ? []
        : [{ item, ref: item.ref, value, human, reviews: reviews.get(item.id) ?? [] }];
    });
  }
}

function stop(message: string, code: string): JobFailure {
  return new JobFailure(message, { code, retry: false });
}
