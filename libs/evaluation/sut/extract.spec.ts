import { describe, expect, it } from '@jest/globals';
import { checkPath, extractResponse } from './extract.js';

const chat = {
  choices: [{ message: { content: 'Paris' } }, { message: { content: 'Lyon' } }],
  usage: { prompt_tokens: 12, completion_tokens: '3', total_tokens: 'many' },
  cost: 0.002,
  contexts: [
    { text: 'a', score: 0.9 },
    { text: 'b', score: 0.1 },
  ],
  structured: { city: 'Paris', pop: 2 },
};

describe('checkPath', () => {
  it('accepts well-formed JSONPath and JMESPath', () => {
    for (const path of [
      '$',
      '$.a',
      '$.choices[0].message.content',
      '$[\'a b\']["c"]',
      '$..text',
      '$.a[*]',
      '$..*',
      '$..[0]',
      '$.a[?(@.score > 0.5)].text',
      '$.a[0:2]',
      '$.a[0,1]',
    ]) {
      expect(checkPath('jsonpath', path, '/response/output')).toBeNull();
    }
    expect(checkPath('jmespath', 'choices[0].message.content', '/x')).toBeNull();
    expect(checkPath('jmespath', 'contexts[?score > `0.5`].text | [0]', '/x')).toBeNull();
  });

  it('rejects what lenient JSONPath parsing would let through', () => {
    for (const path of [
      'choices[0]',
      '$.',
      '$.[',
      '$[',
      '$.a]',
      '$["a',
      '$.a[]',
      '$.a b',
      '$.a[?(@.x > )]',
      '$.a[?(@.foo(]',
      '  ',
    ]) {
      expect(checkPath('jsonpath', path, '/response/extras/a~1b')).toEqual({
        pointer: '/response/extras/a~1b',
        code: 'path_syntax',
        message: expect.any(String),
      });
    }
  });

  it('rejects bad JMESPath', () => {
    expect(checkPath('jmespath', 'choices[0', '/response/output')).toEqual({
      pointer: '/response/output',
      code: 'path_syntax',
      message: expect.stringContaining('invalid jmespath'),
    });
    expect(checkPath('jmespath', 'a.[', '/p')?.code).toBe('path_syntax');
  });
});

describe('extractResponse', () => {
  it('extracts output, numeric usage, cost and extras with JSONPath', () => {
    const { extracted, issues } = extractResponse(
      {
        language: 'jsonpath',
        output: '$.choices[*].message.content',
        usage: { prompt_tokens: '$.usage.prompt_tokens', completion_tokens: '$.usage.completion_tokens' },
        cost_usd: '$.cost',
        extras: {
          contexts: '$.contexts[*].text',
          first: '$.contexts[0]',
          best: '$.contexts[?(@.score > 0.5)].text',
          none: '$.nothing[*]',
        },
      },
      chat,
    );
    expect(issues).toEqual([]);
    expect(extracted).toEqual({
      output: 'Paris',
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: null },
      cost_usd: 0.002,
      extras: { contexts: ['a', 'b'], first: { text: 'a', score: 0.9 }, best: ['a'], none: [] },
      trajectory: null,
    });
  });

  it('returns non-string output as JSON text', () => {
    expect(extractResponse({ language: 'jsonpath', output: '$.structured' }, chat).extracted.output).toBe(
      '{"city":"Paris","pop":2}',
    );
    expect(extractResponse({ language: 'jmespath', output: 'structured.pop' }, chat).extracted.output).toBe('2');
  });

  it('extracts with JMESPath', () => {
    const { extracted, issues } = extractResponse(
      {
        language: 'jmespath',
        output: 'choices[1].message.content',
        usage: { prompt_tokens: 'usage.prompt_tokens' },
        extras: { texts: 'contexts[].text' },
      },
      chat,
    );
    expect(issues).toEqual([]);
    expect(extracted.output).toBe('Lyon');
    expect(extracted.usage.prompt_tokens).toBe(12);
    expect(extracted.extras).toEqual({ texts: ['a', 'b'] });
  });

  it('reports no match, numbers that are not numbers and bad paths', () => {
    const { extracted, issues } = extractResponse(
      {
        language: 'jsonpath',
        output: '$.answer',
        usage: { total_tokens: '$.usage.total_tokens', prompt_tokens: '$.usage.missing' },
        extras: { x: 'x' },
      },
      chat,
    );
    expect(extracted.output).toBeNull();
    expect(extracted.usage).toEqual({ prompt_tokens: null, completion_tokens: null, total_tokens: null });
    expect(issues.map(({ pointer, code }) => ({ pointer, code }))).toEqual([
      { pointer: '/response/output', code: 'path_no_match' },
      { pointer: '/response/usage/prompt_tokens', code: 'path_no_match' },
      { pointer: '/response/usage/total_tokens', code: 'not_a_number' },
      { pointer: '/response/extras/x', code: 'path_syntax' },
    ]);
    expect(issues[2].message).toContain('"many"');
  });

  it('treats a null output as no match and works on non-object bodies', () => {
    expect(extractResponse({ language: 'jsonpath', output: '$.a' }, { a: null }).issues[0].code).toBe('path_no_match');
    expect(extractResponse({ language: 'jsonpath', output: '$' }, 'plain').extracted.output).toBe('plain');
    expect(extractResponse({ language: 'jsonpath', output: '$.a' }, null).issues[0].code).toBe('path_no_match');
    expect(extractResponse({ language: 'jmespath', output: 'a' }, [1]).issues[0].code).toBe('path_no_match');
  });
});
