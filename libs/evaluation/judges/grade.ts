/**
 * Grading one output with a judge: rubric -> call -> verdict, and the fixed probe the judge
 * test endpoint sends to check a connection end to end.
 */
import { callJudge, type CallJudgeOptions } from './judge-client.js';
import type { GradeResult, GradingContext, JudgeConnection, JudgeCredential, VerdictScale } from './judge.types.js';
import { gradingMessages } from './rubric.js';
import { parseVerdict } from './verdict.js';

export async function grade(
  conn: JudgeConnection,
  key: JudgeCredential,
  rubric: string,
  scale: VerdictScale,
  ctx: GradingContext,
  opts?: CallJudgeOptions,
): Promise<GradeResult> {
  const call = await callJudge(conn, key, gradingMessages(rubric, scale, ctx), opts);
  if (!call.ok || call.text === null) {
    const error = call.error ?? { code: 'malformed_response', message: 'the judge returned no text' };
    return { call, verdict: null, error: { code: error.code, message: error.message } };
  }
  const parsed = parseVerdict(call.text, scale);
  return 'verdict' in parsed
    ? { call, verdict: parsed.verdict, error: null }
    : { call, verdict: null, error: parsed.error };
}

export interface JudgeProbe {
  rubric: string;
  scale: VerdictScale;
  context: GradingContext;
}

/** A question any working judge grades high; the rubric is self-contained so no row is needed. */
export const PROBE: Readonly<JudgeProbe> = Object.freeze<JudgeProbe>({
  rubric:
    'Rate how well the answer answers the question on a 1-5 scale. Question: What is the capital of France? Answer: Paris is the capital of France.',
  scale: { type: 'numeric', min: 1, max: 5 },
  context: { output: 'Paris is the capital of France.' },
});

export function probeJudge(conn: JudgeConnection, key: JudgeCredential, opts?: CallJudgeOptions): Promise<GradeResult> {
  return grade(conn, key, PROBE.rubric, PROBE.scale, PROBE.context, opts);
}
