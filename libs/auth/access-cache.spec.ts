import { describe, expect, it } from '@jest/globals';
import type { DatabaseNotifications, NotificationListener } from '#libs/database/notifications.js';
import type { Db } from '#libs/database/unit-of-work.js';
import { AccessCache } from './access-cache.js';
import type { SessionAccess } from './access.repository.js';

/** A notifications hub in memory: what DatabaseNotifications does for one process, minus the database. */
class Hub {
  live = true;
  listener?: NotificationListener;
  listen(_channel: string, listener: NotificationListener): Promise<() => void> {
    this.listener = listener;
    return Promise.resolve(() => undefined);
  }
}

const outsideTransaction = { afterCommit: (callback: () => void) => callback() } as unknown as Db;

const EXPIRES = new Date(Date.now() + 600_000);

const found = (over: Partial<SessionAccess> = {}): SessionAccess => ({
  userId: 'u1',
  email: 'a@example.com',
  displayName: 'A',
  systemRole: 'user',
  expiresAt: EXPIRES,
  workspaceId: 'w1',
  workspaceExists: true,
  role: 'member',
  ...over,
});

async function warmCache(): Promise<{ cache: AccessCache; hub: Hub }> {
  const hub = new Hub();
  const cache = new AccessCache(hub as unknown as DatabaseNotifications, outsideTransaction);
  cache.begin();
  await Promise.resolve();
  await Promise.resolve();
  return { cache, hub };
}

const record = { table: 'datasets', id: 'd1' };

describe('AccessCache', () => {
  it('keeps nothing before it listens, then serves what it kept', async () => {
    const hub = new Hub();
    const cache = new AccessCache(hub as unknown as DatabaseNotifications, outsideTransaction);
    cache.keep(cache.begin(), 't1', found(), record);
    expect(cache.sessionAccess('t1', record)).toBeUndefined();
    await Promise.resolve();
    await Promise.resolve();
    cache.keep(cache.begin(), 't1', found(), record);
    expect(cache.sessionAccess('t1', record)).toEqual(found());
    expect(cache.sessionAccess('t1', { workspaceId: 'w1' })).toEqual(found());
    expect(cache.sessionAccess('t1', { table: 'datasets', id: 'd2' })).toBeUndefined();
  });

  it('does not keep a read that a change overtook', async () => {
    const { cache, hub } = await warmCache();
    const generation = cache.begin();
    hub.listener?.(JSON.stringify({ user: 'someone-else' }));
    cache.keep(generation, 't1', found(), record);
    expect(cache.session('t1')).toBeUndefined();
  });

  it('drops what a change names, and only that', async () => {
    const { cache, hub } = await warmCache();
    cache.keep(cache.begin(), 't1', found(), record);
    cache.keep(cache.begin(), 't2', found({ userId: 'u2', workspaceId: 'w1', role: 'viewer' }), record);
    hub.listener?.(JSON.stringify({ member: { workspace: 'w1', user: 'u1' } }));
    expect(cache.session('t1')).toBeDefined();
    expect(cache.sessionAccess('t1', record)).toBeUndefined();
    expect(cache.sessionAccess('t2', record)?.role).toBe('viewer');
    hub.listener?.(JSON.stringify({ user: 'u2' }));
    expect(cache.session('t2')).toBeUndefined();
    expect(cache.session('t1')).toBeDefined();
    hub.listener?.(JSON.stringify({ token: 't1' }));
    expect(cache.session('t1')).toBeUndefined();
  });

  it('a deleted workspace takes its records and memberships with it', async () => {
    const { cache, hub } = await warmCache();
    cache.keep(cache.begin(), 't1', found(), record);
    hub.listener?.(JSON.stringify({ workspace: 'w1' }));
    cache.keep(cache.begin(), 't1', found({ workspaceId: 'w2' }), { table: 'datasets', id: 'd9' });
    expect(cache.sessionAccess('t1', record)).toBeUndefined();
    expect(cache.sessionAccess('t1', { workspaceId: 'w1' })).toBeUndefined();
  });

  it('empties on a missed-notifications signal or an unreadable one, and serves nothing while not live', async () => {
    const { cache, hub } = await warmCache();
    cache.keep(cache.begin(), 't1', found(), record);
    hub.listener?.('not json');
    expect(cache.session('t1')).toBeUndefined();
    cache.keep(cache.begin(), 't1', found(), record);
    hub.listener?.(JSON.stringify({ tenant: 'w1' }));
    expect(cache.session('t1')).toBeUndefined();
    cache.keep(cache.begin(), 't1', found(), record);
    hub.listener?.(undefined);
    expect(cache.session('t1')).toBeUndefined();
    cache.keep(cache.begin(), 't1', found(), record);
    hub.live = false;
    expect(cache.session('t1')).toBeUndefined();
    cache.keep(cache.begin(), 't2', found(), record);
    hub.live = true;
    expect(cache.session('t2')).toBeUndefined();
  });

  it('does not serve an expired session', async () => {
    const { cache } = await warmCache();
    cache.keep(cache.begin(), 't1', found({ expiresAt: new Date(Date.now() - 1) }), record);
    expect(cache.session('t1')).toBeUndefined();
  });
});
