import { Controller, Get, Res } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '#libs/auth/access.decorators.js';
import { ProblemResponse } from '#libs/common/problem.dto.js';
import { UuidParam } from '#libs/common/uuid-param.js';
import { ReportFilesService } from './report-files.service.js';
import { RawQuery, sendFile } from '#libs/common/file-answer.js';
import { PATH_TEXT, TextParam } from '#libs/common/text-param.js';

/** Report files behind signed URLs (from content-url, download and export): the signature authorises them. */
@ApiTags('reports')
@Controller('files/reports/:report_id')
export class ReportFilesController {
  constructor(private readonly files: ReportFilesService) {}

  /** The report's current content as Markdown or HTML. */
  @Get('content/:filename')
  @ApiOperation({ operationId: 'downloadReportContent' })
  @Public()
  @ApiProduces('text/markdown', 'text/html')
  @ApiOkResponse({ description: 'The report', schema: { type: 'string' } })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'invalid_signature or url_expired' })
  async content(
    @UuidParam('report_id') id: string,
    @TextParam('filename', PATH_TEXT.fileName) filename: string,
    @RawQuery() signed: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.files.contentFile(signed, id, filename));
  }

  /** A stored export (Markdown, HTML or PDF). */
  @Get('exports/:export_id/:filename')
  @ApiOperation({ operationId: 'downloadReportExport' })
  @Public()
  @ApiProduces('text/markdown', 'text/html', 'application/pdf')
  @ApiOkResponse({ description: 'The exported file', schema: { type: 'string', format: 'binary' } })
  @ApiForbiddenResponse({ type: ProblemResponse, description: 'invalid_signature or url_expired' })
  async export(
    @UuidParam('report_id') id: string,
    @UuidParam('export_id') exportId: string,
    @TextParam('filename', PATH_TEXT.fileName) filename: string,
    @RawQuery() signed: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    await sendFile(res, await this.files.exportFile(signed, id, exportId, filename));
  }
}
