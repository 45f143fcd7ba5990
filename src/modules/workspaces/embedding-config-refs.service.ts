import { Injectable } from '@nestjs/common';

/** Whether `ref` names a remote embedding config of the workspace. */
export type EmbeddingConfigCheck = (workspaceId: string, ref: string) => Promise<boolean>;

/**
 * What PUT /workspaces/{id}/embedding-config asks before it records a remote choice. The configs
 * are the catalogues family's, and catalogues imports workspaces (for the workspace's choice and
 * its row lock), so workspaces cannot ask its service: CataloguesModule provides the check here
 * when it starts.
 */
@Injectable()
export class EmbeddingConfigRefs {
  private check?: EmbeddingConfigCheck;

  provide(check: EmbeddingConfigCheck): void {
    this.check = check;
  }

  exists(workspaceId: string, ref: string): Promise<boolean> {
    if (!this.check) throw new Error('No embedding config check: the catalogues module provides it when it starts');
    return this.check(workspaceId, ref);
  }
}
