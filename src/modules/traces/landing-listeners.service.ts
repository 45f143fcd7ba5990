import { Injectable } from '@nestjs/common';

/** Told, inside the transaction that made spans of a trace dataset visible, that they landed. */
export type LandingListener = (landed: { workspaceId: string; datasetId: string }) => Promise<void>;

/**
 * Who wants to know that spans landed: families that follow trace datasets (online evaluation)
 * register here at start, so the traces family tells them without knowing them. Each listener
 * runs in the landing's unit of work (a live batch, a file landing's finish) and must stay short:
 * it is the landing's time.
 */
@Injectable()
export class LandingListeners {
  private readonly listeners: LandingListener[] = [];

  register(listener: LandingListener): void {
    this.listeners.push(listener);
  }

  async landed(workspaceId: string, datasetId: string): Promise<void> {
    for (const listener of this.listeners) await listener({ workspaceId, datasetId });
  }
}
