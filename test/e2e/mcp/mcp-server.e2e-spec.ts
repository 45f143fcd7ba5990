import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { uploadRows, type UploadedDataset } from '../../utils/datasets.js';
import { FakeUpstream, type RecordedRequest } from '../../utils/fake-upstream.js';
import { callOk, callRefused, type Era, mcpClient } from '../../utils/mcp.js';
import { runToEnd, sutWithConnection } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

const TOOLS = {
  reads: [
    'find_datasets',
    'show_dataset',
    'query_rows',
    'list_runs',
    'show_run',
    'compare_runs',
    'show_diff_row',
    'explain_gate',
    'follow_run',
    'search_traces',
    'show_trace',
    'list_review_queues',
    'list_review_items',
  ],
  writes: ['start_run', 'next_review_item', 'label_review_item'],
};

type Comparison = {
  metric: string;
  test: string | null;
  p_value: number | null;
  significant: boolean | null;
  direction: string | null;
};
type Compared = {
  counts: { regressed: number; improved: number };
  metrics: Comparison[];
  row_verdict: Comparison | null;
  significant_regressions: string[];
  rows: Array<{ row_id: string; status: string; metrics: Record<string, { base: number; candidate: number }> }>;
};

/** Exact two-sided McNemar p-value from the discordant counts (binomial, p = 1/2), written here apart from the service's. */
function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  let tail = 0;
  let choose = 1;
  for (let k = 0; k <= Math.min(b, c); k++) {
    tail += choose / 2 ** n;
    choose = (choose * (n - k)) / (k + 1);
  }
  return Math.min(1, 2 * tail);
}

/**
 * The MCP server with the official TypeScript SDK's client and the MCP Inspector's CLI, against a
 * local fake SUT: 24 support questions in two topics; the candidate answers every billing row
 * wrong. A member's API key answers "which rows regressed, and is it significant?" from tool calls
 * alone; a viewer's key is refused a write; another workspace's key reads nothing.
 */
describe('MCP server', () => {
  let t: TestApp;
  let url: string;
  let sut: FakeUpstream;
  let data: UploadedDataset;
  let ws: string;
  let keys: { member: string; viewer: string; stranger: string };
  let sutId: string;
  let connectionId: string;
  let evalConfigId: string;
  let baseRunId: string;
  let candidateRunId: string;
  let mode: 'right' | 'regressed' = 'right';
  const clients: Client[] = [];
  const ROWS = Array.from({ length: 24 }, (_, i) => ({
    input: `${i < 12 ? 'billing' : 'shipping'} question ${i}`,
    expected_output: `answer ${i}`,
    topic: i < 12 ? 'billing' : 'shipping',
  }));

  const connect = async (key: string, era: Era = 'modern') => {
    const client = await mcpClient(url, key, era);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = await t.app.getUrl();
    sut = await FakeUpstream.start();
    sut.on('POST', '/answer', (req: RecordedRequest) => {
      const i = Number(/question (\d+)/.exec((req.body as { question: string }).question)?.[1]);
      return { json: { answer: mode === 'regressed' && i < 12 ? `not ${i}` : `answer ${i}` } };
    });
    const r = await t.factory.workspaceWithRoles();
    const other = await t.factory.workspaceWithRoles();
    ws = r.workspace.id;
    const key = async (auth: Record<string, string>, workspaceId: string, role: string) =>
      (
        await t.http
          .post(`/workspaces/${workspaceId}/api-keys`)
          .set(auth)
          .send({ name: `mcp-${role}`, role })
          .expect(201)
      ).body.key as string;
    keys = {
      member: await key(r.member.auth, ws, 'member'),
      viewer: await key(r.member.auth, ws, 'viewer'),
      stranger: await key(other.admin.auth, other.workspace.id, 'admin'),
    };
    data = await uploadRows(t, r.member.auth, ws, ROWS, 'support.json');
    ({ sutId, connectionId } = await sutWithConnection(t, r.member.auth, ws, {
      name: 'support-bot',
      connection: { name: 'api', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 4 },
    }));
    evalConfigId = (
      await t.http
        .post('/eval-configs')
        .set(r.member.auth)
        .send({
          workspace_id: ws,
          name: 'support',
          metrics: [{ config_name: 'exact_match' }, { config_name: 'token_f1' }],
          pass_rule: { min_pass_rate: 0.75 },
        })
        .expect(201)
    ).body.id;
    baseRunId = (
      await runToEnd<{ id: string; state: string }>(t, r.member.auth, r.viewer.auth, {
        workspace_id: ws,
        dataset_id: data.datasetId,
        sut_id: sutId,
        connection_id: connectionId,
        eval_config_id: evalConfigId,
      })
    ).id;
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await sut?.close();
    await t?.close();
  });

  it.each(['legacy', 'modern'] as const)(
    'connects with an API key on the %s revision and lists typed tools, marked read-only or not',
    async (era) => {
      const client = await connect(keys.viewer, era);
      expect(client.getServerVersion()).toEqual(expect.objectContaining({ name: 'evaluation-workspace-service' }));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS.reads, ...TOOLS.writes].sort());
      for (const tool of tools) {
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        expect(tool.description?.length).toBeGreaterThan(40);
        expect(tool.annotations?.readOnlyHint).toBe(TOOLS.reads.includes(tool.name));
      }
    },
  );

  it('answers which rows regressed between two runs, and whether it is significant, from tool calls alone', async () => {
    const client = await connect(keys.member);
    const found = await callOk<{ datasets: Array<{ id: string; latest_version: { row_count: number } }> }>(
      client,
      'find_datasets',
      { text: 'support' },
    );
    expect(found.datasets.map((d) => d.id)).toEqual([data.datasetId]);
    const shown = await callOk<{ row_count: number; columns: Array<{ name: string }>; sample: unknown[] }>(
      client,
      'show_dataset',
      { dataset_id: data.datasetId },
    );
    expect(shown.row_count).toBe(24);
    expect(shown.columns.map((c) => c.name)).toEqual(expect.arrayContaining(['input', 'expected_output', 'topic']));
    expect(shown.sample).toHaveLength(3);
    const billing = await callOk<{ rows: Array<{ _row_id: string }>; total: number }>(client, 'query_rows', {
      dataset_id: data.datasetId,
      filter: { field: 'topic', op: 'eq', value: 'billing' },
      columns: ['topic'],
      limit: 100,
    });
    expect(billing.total).toBe(12);

    mode = 'regressed';
    const started = await callOk<{ run: { id: string; state: string } }>(client, 'start_run', {
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      eval_config_id: evalConfigId,
      name: 'candidate',
    });
    candidateRunId = started.run.id;
    let followed = { ended: false, run: { state: started.run.state }, last_seq: null as number | null };
    for (let i = 0; i < 10 && !followed.ended; i++)
      followed = await callOk(client, 'follow_run', { run_id: candidateRunId, wait_seconds: 20 });
    expect(followed.run.state).toBe('succeeded');
    const listed = await callOk<{ runs: Array<{ id: string }> }>(client, 'list_runs', { dataset_id: data.datasetId });
    expect(listed.runs.map((run) => run.id)).toEqual([candidateRunId, baseRunId]);

    const compared = await callOk<Compared>(client, 'compare_runs', {
      base_run_id: baseRunId,
      candidate_run_id: candidateRunId,
      limit: 100,
    });
    expect(compared.counts).toEqual(expect.objectContaining({ regressed: 12, improved: 0 }));
    expect(compared.rows.map((row) => row.row_id).sort()).toEqual(billing.rows.map((row) => row._row_id).sort());
    for (const row of compared.rows)
      expect(row.metrics.exact_match).toEqual(expect.objectContaining({ base: 1, candidate: 0 }));
    const exact = compared.metrics.find((m) => m.metric === 'exact_match')!;
    expect(exact).toEqual(expect.objectContaining({ test: 'mcnemar_exact', significant: true, direction: 'worse' }));
    expect(exact.p_value).toBeCloseTo(mcnemarExact(12, 0), 12);
    expect(compared.row_verdict).toEqual(expect.objectContaining({ significant: true, direction: 'worse' }));
    expect(compared.row_verdict!.p_value).toBeCloseTo(mcnemarExact(12, 0), 12);
    expect(compared.significant_regressions).toEqual(expect.arrayContaining(['exact_match', 'row_verdict']));

    const row = compared.rows[0];
    const i = Number(
      /question (\d+)/.exec(
        (
          await callOk<{ input: string }>(client, 'show_diff_row', {
            base_run_id: baseRunId,
            candidate_run_id: candidateRunId,
            row_id: row.row_id,
          })
        ).input,
      )?.[1],
    );
    const side = await callOk<{ base: { output: string }; candidate: { output: string } }>(client, 'show_diff_row', {
      base_run_id: baseRunId,
      candidate_run_id: candidateRunId,
      row_id: row.row_id,
    });
    expect([side.base.output, side.candidate.output]).toEqual([`answer ${i}`, `not ${i}`]);

    const gate = await callOk<{ verdict: string; checks: Array<{ status: string; message: string }> }>(
      client,
      'explain_gate',
      { run_id: candidateRunId },
    );
    expect(gate.verdict).toBe('fail');
    expect(gate.checks[0].status).toBe('fail');
    const summary = await callOk<{ run: { passed: boolean }; summary: Record<string, unknown> }>(client, 'show_run', {
      run_id: candidateRunId,
    });
    expect(summary.run.passed).toBe(false);
  });

  it("refuses a viewer's key a write, an unknown record and bad arguments as tool errors, and changes nothing", async () => {
    const viewer = await connect(keys.viewer, 'legacy');
    const before = (
      await t.http
        .get('/runs')
        .query({ workspace_id: ws })
        .set({ Authorization: `Bearer ${keys.member}` })
        .expect(200)
    ).body.total;
    const refused = await callRefused(viewer, 'start_run', {
      dataset_id: data.datasetId,
      sut_id: sutId,
      connection_id: connectionId,
      eval_config_id: evalConfigId,
    });
    expect(refused).toMatch(/HTTP 403 forbidden/);
    expect(
      (
        await t.http
          .get('/runs')
          .query({ workspace_id: ws })
          .set({ Authorization: `Bearer ${keys.member}` })
          .expect(200)
      ).body.total,
    ).toBe(before);
    expect(await callRefused(viewer, 'show_run', { run_id: randomUUID() })).toMatch(/HTTP 404 not_found/);
    expect(await callRefused(viewer, 'show_run', { run_id: 'not-an-id' })).toMatch(/run_id/);
    expect(
      await callRefused(viewer, 'query_rows', {
        dataset_id: data.datasetId,
        filter: { field: 'topic', op: 'nope', value: 1 },
      }),
    ).toMatch(/HTTP 400/);
  });

  it("gives another workspace's key nothing of this one's", async () => {
    const stranger = await connect(keys.stranger);
    expect(await callRefused(stranger, 'show_run', { run_id: baseRunId })).toMatch(/HTTP (403|404)/);
    expect(
      await callRefused(stranger, 'compare_runs', { base_run_id: baseRunId, candidate_run_id: candidateRunId }),
    ).toMatch(/HTTP (403|404)/);
    expect(await callRefused(stranger, 'find_datasets', { workspace_id: ws })).toMatch(/HTTP 403/);
    expect(await callRefused(stranger, 'query_rows', { dataset_id: data.datasetId })).toMatch(/HTTP (403|404)/);
    const own = await callOk<{ datasets: unknown[] }>(stranger, 'find_datasets');
    expect(own.datasets).toEqual([]);
    await expect(stranger.readResource({ uri: `ews://datasets/${data.datasetId}/schema` })).rejects.toThrow();
  });

  it('answers no credential with 401, an invalid message with 400 and a refused Accept with 406, as problem+json; the 2025 streams it does not keep with 405', async () => {
    const res = await t.http
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      .expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    await t.http
      .get('/mcp')
      .set({ Authorization: `Bearer ${keys.member}`, Accept: 'text/event-stream' })
      .expect(405);
    const invalid = await t.http
      .post('/mcp')
      .set({ Authorization: `Bearer ${keys.member}`, Accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '1.0', method: 42 })
      .expect(400);
    expect(invalid.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(invalid.body).toEqual(
      expect.objectContaining({
        error_code: 'mcp_message_invalid',
        jsonrpc: '2.0',
        id: null,
        error: expect.objectContaining({ code: -32600 }),
      }),
    );
    const refused = await t.http
      .post('/mcp')
      .set({ Authorization: `Bearer ${keys.member}`, Accept: 'text/html' })
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect([refused.status, refused.body.error_code]).toEqual([406, 'mcp_not_acceptable']);
  });

  it('serves dataset schemas and reports as resources, and the prompts', async () => {
    const client = await connect(keys.member, 'legacy');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`ews://datasets/${data.datasetId}/schema`);
    const schema = await client.readResource({ uri: `ews://datasets/${data.datasetId}/schema` });
    expect(JSON.parse((schema.contents[0] as { text: string }).text)).toEqual(
      expect.objectContaining({ row_count: 24 }),
    );
    const report = (
      await t.http
        .post(`/reports/${candidateRunId}`)
        .set({ Authorization: `Bearer ${keys.member}` })
        .send({})
        .expect(201)
    ).body;
    const markdown = await client.readResource({ uri: `ews://reports/${report.id}` });
    expect(markdown.contents[0]).toEqual(
      expect.objectContaining({ mimeType: 'text/markdown', text: expect.stringMatching(/^# /) }),
    );
    await expect(client.readResource({ uri: `ews://reports/${randomUUID()}` })).rejects.toThrow();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['investigate_regression', 'triage_production_failures']);
    const prompt = await client.getPrompt({
      name: 'investigate_regression',
      arguments: { base_run_id: baseRunId, candidate_run_id: candidateRunId },
    });
    const text = (prompt.messages[0].content as { text: string }).text;
    expect(text).toContain(baseRunId);
    expect(text).toContain('compare_runs');
  });

  it("is a server the MCP Inspector's CLI lists and calls", async () => {
    // The CLI reads its package.json by a path it checks against the working directory: run it from its own folder.
    const build = join(process.cwd(), 'node_modules/@modelcontextprotocol/inspector-cli/build');
    const inspector = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          join(build, 'index.js'),
          `${url}/mcp`,
          '--transport',
          'http',
          '--header',
          `Authorization: Bearer ${keys.viewer}`,
          ...args,
        ],
        { cwd: build, timeout: 60_000 },
      );
      return JSON.parse(stdout);
    };
    const listed = await inspector('--method', 'tools/list');
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(TOOLS.reads));
    const called = await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'compare_runs',
      '--tool-arg',
      `base_run_id=${baseRunId}`,
      `candidate_run_id=${candidateRunId}`,
    );
    expect(called.isError).not.toBe(true);
    expect(called.structuredContent.counts.regressed).toBe(12);
    expect(called.structuredContent.significant_regressions).toContain('exact_match');
  });
});
