/**
 * The pure parts of an alert check: which two windows a check compares, the drop rule handed to
 * the statistics (libs/evaluation/online/drop-alert.ts), the evidence kept and sent, and which
 * change of state is worth an event.
 */
import type { Interval } from '#libs/evaluation/statistics/bootstrap.js';
import type { AlertState, DropEvaluation, DropRule, DropTest } from '#libs/evaluation/online/drop-alert.js';

/** The reference a recent window is compared with. */
export type ReferenceWindow = { kind: 'trailing'; seconds: number } | { kind: 'fixed'; from: Date; to: Date };

/** What a check needs of a rule. */
export interface CheckSettings extends DropRule {
  recent_seconds: number;
  reference: ReferenceWindow;
}

/** Scores observed in [from, to). */
export interface TimeWindow {
  from: Date;
  to: Date;
}

/** One window's scores as a check counts them: passes of the scores with a verdict, and the errors beside them. */
export interface WindowScores {
  passes: number;
  trials: number;
  errored: number;
}

/** A window in the evidence: its bounds, counts, pass rate and the rate's Wilson interval. */
export interface WindowEvidence {
  from: string;
  to: string;
  passes: number;
  trials: number;
  errored: number;
  rate: number | null;
  interval: Interval | null;
}

/** One check's evaluation as kept on the rule, in events and in webhooks (JSON-ready). */
export interface AlertEvaluation {
  checked_at: string;
  verdict: DropEvaluation['verdict'];
  /** Why there is no verdict (too few scores), else null. */
  reason: string | null;
  test: DropTest | null;
  p_value: number | null;
  /** Recent rate minus reference rate (negative for a drop) with Newcombe's interval. */
  difference: { value: number; interval: Interval } | null;
  recent: WindowEvidence;
  reference: WindowEvidence;
  /** The alert after this check. */
  state: AlertState;
}

/** The most a window reaches back: a trailing reference or a fixed one spans at most this. */
export const MAX_WINDOW_SECONDS = 366 * 24 * 3600;

/**
 * The windows a check at `now` compares: recent = [now - recent_seconds, now); a trailing
 * reference is the period of its length right before the recent window, a fixed one its own bounds.
 */
export function checkWindows(settings: CheckSettings, now: Date): { recent: TimeWindow; reference: TimeWindow } {
  const recent = { from: new Date(now.getTime() - settings.recent_seconds * 1000), to: now };
  const reference =
    settings.reference.kind === 'trailing'
      ? { from: new Date(recent.from.getTime() - settings.reference.seconds * 1000), to: recent.from }
      : { from: settings.reference.from, to: settings.reference.to };
  return { recent, reference };
}

/** Where a rule's settings do not hold together: the member and why, or null. */
export function settingsProblem(settings: CheckSettings): { field: string; detail: string } | null {
  if (!(settings.alpha < settings.alpha_resolve))
    return {
      field: 'alpha_resolve',
      detail: `alpha_resolve (${settings.alpha_resolve}) must be greater than alpha (${settings.alpha}): a firing alert resolves only on p-values well above the firing bar`,
    };
  const reference = settings.reference;
  if (reference.kind === 'fixed') {
    const span = (reference.to.getTime() - reference.from.getTime()) / 1000;
    if (!(span > 0)) return { field: 'reference.to', detail: 'a fixed reference window needs `from` before `to`' };
    if (span > MAX_WINDOW_SECONDS)
      return { field: 'reference.to', detail: 'a fixed reference window spans at most 366 days' };
  }
  return null;
}

function windowEvidence(window: TimeWindow, scores: WindowScores, rate: number | null, interval: Interval | null) {
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    passes: scores.passes,
    trials: scores.trials,
    errored: scores.errored,
    rate,
    interval,
  };
}

/** The evaluation as kept and sent: the statistics' verdict and figures, the windows, the state after it. */
export function evaluationOf(
  evaluation: DropEvaluation,
  windows: { recent: TimeWindow; reference: TimeWindow },
  scores: { recent: WindowScores; reference: WindowScores },
  state: AlertState,
  checkedAt: Date,
): AlertEvaluation {
  const base = { checked_at: checkedAt.toISOString(), verdict: evaluation.verdict, state };
  if (evaluation.verdict === 'no_verdict') {
    const rate = (s: WindowScores) => (s.trials ? s.passes / s.trials : null);
    return {
      ...base,
      reason: evaluation.reason,
      test: null,
      p_value: null,
      difference: null,
      recent: windowEvidence(windows.recent, scores.recent, rate(scores.recent), null),
      reference: windowEvidence(windows.reference, scores.reference, rate(scores.reference), null),
    };
  }
  return {
    ...base,
    reason: null,
    test: evaluation.test,
    p_value: evaluation.p_value,
    difference: evaluation.difference,
    recent: windowEvidence(windows.recent, scores.recent, evaluation.recent.value, evaluation.recent.interval),
    reference: windowEvidence(
      windows.reference,
      scores.reference,
      evaluation.reference.value,
      evaluation.reference.interval,
    ),
  };
}

/** A change of the alert worth an event and a webhook: it fired, or it resolved. */
export function transitionOf(previous: AlertState, next: AlertState): 'firing' | 'resolved' | null {
  if (previous.status === next.status) return null;
  return next.status === 'firing' ? 'firing' : 'resolved';
}
