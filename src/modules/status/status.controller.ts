import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../../../libs/auth/access.decorators.js';
import { LiveResponse } from './dto/status.dto.js';
import { StatusService } from './status.service.js';

@ApiTags('status')
@Controller()
export class StatusController {
  constructor(private readonly status: StatusService) {}

  /** Answers while the process is up; does not touch the database. */
  @Get('live')
  @Public()
  @ApiOkResponse({ type: LiveResponse })
  live(): LiveResponse {
    return this.status.live();
  }
}
