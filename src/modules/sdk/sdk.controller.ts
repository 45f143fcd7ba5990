import { Controller, Get, StreamableFile } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { createReadStream, statSync } from 'node:fs';
import { Authenticated } from '#libs/auth/access.decorators.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { BundleResponse, SdkVersionsResponse } from './dto/sdk.dto.js';
import { SdkService } from './sdk.service.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

const VERSION = {
  name: 'version',
  description: 'A version listed by GET /sdk/versions, or `latest`',
  example: 'latest',
};

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

  /** The sources of the TypeScript SDK package (@ews/sdk) of this version, its client generated from the service's OpenAPI document, as files (any authenticated user). */
  @Get('sdk/versions/:version/download')
  @ApiOperation({ operationId: 'downloadSdk' })
  @Authenticated()
  @ApiParam(VERSION)
  @ApiOkResponse({ type: BundleResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sdk_version_not_found; `available` lists the versions' })
  download(@TextParam('version', PATH_TEXT.version) version: string): BundleResponse {
    return this.sdk.sdk(version);
  }

  /** The TypeScript SDK package (@ews/sdk) of this version built, as `npm pack` makes it: `npm install ./ews-sdk-<version>.tgz` (any authenticated user). */
  @Get('sdk/versions/:version/package.tgz')
  @ApiOperation({ operationId: 'downloadSdkPackage' })
  @Authenticated()
  @ApiParam(VERSION)
  @ApiProduces('application/gzip')
  @ApiOkResponse({ description: 'The npm package tarball', schema: { type: 'string', format: 'binary' } })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sdk_version_not_found; `available` lists the versions' })
  @ApiServiceUnavailableResponse({
    type: ProblemResponse,
    description:
      'sdk_package_missing: the service was built without packing the SDK; service_unavailable: the database does not answer (Retry-After)',
  })
  sdkPackage(@TextParam('version', PATH_TEXT.version) version: string): StreamableFile {
    const { path, filename } = this.sdk.sdkPackage(version);
    return new StreamableFile(createReadStream(path), {
      type: 'application/gzip',
      disposition: `attachment; filename="${filename}"`,
      length: statSync(path).size,
    });
  }

  /** Example datasets (CSV, JSONL), eval configs and a script that runs a whole evaluation against the service (any authenticated user). */
  @Get('examples/versions/:version/download')
  @ApiOperation({ operationId: 'downloadExamples' })
  @Authenticated()
  @ApiParam(VERSION)
  @ApiOkResponse({ type: BundleResponse })
  @ApiNotFoundResponse({ type: ProblemResponse, description: 'sdk_version_not_found; `available` lists the versions' })
  examples(@TextParam('version', PATH_TEXT.version) version: string): BundleResponse {
    return this.sdk.examples(version);
  }
}
