/**
 * A trajectory as a judge reads it: one line per step, within a token budget. The first and
 * last steps, the failed steps and the final answer are kept first; then steps from both ends
 * inwards while the budget lasts. Runs of identical consecutive steps collapse into one line;
 * long arguments and outputs are cut. The text states the budget and what it left out.
 * Tokens are counted with cl100k_base (js-tiktoken), what the common chat models bill.
 */
import { countTokens } from '#libs/common/token-count.js';
import { canonicalJson } from '#libs/traces/enrichment.js';
import type { Trajectory, TrajectoryStep } from './trajectory.types.js';

/** The judge's budget when none is given, and the least a render may ask for. */
export const DEFAULT_TRAJECTORY_TOKENS = 2000;
export const MIN_TRAJECTORY_TOKENS = 100;
/** Characters of an argument or output shown before it is cut (halved while the kept steps do not fit, down to 40). */
const VALUE_CHARS = 300;
const MIN_VALUE_CHARS = 40;
/** What one "… n steps omitted …" line may cost, charged to each step that could open a gap. */
const GAP_TOKENS = 16;

export interface RenderedTrajectory {
  text: string;
  /** Tokens of `text` (cl100k_base); never above max_tokens. */
  tokens: number;
  max_tokens: number;
  /** Steps the agent took, those dropped when it was stored included. */
  steps_total: number;
  /** Steps the text shows (a collapsed run counts each of its steps). */
  steps_shown: number;
  omitted: number;
}

interface StepGroup {
  /** Index of the group's first step in the stored trajectory. */
  first: number;
  count: number;
  step: TrajectoryStep;
}

function collapse(steps: TrajectoryStep[]): StepGroup[] {
  const groups: StepGroup[] = [];
  let lastKey: string | null = null;
  steps.forEach((step, index) => {
    const key = canonicalJson([step.type, step.name, step.arguments ?? null, step.output ?? null, step.error ?? null]);
    if (key === lastKey) groups[groups.length - 1].count++;
    else groups.push({ first: index, count: 1, step });
    lastKey = key;
  });
  return groups;
}

/** Text as it is; other values as canonical JSON, so a trajectory read back from storage (jsonb reorders keys) renders the same. */
function cut(value: unknown, chars: number): string {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  return text.length > chars ? `${text.slice(0, chars)}… (+${text.length - chars} chars)` : text;
}

function stepLine(group: StepGroup, chars: number): string {
  const { step, first, count } = group;
  const at = count > 1 ? `#${first + 1}-${first + count}` : `#${first + 1}`;
  const args = step.arguments === undefined || step.arguments === null ? '' : cut(step.arguments, chars);
  let line = `${at} ${step.type} ${step.name}${step.type === 'tool_call' || args ? `(${args})` : ''}`;
  if (step.output !== undefined && step.output !== null) line += ` -> ${cut(step.output, chars)}`;
  if (step.error) line += ` !! ERROR: ${cut(step.error, chars)}`;
  if (count > 1) line += ` [repeated ${count} times]`;
  return line;
}

/** Groups in the order they claim the budget: first, last, failed, then from both ends inwards. */
function priorityOrder(groups: StepGroup[]): number[] {
  const last = groups.length - 1;
  const order = [0, ...(last > 0 ? [last] : [])];
  groups.forEach((g, i) => {
    if (g.step.error && i !== 0 && i !== last) order.push(i);
  });
  for (let lo = 1, hi = last - 1; lo <= hi; lo++, hi--) {
    if (!groups[lo].step.error) order.push(lo);
    if (hi !== lo && !groups[hi].step.error) order.push(hi);
  }
  return order;
}

function header(total: number, shown: number, maxTokens: number, chars: number, stored: Trajectory): string {
  const dropped = stored.truncated
    ? `; ${stored.truncated} steps past the first ${stored.steps.length} were not stored`
    : '';
  const left =
    shown < total
      ? `${total - shown} omitted (the first and last steps, failed steps and the final answer are kept first)`
      : 'none omitted';
  return `Trajectory of ${total} steps, shown within a budget of ${maxTokens} tokens: ${shown} shown, ${left}; arguments and outputs cut at ${chars} characters${dropped}.`;
}

/** The lines of the chosen groups in order, with a line for each gap between them. */
function assemble(groups: StepGroup[], chosen: Set<number>, chars: number): string[] {
  const lines: string[] = [];
  let gapFrom: number | null = null;
  const gap = (end: number) => {
    if (gapFrom === null) return;
    const from = groups[gapFrom].first + 1;
    lines.push(`… ${end - groups[gapFrom].first} steps omitted (#${from}-#${end}) …`);
    gapFrom = null;
  };
  groups.forEach((g, i) => {
    if (chosen.has(i)) {
      gap(g.first);
      lines.push(stepLine(g, chars));
    } else gapFrom ??= i;
  });
  const lastGroup = groups[groups.length - 1];
  gap(lastGroup ? lastGroup.first + lastGroup.count : 0);
  return lines;
}

/** The text at this cut width within the budget; null when not even the header and final answer fit. */
function renderAt(
  stored: Trajectory,
  groups: StepGroup[],
  budget: { total: number; maxTokens: number; chars: number },
  footer: string[],
): { text: string; shown: number; endsKept: boolean } | null {
  const { total, maxTokens, chars } = budget;
  const reserve = countTokens(header(total, total, maxTokens, chars, stored)) + 8;
  let left = maxTokens - reserve - (footer.length ? countTokens(footer[0]) + 1 : 0);
  if (left < 0) return null;
  const chosen = new Set<number>();
  const last = groups.length - 1;
  for (const i of priorityOrder(groups)) {
    const cost = countTokens(stepLine(groups[i], chars)) + 1 + GAP_TOKENS;
    const kept = i === 0 || i === last || Boolean(groups[i].step.error);
    if (cost <= left) {
      chosen.add(i);
      left -= cost;
    } else if (!kept) break;
  }
  const shown = [...chosen].reduce((sum, i) => sum + groups[i].count, 0);
  const lines = [header(total, shown, maxTokens, chars, stored), ...assemble(groups, chosen, chars), ...footer];
  return { text: lines.join('\n'), shown, endsKept: !groups.length || (chosen.has(0) && chosen.has(last)) };
}

/** The largest prefix of `text` within `maxTokens` (a last resort: the budget is tiny for what must be kept). */
function cutToTokens(text: string, maxTokens: number): string {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(text.slice(0, mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo);
}

export function renderTrajectory(
  trajectory: Trajectory,
  opts: { max_tokens?: number; final_answer?: string | null } = {},
): RenderedTrajectory {
  const maxTokens = Math.max(MIN_TRAJECTORY_TOKENS, Math.floor(opts.max_tokens ?? DEFAULT_TRAJECTORY_TOKENS));
  const total = trajectory.steps.length + (trajectory.truncated ?? 0);
  const groups = collapse(trajectory.steps);
  const answer = opts.final_answer ?? null;
  const footerAt = (chars: number) => (answer === null ? [] : [`Final answer: ${cut(answer, chars * 2)}`]);
  const result = (text: string, shown: number): RenderedTrajectory => ({
    text,
    tokens: countTokens(text),
    max_tokens: maxTokens,
    steps_total: total,
    steps_shown: shown,
    omitted: total - shown,
  });
  // Narrower cuts until the first and last steps fit beside the rest.
  for (let chars = VALUE_CHARS; chars >= MIN_VALUE_CHARS; chars = Math.floor(chars / 2)) {
    const rendered = renderAt(trajectory, groups, { total, maxTokens, chars }, footerAt(chars));
    const narrowest = Math.floor(chars / 2) < MIN_VALUE_CHARS;
    if (rendered && (rendered.endsKept || narrowest) && countTokens(rendered.text) <= maxTokens)
      return result(rendered.text, rendered.shown);
  }
  const bare = [header(total, 0, maxTokens, MIN_VALUE_CHARS, trajectory), ...footerAt(MIN_VALUE_CHARS)].join('\n');
  return result(cutToTokens(bare, maxTokens), 0);
}
