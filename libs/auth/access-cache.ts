import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DatabaseNotifications } from '#libs/database/notifications.js';
import { Db } from '#libs/database/unit-of-work.js';
import type { AccessTarget, ActiveSession, SessionAccess, Standing } from './access.repository.js';
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
  | { workspace: string } // a workspace deleted
  | { key: string } // an API key (by its prefix) revoked, expired or deleted
  | { record: { table: string; id: string } }; // a record moved to another workspace

/** The user's standing in a workspace: whether it exists and their role there (null: not a member). */
interface Membership {
  exists: boolean;
  role: WorkspaceRole | null;
}

/** An API key as kept: whose it is, its workspace, and the credential the API keys family read. */
interface KeptKey {
  userId: string;
  workspaceId: string;
  credential: object;
}

/** How many entries each map keeps (least recently used dropped first) and for how long at most. */
const MAX_ENTRIES = 20_000;
const TTL_MS = 60_000;

/**
 * What the access guard read from the database, kept in memory so that a warm request checks its
 * token and membership without a round trip: sessions by token id, a record's workspace by table
 * and id (it changes only when a record moves), a user's membership by workspace, and API keys by
 * prefix. Coherent across processes: every write to auth_tokens, api_keys, users, workspaces,
 * workspace_members or a record's workspace_id sends an AccessChange with its commit (a trigger,
 * so SQL by hand counts too) and every process drops what it names: on PostgreSQL through
 * LISTEN/NOTIFY, on the embedded database handed over by the engine before the COMMIT returns.
 * The writing process also drops it itself right after its commit (the repositories say so), so
 * its own next request sees the change without waiting for the notification. While this process
 * may miss changes (its listening connection is down) it keeps nothing and serves nothing. A read that raced with a change is not kept (the
 * generation counter). Entries also expire after TTL_MS, a bound on the damage of a bug, not a
 * part of the design. See docs/architecture.md#authentication.
 */
@Injectable()
export class AccessCache implements OnModuleInit {
  private readonly logger = new Logger('AccessCache');
  private readonly sessions = new LRUCache<string, ActiveSession>({ max: MAX_ENTRIES, ttl: TTL_MS });
  private readonly records = new LRUCache<string, string>({ max: MAX_ENTRIES, ttl: TTL_MS });
  private readonly memberships = new LRUCache<string, Membership>({ max: MAX_ENTRIES, ttl: TTL_MS });
  /** API keys by prefix: what the API keys family read about the key and its creator (ApiKeyCredential there). */
  private readonly keys = new LRUCache<string, KeptKey>({
    max: MAX_ENTRIES,
    ttl: TTL_MS,
  });
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
  sessionAccess(tokenId: string, target: AccessTarget): SessionAccess | undefined {
    const session = this.session(tokenId);
    const standing = session && this.standing(session.userId, target);
    return standing && { ...session, ...standing };
  }

  /**
   * An API key's credential as the API keys family read it (with its creator), by the key's
   * prefix, and with a target the creator's standing towards it; undefined when any part has to be
   * read. The credential is the object kept: the family may note a use on it (last_used_at).
   */
  apiKey<T extends object>(prefix: string, target?: AccessTarget): { credential: T; standing?: Standing } | undefined {
    if (!this.usable()) return undefined;
    const kept = this.keys.get(prefix);
    if (!kept) return undefined;
    if (!target) return { credential: kept.credential as T };
    const standing = this.standing(kept.userId, target);
    return standing && { credential: kept.credential as T, standing };
  }

  /** Keeps what a key check that began at `generation` read, unless access changed meanwhile. */
  keepApiKey(
    generation: number,
    prefix: string,
    key: KeptKey,
    standing?: Standing,
    record?: { table: string; id: string },
  ): void {
    if (generation !== this.generation || !this.usable()) return;
    this.keys.set(prefix, key);
    if (standing) this.keepStanding(key.userId, standing, record);
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
    if ('workspaceId' in found) this.keepStanding(userId, found, record);
  }

  private standing(userId: string, target: AccessTarget): Standing | undefined {
    const workspaceId =
      'workspaceId' in target ? target.workspaceId : this.records.get(recordKey(target.table, target.id));
    if (workspaceId === undefined) return undefined;
    const membership = this.memberships.get(membershipKey(workspaceId, userId));
    return membership && { workspaceId, workspaceExists: membership.exists, role: membership.role };
  }

  private keepStanding(userId: string, standing: Standing, record?: { table: string; id: string }): void {
    if (standing.workspaceId === null) return;
    if (record) this.records.set(recordKey(record.table, record.id), standing.workspaceId);
    this.memberships.set(membershipKey(standing.workspaceId, userId), {
      exists: standing.workspaceExists,
      role: standing.role,
    });
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
      this.keys.clear();
    } else if ('key' in change) {
      this.keys.delete(change.key);
    } else if ('record' in change) {
      this.records.delete(recordKey(change.record.table, change.record.id));
    } else if ('token' in change) {
      this.sessions.delete(change.token);
    } else if ('user' in change) {
      for (const [token] of [...this.sessions.entries()].filter(([, s]) => s.userId === change.user))
        this.sessions.delete(token);
      for (const [prefix] of [...this.keys.entries()].filter(([, k]) => k.userId === change.user))
        this.keys.delete(prefix);
      this.dropMemberships((key) => key.endsWith(`/${change.user}`));
    } else if ('member' in change) {
      this.memberships.delete(membershipKey(change.member.workspace, change.member.user));
    } else {
      this.dropMemberships((key) => key.startsWith(`${change.workspace}/`));
      for (const [key] of [...this.records.entries()].filter(([, workspaceId]) => workspaceId === change.workspace))
        this.records.delete(key);
      for (const [prefix] of [...this.keys.entries()].filter(([, k]) => k.workspaceId === change.workspace))
        this.keys.delete(prefix);
    }
  }

  private dropMemberships(match: (key: string) => boolean): void {
    for (const key of [...this.memberships.keys()]) if (match(key)) this.memberships.delete(key);
  }

  /** Serving from memory needs every change to reach this process. */
  private usable(): boolean {
    return this.heard && this.notifications.live;
  }

  /**
   * On the embedded database the engine hands this process the triggers' changes as their COMMIT
   * returns (so SQL by hand through the same engine counts at once); its LISTEN must be asked for
   * before any transaction can be open: now.
   */
  async onModuleInit(): Promise<void> {
    if (this.notifications.inProcess) {
      this.start();
      await this.listening;
    }
  }

  /** Listens for changes from the first request on (a worker process that serves none never does). */
  private start(): void {
    this.listening ??= this.notifications
      .listen(ACCESS_CHANNEL, (payload) => this.forget(payload === undefined ? undefined : parseChange(payload)), {
        fromDatabase: true,
      })
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

/** A change as sent; one that cannot be read, or of a kind this code does not know, drops everything (safe whatever it said). */
function parseChange(payload: string): AccessChange | undefined {
  try {
    const change = JSON.parse(payload) as Record<string, unknown> | null;
    if (!change || typeof change !== 'object') return undefined;
    const [kind, ...more] = Object.keys(change);
    if (more.length || !CHANGE_KINDS.has(kind) || change[kind] === null || change[kind] === undefined) return undefined;
    return change as AccessChange;
  } catch {
    return undefined;
  }
}

const CHANGE_KINDS = new Set(['token', 'user', 'member', 'workspace', 'key', 'record']);
