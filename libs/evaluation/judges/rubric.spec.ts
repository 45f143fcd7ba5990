import { describe, expect, it } from '@jest/globals';
import { checkRubric, gradingMessages, renderRubric } from './rubric.js';

describe('renderRubric', () => {
  it('fills the four roots, with whitespace inside the braces allowed', () => {
    const ctx = { input: 'Q?', output: 'A.', expected_output: 'B.', context: 'C' };
    expect(renderRubric('in={{input}} out={{ output }} exp={{expected_output}} ctx={{context}}', ctx)).toEqual({
      text: 'in=Q? out=A. exp=B. ctx=C',
      missing: [],
    });
  });

  it('inserts objects, arrays, numbers and booleans as JSON text', () => {
    const ctx = { input: { q: 'x' }, output: 'o', context: ['a', 'b'], row: { n: 3, flag: false } };
    expect(renderRubric('{{input}}|{{context}}|{{row.n}}|{{row.flag}}', ctx).text).toBe('{"q":"x"}|["a","b"]|3|false');
  });

  it('walks dotted row paths, array indexes and column names containing dots', () => {
    const row = { meta: { tags: ['t0', 't1'], author: { name: 'Ada' } }, 'a.b': 'literal' };
    expect(renderRubric('{{row.meta.author.name}} {{row.meta.tags.1}} {{row.a.b}}', { output: null, row }).text).toBe(
      'Ada t1 literal',
    );
  });

  it('lists missing values once and renders them empty', () => {
    const result = renderRubric('[{{expected_output}}][{{row.nope}}][{{output}}][{{row.nope}}][{{row.x.y}}]', {
      output: null,
      row: { x: 1 },
    });
    expect(result).toEqual({ text: '[][][][][]', missing: ['expected_output', 'row.nope', 'output', 'row.x.y'] });
  });

  it('leaves an unterminated "{{" as written and treats unknown placeholders as missing', () => {
    expect(renderRubric('a {{foo}} b {{input', { output: 'o', input: 'i' })).toEqual({
      text: 'a  b {{input',
      missing: ['foo'],
    });
  });
});

describe('checkRubric', () => {
  it('accepts a well-formed template', () => {
    expect(
      checkRubric('Q: {{input}}\nA: {{output}}\nRef: {{ expected_output }} {{context}} {{row.meta.lang}} {single}'),
    ).toEqual([]);
  });

  it('names an unterminated "{{" with its line and column', () => {
    const errors = checkRubric('Q: {{input}}\nA: {{output');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('unterminated "{{" at line 2, column 4');
  });

  it('flags an opening "{{" that another "{{" follows before it closes', () => {
    expect(checkRubric('{{input {{output}}')).toEqual([
      expect.stringContaining('unterminated "{{" at line 1, column 1'),
    ]);
  });

  it('names unknown roots and malformed row paths with their position', () => {
    const errors = checkRubric('{{inputs}} and {{row.}} and {{row.a..b}} and {{}}');
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/^placeholder \{\{inputs\}\} at line 1, column 1 is not a known placeholder/);
    expect(errors[1]).toContain('{{row.}} at line 1, column 16');
    expect(errors[2]).toContain('{{row.a..b}}');
    expect(errors[3]).toContain('{{}}');
  });
});

describe('gradingMessages', () => {
  it('states the numeric answer format and sends the rendered rubric', () => {
    const messages = gradingMessages('Grade {{output}}', { type: 'numeric', min: 1, max: 5 }, { output: 'Paris' });
    expect(messages).toHaveLength(2);
    expect(messages[0].role).toBe('system');
    expect(messages[0].content).toContain('{"score": <number between 1 and 5>, "reason": "<one or two sentences>"}');
    expect(messages[1]).toEqual({ role: 'user', content: 'Grade Paris' });
  });

  it('states the label answer format with every label', () => {
    const [system] = gradingMessages('x', { type: 'labels', labels: ['pass', 'fail'] }, { output: null });
    expect(system.content).toContain('{"label": "<one of "pass", "fail">", "reason": "<one or two sentences>"}');
  });
});
