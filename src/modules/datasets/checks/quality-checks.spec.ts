import { describe, expect, it } from '@jest/globals';
import { ibanValid, luhnValid, findPii } from './pii.js';
import {
  QualityCheckSelectionError,
  runQualityChecks,
  suggestChecks,
  validateSelection,
  type QualityContext,
  type QualityRow,
} from './quality-checks.js';

function ctxOf(rows: QualityRow[], mapping: QualityContext['mapping'] = {}): QualityContext {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.data)))];
  return {
    row_count: rows.length,
    mapping,
    columns: names.map((name) => {
      const types: Record<string, number> = {};
      for (const r of rows) {
        const v = r.data[name];
        const t =
          v === undefined || v === null
            ? 'null'
            : Array.isArray(v)
              ? 'array'
              : typeof v === 'number'
                ? 'number'
                : typeof v;
        types[t] = (types[t] ?? 0) + 1;
      }
      const lengths = rows
        .map((r) => r.data[name])
        .filter((v): v is string => typeof v === 'string')
        .map((v) => v.length);
      return { name, types, mean_length: lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : null };
    }),
  };
}

const rowsOf = (data: Array<Record<string, unknown>>): QualityRow[] =>
  data.map((d, i) => ({ row_id: `r${i}`, data: d }));

async function run(
  rows: QualityRow[],
  check: string,
  params: Record<string, unknown> = {},
  mapping: QualityContext['mapping'] = {},
) {
  const verdict = await runQualityChecks(rows, ctxOf(rows, mapping), validateSelection([{ check, params }]));
  return verdict.checks[0];
}

describe('quality checks', () => {
  it('exact duplicates: groups rows equal after normalisation, thresholds turn warn into fail', async () => {
    const rows = rowsOf([
      { q: 'Hello  World' },
      { q: 'hello world ' },
      { q: 'other' },
      { q: 'HELLO WORLD' },
      { q: 'x' },
      { q: 'y' },
      { q: 'z' },
      { q: 'w' },
      { q: 'v' },
      { q: 'u' },
    ]);
    const result = await run(rows, 'exact_duplicates', { fail_ratio: 0.5 });
    expect(result).toEqual(expect.objectContaining({ status: 'warn', affected_rows: 2, affected_ratio: 0.2 }));
    expect(result.findings).toEqual([expect.objectContaining({ row_ids: ['r0', 'r1', 'r3'] })]);
    expect((await run(rows, 'exact_duplicates', { fail_ratio: 0.1 })).status).toBe('fail');
    expect((await run(rows, 'exact_duplicates', { warn_ratio: 0.3, fail_ratio: 0.5 })).status).toBe('pass');
  });

  it('near duplicates: finds texts differing in a word, not unrelated texts; deterministic', async () => {
    const base = 'the quick brown fox jumps over the lazy dog near the river bank today';
    const rows = rowsOf([
      { q: base },
      { q: base.replace('today', 'tonight') },
      { q: 'completely unrelated sentence about invoices and refunds for a customer account' },
      { q: 'another different text on password resets with two factor authentication enabled' },
    ]);
    const first = await run(rows, 'near_duplicates', { threshold: 0.8 });
    expect(first.findings).toEqual([expect.objectContaining({ row_ids: ['r0', 'r1'], column: 'q' })]);
    expect(first.affected_rows).toBe(1);
    expect(await run(rows, 'near_duplicates', { threshold: 0.8 })).toEqual(first);
    expect((await run(rows, 'near_duplicates', { threshold: 0.95 })).findings).toEqual([]);
  });

  it('near duplicates scale to 100,000 rows', async () => {
    const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
    let seed = 42;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const texts = Array.from({ length: 100_000 }, () =>
      Array.from({ length: 20 }, () => vocabulary[Math.floor(rand() * vocabulary.length)]).join(' '),
    );
    // 50 planted near copies: one word changed at the end.
    for (let i = 0; i < 50; i++) texts[99_000 + i] = texts[i * 7].split(' ').slice(0, 19).concat('zzz').join(' ');
    const rows = texts.map((q, i) => ({ row_id: `r${i}`, data: { q } }));
    const result = await run(rows, 'near_duplicates', { threshold: 0.8, max_findings: 1000 });
    expect(result.findings).toHaveLength(50);
    expect(result.findings.every((f) => f.row_ids.length === 2)).toBe(true);
  }, 120_000);

  it('empty fields: mapped columns by default, null, absent and blank all count', async () => {
    const rows = rowsOf([
      { input: 'a', expected: 'b' },
      { input: ' ', expected: 'b' },
      { input: 'a' },
      { input: 'a', expected: null },
    ]);
    const result = await run(rows, 'empty_fields', {}, { input: 'input', expected_output: 'expected' });
    expect(result.affected_rows).toBe(3);
    expect(result.findings).toEqual([
      expect.objectContaining({ column: 'input', row_ids: ['r1'] }),
      expect.objectContaining({ column: 'expected', row_ids: ['r2', 'r3'] }),
    ]);
  });

  it('pii: emails, phones, Luhn-valid cards, valid IBANs and SSNs, masked', async () => {
    const rows = rowsOf([
      { t: 'write to jane.doe@example.com please' },
      { t: 'call me at +44 20 7946 0958' },
      { t: 'card 4111 1111 1111 1111 expires soon' },
      { t: 'card 4111 1111 1111 1112 is not valid' },
      { t: 'pay to GB82 WEST 1234 5698 7654 32' },
      { t: 'pay to GB82 WEST 1234 5698 7654 33' },
      { t: 'ssn 123-45-6789' },
      { t: 'order 12345 shipped in 2024' },
    ]);
    const result = await run(rows, 'pii');
    expect(result.findings.map((f) => [f.row_ids[0], f.detail?.kind])).toEqual([
      ['r0', 'email'],
      ['r1', 'phone'],
      ['r2', 'card'],
      ['r4', 'iban'],
      ['r6', 'ssn'],
    ]);
    expect(JSON.stringify(result.findings)).not.toContain('jane.doe@example.com');
    expect(result.status).toBe('fail');
    expect((await run(rows, 'pii', { kinds: ['ssn'] })).affected_rows).toBe(1);
  });

  it('pii checksums', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(ibanValid('DE89 3704 0044 0532 0130 01')).toBe(false);
    expect(findPii('no digits here', new Set(['phone']))).toEqual([]);
  });

  it('length outliers: IQR fences per column', async () => {
    const rows = rowsOf([
      ...Array.from({ length: 20 }, (_, i) => ({ q: 'x'.repeat(50 + (i % 5)) })),
      { q: 'x'.repeat(5000) },
      { q: 'tiny' },
    ]);
    const result = await run(rows, 'length_outliers', { k: 3 });
    expect(result.findings.map((f) => f.row_ids[0]).sort()).toEqual(['r20', 'r21']);
  });

  it('language mismatch: input and output languages, and the main language', async () => {
    const rows = rowsOf([
      {
        input: 'How do I reset the password of my account?',
        output: 'Open the settings page and choose reset password.',
      },
      {
        input: 'Where can I download my monthly invoice please?',
        output: 'Vous pouvez télécharger votre facture dans votre espace client.',
      },
      {
        input: 'Wie kann ich meine Adresse im Konto ändern?',
        output: 'Sie können Ihre Adresse in den Einstellungen ändern.',
      },
      { input: 'short', output: 'tiny' },
    ]);
    const result = await run(rows, 'language_mismatch', {}, { input: 'input', expected_output: 'output' });
    expect(result.findings.map((f) => [f.row_ids[0], f.detail])).toEqual([
      ['r1', { input: 'en', output: 'fr', expected_language: 'en' }],
      ['r2', { input: 'de', output: 'de', expected_language: 'en' }],
    ]);
    const spanish = await run(
      rowsOf([
        {
          input: 'Necesito cambiar la dirección de envío de mi pedido',
          output: 'Puede cambiarla desde la página de su pedido',
        },
      ]),
      'language_mismatch',
      { expected_language: 'es' },
      { input: 'input', expected_output: 'output' },
    );
    expect(spanish.affected_rows).toBe(0);
  });

  it('label leakage: the expected output inside input or context', async () => {
    const rows = rowsOf([
      {
        q: 'The capital of France is Paris. What is the capital of France?',
        a: 'The capital of France is Paris',
        c: '',
      },
      { q: 'What is the capital of Spain?', a: 'Madrid is the capital', c: 'Spain: madrid IS   the capital city.' },
      { q: 'What is 2+2?', a: '4', c: 'the answer is 4' },
      { q: 'Name a colour', a: 'Red is a colour', c: 'colours exist' },
    ]);
    const result = await run(rows, 'label_leakage', {}, { input: 'q', expected_output: 'a', context: 'c' });
    expect(result.findings.map((f) => [f.row_ids[0], f.detail?.leaked_into])).toEqual([
      ['r0', ['q']],
      ['r1', ['c']],
    ]);
  });

  it('skips checks whose columns are missing, and the verdict is the worst status', async () => {
    const rows = rowsOf([{ q: 'a' }, { q: 'a' }]);
    const verdict = await runQualityChecks(
      rows,
      ctxOf(rows),
      validateSelection([
        { check: 'label_leakage' },
        { check: 'exact_duplicates', params: { fail_ratio: 0.9 } },
        { check: 'pii', params: { columns: ['nope'] } },
      ]),
    );
    expect(verdict.checks.map((c) => c.status)).toEqual(['skipped', 'warn', 'skipped']);
    expect(verdict.checks[2].summary).toMatch(/no column nope/);
    expect(verdict).toEqual(expect.objectContaining({ verdict: 'warn', rows_checked: 2 }));
  });

  it('validates selections with clear messages', () => {
    const fails = (selection: unknown, message: RegExp) => {
      expect(() => validateSelection(selection)).toThrow(QualityCheckSelectionError);
      expect(() => validateSelection(selection)).toThrow(message);
    };
    fails('pii', /array/);
    fails([{ check: 'spelling' }], /unknown check "spelling"; the checks are exact_duplicates, near_duplicates/);
    fails([{ check: 'pii', params: { kind: ['email'] } }], /pii has no parameter "kind"/);
    fails([{ check: 'pii', params: { kinds: ['passport'] } }], /unknown kind "passport"/);
    fails([{ check: 'near_duplicates', params: { threshold: 'high' } }], /threshold must be a non-negative number/);
    fails([{ check: 'pii', extra: 1 }], /unknown member "extra"/);
    expect(validateSelection([{ check: 'near_duplicates', params: { threshold: 0.9 } }])[0].params).toEqual(
      expect.objectContaining({ threshold: 0.9, warn_ratio: 0, fail_ratio: 0.05, max_findings: 100 }),
    );
  });

  it('suggests the checks a schema supports, with reasons', () => {
    const rows = rowsOf([{ question: 'a long question text', answer: 'yes', n: 1 }]);
    const suggestions = suggestChecks(ctxOf(rows, { input: 'question', expected_output: 'answer' }));
    expect(suggestions.map((s) => s.check)).toEqual([
      'exact_duplicates',
      'near_duplicates',
      'empty_fields',
      'pii',
      'length_outliers',
      'language_mismatch',
      'label_leakage',
    ]);
    expect(suggestChecks(ctxOf(rowsOf([{ n: 1 }]))).map((s) => s.check)).toEqual(['exact_duplicates', 'empty_fields']);
  });
});
