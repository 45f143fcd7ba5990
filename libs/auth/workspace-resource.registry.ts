import { Injectable } from '@nestjs/common';

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

  register(kind: string, resolver: WorkspaceResolver): void {
    if (this.resolvers.has(kind)) throw new Error(`workspace resolver for ${kind} registered twice`);
    this.resolvers.set(kind, resolver);
  }

  async resolve(kind: string, id: string): Promise<string | null> {
    const resolver = this.resolvers.get(kind);
    if (!resolver) throw new Error(`no workspace resolver registered for ${kind}`);
    return resolver(id);
  }
}
