import { Injectable } from '@nestjs/common';
import type { WorkspaceAccess } from '../../../libs/auth/roles.js';
import { DomainError } from '../../../libs/common/domain-error.js';
import { evaluateGate, gateToJUnit, gateToMarkdown, type GateReport } from '../../../libs/evaluation/runs/gate.js';
import { ProjectsService } from '../projects/projects.service.js';
import { DiffService } from './diff.service.js';
import { DEFAULT_ALPHA } from '../../../libs/evaluation/runs/diff-statistics.js';
import type { GateFormat, GateQuery, GateResponse } from './dto/gate.dto.js';
import { TERMINAL_RUN_STATES } from './entities/run.entity.js';
import { RunErrors } from './runs.errors.js';
import { RunSummaries } from './run-summaries.js';
import { RunsService } from './runs.service.js';

export const GATE_MEDIA_TYPES: Record<GateFormat, string> = {
  json: 'application/json; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  junit: 'application/xml; charset=utf-8',
};

/** The release gate: a finished run judged by its project's test plan and, optionally, against a baseline run. Reads only. */
@Injectable()
export class GateService {
  constructor(
    private readonly runsService: RunsService,
    private readonly summaries: RunSummaries,
    private readonly diffs: DiffService,
    private readonly projects: ProjectsService,
  ) {}

  async gate(
    access: WorkspaceAccess,
    runId: string,
    query: GateQuery,
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
    const result = evaluateGate({
      run: { state: run.state, pass_rule: run.snapshot.pass_rule, metrics: run.snapshot.metrics },
      summary,
      plan,
      baseline,
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
}
