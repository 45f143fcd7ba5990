import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Principal } from '#libs/auth/roles.js';
import { CataloguesModule } from '#src/modules/catalogues/catalogues.module.js';
import { EmbeddingConfigsService } from '#src/modules/catalogues/embedding-configs/embedding-configs.service.js';
import { ListWorkspacesQuery } from '#src/modules/workspaces/dto/workspace.dto.js';
import { WorkspacesModule } from '#src/modules/workspaces/workspaces.module.js';
import { WorkspacesService } from '#src/modules/workspaces/workspaces.service.js';
import { domainError, principalOf, startMedium, sysadminIn, teamIn, type Caller, type Medium } from './medium.js';
import { IfMatchPrecondition } from '#libs/common/etag.js';
import { workspaceEtag } from '#src/modules/workspaces/workspaces.mapper.js';

/**
 * WorkspacesService called directly over the real database: what a creation writes, who sees
 * which workspace in the list (filters, sort, pages, system admins, API keys), updates and what
 * they touch, deletion and what goes with it, the embedding choice, and the audit rows. The route
 * guard's part (which role reaches an operation at all) and the request validation are
 * test/e2e/workspaces/workspaces.e2e-spec.ts's.
 */
describe('service tier: workspaces', () => {
  let s: Medium;
  let workspaces: WorkspacesService;

  beforeAll(async () => {
    s = await startMedium([WorkspacesModule, CataloguesModule]);
    workspaces = s.get(WorkspacesService);
  });
  afterAll(async () => {
    await s?.close();
  });

  /** A user who is a member of nothing. */
  const stranger = async (): Promise<Principal> => principalOf(await s.factory.newUser());

  const listQuery = (fields: Partial<ListWorkspacesQuery> = {}): ListWorkspacesQuery =>
    Object.assign(new ListWorkspacesQuery(), fields);

  /** The request as the service reads it: only its If-Match header. */
  const request = (ifMatch?: string): IfMatchPrecondition => IfMatchPrecondition.of(ifMatch);

  const row = async (id: string) =>
    (
      await s.query<{
        name: string;
        description: string;
        embedding_config: Record<string, unknown>;
        created_by: string | null;
        version: number;
      }>('SELECT name, description, embedding_config, created_by, version FROM workspaces WHERE id = $1', [id])
    )[0];

  const auditOf = (action: string, targetId: string) =>
    s.query<{ actor_id: string | null; workspace_id: string; details: Record<string, unknown> }>(
      'SELECT actor_id, workspace_id, details FROM audit_events WHERE action = $1 AND target_id = $2 ORDER BY created_at, id',
      [action, targetId],
    );

  const remoteConfig = async (caller: Caller, name: string) =>
    s.get(EmbeddingConfigsService).create(
      caller.access,
      {
        name,
        provider: 'openai_compatible',
        base_url: 'https://api.example.com/v1',
        model: 'text-embedding-3-small',
      } as Parameters<EmbeddingConfigsService['create']>[1],
      caller.principal,
    );

  describe('create', () => {
    it('writes the workspace with the local embedder, its creator as owner, and one audit row', async () => {
      const creator = principalOf(await s.factory.newUser());
      const created = await workspaces.create({ name: 'Support bot', description: 'CI evals' }, creator);
      expect(created).toEqual({
        id: expect.any(String),
        name: 'Support bot',
        description: 'CI evals',
        embedding_config: { provider: 'local' },
        role: 'owner',
        member_count: 1,
        created_by: creator.userId,
        created_at: expect.any(Date),
        updated_at: expect.any(Date),
        version: 1,
      });
      expect(await row(created.id)).toEqual({
        name: 'Support bot',
        description: 'CI evals',
        embedding_config: { provider: 'local' },
        created_by: creator.userId,
        version: 1,
      });
      expect(
        await s.query('SELECT user_id, role, added_by FROM workspace_members WHERE workspace_id = $1', [created.id]),
      ).toEqual([{ user_id: creator.userId, role: 'owner', added_by: creator.userId }]);
      expect(await auditOf('workspace.created', created.id)).toEqual([
        { actor_id: creator.userId, workspace_id: created.id, details: { name: 'Support bot' } },
      ]);
      const read = await workspaces.get({ workspaceId: created.id, role: 'owner', viaSystemAdmin: false }, creator);
      expect(read).toEqual(created);
      expect(workspaceEtag(read)).toBe(workspaceEtag(created));
    });

    it('stores an absent description as empty; a name need not be unique, in any case', async () => {
      const creator = principalOf(await s.factory.newUser());
      const bare = await workspaces.create({ name: 'Shared name' }, creator);
      expect(bare.description).toBe('');
      expect((await row(bare.id)).description).toBe('');
      const same = await workspaces.create({ name: 'Shared name' }, creator);
      const upper = await workspaces.create({ name: 'SHARED NAME' }, creator);
      expect(new Set([bare.id, same.id, upper.id]).size).toBe(3);
      const page = await workspaces.list(listQuery({ q: 'shared name' }), creator);
      expect(page.items.map((w) => w.id).sort()).toEqual([bare.id, same.id, upper.id].sort());
    });
  });

  describe('list', () => {
    it('answers only the caller workspaces with their role and member count; nothing for a non-member', async () => {
      const t = await teamIn(s);
      const mine = await workspaces.list(listQuery(), t.viewer.principal);
      expect(mine).toEqual({
        items: [
          {
            id: t.id,
            name: (await row(t.id)).name,
            description: '',
            role: 'viewer',
            member_count: 4,
            created_at: expect.any(Date),
            updated_at: expect.any(Date),
          },
        ],
        total: 1,
        page: 1,
        page_size: 50,
      });
      expect(await workspaces.list(listQuery(), await stranger())).toEqual({
        items: [],
        total: 0,
        page: 1,
        page_size: 50,
      });
    });

    it('shows a system admin every workspace with a null role where not a member, or only theirs with mine', async () => {
      const t = await teamIn(s);
      const admin = (await sysadminIn(s, t.id)).principal;
      const all = await workspaces.list(listQuery({ page_size: 200 }), admin);
      const [{ count }] = await s.query<{ count: number }>('SELECT count(*)::int AS count FROM workspaces');
      expect(all.total).toBe(count);
      expect(all.items).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: t.id, role: null, member_count: 4 })]),
      );
      expect((await workspaces.list(listQuery({ mine: true }), admin)).total).toBe(0);
      const own = await workspaces.create({ name: 'admin own' }, admin);
      const adminsOwn = await workspaces.list(listQuery({ mine: true }), admin);
      expect(adminsOwn.items).toEqual([expect.objectContaining({ id: own.id, role: 'owner', member_count: 1 })]);
      expect((await workspaces.list(listQuery({ mine: false, page_size: 200 }), admin)).total).toBe(count + 1);
      const read = await workspaces.get({ workspaceId: t.id, role: 'owner', viaSystemAdmin: true }, admin);
      expect(read).toEqual(expect.objectContaining({ id: t.id, role: null, member_count: 4 }));
    });

    it('filters by a name substring (case-insensitive, wildcards literal), sorts by name or creation, and pages', async () => {
      const u = principalOf(await s.factory.newUser());
      const names = ['Beta eval', 'alpha eval', 'Gamma', '100% eval', 'a_b'];
      for (const [i, name] of names.entries()) {
        const { id } = await workspaces.create({ name }, u);
        await s.query('UPDATE workspaces SET created_at = $2 WHERE id = $1', [
          id,
          new Date(Date.UTC(2030, 0, 1, 0, 0, i)),
        ]);
      }
      const names0f = (page: { items: Array<{ name: string }> }) => page.items.map((w) => w.name);
      expect(names0f(await workspaces.list(listQuery({ q: 'EVAL', sort: '-name' }), u))).toEqual([
        'Beta eval',
        'alpha eval',
        '100% eval',
      ]);
      expect(names0f(await workspaces.list(listQuery({ q: '%' }), u))).toEqual(['100% eval']);
      expect(names0f(await workspaces.list(listQuery({ q: '_' }), u))).toEqual(['a_b']);
      expect(names0f(await workspaces.list(listQuery(), u))).toEqual([
        '100% eval',
        'a_b',
        'alpha eval',
        'Beta eval',
        'Gamma',
      ]);
      expect(names0f(await workspaces.list(listQuery({ sort: '-created_at' }), u))).toEqual([
        'a_b',
        '100% eval',
        'Gamma',
        'alpha eval',
        'Beta eval',
      ]);
      expect(await workspaces.list(listQuery({ sort: 'created_at', page: 2, page_size: 3 }), u)).toEqual({
        items: [expect.objectContaining({ name: '100% eval' }), expect.objectContaining({ name: 'a_b' })],
        total: 5,
        page: 2,
        page_size: 3,
      });
    });

    it('shows an API key only its own workspace, even to a system admin creator', async () => {
      const user = await s.factory.newUser({ systemRole: 'admin' });
      const a = await s.factory.newWorkspace(user);
      await s.factory.newWorkspace(user);
      const key: Principal = {
        ...principalOf(user, 'admin'),
        apiKey: { id: randomUUID(), name: 'ci', workspaceId: a.id, role: 'viewer' },
      };
      const page = await workspaces.list(listQuery({ page_size: 200 }), key);
      expect(page.items.map((w) => w.id)).toEqual([a.id]);
      expect(page.total).toBe(1);
    });

    it('never shows a member of one workspace, whatever their role, another workspace', async () => {
      const a = await teamIn(s);
      const b = await teamIn(s);
      const bName = (await row(b.id)).name;
      for (const intruder of [a.owner, a.admin, a.member, a.viewer]) {
        const listed = await workspaces.list(listQuery({ page_size: 200 }), intruder.principal);
        expect(listed.items.map((w) => w.id)).toEqual([a.id]);
        expect((await workspaces.list(listQuery({ q: bName }), intruder.principal)).total).toBe(0);
      }
    });
  });

  describe('get', () => {
    it('answers the reading member role, and not_found for a workspace that is gone', async () => {
      const t = await teamIn(s);
      expect((await workspaces.get(t.viewer.access, t.viewer.principal)).role).toBe('viewer');
      expect((await workspaces.get(t.owner.access, t.owner.principal)).role).toBe('owner');
      await domainError(
        workspaces.get({ ...t.owner.access, workspaceId: randomUUID() }, t.owner.principal),
        'not_found',
      );
    });
  });

  describe('update', () => {
    it('renames with the current ETag: one version up, a new ETag, the description kept, one audit row', async () => {
      const t = await teamIn(s);
      const before = await workspaces.get(t.admin.access, t.admin.principal);
      const renamed = await workspaces.update(
        t.admin.access,
        { name: 'Renamed' },
        request(workspaceEtag(before)),
        t.admin.principal,
      );
      expect(renamed).toEqual({
        ...before,
        name: 'Renamed',
        version: before.version + 1,
        updated_at: expect.any(Date),
      });
      expect(workspaceEtag(renamed)).not.toBe(workspaceEtag(before));
      expect(await row(t.id)).toEqual(expect.objectContaining({ name: 'Renamed', description: '', version: 2 }));
      expect(await auditOf('workspace.updated', t.id)).toEqual([
        {
          actor_id: t.admin.principal.userId,
          workspace_id: t.id,
          details: { name: { from: before.name, to: 'Renamed' } },
        },
      ]);
    });

    it('refuses a stale ETag with precondition_failed and the current one, changing nothing', async () => {
      const t = await teamIn(s);
      const stale = workspaceEtag(await workspaces.get(t.owner.access, t.owner.principal));
      const moved = await workspaces.update(t.admin.access, { name: 'Moved on' }, request(), t.admin.principal);
      await domainError(
        workspaces.update(t.owner.access, { name: 'Lost' }, request(stale), t.owner.principal),
        'precondition_failed',
        { current_etag: workspaceEtag(moved) },
      );
      expect(await row(t.id)).toEqual(expect.objectContaining({ name: 'Moved on', version: 2 }));
      expect(await auditOf('workspace.updated', t.id)).toHaveLength(1);
    });

    it('sets and clears the description; an unchanged body keeps the version and writes no audit row', async () => {
      const t = await teamIn(s);
      const set = await workspaces.update(
        t.owner.access,
        { description: 'Nightly regression suite' },
        request('*'),
        t.owner.principal,
      );
      expect(set).toEqual(expect.objectContaining({ description: 'Nightly regression suite', version: 2 }));
      const same = await workspaces.update(
        t.owner.access,
        { description: 'Nightly regression suite', name: set.name },
        request(),
        t.owner.principal,
      );
      expect(same.version).toBe(2);
      const cleared = await workspaces.update(t.owner.access, { description: '' }, request(), t.owner.principal);
      expect(cleared.version).toBe(3);
      expect(await row(t.id)).toEqual(expect.objectContaining({ description: '', version: 3 }));
      expect((await auditOf('workspace.updated', t.id)).map((a) => a.details)).toEqual([
        { description: { from: '', to: 'Nightly regression suite' } },
        { description: { from: 'Nightly regression suite', to: '' } },
      ]);
    });

    it('records a rename and a new description in one audit row', async () => {
      const t = await teamIn(s);
      const before = await row(t.id);
      await workspaces.update(t.admin.access, { name: 'Both', description: 'changed' }, request(), t.admin.principal);
      expect(await row(t.id)).toEqual(expect.objectContaining({ name: 'Both', description: 'changed', version: 2 }));
      expect((await auditOf('workspace.updated', t.id)).map((a) => a.details)).toEqual([
        { name: { from: before.name, to: 'Both' }, description: { from: '', to: 'changed' } },
      ]);
    });

    it('is not_found for a workspace that is gone', async () => {
      const t = await teamIn(s);
      await domainError(
        workspaces.update(
          { ...t.admin.access, workspaceId: randomUUID() },
          { name: 'No' },
          request(),
          t.admin.principal,
        ),
        'not_found',
      );
    });
  });

  describe('delete', () => {
    it('deletes the workspace with its members and configs; the audit row outlives it', async () => {
      const t = await teamIn(s);
      await remoteConfig(t.admin, 'doomed-embedder');
      const name = (await row(t.id)).name;
      await workspaces.delete(t.owner.access, t.owner.principal);
      expect(await row(t.id)).toBeUndefined();
      expect(await s.query('SELECT 1 FROM workspace_members WHERE workspace_id = $1', [t.id])).toEqual([]);
      expect(await s.query('SELECT 1 FROM embedding_configs WHERE workspace_id = $1', [t.id])).toEqual([]);
      expect((await workspaces.list(listQuery(), t.admin.principal)).total).toBe(0);
      expect(await auditOf('workspace.deleted', t.id)).toEqual([
        { actor_id: t.owner.principal.userId, workspace_id: t.id, details: { name } },
      ]);
      await domainError(workspaces.delete(t.owner.access, t.owner.principal), 'not_found');
      await domainError(workspaces.get(t.owner.access, t.owner.principal), 'not_found');
    });

    it('lets a system admin who is not a member delete any workspace, audited as theirs', async () => {
      const t = await teamIn(s);
      const admin = await sysadminIn(s, t.id);
      await workspaces.delete(admin.access, admin.principal);
      expect(await row(t.id)).toBeUndefined();
      expect((await auditOf('workspace.deleted', t.id)).map((a) => a.actor_id)).toEqual([admin.principal.userId]);
    });
  });

  describe('the embedding config chosen (PUT /workspaces/{id}/embedding-config)', () => {
    const choose: EmbeddingConfigsService['choose'] = (...args) => s.get(EmbeddingConfigsService).choose(...args);

    const remote = {
      provider: 'remote',
      config_ref: 'openai-small',
      model: 'text-embedding-3-small',
      dimensions: 1536,
    };

    it('switches to a remote config and back to local, persisted, one version each, audited with from and to', async () => {
      const t = await teamIn(s);
      await remoteConfig(t.admin, 'openai-small');
      const before = await workspaces.get(t.admin.access, t.admin.principal);
      const res = await choose(
        t.admin.access,
        { provider: 'remote', config_ref: 'openai-small', model: 'text-embedding-3-small', dimensions: 1536 },
        request(workspaceEtag(before)),
        t.admin.principal,
      );
      expect(res).toEqual(expect.objectContaining({ id: t.id, embedding_config: remote, version: before.version + 1 }));
      expect((await row(t.id)).embedding_config).toEqual(remote);
      expect(await s.get(WorkspacesService).embeddingChoice(t.id)).toEqual(remote);
      const back = await choose(t.owner.access, { provider: 'local' }, request(), t.owner.principal);
      expect(back.embedding_config).toEqual({ provider: 'local' });
      expect(await row(t.id)).toEqual(
        expect.objectContaining({ embedding_config: { provider: 'local' }, version: before.version + 2 }),
      );
      expect(await auditOf('workspace.embedding_config_changed', t.id)).toEqual([
        {
          actor_id: t.admin.principal.userId,
          workspace_id: t.id,
          details: { from: { provider: 'local' }, to: remote },
        },
        {
          actor_id: t.owner.principal.userId,
          workspace_id: t.id,
          details: { from: remote, to: { provider: 'local' } },
        },
      ]);
    });

    it('is validation_failed for a config_ref the workspace lacks or one given with the local embedder', async () => {
      const t = await teamIn(s);
      const other = await teamIn(s);
      await remoteConfig(other.admin, 'elsewhere');
      for (const config_ref of ['no-such-config', 'elsewhere'])
        await domainError(
          choose(t.admin.access, { provider: 'remote', config_ref }, request(), t.admin.principal),
          'validation_failed',
        );
      await remoteConfig(t.admin, 'openai-small');
      await domainError(
        choose(t.admin.access, { provider: 'local', config_ref: 'openai-small' }, request(), t.admin.principal),
        'validation_failed',
      );
      expect(await row(t.id)).toEqual(expect.objectContaining({ embedding_config: { provider: 'local' }, version: 1 }));
      expect(await auditOf('workspace.embedding_config_changed', t.id)).toEqual([]);
    });

    it('keeps model and dimensions for the local embedder; an identical call changes nothing', async () => {
      const t = await teamIn(s);
      const local = { provider: 'local', model: 'minilm-l6', dimensions: 384 } as const;
      const first = await choose(t.admin.access, local, request(), t.admin.principal);
      expect(first.embedding_config).toEqual(local);
      expect(first.version).toBe(2);
      const again = await choose(t.admin.access, { ...local }, request(), t.admin.principal);
      expect(again.version).toBe(2);
      expect((await row(t.id)).version).toBe(2);
      expect(await auditOf('workspace.embedding_config_changed', t.id)).toHaveLength(1);
    });

    it('replaces the whole choice: fields left out are dropped', async () => {
      const t = await teamIn(s);
      await choose(
        t.admin.access,
        { provider: 'local', model: 'minilm-l6', dimensions: 384 },
        request(),
        t.admin.principal,
      );
      const res = await choose(t.admin.access, { provider: 'local', dimensions: 384 }, request(), t.admin.principal);
      expect(res.embedding_config).toEqual({ provider: 'local', dimensions: 384 });
      expect((await row(t.id)).embedding_config).toEqual({ provider: 'local', dimensions: 384 });
    });

    it('refuses a stale ETag with precondition_failed and leaves the choice as it was', async () => {
      const t = await teamIn(s);
      await remoteConfig(t.admin, 'x');
      const stale = workspaceEtag(await workspaces.get(t.admin.access, t.admin.principal));
      const moved = await workspaces.update(t.admin.access, { description: 'moved on' }, request(), t.admin.principal);
      await domainError(
        choose(t.admin.access, { provider: 'remote', config_ref: 'x' }, request(stale), t.admin.principal),
        'precondition_failed',
        { current_etag: workspaceEtag(moved) },
      );
      expect(await row(t.id)).toEqual(expect.objectContaining({ embedding_config: { provider: 'local' }, version: 2 }));
    });

    it('is not_found for a workspace that is gone', async () => {
      const t = await teamIn(s);
      await domainError(
        choose({ ...t.admin.access, workspaceId: randomUUID() }, { provider: 'local' }, request(), t.admin.principal),
        'not_found',
      );
    });
  });
});
