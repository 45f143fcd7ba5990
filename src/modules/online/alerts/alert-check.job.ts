import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { evaluateDrop, nextAlertState, type AlertState } from '#libs/evaluation/online/drop-alert.js';
import { JobHandler } from '#libs/queue/job-handler.decorator.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import type { JobContext } from '#libs/queue/job.types.js';
import { NotificationDispatcher } from '../../catalogues/notifications/notification-dispatcher.service.js';
import { TraceScoresService, type ScoreWindow } from '../../traces/scores/scores.service.js';
import { ONLINE_ALERT_CHECK_JOB } from './alerts.jobs.js';
import {
  OnlineAlertsRepository,
  type AlertExampleRow,
  type AlertRuleRow,
  type WatchedEvaluator,
} from './alerts.repository.js';
import {
  checkWindows,
  evaluationOf,
  transitionOf,
  type AlertEvaluation,
  type CheckSettings,
  type TimeWindow,
  type WindowScores,
} from './alerts.rules.js';

/** Low scores of the recent window an event and its webhook carry as examples. */
const EXAMPLES = 5;

/** What one check found and did. */
export interface AlertCheckOutcome {
  evaluation: AlertEvaluation;
  transition: 'firing' | 'resolved' | null;
  rule: AlertRuleRow;
}

/** The key of the check numbered `seq` in a rule's chain: one job per number, so one chain per rule. */
export function checkJobKey(ruleId: string, seq: number): string {
  return `${ONLINE_ALERT_CHECK_JOB}:${ruleId}:${seq}`;
}

/** A rule's settings as the statistics take them. */
export function settingsOf(rule: AlertRuleRow): CheckSettings {
  return {
    recent_seconds: rule.recent_seconds,
    reference:
      rule.reference_kind === 'trailing'
        ? { kind: 'trailing', seconds: rule.reference_seconds! }
        : { kind: 'fixed', from: rule.reference_from!, to: rule.reference_to! },
    alpha: rule.alpha,
    alpha_resolve: rule.alpha_resolve,
    min_samples: rule.min_samples,
    min_drop: rule.min_drop,
    fire_after: rule.fire_after,
    resolve_after: rule.resolve_after,
  };
}

/**
 * Checks alert rules: the two windows' counts from the trace scores, the drop evaluated, the
 * alert's state moved with hysteresis, and a firing or a resolution recorded as an event and sent
 * to the workspace's webhooks in the same transaction. Scheduled checks run as a chain of jobs,
 * each queueing the next `check_seconds` later.
 */
@Injectable()
export class OnlineAlertChecker {
  constructor(
    private readonly alerts: OnlineAlertsRepository,
    private readonly scores: TraceScoresService,
    private readonly dispatcher: NotificationDispatcher,
    private readonly queue: JobQueue,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Queues the rule's check numbered by its `check_seq` (inside the caller's unit of work). */
  async schedule(rule: AlertRuleRow, runAfter: Date): Promise<void> {
    await this.queue.enqueue({
      type: ONLINE_ALERT_CHECK_JOB,
      payload: { rule_id: rule.id },
      workspaceId: rule.workspace_id,
      targetType: 'online_alert_rule',
      targetId: rule.id,
      idempotencyKey: checkJobKey(rule.id, rule.check_seq),
      runAfter,
    });
  }

  /**
   * One scheduled check. A job that is not the rule's current link (the rule was disabled,
   * re-enabled or rescheduled since) ends without checking, and a retry after a committed
   * attempt finds the chain already moved on: each link checks at most once.
   */
  @JobHandler(ONLINE_ALERT_CHECK_JOB, { maxAttempts: 3 })
  async checkScheduled({ payload, job }: JobContext<typeof ONLINE_ALERT_CHECK_JOB>): Promise<Record<string, unknown>> {
    return this.transactions.run(async () => {
      const found = await this.alerts.findRuleUnscoped(payload.rule_id);
      const rule = found && (await this.alerts.find(found.workspace_id, found.id, true));
      if (!rule) return { skipped: 'the rule was deleted' };
      if (job.idempotencyKey !== checkJobKey(rule.id, rule.check_seq))
        return { skipped: 'a later schedule of the rule replaced this check' };
      if (!rule.enabled) return { skipped: 'the rule is disabled' };
      const outcome = await this.checkLocked(rule, new Date());
      if (await this.alerts.advanceChain(rule.workspace_id, rule.id, rule.check_seq))
        await this.schedule(
          { ...outcome.rule, check_seq: rule.check_seq + 1 },
          new Date(Date.now() + rule.check_seconds * 1000),
        );
      return {
        verdict: outcome.evaluation.verdict,
        status: outcome.rule.status,
        transition: outcome.transition,
      };
    });
  }

  /** Checks a rule of the workspace now, in its own unit of work (or the caller's). */
  check(workspaceId: string, ruleId: string, now: Date): Promise<AlertCheckOutcome> {
    return this.transactions.run(async () => {
      const rule = await this.alerts.find(workspaceId, ruleId, true);
      if (!rule) throw new NotFoundError('alert rule', ruleId);
      return this.checkLocked(rule, now);
    });
  }

  /** The check itself, on a rule read under its row lock in the open unit of work. */
  private async checkLocked(rule: AlertRuleRow, now: Date): Promise<AlertCheckOutcome> {
    const evaluator = await this.alerts.evaluator(rule.workspace_id, rule.evaluator_id);
    if (!evaluator) throw new NotFoundError('online evaluator', rule.evaluator_id);
    const settings = settingsOf(rule);
    const windows = checkWindows(settings, now);
    const recent = await this.windowScores(rule, windows.recent);
    const reference = await this.windowScores(rule, windows.reference);
    const drop = evaluateDrop(recent, reference, settings);
    const previous: AlertState = { status: rule.status, breaches: rule.breaches, calms: rule.calms };
    const next = nextAlertState(previous, drop, settings);
    const transition = transitionOf(previous, next);
    const evaluation = evaluationOf(drop, windows, { recent, reference }, next, now);
    const written = await this.alerts.update(
      rule.workspace_id,
      rule.id,
      {
        ...next,
        last_checked_at: now,
        last_evaluation: evaluation,
        state_version: rule.state_version + 1,
        ...(transition === 'firing' && { fired_at: now }),
        ...(transition === 'resolved' && { resolved_at: now }),
      },
      rule.state_version,
    );
    // Under the row lock nothing moves the state between the read and the write; should it, the
    // transaction rolls back and the job's retry checks again from the state as it then is.
    if (!written) throw new Error(`alert rule ${rule.id}: its state changed during the check`);
    if (transition) await this.recordTransition(rule, evaluator, transition, evaluation, windows.recent);
    const after = (await this.alerts.find(rule.workspace_id, rule.id))!;
    return { evaluation, transition, rule: after };
  }

  /** Passes among the scores with a verdict, and the errors beside them. */
  private async windowScores(rule: AlertRuleRow, window: TimeWindow): Promise<WindowScores> {
    const stats = await this.scores.windowStats(this.scoreWindow(rule, window));
    return { passes: stats.passed, trials: stats.passed + stats.failed, errored: stats.errored };
  }

  private scoreWindow(rule: AlertRuleRow, window: TimeWindow): ScoreWindow {
    return {
      workspaceId: rule.workspace_id,
      evaluatorId: rule.evaluator_id,
      metric: rule.metric,
      from: window.from,
      to: window.to,
    };
  }

  /** Records the firing or resolution with its evidence and queues its webhooks, in the check's transaction. */
  private async recordTransition(
    rule: AlertRuleRow,
    evaluator: WatchedEvaluator,
    transition: 'firing' | 'resolved',
    evaluation: AlertEvaluation,
    recent: TimeWindow,
  ): Promise<void> {
    const lowest = await this.scores.lowest(this.scoreWindow(rule, recent), EXAMPLES);
    const examples: AlertExampleRow[] = lowest.map((s) => ({
      trace_id: s.trace_id,
      span_id: s.span_id,
      session_id: s.session_id,
      score: s.score,
      passed: s.passed,
      reason: s.reason,
      observed_at: new Date(s.observed_at).toISOString(),
    }));
    const id = randomUUID();
    const deliveries = await this.dispatcher.dispatch(rule.workspace_id, `online_alert.${transition}`, {
      alert_event_id: id,
      status: transition === 'firing' ? 'firing' : 'ok',
      rule: {
        id: rule.id,
        name: rule.name,
        metric: rule.metric,
        kind: rule.kind,
        ...settingsOf(rule),
      },
      evaluator: evaluator,
      evaluation,
      examples,
    });
    await this.alerts.insertEvent({
      id,
      workspace_id: rule.workspace_id,
      rule_id: rule.id,
      evaluator_id: rule.evaluator_id,
      kind: transition,
      evidence: { evaluation, examples },
      deliveries,
    });
  }
}
