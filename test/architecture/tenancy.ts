import { familyOf, type SourceFile } from './import-graph.js';

/** Line number (1-based) of an offset in a text. */
function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** A member access ending in `.workspaceId` or `.workspace_id`; group 1 is its root identifier. */
const WORKSPACE_MEMBER = String.raw`\b([A-Za-z_$][\w$]*)(?:\??\.[\w$]+)*\??\.(?:workspaceId|workspace_id)\b`;
const COMPARED = [
  new RegExp(WORKSPACE_MEMBER + String.raw`\s*[!=]==?`, 'g'),
  new RegExp(String.raw`[!=]==?\s*` + WORKSPACE_MEMBER, 'g'),
];

/**
 * Code of a family (not its repositories) that compares a record's workspace with `===`/`!==`: the
 * load-then-compare idiom (`if (!run || run.workspaceId !== access.workspaceId) throw …`). The
 * repository takes the workspace instead (`find(workspaceId, id)`, the workspace in its WHERE). The
 * caller's own standing (`access.workspaceId`) is no record, so comparing against it alone is not flagged.
 */
export function workspaceComparedAfterLoad(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const f of files) {
    if (!familyOf(f.path) || f.path.endsWith('.repository.ts')) continue;
    const hits = COMPARED.flatMap((re) => [...f.text.matchAll(re)])
      .filter((m) => m[1] !== 'access')
      .map((m) => m.index);
    for (const line of [...new Set(hits.map((i) => lineOf(f.text, i)))].sort((a, b) => a - b))
      found.push(`${f.path}:${line}: ${f.text.split('\n')[line - 1].trim()}`);
  }
  return found;
}

/**
 * Repository finders that load a record by its id alone (`find…(id: string, …)`) without saying so
 * in their name: a workspace-free lookup is named `…Unscoped`, so every caller of one is visible.
 * `exempt` lists the families whose records are no workspace's (users, the workspaces themselves).
 */
export function unnamedWorkspaceFreeFinders(files: SourceFile[], exempt: string[]): string[] {
  const found: string[] = [];
  for (const f of files) {
    const family = familyOf(f.path);
    if (!family || exempt.includes(family) || !f.path.endsWith('.repository.ts')) continue;
    for (const m of f.text.matchAll(/^\s+(?:async\s+)?(find\w*|lock\w*)\(\s*id: string\b/gm))
      if (!m[1].endsWith('Unscoped')) found.push(`${f.path}: ${m[1]}`);
  }
  return found;
}

/** Files outside repositories that call a workspace-free finder (`…Unscoped(`), with the finders they call. */
export function workspaceFreeCallers(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const f of files) {
    if (!familyOf(f.path) || f.path.endsWith('.repository.ts')) continue;
    const names = [...new Set([...f.text.matchAll(/\.(\w+Unscoped)\(/g)].map((m) => m[1]))].sort();
    if (names.length) found.push(`${f.path}: ${names.join(', ')}`);
  }
  return found;
}
