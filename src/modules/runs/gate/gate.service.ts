import { Injectable } from '@nestjs/common';
import { AuditService } from '#libs/audit/audit.service.js';
import type { Principal, WorkspaceAccess } from '#libs/auth/roles.js';
import { DomainError } from '#libs/common/domain-error.js';
import { evaluateGate, gateToJUnit, gateToMarkdown, type GateReport } from '#libs/evaluation/runs/gate.js';
import { ProjectsService } from '../../projects/projects.service.js';
import { DiffService } from '../results/diff.service.js';
import { DEFAULT_ALPHA } from '#libs/evaluation/runs/diff-statistics.js';
import type { GateFormat, GateQuery, GateResponse } from '../dto/gate.dto.js';
import type { GateVerdictResponse, RecordedGateResponse, RecordGateRequest } from '../dto/gate-verdict.dto.js';
import { GateVerdictsRepository } from './gate-verdicts.repository.js';
import { toGateVerdictResponse } from '../runs.mapper.js';
import { TransactionRunner } from '#libs/database/unit-of-work.js';
import { TERMINAL_RUN_STATES } from '../entities/run.entity.js';
import { RunErrors } from '../runs.errors.js';
import { RunSummaries } from '../execution/run-summaries.service.js';
import { RunsService } from '../runs.service.js';
import { correctedOf, JudgeValidityService } from '../validity/judge-validity.service.js';

export const GATE_MEDIA_TYPES: Record<GateFormat, string> = {
  json: 'application/json; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  junit: 'application/xml; charset=utf-8',
};

/**
 * The release gate: a finished run judged by its project's test plan and, optionally, against a
 * baseline run. `gate` and `render` only read; `record` keeps the verdict (run_gate_verdicts).
 */
@Injectable()
export class GateService {
  constructor(
    private readonly runsService: RunsService,
    private readonly summaries: RunSummaries,
    private readonly diffs: DiffService,
    private readonly projects: ProjectsService,
    private readonly verdicts: GateVerdictsRepository,
    private readonly transactions: TransactionRunner,
    private readonly audit: AuditService,
    private readonly validity: JudgeValidityService,
  ) {}

  /** The verdict with every check; `toRecord`: refuses a run that has not ended (once every id is checked). */
  async gate(
    access: WorkspaceAccess,
    runId: string,
    query: GateQuery,
    { toRecord = false } = {},
  ): Promise<
    GateReport & { project_id: string | null; test_plan: { id: string; name: string; version: number } | null }
  > {
    const run = await this.runsService.require(access, runId);
    // Every id of the request is checked against the workspace before anything is judged.
    const baselineRun = query.baseline_run_id ? await this.runsService.require(access, query.baseline_run_id) : null;
    const project = await this.projects.releasePlan(access, {
      projectId: query.project_id,
      sutId: run.sutId,
      datasetId: run.datasetId,
    });
    if (toRecord && !TERMINAL_RUN_STATES.has(run.state))
      throw new DomainError(
        RunErrors.gate_run_not_finished,
        `Run ${run.id} is ${run.state}; record its gate verdict once it has ended`,
        { run_id: run.id },
      );
    let baseline = null;
    if (baselineRun) {
      if (!TERMINAL_RUN_STATES.has(baselineRun.state))
        throw new DomainError(
          RunErrors.gate_baseline_not_finished,
          `Baseline run ${baselineRun.id} is ${baselineRun.state}; compare with a run that has ended`,
          { baseline_run_id: baselineRun.id },
        );
      baseline = this.diffs.statistics(
        await this.diffs.compare(access, { base: baselineRun.id, candidate: run.id }),
        query,
      );
    }
    // Over the rows scored so far: a run that has not ended fails its run_state check anyway.
    const summary = await this.summaries.summarize(run, { scored: true });
    const plan = project?.test_plan ?? null;
    const judged = run.snapshot.metrics.filter((m) => m.kind === 'judged');
    const latest = await this.validity.latest(run.workspaceId, judged);
    const judges = judged.map((m) => {
      const v = m.config ? (latest.get(m.config.id) ?? null) : null;
      const s = summary.metrics.find((x) => x.name === m.name);
      return {
        metric: m.name,
        config: m.config && { name: m.config.name, version: m.config.version },
        validation: v && {
          id: v.id,
          kappa_low: v.result.kappa.interval?.low ?? null,
          true_positive_rate_low: v.result.true_positive_rate.interval?.low ?? null,
          true_negative_rate_low: v.result.true_negative_rate.interval?.low ?? null,
        },
        corrected: v && s ? correctedOf(s, v) : null,
      };
    });
    const result = evaluateGate({
      run: { state: run.state, pass_rule: run.snapshot.pass_rule, metrics: run.snapshot.metrics },
      summary,
      plan,
      baseline,
      judges,
    });
    return {
      run_id: run.id,
      run_name: run.name,
      project_id: project?.project_id ?? null,
      project_name: project?.project_name ?? null,
      test_plan: plan ? { id: plan.id, name: plan.name, version: plan.version } : null,
      baseline_run_id: query.baseline_run_id ?? null,
      alpha: query.alpha ?? DEFAULT_ALPHA,
      ...result,
    };
  }

  /** The gate in the format asked: JSON (the response record), Markdown or JUnit XML. */
  async render(
    access: WorkspaceAccess,
    runId: string,
    query: GateQuery,
    format: GateFormat,
  ): Promise<{ contentType: string; body: string | GateResponse }> {
    const report = await this.gate(access, runId, query);
    const { run_name: _run, project_name: _project, ...response } = report;
    if (format === 'markdown') return { contentType: GATE_MEDIA_TYPES.markdown, body: gateToMarkdown(report) };
    if (format === 'junit') return { contentType: GATE_MEDIA_TYPES.junit, body: gateToJUnit(report) };
    return { contentType: GATE_MEDIA_TYPES.json, body: response };
  }

  /**
   * Judges the ended run as `gate` does and records the verdict with its label. The same inputs
   * and outcome answer the record made before (`created: false`); a new plan version, baseline,
   * label or outcome is a new record.
   */
  async record(
    access: WorkspaceAccess,
    runId: string,
    body: RecordGateRequest,
    caller: Principal,
  ): Promise<{ created: boolean; response: RecordedGateResponse }> {
    const report = await this.gate(access, runId, body, { toRecord: true });
    const { run_name: _run, project_name: _project, ...answer } = report;
    const passed = report.checks.filter((c) => c.status === 'pass').length;
    const skipped = report.checks.filter((c) => c.status === 'skipped').length;
    const row = {
      workspace_id: access.workspaceId,
      run_id: report.run_id,
      label: body.label ?? null,
      project_id: report.project_id,
      test_plan_id: report.test_plan?.id ?? null,
      test_plan_name: report.test_plan?.name ?? null,
      test_plan_version: report.test_plan?.version ?? null,
      baseline_run_id: report.baseline_run_id,
      alpha: report.alpha,
      min_rows: body.min_rows ?? null,
      verdict: report.verdict,
      failures: report.failures,
      warnings: report.warnings,
      passed,
      skipped,
      recorded_by: caller.userId,
    };
    const { recorded_by: _by, workspace_id: _ws, ...judged } = row;
    const fingerprint = JSON.stringify(judged);
    const recorded = await this.transactions.run(async () => {
      const result = await this.verdicts.record({ ...row, fingerprint });
      if (result.created)
        await this.audit.record({
          actor: caller,
          workspaceId: access.workspaceId,
          action: 'run.gate_recorded',
          targetType: 'run',
          targetId: report.run_id,
          details: { verdict: report.verdict, label: row.label, baseline_run_id: row.baseline_run_id },
        });
      return result;
    });
    return { created: recorded.created, response: { ...answer, record: toGateVerdictResponse(recorded.row) } };
  }

  /** The run's recorded verdicts, newest first. */
  async list(access: WorkspaceAccess, runId: string): Promise<GateVerdictResponse[]> {
    const run = await this.runsService.require(access, runId);
    return (await this.verdicts.list(access.workspaceId, run.id)).map(toGateVerdictResponse);
  }
}
