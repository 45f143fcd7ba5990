import { describe, expect, it } from '@jest/globals';
import { checkAdapter, defaultAdapter } from './adapter.js';
import { extractResponse } from './extract.js';
import { boundTrajectory, MAX_STORED_STEPS, MAX_STORED_VALUE_CHARS } from '../trajectory/trajectory.types.js';
import { stepsTrajectory } from './response-trajectory.js';

const completion = (message: Record<string, unknown>) => ({
  choices: [{ index: 0, message: { role: 'assistant', ...message } }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const toolCall = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('the trajectory of a chat completion', () => {
  const response = defaultAdapter('openai_chat').response;

  it('reads the tool calls, arguments parsed; with content null the output is the calls as JSON text', () => {
    const body = completion({
      content: null,
      tool_calls: [toolCall('call_1', 'search', '{"q":"flights"}'), toolCall('call_2', 'weather', 'not json')],
    });
    const { extracted, issues } = extractResponse(response, body, 'openai_chat');
    expect(issues).toEqual([]);
    expect(extracted.trajectory).toEqual({
      source: 'response',
      steps: [
        { type: 'tool_call', name: 'search', arguments: { q: 'flights' }, call_id: 'call_1' },
        { type: 'tool_call', name: 'weather', arguments: 'not json', call_id: 'call_2' },
      ],
    });
    expect(JSON.parse(extracted.output!)).toEqual([
      { name: 'search', arguments: { q: 'flights' } },
      { name: 'weather', arguments: 'not json' },
    ]);
  });

  it('keeps the text as output when there is some, and an answer without calls has an empty trajectory', () => {
    const both = extractResponse(
      response,
      completion({ content: 'Searching.', tool_calls: [toolCall('c', 's', '{}')] }),
      'openai_chat',
    );
    expect(both.extracted.output).toBe('Searching.');
    expect(both.extracted.trajectory?.steps).toHaveLength(1);
    const plain = extractResponse(response, completion({ content: 'Paris.' }), 'openai_chat');
    expect(plain.extracted.trajectory).toEqual({ source: 'response', steps: [] });
    const none = extractResponse(response, completion({ content: null }), 'openai_chat');
    expect(none.extracted.output).toBeNull();
    expect(none.issues[0]).toMatchObject({ pointer: '/response/output', code: 'path_no_match' });
  });

  it('an http connection reads no trajectory without a path', () => {
    const body = completion({ content: null, tool_calls: [toolCall('c', 's', '{}')] });
    expect(extractResponse(response, body).extracted.trajectory).toBeNull();
  });
});

describe("an agent endpoint's steps at the adapter's trajectory path", () => {
  const adapter = (path: string, language: 'jsonpath' | 'jmespath' = 'jsonpath') => ({
    language,
    output: language === 'jsonpath' ? '$.answer' : 'answer',
    trajectory: path,
  });

  it('reads the common step shapes', () => {
    const body = {
      answer: 'Booked.',
      steps: [
        { type: 'tool', tool: 'search', args: { q: 'x' }, result: ['AF1'], id: 'a' },
        { tool_name: 'book', input: '{"flight":"AF1"}', error: { message: 'sold out' }, duration_ms: 12 },
        { type: 'llm', name: 'gpt-4o', output: 'Booked.' },
        { function: { name: 'notify', arguments: '{"to":"me"}' } },
        { type: 'planner', name: 'plan' },
      ],
    };
    const { extracted, issues } = extractResponse(adapter('$.steps'), body);
    expect(issues).toEqual([]);
    expect(extracted.trajectory?.steps).toEqual([
      { type: 'tool_call', name: 'search', arguments: { q: 'x' }, output: ['AF1'], call_id: 'a' },
      { type: 'tool_call', name: 'book', arguments: { flight: 'AF1' }, error: 'sold out', duration_ms: 12 },
      { type: 'llm', name: 'gpt-4o', output: 'Booked.' },
      { type: 'tool_call', name: 'notify', arguments: { to: 'me' } },
      { type: 'other', name: 'plan' },
    ]);
    expect(extractResponse(adapter('steps', 'jmespath'), body).extracted.trajectory).toEqual(extracted.trajectory);
  });

  it('reads an OpenAI message list, joining tool results to their calls by tool_call_id', () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris and Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [toolCall('c1', 'weather', '{"city":"Paris"}'), toolCall('c2', 'weather', '{"city":"Oslo"}')],
      },
      { role: 'tool', tool_call_id: 'c2', content: '{"temp":3}' },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: 'Paris is sunny, Oslo 3°C.' },
    ];
    const read = stepsTrajectory(messages);
    expect(read).toEqual({
      trajectory: {
        source: 'response',
        steps: [
          { type: 'tool_call', name: 'weather', arguments: { city: 'Paris' }, call_id: 'c1', output: 'sunny' },
          { type: 'tool_call', name: 'weather', arguments: { city: 'Oslo' }, call_id: 'c2', output: { temp: 3 } },
          { type: 'llm', name: 'assistant', output: 'Paris is sunny, Oslo 3°C.' },
        ],
      },
    });
  });

  it('a path that matches nothing or no list is an issue, and the trajectory is null (the output stands)', () => {
    const missing = extractResponse(adapter('$.steps'), { answer: 'x' });
    expect(missing.extracted).toMatchObject({ output: 'x', trajectory: null });
    expect(missing.issues).toEqual([
      { pointer: '/response/trajectory', code: 'path_no_match', message: '"$.steps" matches nothing in the response' },
    ]);
    const bad = extractResponse(adapter('$.steps'), { answer: 'x', steps: [{ args: {} }] });
    expect(bad.issues[0].message).toMatch(/step 0 has no name/);
    expect(extractResponse(adapter('$.steps'), { answer: 'x', steps: 'searched' }).issues[0].message).toMatch(
      /is string, not a list of steps/,
    );
  });

  it('the adapter check validates the path like the others', () => {
    const spec = {
      request: { body: {} },
      response: { language: 'jsonpath' as const, output: '$.a', trajectory: 'steps[' },
    };
    expect(checkAdapter(spec, 'http')).toEqual([
      expect.objectContaining({ pointer: '/response/trajectory', code: 'path_syntax' }),
    ]);
    expect(
      checkAdapter({ ...spec, response: { ...spec.response, trajectory: 3 as unknown as string } }, 'http'),
    ).toEqual([{ pointer: '/response/trajectory', code: 'invalid_spec', message: 'must be a path string' }]);
  });
});

describe('the stored bound', () => {
  it('keeps the first steps and cuts long values, counting what it dropped', () => {
    const steps = Array.from({ length: MAX_STORED_STEPS + 5 }, (_, i) => ({
      type: 'tool_call' as const,
      name: `t${i}`,
      output: i === 0 ? 'y'.repeat(MAX_STORED_VALUE_CHARS + 10) : i,
    }));
    const bounded = boundTrajectory({ source: 'response', steps });
    expect(bounded.steps).toHaveLength(MAX_STORED_STEPS);
    expect(bounded.truncated).toBe(5);
    expect(bounded.steps[0].output).toBe(`${'y'.repeat(MAX_STORED_VALUE_CHARS)}… (+10 chars)`);
    expect(bounded.steps[MAX_STORED_STEPS - 1]).toEqual(steps[MAX_STORED_STEPS - 1]);
    expect(boundTrajectory({ source: 'response', steps: [] })).toEqual({ source: 'response', steps: [] });
  });
});
