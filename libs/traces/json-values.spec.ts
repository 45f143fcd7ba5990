import { describe, expect, it } from '@jest/globals';
import { valueDepth } from '#libs/common/json-limits.js';
import { JsonPathSplitter, JsonValuesError, type JsonPathValue } from './json-values.js';

const OTLP = [
  '$.resourceSpans.*.resource',
  '$.resourceSpans.*.scopeSpans.*.scope',
  '$.resourceSpans.*.scopeSpans.*.spans.*',
];

/** The document fed in chunks of `size` bytes. */
function split(text: string, paths: string[], size: number): JsonPathValue[] {
  const bytes = Buffer.from(text, 'utf8');
  const splitter = new JsonPathSplitter(paths);
  const out: JsonPathValue[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...splitter.write(bytes.subarray(i, i + size)));
  out.push(...splitter.end());
  return out;
}

describe('JsonPathSplitter', () => {
  const doc = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot "quoted" \\ é 😀' } }] },
        schemaUrl: 'https://x/{[',
        scopeSpans: [
          {
            scope: { name: 'openinference', version: '1' },
            spans: [
              {
                traceId: 'ab',
                name: 'a } ] , "',
                attributes: [{ key: 'k', value: { intValue: '3' } }],
                deep: [[[[]]]],
              },
              'not an object',
              42,
              null,
              { name: '\\"\\\\', nested: { 'key with spaces': [1, 2.5e3, true, false] } },
            ],
          },
        ],
      },
      { scopeSpans: [{ spans: [{ spanId: 'last' }] }] },
    ],
  };
  const text = JSON.stringify(doc, null, 1);
  // Nesting as isTooDeep measures it (valueDepth) on the parsed value.
  const found = (value: unknown, key: string | number): JsonPathValue => ({ value, key, depth: valueDepth(value, 64) });
  const expected: JsonPathValue[] = [
    found((doc.resourceSpans[0] as { resource: unknown }).resource, 'resource'),
    found((doc.resourceSpans[0].scopeSpans[0] as { scope: unknown }).scope, 'scope'),
    ...doc.resourceSpans[0].scopeSpans[0].spans.map((value, i) => found(value, i)),
    found({ spanId: 'last' }, 0),
  ];

  it('finds the values at the paths, in document order, with their nesting, however the chunks fall', () => {
    for (const size of [1, 2, 3, 7, 64, text.length]) expect(split(text, OTLP, size)).toEqual(expected);
    expect(split(JSON.stringify(doc), OTLP, 5)).toEqual(expected);
  });

  it('matches any member under `*` and values at the root', () => {
    expect(split('{"data":[1,{"a":2}],"spans":{"x":"y"}}', ['$.data.*', '$.spans.*'], 3)).toEqual([
      { value: 1, key: 0, depth: 0 },
      { value: { a: 2 }, key: 1, depth: 1 },
      { value: 'y', key: 'x', depth: 0 },
    ]);
    expect(split(' [ ] ', ['$.*'], 1)).toEqual([]);
    expect(split('"just a string"', ['$'], 4)).toEqual([{ value: 'just a string', key: '', depth: 0 }]);
  });

  it('refuses a document that stops being JSON, wherever the fault is', () => {
    const bad = [
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"a":1},{"a":]}]}]}',
      '{"resourceSpans":[{"schemaUrl":tru}]}',
      '{"resourceSpans" [1]}',
      '{"resourceSpans":[1,]}',
      '{"resourceSpans":[1] x',
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{"a":1}',
      '{"resourceSpans":[{"scopeSpans":[{"spans":["open',
      '   ',
    ];
    for (const text of bad)
      for (const size of [1, 4, text.length]) expect(() => split(text, OTLP, size)).toThrow(Error);
    expect(() => split('{"a":1} {}', ['$.a'], 2)).toThrow(JsonValuesError);
  });
});
