import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = [...sources(join(root, 'src')), ...sources(join(root, 'libs'))].map((path) => ({
  path: relative(root, path),
  text: readFileSync(path, 'utf8'),
}));

/** True when the file imports a value (not only types) from the module. */
function importsValueFrom(text: string, module: string): boolean {
  const statements = [...text.matchAll(/^import\s+([^;]*?)\s+from\s+'([^']+)';/gms)].filter((m) => m[2] === module);
  return statements.some(([, clause]) => {
    if (clause.startsWith('type ')) return false;
    const named = clause.match(/^\{([^}]*)\}$/s);
    if (!named) return true;
    return named[1].split(',').map((s) => s.trim()).filter(Boolean).some((spec) => !spec.startsWith('type '));
  });
}

describe('layering (STYLE.md habits)', () => {
  it('only repositories, entities, migrations and the database/queue libraries import typeorm values', () => {
    const allowed = /(\.repository\.ts|\.entity\.ts|\/migrations\/|^libs\/database\/|^libs\/queue\/.*(repository|store)\.ts$)/;
    const offenders = files.filter((f) => !allowed.test(f.path) && importsValueFrom(f.text, 'typeorm')).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('no code is handed an EntityManager or holds a connection of its own: the unit of work carries the transaction', () => {
    // A repository reached outside the open transaction waits forever on the embedded database's one
    // connection (libs/database/unit-of-work.ts); queries go through Db, units of work through TransactionRunner.
    const own = /^libs\/database\//;
    const handed = files.filter((f) => !own.test(f.path) && /\bEntityManager\b/.test(f.text)).map((f) => f.path);
    const injected = files
      .filter((f) => !own.test(f.path) && !f.path.includes('/migrations/'))
      .filter((f) => /@InjectRepository\(|@InjectDataSource\(|\.transaction\(|\.createQueryRunner\(/.test(f.text) || /readonly \w+: DataSource\b/.test(f.text))
      .map((f) => f.path);
    expect(handed).toEqual([]);
    expect(injected).toEqual([]);
  });

  it('only controllers (and the HTTP plumbing in libs/common, libs/auth) import express', () => {
    const allowed = /(\.controller\.ts$|^libs\/common\/|^libs\/auth\/|^src\/bootstrap\.ts$|^libs\/queue\/.*accepted.*\.ts$)/;
    const offenders = files.filter((f) => !allowed.test(f.path) && importsValueFrom(f.text, 'express')).map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('repositories throw no HTTP errors', () => {
    const offenders = files
      .filter((f) => f.path.endsWith('.repository.ts') && /(HttpException|NotFoundException|BadRequestException|ForbiddenException)\b/.test(f.text))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('every controller route states its access rule', () => {
    const rule = /@(Public|PublicWithOptionalUser|Authenticated|SystemAdmin|WorkspaceRoleRequired)\(/;
    const missing: string[] = [];
    for (const f of files.filter((x) => x.path.endsWith('.controller.ts'))) {
      const blocks = f.text.split(/\n(?=\s*@(?:Get|Post|Put|Patch|Delete)\()/).slice(1);
      for (const block of blocks) {
        const head = block.split(/\n\s*(?:async\s+)?[a-zA-Z]+\(/)[0];
        if (!rule.test(head)) missing.push(`${f.path}: ${block.trim().split('\n')[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('packaging', () => {
  it('package-lock.json has every optional platform entry, so `npm ci` accepts it on a fresh machine', async () => {
    const { spawnSync } = await import('node:child_process');
    const check = spawnSync(process.execPath, [join(root, '.ci', 'complete-lockfile.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
