import { Injectable } from '@nestjs/common';
import type { WorkspaceAccess } from '#libs/auth/roles.js';
import type { RunQueueResponse } from './dto/queue.dto.js';
import { RunsRepository } from './runs.repository.js';
import { toRunResponse } from './runs.mapper.js';

/** What waits and what runs in a workspace. */
@Injectable()
export class RunQueueService {
  constructor(private readonly runs: RunsRepository) {}

  async view(access: WorkspaceAccess): Promise<RunQueueResponse> {
    const [active] = await this.runs.page(
      { workspaceIds: [access.workspaceId], states: ['queued', 'running', 'awaiting_upload'] },
      { skip: 0, take: 1000 },
    );
    const entry = (r: (typeof active)[number], position: number | null) => ({
      run_id: r.id,
      name: r.name,
      state: r.state,
      position,
      progress: toRunResponse(r).progress,
      started_at: r.startedAt,
      created_at: r.createdAt,
    });
    const waiting = active
      .filter((r) => r.state === 'queued')
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    return {
      workspace_id: access.workspaceId,
      running: active.filter((r) => r.state === 'running').map((r) => entry(r, null)),
      waiting: waiting.map((r, i) => entry(r, i + 1)),
      awaiting_upload: active.filter((r) => r.state === 'awaiting_upload').length,
    };
  }
}
