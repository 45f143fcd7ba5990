import { Controller, Get, Header } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '#libs/auth/access.decorators.js';
import { LiveResponse, NotReadyProblem, ReadinessCheck, ReadyResponse } from './dto/status.dto.js';
import { StatusService } from './status.service.js';

@ApiTags('status')
@ApiExtraModels(ReadinessCheck)
@Controller()
export class StatusController {
  constructor(private readonly status: StatusService) {}

  /** Answers while the process is up; does not touch the database (use it as the liveness probe). */
  @Get('live')
  @ApiOperation({ operationId: 'getLiveness' })
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiOkResponse({ type: LiveResponse, description: 'The process is up' })
  live(): LiveResponse {
    return this.status.live();
  }

  /**
   * Answers 200 when every dependency (the database, the queue) answers within 3 s; otherwise
   * 503 problem+json naming the failing checks (use it as the readiness probe).
   */
  @Get('ready')
  @ApiOperation({ operationId: 'getReadiness' })
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiOkResponse({ type: ReadyResponse, description: 'Every dependency answered' })
  @ApiServiceUnavailableResponse({
    type: NotReadyProblem,
    description: 'A dependency is down; `checks` says which, Retry-After when to ask again',
  })
  ready(): Promise<ReadyResponse> {
    return this.status.ready();
  }
}
