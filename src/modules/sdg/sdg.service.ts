import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { JobQueue } from '#libs/queue/job-queue.service.js';
import { JudgesService } from '../catalogues/judges/judges.service.js';
import { RunSourceService } from '../datasets/run-source.service.js';
import {
  type CreateSdgAdapterRequest,
  type ListSdgAdaptersQuery,
  type SdgAdapterResponse,
  type SdgRunResponse,
  type StartSdgRunRequest,
} from './dto/sdg.dto.js';
import { SDG_JOB } from './sdg.jobs.js';
import { checkSdgTemplate } from './sdg-template.js';
import type { LlmSpec, SdgSpec, TemplateSpec } from './sdg.types.js';
import { SdgErrors } from './sdg.errors.js';
import { SdgRepository } from './sdg.repository.js';
import { RECENT_RUNS, runResponse, toAdapterResponse } from './sdg.mapper.js';

/** SDG adapters and the runs that add generated rows to a dataset as a new candidate version. */
@Injectable()
export class SdgService {
  constructor(
    private readonly sdg: SdgRepository,
    private readonly judges: JudgesService,
    private readonly sources: RunSourceService,
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListSdgAdaptersQuery): Promise<Page<SdgAdapterResponse>> {
    const [rows, total] = await this.sdg.page(access.workspaceId, pageWindow(query));
    const runs = await this.sdg.recentRuns(
      rows.map((r) => r.id),
      RECENT_RUNS,
    );
    return pageOf(rows, total, query, (r) => toAdapterResponse(r, runs));
  }

  async getRun(access: WorkspaceAccess, adapterId: string, runId: string): Promise<SdgRunResponse> {
    const run = await this.sdg.findRunOf(access.workspaceId, adapterId, runId);
    if (!run) throw new NotFoundError('SDG run', runId);
    return runResponse(run);
  }

  async get(access: WorkspaceAccess, id: string): Promise<SdgAdapterResponse> {
    const adapter = await this.sdg.find(access.workspaceId, id);
    if (!adapter) throw new NotFoundError('SDG adapter', id);
    return toAdapterResponse(adapter, await this.sdg.recentRuns([id], RECENT_RUNS));
  }

  async create(access: WorkspaceAccess, body: CreateSdgAdapterRequest, caller: Principal): Promise<SdgAdapterResponse> {
    const spec = this.spec(body);
    return this.transactions.run(async () => {
      if (await this.sdg.nameTaken(access.workspaceId, body.name))
        throw new DomainError(
          SdgErrors.sdg_adapter_name_taken,
          `The workspace already has an SDG adapter named "${body.name}"`,
        );
      if (body.kind === 'llm' && !(await this.judges.find(access.workspaceId, body.judge_id!))) {
        throw new DomainError(
          SdgErrors.sdg_adapter_invalid,
          `Workspace ${access.workspaceId} has no judge ${body.judge_id}`,
          { errors: ['judge_id names no judge of the workspace'] },
        );
      }
      const adapter = await this.sdg.saveAdapter({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        kind: body.kind,
        spec,
        judgeId: body.kind === 'llm' ? body.judge_id! : null,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sdg_adapter.created',
        targetType: 'sdg_adapter',
        targetId: adapter.id,
        details: { name: adapter.name, kind: adapter.kind },
      });
      return toAdapterResponse(adapter, []);
    });
  }

  /** Queues a generation (202); the rows go to the target as a new candidate version when it succeeds. */
  async startRun(
    access: WorkspaceAccess,
    adapterId: string,
    body: StartSdgRunRequest,
    caller: Principal,
  ): Promise<SdgRunResponse> {
    const adapter = await this.sdg.find(access.workspaceId, adapterId);
    if (!adapter) throw new NotFoundError('SDG adapter', adapterId);
    const invalid = (field: string) => (err: unknown) => {
      throw err instanceof DomainError ? new DomainError(SdgErrors.sdg_input_invalid, err.detail, { field }) : err;
    };
    await this.sources.resolve(access.workspaceId, body.target_dataset_id).catch(invalid('target_dataset_id'));
    const seed = body.seed
      ? await this.sources
          .resolve(access.workspaceId, body.seed.dataset_id, body.seed.version_id)
          .catch(invalid('seed'))
      : null;
    const run = await this.transactions.run(async () => {
      const created = await this.sdg.saveRun({
        workspaceId: access.workspaceId,
        adapterId,
        targetDatasetId: body.target_dataset_id,
        params: {
          seed: seed
            ? {
                dataset_id: seed.datasetId,
                version_number: seed.versionNumber,
                limit: body.seed?.limit ?? 100,
              }
            : null,
          max_rows: body.max_rows ?? 1000,
          message: body.message ?? `Generated by ${adapter.name}`,
        },
        createdBy: caller.userId,
      });
      await this.queue.enqueue({
        type: SDG_JOB,
        payload: { sdg_run_id: created.id },
        workspaceId: access.workspaceId,
        targetType: 'sdg_adapter',
        targetId: adapterId,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'sdg_run.started',
        targetType: 'sdg_adapter',
        targetId: adapterId,
        details: { sdg_run_id: created.id, target_dataset_id: body.target_dataset_id },
      });
      return (await this.sdg.findRunOf(access.workspaceId, adapterId, created.id))!;
    });
    return runResponse(run);
  }

  private spec(body: CreateSdgAdapterRequest): SdgSpec {
    const errors: string[] = [];
    const dimensions = body.dimensions ?? {};
    for (const [name, values] of Object.entries(dimensions)) {
      if (
        !Array.isArray(values) ||
        !values.length ||
        values.length > 100 ||
        !values.every((v) => typeof v === 'string')
      )
        errors.push(`dimensions.${name}: a list of 1..100 strings`);
    }
    const names = Object.keys(dimensions);
    if (body.kind === 'template') {
      if (!body.columns || !Object.keys(body.columns).length)
        errors.push('columns: a template adapter needs at least one column template');
      for (const [column, template] of Object.entries(body.columns ?? {}))
        errors.push(...checkSdgTemplate(template, `columns.${column}`, names));
      if (body.prompt !== undefined || body.judge_id !== undefined)
        errors.push('prompt and judge_id are for llm adapters');
    } else {
      if (!body.prompt) errors.push('prompt: an llm adapter needs a prompt');
      else errors.push(...checkSdgTemplate(body.prompt, 'prompt', names));
      if (!body.output_columns?.length) errors.push('output_columns: the columns every generated row must have');
      if (!body.judge_id) errors.push('judge_id: the judge connection that generates');
      if (body.columns !== undefined) errors.push('columns is for template adapters');
    }
    if (errors.length) throw new DomainError(SdgErrors.sdg_adapter_invalid, errors.join('; '), { errors });
    const dimension_columns = body.dimension_columns ?? true;
    return body.kind === 'template'
      ? ({ columns: body.columns!, dimensions, dimension_columns } satisfies TemplateSpec)
      : ({
          prompt: body.prompt!,
          count: body.count ?? 5,
          columns: body.output_columns!,
          dimensions,
          dimension_columns,
        } satisfies LlmSpec);
  }
}
