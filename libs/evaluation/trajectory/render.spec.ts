import { describe, expect, it } from '@jest/globals';
import { countTokens } from '#libs/common/token-count.js';
import { renderTrajectory } from './render.js';
import type { Trajectory, TrajectoryStep } from './trajectory.types.js';

const step = (i: number): TrajectoryStep => ({
  type: 'tool_call',
  name: `tool_${i % 7}`,
  arguments: { page: i, query: `results for item ${i}` },
  output: { rows: i * 3 },
});

describe('renderTrajectory', () => {
  it('shows a short trajectory whole, with its final answer, and says nothing was left out', () => {
    const t: Trajectory = {
      source: 'response',
      steps: [
        { type: 'llm', name: 'gpt-4o', output: 'I will search.' },
        { type: 'tool_call', name: 'search', arguments: { q: 'flights' }, output: ['AF1', 'BA2'] },
      ],
    };
    const r = renderTrajectory(t, { max_tokens: 500, final_answer: 'Take AF1.' });
    expect(r.text).toBe(
      [
        'Trajectory of 2 steps, shown within a budget of 500 tokens: 2 shown, none omitted; arguments and outputs cut at 300 characters.',
        '#1 llm gpt-4o -> I will search.',
        '#2 tool_call search({"q":"flights"}) -> ["AF1","BA2"]',
        'Final answer: Take AF1.',
      ].join('\n'),
    );
    expect(r).toMatchObject({
      tokens: countTokens(r.text),
      max_tokens: 500,
      steps_total: 2,
      steps_shown: 2,
      omitted: 0,
    });
  });

  it('holds a 5,000-step trajectory to its budget, keeping the first and last steps, failures and the final answer', () => {
    const steps = Array.from({ length: 5000 }, (_, i) => step(i));
    steps[2500] = { type: 'tool_call', name: 'charge_card', arguments: { amount: 12 }, error: 'card declined' };
    const huge = 'x'.repeat(50_000);
    steps[0] = { ...steps[0], output: huge };
    const started = performance.now();
    const r = renderTrajectory({ source: 'response', steps }, { max_tokens: 1500, final_answer: 'All done.' });
    const elapsed = performance.now() - started;
    expect(r.tokens).toBe(countTokens(r.text));
    expect(r.tokens).toBeLessThanOrEqual(1500);
    expect(r.steps_total).toBe(5000);
    expect(r.steps_shown).toBeGreaterThan(5);
    expect(r.omitted).toBe(5000 - r.steps_shown);
    const lines = r.text.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^Trajectory of 5000 steps, shown within a budget of 1500 tokens: ${r.steps_shown} shown, ${r.omitted} omitted`,
      ),
    );
    expect(lines[1]).toMatch(/^#1 tool_call tool_0\(.*\) -> x+… \(\+\d+ chars\)$/);
    expect(r.text).toContain('#2501 tool_call charge_card({"amount":12}) !! ERROR: card declined');
    expect(r.text).toContain('#5000 tool_call tool_1(');
    expect(r.text).toMatch(/… \d+ steps omitted \(#\d+-#\d+\) …/);
    expect(lines[lines.length - 1]).toBe('Final answer: All done.');
    expect(elapsed).toBeLessThan(5000);
  });

  it('collapses identical consecutive steps into one line and counts them shown', () => {
    const same: TrajectoryStep = { type: 'tool_call', name: 'poll', arguments: { job: 1 }, output: 'pending' };
    const r = renderTrajectory({ source: 'response', steps: [same, same, same, step(1)] }, { max_tokens: 400 });
    expect(r.text).toContain('#1-3 tool_call poll({"job":1}) -> pending [repeated 3 times]');
    expect(r).toMatchObject({ steps_total: 4, steps_shown: 4, omitted: 0 });
  });

  it('states steps the stored trajectory dropped, and never goes below its least budget', () => {
    const r = renderTrajectory({ source: 'trace', steps: [step(0)], truncated: 9 }, { max_tokens: 10 });
    expect(r.max_tokens).toBe(100);
    expect(r.tokens).toBeLessThanOrEqual(100);
    expect(r.steps_total).toBe(10);
    expect(r.text).toContain('9 steps past the first 1 were not stored');
  });
});
