import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DatabaseNotifications } from '../database/notifications.js';
import { Db } from '../database/unit-of-work.js';
import type { ActiveSession, SessionAccess } from './access.repository.js';
import type { WorkspaceRole } from './roles.js';

/** The channel every process listens on; a payload is one AccessChange as JSON. */
export const ACCESS_CHANNEL = 'ews_access_changed';

/**
 * What changed about who may do what: sent with the commit by the database's triggers on
 * auth_tokens, users, workspaces and workspace_members, and told to this process's cache by the
 * repositories that write them.
 */
export type AccessChange =
  | { token: string } // one token revoked
  | { user: string } // a user's tokens, status, system role or profile
  | { member: { workspace: string; user: string } } // a membership added, re-roled or removed
  | { workspace: string }; // a workspace deleted

/** The user's standing in a workspace: whether it exists and their role there (null: not a member). */
interface Membership {
  exists: boolean;
  role: WorkspaceRole | null;
}

/** How many entries each map keeps (least recently used dropped first) and for how long at most. */
const MAX_ENTRIES = 20_000;
const TTL_MS = 60_000;

/**
 * What the access guard read from the database, kept in memory so that a warm request checks its
 * token and membership without a round trip: sessions by token id, a record's workspace by table
 * and id (it never changes), and a user's membership by workspace. Coherent across processes:
 * on PostgreSQL every write to auth_tokens, users, workspaces or workspace_members sends an
 * AccessChange with its commit (a trigger, so SQL by hand counts too) and every process drops what
 * it names; the writing process also drops it itself right after its commit (the repositories say
 * so), so its own next request sees the change without waiting for the notification. The embedded
 * database serves one process, which is that writer. While this process may miss changes (its
 * listening connection is
 * down) it keeps nothing and serves nothing. A read that raced with a change is not kept (the
 * generation counter). Entries also expire after TTL_MS, a bound on the damage of a bug, not a
 * part of the design. See docs/architecture.md#authentication.
 */
@Injectable()
export class AccessCache {
  private readonly logger = new Logger('AccessCache');
  private readonly sessions = new LRUCache<string, ActiveSession>({ max: MAX_ENTRIES, ttl: TTL_MS });
  private readonly records = new LRUCache<string, string>({ max: MAX_ENTRIES, ttl: TTL_MS });
  private readonly memberships = new LRUCache<string, Membership>({ max: MAX_ENTRIES, ttl: TTL_MS });
  /** Bumped by every change: a read that started before it is not kept. */
  private generation = 0;
  private listening?: Promise<unknown>;
  /** Set once this process hears changes: nothing is kept before. */
  private heard = false;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly db: Db,
  ) {}

  /** The generation to hand back to `keep` once the read it starts has returned. */
  begin(): number {
    this.start();
    return this.generation;
  }

  /** A live session of `tokenId`, from memory; undefined when it has to be read. */
  session(tokenId: string): ActiveSession | undefined {
    if (!this.usable()) return undefined;
    const session = this.sessions.get(tokenId);
    if (session && session.expiresAt.getTime() <= Date.now()) {
      this.sessions.delete(tokenId);
      return undefined;
    }
    return session;
  }

  /**
   * The session with the caller's standing towards a record (`table`, `id`) or a workspace, from
   * memory; undefined when any part of it has to be read.
   */
  sessionAccess(
    tokenId: string,
    target: { table: string; id: string } | { workspaceId: string },
  ): SessionAccess | undefined {
    const session = this.session(tokenId);
    if (!session) return undefined;
    const workspaceId =
      'workspaceId' in target ? target.workspaceId : this.records.get(recordKey(target.table, target.id));
    if (workspaceId === undefined) return undefined;
    const membership = this.memberships.get(membershipKey(workspaceId, session.userId));
    if (!membership) return undefined;
    return { ...session, workspaceId, workspaceExists: membership.exists, role: membership.role };
  }

  /** Keeps what a read that began at `generation` found, unless access changed meanwhile. */
  keep(
    generation: number,
    tokenId: string,
    found: ActiveSession | SessionAccess,
    record?: { table: string; id: string },
  ): void {
    if (generation !== this.generation || !this.usable()) return;
    const { userId, email, displayName, systemRole, expiresAt } = found;
    this.sessions.set(tokenId, { userId, email, displayName, systemRole, expiresAt });
    if (!('workspaceId' in found) || found.workspaceId === null) return;
    if (record) this.records.set(recordKey(record.table, record.id), found.workspaceId);
    this.memberships.set(membershipKey(found.workspaceId, userId), { exists: found.workspaceExists, role: found.role });
  }

  /**
   * Forgets `change` here right after the open transaction commits (at once outside one), so this
   * process's next request sees it. Other processes hear it from the database: a trigger on the
   * tables sends it with the commit (migration 1766300000000-access-changes).
   */
  changed(change: AccessChange): void {
    this.db.afterCommit(() => this.forget(change));
  }

  /** Drops what `change` names; everything when it is undefined (notifications may have been missed). */
  forget(change: AccessChange | undefined): void {
    this.generation++;
    if (!change) {
      this.sessions.clear();
      this.records.clear();
      this.memberships.clear();
    } else if ('token' in change) {
      this.sessions.delete(change.token);
    } else if ('user' in change) {
      for (const [token] of [...this.sessions.entries()].filter(([, s]) => s.userId === change.user))
        this.sessions.delete(token);
      this.dropMemberships((key) => key.endsWith(`/${change.user}`));
    } else if ('member' in change) {
      this.memberships.delete(membershipKey(change.member.workspace, change.member.user));
    } else {
      this.dropMemberships((key) => key.startsWith(`${change.workspace}/`));
      for (const [key] of [...this.records.entries()].filter(([, workspaceId]) => workspaceId === change.workspace))
        this.records.delete(key);
    }
  }

  private dropMemberships(match: (key: string) => boolean): void {
    for (const key of [...this.memberships.keys()]) if (match(key)) this.memberships.delete(key);
  }

  /** Serving from memory needs every change to reach this process. */
  private usable(): boolean {
    return this.heard && this.notifications.live;
  }

  /** Listens for changes from the first request on (a worker process that serves none never does). */
  private start(): void {
    this.listening ??= this.notifications
      .listen(ACCESS_CHANNEL, (payload) => this.forget(payload === undefined ? undefined : parseChange(payload)))
      .then(() => (this.heard = true))
      .catch((err: Error) => {
        // Not listening: nothing is kept or served, and the next request tries again.
        this.logger.warn(`cannot listen for access changes (${err.message}); reading access from the database`);
        this.listening = undefined;
      });
  }
}

function recordKey(table: string, id: string): string {
  return `${table}/${id}`;
}

function membershipKey(workspaceId: string, userId: string): string {
  return `${workspaceId}/${userId}`;
}

/** A change as sent; one that cannot be read drops everything (safe whatever it said). */
function parseChange(payload: string): AccessChange | undefined {
  try {
    const change = JSON.parse(payload) as AccessChange;
    return change && typeof change === 'object' ? change : undefined;
  } catch {
    return undefined;
  }
}
