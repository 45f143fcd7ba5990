import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../../libs/auth/access.decorators.js';
import { ProblemResponse } from '../../../libs/common/problem.dto.js';
import { BundleResponse, SdkVersionsResponse } from './dto/sdk.dto.js';
import { SdkService } from './sdk.service.js';

const VERSION = { name: 'version', description: 'A version listed by GET /sdk/versions, or `latest`', example: 'latest' };

@ApiTags('sdk')
@Controller()
export class SdkController {
  constructor(private readonly sdk: SdkService) {}

  /** The client SDK versions with their download paths (any authenticated user). */
  @Get('sdk/versions')
  @ApiOperation({ operationId: 'listSdkVersions' })
  @Authenticated()
  @ApiOkResponse({ type: SdkVersionsResponse })
  versions(): SdkVersionsResponse {
    return this.sdk.versions();
  }

  /** The typed TypeScript client of this version, generated from the service's OpenAPI document, as files (any authenticated user). */
  @Get('sdk/versions/:version/download')
  @ApiOperation({ operationId: 'downloadSdk' })
  @Authenticated()
  @ApiParam(VERSION)
  @ApiOkResponse({ type: BundleResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sdk_version_not_found; `available` lists the versions' })
  download(@Param('version') version: string): BundleResponse {
    return this.sdk.sdk(version);
  }

  /** Example datasets (CSV, JSONL), eval configs and a script that runs a whole evaluation against the service (any authenticated user). */
  @Get('examples/versions/:version/download')
  @ApiOperation({ operationId: 'downloadExamples' })
  @Authenticated()
  @ApiParam(VERSION)
  @ApiOkResponse({ type: BundleResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sdk_version_not_found; `available` lists the versions' })
  examples(@Param('version') version: string): BundleResponse {
    return this.sdk.examples(version);
  }
}
