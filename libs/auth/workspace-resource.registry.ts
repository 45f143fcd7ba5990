import { Injectable } from '@nestjs/common';
import { Db } from '#libs/database/unit-of-work.js';
import { identifier, workspaceOfRecord } from '#libs/database/record-queries.js';

/** Finds the workspace that owns a record; null when the record does not exist. */
export type WorkspaceResolver = (id: string) => Promise<string | null>;

/**
 * Each family registers how to find the workspace of its records (`dataset`, `run`, ...),
 * so `@WorkspaceRoleRequired(role, { resource: 'dataset', param: 'dataset_id' })` works for
 * routes whose path names a record rather than a workspace.
 */
@Injectable()
export class WorkspaceResourceRegistry {
  private readonly resolvers = new Map<string, WorkspaceResolver>();
  private readonly tables = new Map<string, string>();

  constructor(private readonly db: Db) {}

  register(kind: string, resolver: WorkspaceResolver): void {
    if (this.resolvers.has(kind)) throw new Error(`workspace resolver for ${kind} registered twice`);
    this.resolvers.set(kind, resolver);
  }

  /**
   * Registers a record kind kept in `table`, whose `id` is its key and `workspace_id` its
   * workspace: the guard then finds the record's workspace in the same statement as the caller's
   * session and membership (one round trip) rather than with a query of its own, and `resolve`
   * reads the same column.
   */
  registerTable(kind: string, table: string): void {
    identifier(table, 'table');
    this.register(kind, (id) => workspaceOfRecord(this.db, table, id));
    this.tables.set(kind, table);
  }

  /** The table of a kind registered with registerTable; undefined for a resolver function. */
  tableOf(kind: string): string | undefined {
    return this.tables.get(kind);
  }

  async resolve(kind: string, id: string): Promise<string | null> {
    const resolver = this.resolvers.get(kind);
    if (!resolver) throw new Error(`no workspace resolver registered for ${kind}`);
    return resolver(id);
  }
}
