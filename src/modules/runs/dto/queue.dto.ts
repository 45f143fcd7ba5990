import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { RunProgressDto } from './run.dto.js';

export class QueueQuery {
  @IsUUID()
  workspace_id: string;
}

export class QueuedRunDto {
  run_id: string;
  name: string;
  @ApiProperty({ enum: ['queued', 'running'] })
  state: string;
  /** 1 for the next to start; null while running */
  @ApiProperty({ type: 'integer', nullable: true })
  position: number | null;
  progress: RunProgressDto;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  started_at: Date | null;
  created_at: Date;
}

export class RunQueueResponse {
  workspace_id: string;
  @ApiProperty({ type: () => [QueuedRunDto] })
  running: QueuedRunDto[];
  @ApiProperty({ type: () => [QueuedRunDto] })
  waiting: QueuedRunDto[];
  /** Runs waiting for an offline upload */
  awaiting_upload: number;
}
