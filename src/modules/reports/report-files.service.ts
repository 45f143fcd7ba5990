import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { attachment, type FileAnswer } from '#libs/common/file-answer.js';
import { type SignedUrl, UrlSigner } from '#libs/common/signed-url.js';
import { reportHtml, reportMarkdown, reportPdf } from '#libs/reports/render.js';
import type { ReportFormat } from '#libs/reports/report.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { ReportContentUrlResponse, ReportDownloadResponse } from './dto/reports.dto.js';
import type { ReportExportEntity } from './entities/report-export.entity.js';
import type { ReportEntity } from './entities/report.entity.js';
import { ReportSettingsService } from './report-settings.service.js';
import { ReportErrors } from './reports.errors.js';
import { renderable, toDownloadResponse } from './reports.mapper.js';
import { ReportsRepository } from './reports.repository.js';

const FILES: Record<ReportFormat, { ext: string; contentType: string }> = {
  markdown: { ext: 'md', contentType: 'text/markdown; charset=utf-8' },
  html: { ext: 'html', contentType: 'text/html; charset=utf-8' },
  pdf: { ext: 'pdf', contentType: 'application/pdf' },
};

/** Rendered reports: stored exports, downloads and live content behind signed, expiring URLs the service serves. */
@Injectable()
export class ReportFilesService {
  constructor(
    private readonly reports: ReportsRepository,
    private readonly settings: ReportSettingsService,
    private readonly signer: UrlSigner,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  async render(report: ReportEntity, format: ReportFormat): Promise<Buffer> {
    const doc = renderable(report);
    if (format === 'pdf') return reportPdf(doc);
    return Buffer.from(format === 'html' ? reportHtml(doc) : reportMarkdown(doc), 'utf8');
  }

  /** Renders the report in a format and stores the file; the answer's URL serves exactly that file. */
  async export(
    origin: string,
    access: WorkspaceAccess,
    report: ReportEntity,
    format: ReportFormat | undefined,
    caller: Principal,
  ): Promise<ReportDownloadResponse> {
    const chosen = await this.format(access.workspaceId, format);
    const file = await this.store(report, chosen, caller.userId);
    await this.audit.record({
      actor: caller,
      workspaceId: access.workspaceId,
      action: 'report.exported',
      targetType: 'report',
      targetId: report.id,
      details: { format: chosen, export_id: file.id, size_bytes: file.sizeBytes },
    });
    return this.downloadResponse(origin, file);
  }

  /** A URL to the report's file: the newest export of this version of the report, rendered and stored first when there is none. */
  async download(
    origin: string,
    access: WorkspaceAccess,
    report: ReportEntity,
    format: ReportFormat | undefined,
    caller: Principal,
  ): Promise<ReportDownloadResponse> {
    const chosen = await this.format(access.workspaceId, format);
    const file =
      (await this.reports.latestExport(access.workspaceId, report.id, chosen, report.version)) ??
      (await this.store(report, chosen, caller.userId));
    return this.downloadResponse(origin, file);
  }

  contentUrl(origin: string, report: ReportEntity, format: 'markdown' | 'html'): ReportContentUrlResponse {
    const file = FILES[format];
    const signed = this.sign(origin, `/files/reports/${report.id}/content/report-${report.id}.${file.ext}`);
    return {
      report_id: report.id,
      url: signed.url,
      expires_at: signed.expires_at,
      format,
      content_type: file.contentType,
    };
  }

  /** The report's current content (signed URL from content-url; `query`, the request's own, checked first). */
  async contentFile(query: Record<string, unknown>, reportId: string, filename: string): Promise<FileAnswer> {
    this.signer.assertValid(`/files/reports/${reportId}/content/${encodeURIComponent(filename)}`, query);
    const report = await this.reports.findUnscoped(reportId);
    if (!report) throw new NotFoundError('report', reportId);
    const format: ReportFormat = filename.endsWith('.html') ? 'html' : 'markdown';
    return {
      contentType: FILES[format].contentType,
      headers: { 'Cache-Control': 'private, max-age=0', ...untrustedDocument(format) },
      body: await this.render(report, format),
    };
  }

  /** A stored export (signed URL from download or export; `query`, the request's own, checked first). */
  async exportFile(
    query: Record<string, unknown>,
    reportId: string,
    exportId: string,
    filename: string,
  ): Promise<FileAnswer> {
    this.signer.assertValid(`/files/reports/${reportId}/exports/${exportId}/${encodeURIComponent(filename)}`, query);
    const file = await this.reports.exportWithContent(reportId, exportId);
    if (!file) throw new NotFoundError('report export', exportId);
    return {
      contentType: file.contentType,
      headers: { 'Content-Disposition': attachment(file.filename), ...untrustedDocument(file.format) },
      body: file.content,
    };
  }

  private async format(workspaceId: string, asked: ReportFormat | undefined): Promise<ReportFormat> {
    const settings = await this.settings.effective(workspaceId);
    const format = asked ?? settings.defaultFormat;
    if (!settings.formats.includes(format))
      throw new DomainError(
        ReportErrors.report_format_not_enabled,
        `The workspace's report settings do not enable ${format}; enabled: ${settings.formats.join(', ')}`,
        { available: settings.formats },
      );
    return format;
  }

  private async store(report: ReportEntity, format: ReportFormat, userId: string | null): Promise<ReportExportEntity> {
    const content = await this.render(report, format);
    return this.reports.saveExport({
      workspaceId: report.workspaceId,
      reportId: report.id,
      format,
      filename: `report-${report.id}.${FILES[format].ext}`,
      contentType: FILES[format].contentType,
      sizeBytes: content.length,
      content,
      reportVersion: report.version,
      createdBy: userId,
    });
  }

  /** The stored file's response with a URL signed for it: signing needs the request's origin, the rest is mapping. */
  private downloadResponse(origin: string, file: ReportExportEntity): ReportDownloadResponse {
    return toDownloadResponse(
      file,
      this.sign(origin, `/files/reports/${file.reportId}/exports/${file.id}/${file.filename}`),
    );
  }

  private sign(origin: string, path: string): SignedUrl {
    return this.signer.sign(origin, path, {}, this.config.env.SIGNED_URL_TTL_SECONDS);
  }
}

/** A report's document may carry what users wrote: never sniffed, and HTML with no script or remote resource. */
function untrustedDocument(format: string): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    ...(format === 'html'
      ? { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:" }
      : {}),
  };
}
