import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError, NotFoundError } from '#libs/common/domain-error.js';
import { type Page, pageOf, pageWindow } from '#libs/common/pagination.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { grade, PROBE } from '#libs/evaluation/judges/grade.js';
import type { JudgeConnection, VerdictScale } from '#libs/evaluation/judges/judge.types.js';
import { checkRubric } from '#libs/evaluation/judges/rubric.js';
import { SecretReferences } from '../../secrets/secret-references.service.js';
import { SecretsService } from '../../secrets/secrets.service.js';
import { CatalogueErrors } from '../catalogues.errors.js';
import type {
  CreateJudgeRequest,
  JudgeConnectionResponse,
  JudgeTestRequest,
  JudgeTestResult,
  ListJudgesQuery,
  ScaleDto,
  UpdateJudgeRequest,
} from '../dto/judge.dto.js';
import type { JudgeEntity } from '../entities/judge.entity.js';
import { JudgesRepository } from './judges.repository.js';
import { toJudgeResponse } from '../catalogues.mapper.js';

const DEFAULTS = { timeoutMs: 60_000, maxAttempts: 3, maxConcurrency: 4, azureApiVersion: '2024-10-21' };

/** Judges: the LLM connections that grade judged metrics, and a probe that checks one end to end. */
@Injectable()
export class JudgesService {
  constructor(
    private readonly judges: JudgesRepository,
    private readonly secretReferences: SecretReferences,
    private readonly secrets: SecretsService,
    private readonly audit: AuditService,
    private readonly transactions: TransactionRunner,
  ) {}

  async list(access: WorkspaceAccess, query: ListJudgesQuery): Promise<Page<JudgeConnectionResponse>> {
    const [rows, total] = await this.judges.page(access.workspaceId, query.provider, pageWindow(query));
    return pageOf(rows, total, query, toJudgeResponse);
  }

  async get(access: WorkspaceAccess, id: string): Promise<JudgeConnectionResponse> {
    return toJudgeResponse(await this.require(access, id));
  }

  async create(access: WorkspaceAccess, body: CreateJudgeRequest, caller: Principal): Promise<JudgeConnectionResponse> {
    return this.transactions.run(async () => {
      if (await this.judges.nameTaken(access.workspaceId, body.name, null)) throw nameTaken(body.name);
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      const judge = await this.judges.save({
        workspaceId: access.workspaceId,
        name: body.name,
        description: body.description ?? '',
        provider: body.provider,
        baseUrl: body.base_url.replace(/\/+$/, ''),
        model: body.model,
        apiVersion: body.provider === 'azure_openai' ? (body.api_version ?? DEFAULTS.azureApiVersion) : null,
        parameters: body.parameters ?? {},
        jsonMode: body.json_mode ?? true,
        timeoutMs: body.timeout_ms ?? DEFAULTS.timeoutMs,
        maxAttempts: body.max_attempts ?? DEFAULTS.maxAttempts,
        maxConcurrency: body.max_concurrency ?? DEFAULTS.maxConcurrency,
        secretId: body.secret_id ?? null,
        createdBy: caller.userId,
      });
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'judge.created',
        targetType: 'judge',
        targetId: judge.id,
        details: { name: judge.name, provider: judge.provider, base_url: judge.baseUrl, model: judge.model },
      });
      return toJudgeResponse(judge);
    });
  }

  /** Setting a secret, or pointing a judge that sends one elsewhere, is for admins. */
  async update(
    access: WorkspaceAccess,
    id: string,
    body: UpdateJudgeRequest,
    caller: Principal,
  ): Promise<JudgeConnectionResponse> {
    return this.transactions.run(async () => {
      const judge = await this.judges.findForUpdate(access.workspaceId, id);
      if (!judge) throw new NotFoundError('judge', id);
      const before = { base_url: judge.baseUrl, secret_id: judge.secretId };
      if (
        body.name !== undefined &&
        body.name.toLowerCase() !== judge.name.toLowerCase() &&
        (await this.judges.nameTaken(access.workspaceId, body.name, id))
      )
        throw nameTaken(body.name);
      if (body.secret_id) await this.secretReferences.requireUsable(access, body.secret_id);
      Object.assign(judge, {
        name: body.name ?? judge.name,
        description: body.description ?? judge.description,
        baseUrl: body.base_url?.replace(/\/+$/, '') ?? judge.baseUrl,
        model: body.model ?? judge.model,
        apiVersion:
          judge.provider === 'azure_openai' ? (body.api_version ?? judge.apiVersion ?? DEFAULTS.azureApiVersion) : null,
        parameters: body.parameters ?? judge.parameters,
        jsonMode: body.json_mode ?? judge.jsonMode,
        timeoutMs: body.timeout_ms ?? judge.timeoutMs,
        maxAttempts: body.max_attempts ?? judge.maxAttempts,
        maxConcurrency: body.max_concurrency ?? judge.maxConcurrency,
        secretId: body.secret_id === undefined ? judge.secretId : body.secret_id,
      });
      if (judge.secretId && judge.baseUrl !== before.base_url)
        this.secretReferences.requireAdmin(access, 'change where a judge that sends a secret points');
      const saved = await this.judges.save(judge);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'judge.updated',
        targetType: 'judge',
        targetId: id,
        details: {
          fields: Object.keys(body),
          base_url: { from: before.base_url, to: saved.baseUrl },
          secret_id: { from: before.secret_id, to: saved.secretId },
        },
      });
      return toJudgeResponse(saved);
    });
  }

  /** Refused while a metric config version or an eval config names the judge. */
  async delete(access: WorkspaceAccess, id: string, caller: Principal): Promise<void> {
    await this.transactions.run(async () => {
      const judge = await this.judges.findForUpdate(access.workspaceId, id);
      if (!judge) throw new NotFoundError('judge', id);
      const references = await this.judges.references(id);
      if (references.length)
        throw new DomainError(
          CatalogueErrors.judge_in_use,
          `Judge "${judge.name}" is used by ${references.join(', ')}`,
          { used_by: references },
        );
      await this.judges.delete(id);
      await this.audit.record({
        actor: caller,
        workspaceId: access.workspaceId,
        action: 'judge.deleted',
        targetType: 'judge',
        targetId: id,
        details: { name: judge.name },
      });
    });
  }

  /** Grades the built-in probe (or the given rubric and sample) with one real call. */
  async test(access: WorkspaceAccess, id: string, body: JudgeTestRequest): Promise<JudgeTestResult> {
    const judge = await this.require(access, id);
    const rubric = body.rubric ?? PROBE.rubric;
    const rubricErrors = body.rubric ? checkRubric(body.rubric) : [];
    if (rubricErrors.length)
      throw new DomainError(CatalogueErrors.rubric_invalid, rubricErrors.join('; '), { errors: rubricErrors });
    const scale = body.scale ? scaleOf(body.scale) : PROBE.scale;
    const context = body.rubric
      ? { input: body.input, output: body.output ?? null, expected_output: body.expected_output }
      : PROBE.context;
    const key = judge.secretId ? await this.secrets.resolveValue(access.workspaceId, judge.secretId) : null;
    const result = await grade(judgeConnection(judge), key, rubric, scale, context);
    return {
      ok: result.verdict !== null,
      status_code: result.call.status_code,
      latency_ms: result.call.latency_ms,
      attempts: result.call.attempts,
      verdict: result.verdict,
      answer: result.call.text?.slice(0, 4000) ?? null,
      usage: result.call.usage,
      error: result.error,
      response_excerpt: result.call.response_excerpt,
    };
  }

  /** The workspace's judge, or null: for the families that grade with one (reports, SDG). */
  find(workspaceId: string, id: string): Promise<JudgeEntity | null> {
    return this.judges.find(workspaceId, id);
  }

  private async require(access: WorkspaceAccess, id: string): Promise<JudgeEntity> {
    const judge = await this.judges.find(access.workspaceId, id);
    if (!judge) throw new NotFoundError('judge', id);
    return judge;
  }
}

/** The judge as the grading client takes it. */
export function judgeConnection(j: JudgeEntity): JudgeConnection {
  return {
    provider: j.provider,
    base_url: j.baseUrl,
    model: j.model,
    api_version: j.apiVersion,
    parameters: j.parameters,
    json_mode: j.jsonMode,
    timeout_ms: j.timeoutMs,
    max_attempts: j.maxAttempts,
  };
}

/** A validated scale body as the grading library takes it. */
export function scaleOf(scale: ScaleDto): VerdictScale {
  if (scale.type === 'numeric') {
    if (scale.min! >= scale.max!)
      throw new DomainError(
        CatalogueErrors.scale_invalid,
        `scale.min (${scale.min}) must be below scale.max (${scale.max})`,
      );
    return { type: 'numeric', min: scale.min!, max: scale.max! };
  }
  const labels = scale.labels!;
  const lower = labels.map((l) => l.trim().toLowerCase());
  if (new Set(lower).size !== labels.length)
    throw new DomainError(CatalogueErrors.scale_invalid, 'scale.labels must be distinct (compared case-insensitively)');
  const unknown = Object.keys(scale.scores ?? {}).filter((k) => !labels.includes(k));
  if (unknown.length)
    throw new DomainError(
      CatalogueErrors.scale_invalid,
      `scale.scores names labels not in scale.labels: ${unknown.join(', ')}`,
    );
  if (Object.values(scale.scores ?? {}).some((v) => typeof v !== 'number' || !Number.isFinite(v)))
    throw new DomainError(CatalogueErrors.scale_invalid, 'scale.scores must map labels to numbers');
  return { type: 'labels', labels, ...(scale.scores ? { scores: scale.scores } : {}) };
}

function nameTaken(name: string): DomainError {
  return new DomainError(CatalogueErrors.judge_name_taken, `The workspace already has a judge named "${name}"`);
}
