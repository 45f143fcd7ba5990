import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { allErrorCodes } from '#libs/common/error-codes.js';
import { problemType } from '#libs/common/problem.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { repoRoot } from './support/spec-operations.js';

/**
 * docs/errors.md is generated from the error-code registry once the application has booted
 * (every family has registered its codes by then). Drift fails; UPDATE_DOCS=1 rewrites it.
 */
const DOC = join(repoRoot, 'docs', 'errors.md');

const INTRO = `# Errors

<!-- Generated from the error-code registry (libs/common/error-codes.ts and each family's
     <family>.errors.ts) by test/contract/error-catalogue.e2e-spec.ts. Do not edit by hand:
     run \`UPDATE_DOCS=1 npm test -- test/contract/error-catalogue\`. -->

Every error the service returns is \`application/problem+json\` (RFC 9457), whatever failed:
validation, authentication, access, a missing record or route, a conflict, an unreachable
database, or an unexpected fault.

\`\`\`json
{
  "type": "/problems/validation-failed",
  "title": "Validation failed",
  "status": 400,
  "detail": "2 fields are invalid: primary_color, logo_url",
  "error_code": "validation_failed",
  "request_id": "3f1c9a52-8d4e-4b7a-9a43-0c6e2f5d7b18",
  "errors": [
    { "field": "primary_color", "message": "primary_color must be a #RRGGBB colour" },
    { "field": "logo_url", "message": "logo_url must be an https URL" }
  ]
}
\`\`\`

| Member | Always | Meaning |
|---|---|---|
| \`type\` | yes | A URI reference naming the problem kind: \`/problems/<error-code-with-dashes>\`. |
| \`title\` | yes | Short, stable, human-readable summary of the kind (the title column below). |
| \`status\` | yes | The HTTP status, repeated in the body. |
| \`detail\` | yes | What went wrong in this occurrence, in a sentence meant for people (do not parse it). |
| \`error_code\` | yes | The stable, machine-readable code from the tables below; branch on this. |
| \`request_id\` | yes, on requests | Equals the \`X-Request-Id\` response header and the \`request_id\` of the server's log lines. |
| \`errors\` | on \`validation_failed\` and the codes below whose description says \`errors\` | On \`validation_failed\` and \`metric_params_invalid\`: one \`{field, message}\` per offending field (nested fields dotted: \`dimensions.0.name\`); on the others, one line (a string) per problem. |

Some codes add members of their own (RFC 9457 extensions), named in their description:
\`current_etag\` on \`precondition_failed\`, \`available\` on \`template_not_found\`, \`checks\` on
the 503 of \`GET /ready\`, \`accepted\` on \`unsupported_media_type\`. Headers that go with some
codes: \`WWW-Authenticate: Bearer\` on 401, \`Retry-After\` on 429 and 503, \`Allow\` on 405.
Status 500 bodies never carry internals; look the \`request_id\` up in the logs.
`;

function render(): string {
  const codes = allErrorCodes();
  // The codes every operation can answer first, then each family's own.
  const families = [...new Set(codes.map((c) => c.family))].sort(
    (a, b) => Number(b === 'common') - Number(a === 'common') || a.localeCompare(b),
  );
  const sections = families.map((family) => {
    const rows = codes
      .filter((c) => c.family === family)
      .map((c) => `| \`${c.code}\` | ${c.status} | ${c.title} | ${c.description.replace(/\|/g, '\\|')} |`);
    return [`## ${family}`, '', '| error_code | Status | Title | When |', '|---|---|---|---|', ...rows].join('\n');
  });
  return `${INTRO}\n${sections.join('\n\n')}\n`;
}

describe('error-code catalogue (docs/errors.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('registers well-formed codes: snake_case, a 4xx/5xx status, a title and a description', () => {
    const codes = allErrorCodes();
    expect(codes.length).toBeGreaterThan(15);
    for (const c of codes) {
      expect(c.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(c.status).toBeGreaterThanOrEqual(400);
      expect(c.status).toBeLessThan(600);
      expect(c.title.trim().length).toBeGreaterThan(0);
      expect(c.description.trim().length).toBeGreaterThan(10);
      expect(problemType(c.code)).toBe(`/problems/${c.code.replace(/_/g, '-')}`);
    }
  });

  it('matches docs/errors.md (UPDATE_DOCS=1 rewrites it)', () => {
    const current = render();
    if (process.env.UPDATE_DOCS === '1') {
      writeFileSync(DOC, current);
      return;
    }
    if (!existsSync(DOC))
      throw new Error('docs/errors.md is missing: run `UPDATE_DOCS=1 npm test -- test/contract/error-catalogue`');
    const committed = readFileSync(DOC, 'utf8');
    if (committed !== current) {
      const documented = new Set([...committed.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]));
      const registered = allErrorCodes().map((c) => c.code);
      const added = registered.filter((code) => !documented.has(code));
      const removed = [...documented].filter((code) => !registered.includes(code));
      throw new Error(
        [
          'docs/errors.md differs from the error-code registry.',
          added.length ? `  codes not in the document: ${added.join(', ')}` : '',
          removed.length ? `  codes no longer registered: ${removed.join(', ')}` : '',
          !added.length && !removed.length ? '  a status, title or description changed' : '',
          'Run `UPDATE_DOCS=1 npm test -- test/contract/error-catalogue` and commit docs/errors.md.',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    }
  });
});
