import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { pageOf, pageWindow, type Page, type PageQueryDto } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import type {
  AlertCheckResponse,
  AlertEventResponse,
  AlertReferenceDto,
  AlertRuleResponse,
  CreateAlertRuleRequest,
  UpdateAlertRuleRequest,
} from './dto/online-alerts.dto.js';
import { OnlineAlertChecker, settingsOf } from './alert-check.job.js';
import { OnlineAlertErrors } from './alerts.errors.js';
import { toAlertEventResponse, toAlertRuleResponse } from './alerts.mapper.js';
import { OnlineAlertsRepository, type AlertRuleRow } from './alerts.repository.js';
import { settingsProblem, type CheckSettings, type ReferenceWindow } from './alerts.rules.js';

/** A trailing reference's length unless one is given: the day before the recent window. */
const DEFAULT_REFERENCE_SECONDS = 86400;
/** What a rule starts with when its request leaves a member out. */
const DEFAULTS = {
  recent_seconds: 3600,
  reference: { kind: 'trailing', seconds: DEFAULT_REFERENCE_SECONDS } as ReferenceWindow,
  alpha: 0.05,
  alpha_resolve: 0.2,
  min_samples: 100,
  min_drop: 0.03,
  fire_after: 3,
  resolve_after: 3,
  check_seconds: 300,
};

/** The members whose change is a change of the statistics: the alert starts again from ok. */
const STATISTICS = [
  'metric',
  'recent_seconds',
  'reference_kind',
  'reference_seconds',
  'reference_from',
  'reference_to',
  'alpha',
  'alpha_resolve',
  'min_samples',
  'min_drop',
  'fire_after',
  'resolve_after',
] as const;

function invalid(field: string, detail: string): DomainError {
  return new DomainError(OnlineAlertErrors.alert_rule_invalid, detail, { field });
}

/** A request's reference as the rule keeps it, or the error naming the member at fault. */
function referenceOf(dto: AlertReferenceDto): ReferenceWindow {
  if (dto.kind === 'trailing') {
    if (dto.from !== undefined || dto.to !== undefined)
      throw invalid('reference.from', 'a trailing reference takes `seconds`, not `from` and `to`');
    return { kind: 'trailing', seconds: dto.seconds ?? DEFAULT_REFERENCE_SECONDS };
  }
  if (dto.seconds !== undefined)
    throw invalid('reference.seconds', 'a fixed reference takes `from` and `to`, not `seconds`');
  if (dto.from === undefined || dto.to === undefined)
    throw invalid(
      dto.from === undefined ? 'reference.from' : 'reference.to',
      'a fixed reference needs both `from` and `to`',
    );
  return { kind: 'fixed', from: new Date(dto.from), to: new Date(dto.to) };
}

function referenceColumns(reference: ReferenceWindow) {
  return reference.kind === 'trailing'
    ? { reference_kind: 'trailing', reference_seconds: reference.seconds, reference_from: null, reference_to: null }
    : { reference_kind: 'fixed', reference_seconds: null, reference_from: reference.from, reference_to: reference.to };
}

function checked(settings: CheckSettings): CheckSettings {
  const problem = settingsProblem(settings);
  if (problem) throw invalid(problem.field, problem.detail);
  return settings;
}

/**
 * Alert rules on an evaluator's scores: made, changed and removed by the workspace's members,
 * each keeping its alert's state; a rule's history of firings and resolutions; a check on demand.
 */
@Injectable()
export class OnlineAlertRulesService {
  constructor(
    private readonly alerts: OnlineAlertsRepository,
    private readonly checker: OnlineAlertChecker,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  /** Makes a rule on the evaluator's metric and queues its first check. */
  async create(
    access: WorkspaceAccess,
    evaluatorId: string,
    body: CreateAlertRuleRequest,
    caller: Principal,
  ): Promise<AlertRuleResponse> {
    const settings = checked({
      recent_seconds: body.recent_seconds ?? DEFAULTS.recent_seconds,
      reference: body.reference ? referenceOf(body.reference) : DEFAULTS.reference,
      alpha: body.alpha ?? DEFAULTS.alpha,
      alpha_resolve: body.alpha_resolve ?? DEFAULTS.alpha_resolve,
      min_samples: body.min_samples ?? DEFAULTS.min_samples,
      min_drop: body.min_drop ?? DEFAULTS.min_drop,
      fire_after: body.fire_after ?? DEFAULTS.fire_after,
      resolve_after: body.resolve_after ?? DEFAULTS.resolve_after,
    });
    const rule = await this.transactions.run(async () => {
      const evaluator = await this.alerts.evaluator(access.workspaceId, evaluatorId);
      if (!evaluator) throw new NotFoundError('online evaluator', evaluatorId);
      await this.nameFree(evaluator.id, body.name);
      await this.scoredMetric(evaluator.id, body.metric);
      const { reference, ...statistics } = settings;
      const rule = await this.alerts.insert({
        workspace_id: access.workspaceId,
        evaluator_id: evaluator.id,
        name: body.name,
        description: body.description ?? '',
        metric: body.metric,
        kind: body.kind ?? 'pass_rate',
        ...statistics,
        ...referenceColumns(reference),
        check_seconds: body.check_seconds ?? DEFAULTS.check_seconds,
        enabled: body.enabled ?? true,
        created_by: caller.userId,
      });
      if (rule.enabled) await this.checker.schedule(rule, new Date());
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_alert_rule.created',
        targetType: 'online_alert_rule',
        targetId: rule.id,
        details: { evaluator_id: evaluator.id, name: rule.name, metric: rule.metric },
      });
      return rule;
    });
    return toAlertRuleResponse(rule);
  }

  async list(access: WorkspaceAccess, evaluatorId: string, query: PageQueryDto): Promise<Page<AlertRuleResponse>> {
    const evaluator = await this.alerts.evaluator(access.workspaceId, evaluatorId);
    if (!evaluator) throw new NotFoundError('online evaluator', evaluatorId);
    const [rows, total] = await this.alerts.page(access.workspaceId, evaluator.id, pageWindow(query));
    return pageOf(rows, total, query, toAlertRuleResponse);
  }

  async get(access: WorkspaceAccess, id: string): Promise<AlertRuleResponse> {
    return toAlertRuleResponse(await this.require(access, id));
  }

  /**
   * Changes a rule. A change of its statistics starts the alert again from ok (no event, no
   * webhook); enabling it again or changing how often it is checked starts a new chain of checks
   * at once, and the old chain's pending check finds itself replaced.
   */
  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateAlertRuleRequest,
    caller: Principal,
  ): Promise<AlertRuleResponse> {
    const rule = await this.transactions.run(async () => {
      const rule = await this.alerts.find(access.workspaceId, id, true);
      if (!rule) throw new NotFoundError('alert rule', id);
      const current = settingsOf(rule);
      const settings = checked({
        recent_seconds: body.recent_seconds ?? current.recent_seconds,
        reference: body.reference ? referenceOf(body.reference) : current.reference,
        alpha: body.alpha ?? current.alpha,
        alpha_resolve: body.alpha_resolve ?? current.alpha_resolve,
        min_samples: body.min_samples ?? current.min_samples,
        min_drop: body.min_drop ?? current.min_drop,
        fire_after: body.fire_after ?? current.fire_after,
        resolve_after: body.resolve_after ?? current.resolve_after,
      });
      if (body.name !== undefined && body.name !== rule.name)
        await this.nameFree(rule.evaluator_id, body.name, rule.id);
      if (body.metric !== undefined && body.metric !== rule.metric)
        await this.scoredMetric(rule.evaluator_id, body.metric);
      const { reference, ...statistics } = settings;
      const next = {
        name: body.name ?? rule.name,
        description: body.description ?? rule.description,
        metric: body.metric ?? rule.metric,
        ...statistics,
        ...referenceColumns(reference),
        check_seconds: body.check_seconds ?? rule.check_seconds,
        enabled: body.enabled ?? rule.enabled,
      };
      const reset = STATISTICS.some((k) => !sameValue(next[k], rule[k]));
      const reschedule = next.enabled !== rule.enabled || (next.enabled && next.check_seconds !== rule.check_seconds);
      await this.alerts.update(access.workspaceId, rule.id, {
        ...next,
        ...(reset && {
          status: 'ok',
          breaches: 0,
          calms: 0,
          last_evaluation: null,
          state_version: rule.state_version + 1,
        }),
        ...(reschedule && { check_seq: rule.check_seq + 1 }),
      });
      const updated = (await this.alerts.find(access.workspaceId, rule.id))!;
      if (reschedule && updated.enabled) await this.checker.schedule(updated, new Date());
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_alert_rule.updated',
        targetType: 'online_alert_rule',
        targetId: rule.id,
        details: { fields: Object.keys(body), state_reset: reset },
      });
      return updated;
    });
    return toAlertRuleResponse(rule);
  }

  /** Removes a rule with its history; its pending check finds nothing and ends. */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const rule = await this.alerts.find(access.workspaceId, id, true);
      if (!rule) throw new NotFoundError('alert rule', id);
      await this.alerts.delete(access.workspaceId, rule.id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'online_alert_rule.deleted',
        targetType: 'online_alert_rule',
        targetId: rule.id,
        details: { evaluator_id: rule.evaluator_id, name: rule.name },
      });
    });
  }

  /** The rule's firings and resolutions, newest first. */
  async events(access: WorkspaceAccess, id: string, query: PageQueryDto): Promise<Page<AlertEventResponse>> {
    const rule = await this.require(access, id);
    const [rows, total] = await this.alerts.events(access.workspaceId, rule.id, pageWindow(query));
    return pageOf(rows, total, query, toAlertEventResponse);
  }

  /** Checks the rule now, as its schedule would: the evaluation, the state it moved to, any firing or resolution. */
  async checkNow(access: WorkspaceAccess, id: string): Promise<AlertCheckResponse> {
    const outcome = await this.checker.check(access.workspaceId, id, new Date());
    return {
      evaluation: outcome.evaluation,
      transition: outcome.transition,
      rule: toAlertRuleResponse(outcome.rule),
    };
  }

  private async require(access: WorkspaceAccess, id: string): Promise<AlertRuleRow> {
    const rule = await this.alerts.find(access.workspaceId, id);
    if (!rule) throw new NotFoundError('alert rule', id);
    return rule;
  }

  /** The metric must be one a version of the evaluator scores (an old version's scores still fill the windows). */
  private async scoredMetric(evaluatorId: string, metric: string): Promise<void> {
    const scored = await this.alerts.scoredMetrics(evaluatorId);
    if (!scored.includes(metric))
      throw invalid('metric', `The evaluator scores ${scored.map((m) => `"${m}"`).join(', ')}, not "${metric}"`);
  }

  private async nameFree(evaluatorId: string, name: string, except?: string): Promise<void> {
    if (await this.alerts.nameTaken(evaluatorId, name, except))
      throw new DomainError(
        OnlineAlertErrors.alert_rule_name_taken,
        `The evaluator already has an alert rule named "${name}"`,
        { name },
      );
  }
}

/** Equal values, dates by their instant. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return a === b;
}
