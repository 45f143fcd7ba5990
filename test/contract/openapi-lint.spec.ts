import { describe, expect, it } from '@jest/globals';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import rulesets from '@stoplight/spectral-rulesets';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/spec-operations.js';

/**
 * Spectral's `spectral:oas` ruleset (its recommended rules, what `extends: spectral:oas` means; errors and warnings) over the committed
 * document, which openapi-drift.e2e-spec.ts keeps equal to the served one. The one exception is
 * the specification's own: it defines two pairs of paths that differ only in a parameter's name
 * (GET /reports/{run_id} beside /reports/{report_id}, and the two section-content paths), which
 * the interface contract binds and docs/api-conventions.md records.
 */
const SPECIFIED_EQUIVALENT_PATHS = [
  'Paths "/reports/{run_id}" and "/reports/{report_id}" must not be equivalent.',
  'Paths "/reports/{report_id}/content/{key}" and "/reports/{report_id}/content/{section_key}" must not be equivalent.',
];

describe('OpenAPI document under Spectral (spectral:oas)', () => {
  it("has no error and no warning beyond the specification's equivalent paths", async () => {
    const { Spectral, Document } = spectralCore;
    const spectral = new Spectral();
    // The ruleset's declared type lacks `extends`, which RulesetDefinition's union wants; it is one.
    spectral.setRuleset({ extends: [[rulesets.oas as RulesetDefinition, 'recommended']] });
    const text = readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8');
    const results = await spectral.run(new Document(text, Parsers.Json, 'docs/openapi.json'));
    const findings = results
      .filter((r) => r.severity <= 1)
      .filter((r) => !(r.code === 'path-params' && SPECIFIED_EQUIVALENT_PATHS.includes(r.message)))
      .map((r) => `${r.severity === 0 ? 'error' : 'warning'} ${r.code} at ${r.path.join('.')}: ${r.message}`);
    expect(findings).toEqual([]);
    // The exception is exactly what the specification defines, not a blanket one.
    expect(
      results
        .filter((r) => r.code === 'path-params')
        .map((r) => r.message)
        .sort(),
    ).toEqual([...SPECIFIED_EQUIVALENT_PATHS].sort());
  }, 120_000);
});

/**
 * OWASP API Security's rules on rate limiting (the ruleset's API4 rules, the others off): every
 * operation documents its 429 with a body, every 429 its Retry-After, and every 2xx and 4xx answer
 * its rate-limit fields (here `RateLimit`, with `RateLimit-Policy`).
 */
const OWASP_RATE_LIMIT_RULES = [
  'owasp:api4:2023-rate-limit',
  'owasp:api4:2023-rate-limit-retry-after',
  'owasp:api4:2023-rate-limit-responses-429',
];

// The package's declarations describe its ESM default as the CommonJS module (exports.default).
const owaspRuleset = ((owasp as unknown as { default?: RulesetDefinition }).default ??
  owasp) as unknown as RulesetDefinition;

describe('OpenAPI document under Spectral (OWASP rate-limit rules)', () => {
  it('documents the rate limits of every operation', async () => {
    const { Spectral, Document } = spectralCore;
    const spectral = new Spectral();
    spectral.setRuleset({
      extends: [[owaspRuleset, 'off']],
      rules: Object.fromEntries(OWASP_RATE_LIMIT_RULES.map((rule) => [rule, 'error'])),
    });
    const text = readFileSync(join(repoRoot, 'docs', 'openapi.json'), 'utf8');
    const results = await spectral.run(new Document(text, Parsers.Json, 'docs/openapi.json'));
    expect(results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual([]);
    // The rules ran: the same document without its 429s fails the first of them.
    const stripped = JSON.parse(text) as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    };
    for (const item of Object.values(stripped.paths))
      for (const operation of Object.values(item)) delete operation.responses?.['429'];
    const broken = await spectral.run(new Document(JSON.stringify(stripped), Parsers.Json, 'stripped.json'));
    expect(new Set(broken.map((r) => r.code))).toEqual(new Set(['owasp:api4:2023-rate-limit-responses-429']));
  }, 120_000);
});
