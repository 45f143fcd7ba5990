import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { RunProgressDto } from './run.dto.js';
import { EXAMPLE_AT, EXAMPLE_ID, EXAMPLE_NAME } from '#libs/common/openapi-examples.js';

export class QueueQuery {
  @IsUUID()
  workspace_id: string;
}

export class QueuedRunDto {
  @ApiProperty({ example: EXAMPLE_ID.run })
  run_id: string;
  @ApiProperty({ example: EXAMPLE_NAME.run })
  name: string;
  @ApiProperty({ enum: ['queued', 'running'], example: 'running' })
  state: string;
  /** 1 for the next to start; null while running */
  @ApiProperty({ type: 'integer', nullable: true, example: null })
  position: number | null;
  progress: RunProgressDto;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: EXAMPLE_AT.started })
  started_at: Date | null;
  @ApiProperty({ example: EXAMPLE_AT.created })
  created_at: Date;
}

export class RunQueueResponse {
  @ApiProperty({ example: EXAMPLE_ID.workspace })
  workspace_id: string;
  @ApiProperty({ type: () => [QueuedRunDto] })
  running: QueuedRunDto[];
  @ApiProperty({ type: () => [QueuedRunDto] })
  waiting: QueuedRunDto[];
  /** Runs waiting for an offline upload */
  @ApiProperty({ example: 0 })
  awaiting_upload: number;
}
