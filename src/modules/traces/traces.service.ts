import { Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { detectConventions } from '#libs/traces/conventions.js';
import {
  readRecordsAsync,
  readTraceFile,
  sniffFormat,
  type ReadItem,
  type TraceFileFormat,
} from '#libs/traces/readers.js';
import type { Drop, SourceSpan } from '#libs/traces/span.types.js';
import { AppConfig } from '#libs/config/app-config.js';
import type { UploadedFile } from '../datasets/datasets.service.js';
import { SecretReferences } from '../secrets/secret-references.service.js';
import type {
  CreateTraceConnectionRequest,
  DropsQuery,
  LandFromConnectionRequest,
  LandingOptions,
  LandInlineRequest,
  LandTracesRequest,
  TraceConventionDetectionResponse,
  TraceIngestRunDropsResponse,
  TraceIngestRunResponse,
  TraceSourceConnectionResponse,
  TraceUploadResponse,
} from './dto/traces.dto.js';
import { TRACE_LAND_JOB } from './traces.jobs.js';
import { TraceDatasets } from './trace-datasets.service.js';
import { TraceErrors } from './traces.errors.js';
import {
  TracesRepository,
  type IngestOptions,
  type IngestRunRow,
  type TraceConnectionRow,
  type TraceUploadRow,
} from './traces.repository.js';
import { toConnection, toDrop, toRun, toUpload } from './traces.mapper.js';

/** Detection stops reading a source after this many records (the sample is taken from them). */
const DETECT_READ_LIMIT = 20_000;

/** Trace sources (connections, uploads), convention detection, and the queued landings with their drops. */
@Injectable()
export class TracesService {
  constructor(
    private readonly config: AppConfig,
    private readonly traces: TracesRepository,
    private readonly traceDatasets: TraceDatasets,
    private readonly secretReferences: SecretReferences,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  // Connections

  async createConnection(
    access: WorkspaceAccess,
    body: CreateTraceConnectionRequest,
    caller: Principal,
  ): Promise<TraceSourceConnectionResponse> {
    if (body.kind === 'langfuse' && (!body.secret_id || !body.public_key_secret_id)) {
      throw new DomainError(
        TraceErrors.trace_connection_invalid,
        'A langfuse connection authenticates with a public key and a secret key: name both `public_key_secret_id` and `secret_id`',
        { field: body.secret_id ? 'public_key_secret_id' : 'secret_id' },
      );
    }
    if (body.public_key_secret_id && body.kind !== 'langfuse')
      throw new DomainError(
        TraceErrors.trace_connection_invalid,
        '`public_key_secret_id` is for langfuse connections only',
        { field: 'public_key_secret_id' },
      );
    if (body.project && body.kind !== 'phoenix')
      throw new DomainError(TraceErrors.trace_connection_invalid, '`project` is for phoenix connections only', {
        field: 'project',
      });
    return this.transactions.run(async () => {
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      if (body.public_key_secret_id) await this.secretReferences.requireUsable(access, body.public_key_secret_id);
      if (body.dataset_id) await this.requireTraceDataset(access.workspaceId, body.dataset_id);
      if (await this.traces.connectionNameTaken(access.workspaceId, body.name))
        throw new DomainError(
          TraceErrors.trace_connection_name_taken,
          `The workspace already has a trace connection named "${body.name}"`,
        );
      const row = await this.traces.insertConnection({
        workspace_id: access.workspaceId,
        name: body.name,
        kind: body.kind,
        url: body.url,
        settings: {
          ...(body.project ? { project: body.project } : {}),
          ...(body.page_size ? { page_size: body.page_size } : {}),
        },
        secret_id: body.secret_id ?? null,
        public_key_secret_id: body.public_key_secret_id ?? null,
        dataset_id: body.dataset_id ?? null,
        created_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_connection.created',
        targetType: 'trace_connection',
        targetId: row.id,
        details: { name: row.name, kind: row.kind },
      });
      return toConnection(row);
    });
  }

  async listConnections(access: WorkspaceAccess): Promise<TraceSourceConnectionResponse[]> {
    return (await this.traces.listConnections(access.workspaceId)).map(toConnection);
  }

  // Uploads

  /** Keeps the file under DATA_DIR/trace-uploads (the workers read it from there) and records what it holds. */
  async upload(
    access: WorkspaceAccess,
    file: UploadedFile | undefined,
    caller: Principal,
  ): Promise<TraceUploadResponse> {
    if (!file || file.size === 0) {
      if (file) await rm(file.path, { force: true });
      throw new DomainError(
        TraceErrors.trace_upload_empty,
        file ? 'The uploaded file is empty' : 'Send the trace file in a multipart part named "file"',
      );
    }
    const id = randomUUID();
    const dir = join(this.config.dataDir, 'trace-uploads', access.workspaceId);
    await mkdir(dir, { recursive: true });
    const path = join(dir, id);
    await rename(file.path, path);
    const sha256 = await new Promise<string>((resolve, reject) => {
      const hash = createHash('sha256');
      createReadStream(path)
        .on('data', (c) => hash.update(c))
        .on('end', () => resolve(hash.digest('hex')))
        .on('error', reject);
    });
    const format = await sniffFormat(path, file.originalname);
    const row = await this.transactions.run(async () => {
      const upload = await this.traces.insertUpload({
        id,
        workspace_id: access.workspaceId,
        filename: file.originalname.slice(0, 500),
        format,
        size_bytes: file.size,
        sha256,
        path,
        created_by: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'trace_upload.created',
        targetType: 'trace_upload',
        targetId: id,
        details: { filename: upload.filename, format, size_bytes: file.size, sha256 },
      });
      return upload;
    });
    return toUpload(row);
  }

  async detectUpload(
    access: WorkspaceAccess,
    uploadId: string,
    sample: number | undefined,
  ): Promise<TraceConventionDetectionResponse> {
    const upload = await this.requireUpload(access.workspaceId, uploadId);
    return {
      ...(await this.detect(readTraceFile(upload.path, upload.format as TraceFileFormat), sample)),
      upload_id: upload.id,
    };
  }

  async detectRecords(records: unknown[], sample: number | undefined): Promise<TraceConventionDetectionResponse> {
    return this.detect(readRecordsAsync(records), sample);
  }

  private async detect(source: AsyncIterable<ReadItem>, sample = 1000): Promise<TraceConventionDetectionResponse> {
    const spans: SourceSpan[] = [];
    const drops: Drop[] = [];
    let read = 0;
    for await (const item of source) {
      if (++read > DETECT_READ_LIMIT || spans.length >= sample) break;
      if ('drop' in item) drops.push(item.drop);
      else spans.push(item.span);
    }
    if (!spans.length) {
      const reasons = [...new Set(drops.slice(0, 5).map((d) => `${d.source_ref}: ${d.detail}`))];
      throw new DomainError(
        TraceErrors.trace_sample_empty,
        `No span could be read from the sample${reasons.length ? ` (${reasons.join('; ')})` : ''}`,
        { dropped_records: drops.length },
      );
    }
    const detection = detectConventions(spans, { sample });
    // Records refused before any convention applied (unreadable, unsupported shapes) count as drops too.
    const readerDrops = new Map<string, { reason: string; count: number; example_source_ref: string }>();
    for (const d of drops) {
      const entry = readerDrops.get(d.reason) ?? { reason: d.reason, count: 0, example_source_ref: d.source_ref };
      entry.count++;
      readerDrops.set(d.reason, entry);
    }
    const merged = new Map(detection.dropped_records.map((d) => [d.reason as string, { ...d }]));
    for (const [reason, d] of readerDrops) {
      const existing = merged.get(reason);
      if (existing) existing.count += d.count;
      else merged.set(reason, d as (typeof detection.dropped_records)[number]);
    }
    return { ...detection, dropped_records: [...merged.values()] } as TraceConventionDetectionResponse;
  }

  // Landing

  async land(access: WorkspaceAccess, body: LandTracesRequest, caller: Principal): Promise<TraceIngestRunResponse> {
    if (!!body.upload_id === !!body.connection_id)
      throw new DomainError(
        TraceErrors.trace_source_invalid,
        'Name exactly one source: `upload_id` (POST /traces/uploads) or `connection_id` (POST /traces/connections)',
        { field: body.upload_id ? 'connection_id' : 'upload_id' },
      );
    if (body.upload_id) {
      if (!(await this.traces.findUpload(access.workspaceId, body.upload_id)))
        throw new DomainError(
          TraceErrors.trace_source_invalid,
          `Workspace ${access.workspaceId} has no trace upload ${body.upload_id}`,
          { field: 'upload_id' },
        );
      return this.start(access, { kind: 'upload', upload_id: body.upload_id }, body, caller);
    }
    const connection = await this.traces.findConnection(access.workspaceId, body.connection_id!);
    if (!connection)
      throw new DomainError(
        TraceErrors.trace_source_invalid,
        `Workspace ${access.workspaceId} has no trace connection ${body.connection_id}`,
        { field: 'connection_id' },
      );
    return this.start(
      access,
      { kind: 'connection', connection_id: connection.id },
      withConnectionTarget(body, connection),
      caller,
    );
  }

  async landFromConnection(
    access: WorkspaceAccess,
    connectionId: string,
    body: LandFromConnectionRequest,
    caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    const connection = await this.traces.findConnection(access.workspaceId, connectionId);
    if (!connection) throw new NotFoundError('trace connection', connectionId);
    return this.start(
      access,
      { kind: 'connection', connection_id: connection.id },
      withConnectionTarget(body, connection),
      caller,
    );
  }

  async landInline(
    access: WorkspaceAccess,
    body: LandInlineRequest,
    caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    return this.start(access, { kind: 'inline', records: body.records }, body, caller);
  }

  private async start(
    access: WorkspaceAccess,
    source:
      | { kind: 'upload'; upload_id: string }
      | { kind: 'connection'; connection_id: string }
      | { kind: 'inline'; records: unknown[] },
    body: LandingOptions & { max_records?: number },
    caller: Principal,
  ): Promise<TraceIngestRunResponse> {
    if (body.dataset_id && body.dataset_name)
      throw new DomainError(
        TraceErrors.trace_dataset_invalid,
        'Name the target dataset by `dataset_id` or by `dataset_name`, not both',
        { field: 'dataset_name' },
      );
    return this.transactions.run(async () => {
      if (body.dataset_id) await this.requireTraceDataset(access.workspaceId, body.dataset_id);
      if (body.dataset_name) {
        const kind = await this.traceDatasets.kindOfName(access.workspaceId, body.dataset_name);
        if (kind && kind !== 'traces')
          throw new DomainError(
            TraceErrors.trace_dataset_invalid,
            `"${body.dataset_name}" is a test-case dataset; name a trace dataset or a new name`,
            { field: 'dataset_name' },
          );
      }
      const options: IngestOptions = {
        convention: body.convention ?? 'auto',
        keep_unmapped: body.keep_unmapped ?? true,
        ...(body.dataset_id ? { dataset_id: body.dataset_id } : {}),
        ...(body.dataset_name ? { dataset_name: body.dataset_name } : {}),
        ...(body.message ? { message: body.message } : {}),
        ...(body.max_records ? { max_records: body.max_records } : {}),
      };
      const run = await this.traces.insertRun({
        workspace_id: access.workspaceId,
        dataset_id: body.dataset_id ?? null,
        source_kind: source.kind,
        upload_id: source.kind === 'upload' ? source.upload_id : null,
        connection_id: source.kind === 'connection' ? source.connection_id : null,
        inline_records: source.kind === 'inline' ? source.records : null,
        options,
        created_by: caller.userId,
      });
      const { job } = await this.queue.enqueue({
        type: TRACE_LAND_JOB,
        payload: { ingest_run_id: run.id },
        workspaceId: access.workspaceId,
        targetType: 'trace_ingest_run',
        targetId: run.id,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'traces.landing_started',
        targetType: 'trace_ingest_run',
        targetId: run.id,
        details: { source: source.kind, dataset_id: body.dataset_id ?? null, dataset_name: body.dataset_name ?? null },
      });
      return toRun({ ...run, job_id: job.id });
    });
  }

  async getRun(access: WorkspaceAccess, runId: string): Promise<TraceIngestRunResponse> {
    return toRun(await this.requireRun(access.workspaceId, runId));
  }

  async runDrops(access: WorkspaceAccess, runId: string, query: DropsQuery): Promise<TraceIngestRunDropsResponse> {
    const run = await this.requireRun(access.workspaceId, runId);
    const items = await this.traces.runDrops(run.id, query.reason, query.limit, query.offset);
    return {
      run_id: run.id,
      total: query.reason ? (run.drop_reasons[query.reason] ?? 0) : run.dropped,
      by_reason: run.drop_reasons,
      items: items.map(toDrop),
      limit: query.limit,
      offset: query.offset,
    };
  }

  // Helpers

  private async requireRun(workspaceId: string, runId: string): Promise<IngestRunRow> {
    const run = await this.traces.findRun(workspaceId, runId);
    if (!run) throw new NotFoundError('trace ingest run', runId);
    return run;
  }

  private async requireUpload(workspaceId: string, uploadId: string): Promise<TraceUploadRow> {
    const upload = await this.traces.findUpload(workspaceId, uploadId);
    if (!upload) throw new NotFoundError('trace upload', uploadId);
    return upload;
  }

  private async requireTraceDataset(workspaceId: string, datasetId: string): Promise<void> {
    const dataset = await this.traceDatasets.findLocked(workspaceId, datasetId);
    if (!dataset)
      throw new DomainError(TraceErrors.trace_dataset_invalid, `Workspace ${workspaceId} has no dataset ${datasetId}`, {
        field: 'dataset_id',
      });
    if (dataset.kind !== 'traces')
      throw new DomainError(
        TraceErrors.trace_dataset_invalid,
        `"${dataset.name}" holds test cases; traces land in datasets of kind traces (name a new dataset_name to create one)`,
        { field: 'dataset_id' },
      );
  }
}

/** A landing names its target dataset, or goes to the connection's. */
function withConnectionTarget<T extends LandingOptions>(body: T, connection: TraceConnectionRow): T {
  return body.dataset_id || body.dataset_name || !connection.dataset_id
    ? body
    : { ...body, dataset_id: connection.dataset_id };
}
