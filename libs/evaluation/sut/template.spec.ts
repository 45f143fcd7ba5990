import { describe, expect, it } from '@jest/globals';
import {
  ALL_PLACEHOLDER_ROOTS,
  HTTP_PLACEHOLDER_ROOTS,
  checkTemplate,
  joinPointer,
  renderTemplate,
} from './template.js';
import type { RowContext } from './sut.types.js';

const row: RowContext = {
  row_id: 'r1',
  data: { question: 'Why?', meta: { tags: ['a', 'b'], score: 3 }, empty: null },
  input: 'Why is the sky blue?',
  expected_output: { answer: 'Rayleigh' },
  context: ['doc one', 'doc two'],
  session_id: 's1',
  turn: 2,
  history: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ],
};

const render = (value: unknown) => renderTemplate(value, row, { model: 'gpt-x' }, '/request/body');

describe('renderTemplate', () => {
  it('replaces a whole-value placeholder by the value itself', () => {
    expect(render('{{expected_output}}')).toEqual({ value: { answer: 'Rayleigh' }, issues: [] });
    expect(render('{{ turn }}').value).toBe(2);
    expect(render('{{row.meta}}').value).toEqual({ tags: ['a', 'b'], score: 3 });
    expect(render('{{env.model}}').value).toBe('gpt-x');
  });

  it('inserts embedded placeholders as text', () => {
    expect(render('Q: {{input}} ({{turn}}) {{row.meta.tags}} {{row.empty}}|{{context}}').value).toBe(
      'Q: Why is the sky blue? (2) ["a","b"] |["doc one","doc two"]',
    );
    expect(render('tag {{row.meta.tags.1}}, score {{row.meta.score}}').value).toBe('tag b, score 3');
  });

  it('walks nested JSON and leaves non-strings alone', () => {
    expect(
      render({ q: '{{input}}', n: 1, flag: true, list: ['{{row_id}}', null], nested: { s: '{{session_id}}' } }).value,
    ).toEqual({
      q: 'Why is the sky blue?',
      n: 1,
      flag: true,
      list: ['r1', null],
      nested: { s: 's1' },
    });
  });

  it('spreads {{history}} in arrays and renders no history as none', () => {
    expect(render(['{{history}}', { role: 'user', content: '{{input}}' }]).value).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'Why is the sky blue?' },
    ]);
    const firstTurn = renderTemplate(['{{ history }}', 'x'], { row_id: 'r2', data: {} }, {}, '');
    expect(firstTurn).toEqual({ value: ['x'], issues: [] });
  });

  it('reports a missing value with the placeholder and the available columns', () => {
    const { value, issues } = renderTemplate({ a: 'see {{row.nope}}' }, row, {}, '/request/body');
    expect(value).toEqual({ a: 'see ' });
    expect(issues).toEqual([
      { pointer: '/request/body/a', code: 'missing_value', message: expect.stringContaining('{{row.nope}}') },
    ]);
    expect(issues[0].message).toContain('question, meta, empty');
    expect(render('{{row.meta.tags.5}}').issues[0].code).toBe('missing_value');
    expect(renderTemplate('{{env.model}}', row, {}, '').issues[0].code).toBe('missing_value');
    expect(renderTemplate('{{input}}', { row_id: 'r3', data: {} }, {}, '').issues[0].message).toContain('(none)');
  });

  it('uses default("…") for missing and null values', () => {
    expect(render('{{ row.nope | default("n/a") }}')).toEqual({ value: 'n/a', issues: [] });
    expect(render('x{{row.empty | default("none")}}').value).toBe('xnone');
    expect(render('{{row.question | default("n/a")}}').value).toBe('Why?');
    expect(render('{{row.nope | default("a|b \\"q\\" }}")}}').value).toBe('a|b "q" }}');
  });

  it('json filter gives JSON text, also as a whole value', () => {
    expect(render('{{input | json}}').value).toBe('"Why is the sky blue?"');
    expect(render('{{row.meta | json}}').value).toBe('{"tags":["a","b"],"score":3}');
    expect(render('{{row.nope | default("x") | json}}').value).toBe('"x"');
  });

  it('reports syntax errors while rendering', () => {
    expect(render('{{input').issues).toEqual([
      { pointer: '/request/body', code: 'template_syntax', message: expect.stringContaining('unterminated') },
    ]);
  });
});

describe('checkTemplate', () => {
  it('accepts the known placeholders', () => {
    expect(
      checkTemplate(
        {
          a: '{{input}} {{expected_output}} {{context}} {{row.x.0}} {{row_id}} {{session_id}} {{turn}}',
          m: ['{{history}}', '{{env.model}}'],
        },
        '/request/body',
        ALL_PLACEHOLDER_ROOTS,
      ),
    ).toEqual([]);
  });

  it('points at the exact string, escaping ~ and /', () => {
    const issues = checkTemplate(
      { 'a/b': { 'c~d': ['ok', 'bad {{ input'] }, e: '{{}}' },
      '/request/body',
      ALL_PLACEHOLDER_ROOTS,
    );
    expect(issues).toEqual([
      { pointer: '/request/body/a~1b/c~0d/1', code: 'template_syntax', message: 'unterminated "{{" at character 4' },
      { pointer: '/request/body/e', code: 'template_syntax', message: 'empty placeholder "{{}}"' },
    ]);
    expect(joinPointer('', 'x/~y')).toBe('/x~1~0y');
  });

  it('rejects unknown roots, bare row, unknown filters and env.model without a model', () => {
    const codes = (text: string, roots = ALL_PLACEHOLDER_ROOTS) =>
      checkTemplate(text, '/p', roots).map((issue) => issue.code);
    expect(codes('{{question}}')).toEqual(['unknown_placeholder']);
    expect(codes('{{row}}')).toEqual(['unknown_placeholder']);
    expect(codes('{{row.}}')).toEqual(['unknown_placeholder']);
    expect(codes('{{input | upper}}')).toEqual(['template_syntax']);
    expect(codes("{{input | default('x')}}")).toEqual(['template_syntax']);
    expect(codes('{{env.model}}', HTTP_PLACEHOLDER_ROOTS)).toEqual(['unknown_placeholder']);
    expect(checkTemplate('{{question}}', '/p', ALL_PLACEHOLDER_ROOTS)[0].message).toContain('row.<column>');
  });
});
