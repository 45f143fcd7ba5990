import { Injectable } from '@nestjs/common';

/** The metric configs (as `name vN`, in order, at most 20) of the workspace that score with any of the ops named (lower case). */
export type OpUsersCheck = (workspaceId: string, opNames: string[]) => Promise<string[]>;

/**
 * Who scores with a workspace's ops, asked before a custom op is deleted. The metric configs are
 * the catalogues family's, and catalogues imports ops (for the registry), so ops cannot ask its
 * service: CataloguesModule provides the check here when it starts.
 */
@Injectable()
export class OpUsers {
  private check?: OpUsersCheck;

  provide(check: OpUsersCheck): void {
    this.check = check;
  }

  of(workspaceId: string, opNames: string[]): Promise<string[]> {
    if (!this.check) throw new Error('No op users check: the catalogues module provides it when it starts');
    return opNames.length ? this.check(workspaceId, opNames) : Promise.resolve([]);
  }
}
