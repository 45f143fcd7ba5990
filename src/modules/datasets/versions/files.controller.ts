import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '#libs/auth/access.decorators.js';
import { RawQuery, sendFile } from '#libs/common/file-answer.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { DownloadService } from './download.service.js';
import { SignedFileQuery } from '../dto/download.dto.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

/** Files behind signed URLs: no bearer token, the signature and expiry in the query authorise them. */
@ApiTags('files')
@Controller('files')
export class FilesController {
  constructor(private readonly downloads: DownloadService) {}

  /** Streams a dataset version as CSV, JSON Lines or Parquet. URLs come from download-url and download. */
  @Get('dataset-versions/:version_id/:filename')
  @ApiOperation({ operationId: 'downloadDatasetVersionFile' })
  @Public()
  @ApiProduces('text/csv', 'application/x-ndjson', 'application/vnd.apache.parquet')
  @ApiOkResponse({ description: 'The file', schema: { type: 'string', format: 'binary' } })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'invalid_signature or url_expired' })
  async datasetVersion(
    @UuidParam('version_id') versionId: string,
    @TextParam('filename', PATH_TEXT.fileName) filename: string,
    @Query() query: SignedFileQuery,
    @RawQuery() signed: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.downloads.file(signed, versionId, filename, query.format));
  }
}
