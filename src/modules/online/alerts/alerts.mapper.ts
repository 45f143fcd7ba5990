import type { AlertEventResponse, AlertRuleResponse } from './dto/online-alerts.dto.js';
import type { AlertEventRow, AlertRuleRow } from './alerts.repository.js';

/** An alert rule as responses show it: its settings, its reference window, its alert's state. */
export function toAlertRuleResponse(r: AlertRuleRow): AlertRuleResponse {
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    evaluator_id: r.evaluator_id,
    name: r.name,
    description: r.description,
    metric: r.metric,
    kind: r.kind,
    recent_seconds: r.recent_seconds,
    reference: {
      kind: r.reference_kind,
      seconds: r.reference_seconds,
      from: r.reference_from && r.reference_from.toISOString(),
      to: r.reference_to && r.reference_to.toISOString(),
    },
    alpha: r.alpha,
    alpha_resolve: r.alpha_resolve,
    min_samples: r.min_samples,
    min_drop: r.min_drop,
    fire_after: r.fire_after,
    resolve_after: r.resolve_after,
    check_seconds: r.check_seconds,
    enabled: r.enabled,
    status: r.status,
    breaches: r.breaches,
    calms: r.calms,
    last_checked_at: r.last_checked_at,
    last_evaluation: r.last_evaluation,
    fired_at: r.fired_at,
    resolved_at: r.resolved_at,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** A firing or a resolution with the evaluation that moved the alert and its examples. */
export function toAlertEventResponse(e: AlertEventRow): AlertEventResponse {
  return {
    id: e.id,
    rule_id: e.rule_id,
    evaluator_id: e.evaluator_id,
    kind: e.kind,
    evaluation: e.evidence.evaluation,
    examples: e.evidence.examples,
    deliveries: e.deliveries,
    created_at: e.created_at,
  };
}
