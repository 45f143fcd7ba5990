import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeOn } from '../utils/database-mode.js';
import { chatCompletion, FakeUpstream } from '../utils/fake-upstream.js';
import { killIfRunning, type RunningService, spawnService, untilReady } from './support/service-process.js';

/**
 * The README's five-minute tour, run as written: every fenced block preceded by `<!-- tour -->`
 * is executed with bash against the service as `npm start` runs it (src/main.ts, a fresh
 * DATA_DIR, the admin password the tour starts it with), the service's address in place of
 * `localhost:3000` and a stand-in OpenAI-compatible application in place of the tour's
 * application URL. Each step's answer is then checked: the token worked, the workspace, the
 * dataset's rows, the SUT and its connection, the run and its result.
 */
jest.setTimeout(600_000);

/** A child boots from the TypeScript sources (and migrates a fresh database). */
const BOOT_MS = 240_000;
const SERVICE = 'localhost:3000';
const APPLICATION = 'https://your-app.example.com/v1';

const readme = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md'), 'utf8');

/** The blocks marked as the tour, in order. */
function tourBlocks(text: string): string[] {
  return [...text.matchAll(/<!-- tour -->\s*\n```(?:bash|sh)\n([\s\S]*?)\n```/g)].map((m) => m[1]);
}

function runBash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script],
      {
        cwd,
        // The tour's `node` is the one the tests run on.
        env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: cwd },
        timeout: 180_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr }),
    );
  });
}

describeOn('embedded', 'the tour starts the service as `npm start` does, on the embedded database')(
  'README: the five-minute tour',
  () => {
    const blocks = tourBlocks(readme);
    const password = /ADMIN_PASSWORD='([^']+)' npm start/.exec(readme)?.[1];
    const dataDir = mkdtempSync(join(tmpdir(), 'ews-tour-data-'));
    const cwd = mkdtempSync(join(tmpdir(), 'ews-tour-'));
    let service: RunningService | undefined;
    let application: FakeUpstream;

    beforeAll(async () => {
      // The stand-in application answers each question with the expected output the tour's
      // dataset gives it, read from the file the tour wrote.
      application = (await FakeUpstream.start()).on('POST', '/v1/chat/completions', (req) => {
        const question = (req.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content;
        const rows = readFileSync(join(cwd, 'tour.csv'), 'utf8').trim().split('\n').slice(1);
        const row = rows.map((line) => line.split(',')).find(([input]) => input === question);
        return { json: chatCompletion(row?.[1] ?? 'no such question') };
      });
      if (password) service = await untilReady(spawnService({ DATA_DIR: dataDir, ADMIN_PASSWORD: password }), BOOT_MS);
    });
    afterAll(async () => {
      killIfRunning(service);
      await service?.exited;
      await application?.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
    });

    it('has a tour: marked bash blocks, the start command with its password, the two addresses', () => {
      expect(blocks.length).toBeGreaterThan(0);
      expect(password).toBeDefined();
      const tour = blocks.join('\n');
      expect(tour).toContain(SERVICE);
      expect(tour).toContain(APPLICATION);
    });

    it('runs as written, and each step answers what the tour says', async () => {
      const host = new URL(service!.url).host;
      const script = [
        'set -euo pipefail',
        ...blocks.map((block) => block.replaceAll(SERVICE, host).replaceAll(APPLICATION, application.url('/v1'))),
        // What the steps made, for the checks below.
        `printf '\\n::tour %s %s %s %s %s %s\\n' "\${H#Authorization: Bearer }" "$WS" "$DS" "$SUT" "$CONN" "$RUN"`,
      ].join('\n');
      const result = await runBash(script, cwd);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });

      const [, token, ws, ds, sut, conn, runId] = /::tour (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)/.exec(result.stdout)!;
      const get = async (path: string) => {
        const res = await fetch(`${service!.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        return (await res.json()) as any;
      };
      // 1. The token is the admin's.
      expect((await get('/auth/me')).email).toBe('admin@example.com');
      // 2. The workspace.
      expect((await get(`/workspaces/${ws}`)).id).toBe(ws);
      // 3. The dataset, with the rows the tour's file holds.
      const written = readFileSync(join(cwd, 'tour.csv'), 'utf8').trim().split('\n').length - 1;
      const dataset = await get(`/datasets/${ds}`);
      expect({ workspace: dataset.workspace_id, rows: dataset.latest_version.row_count }).toEqual({
        workspace: ws,
        rows: written,
      });
      // 4. The SUT and its connection to the application.
      expect((await get(`/suts/${sut}`)).workspace_id).toBe(ws);
      const connections = (await get(`/suts/${sut}/connections`)) as Array<{ id: string; kind: string }>;
      expect(connections.find((c) => c.id === conn)?.kind).toBe('openai_chat');
      // 5. The run called the application once a row, and ended passing.
      const run = await get(`/runs/${runId}`);
      expect({ state: run.state, passed: run.passed, dataset: run.dataset_id }).toEqual({
        state: 'succeeded',
        passed: true,
        dataset: ds,
      });
      expect(application.received('POST', '/v1/chat/completions')).toHaveLength(written);
      // 6. What the tour printed last is the run's result.
      const printed = result.stdout.slice(0, result.stdout.indexOf('\n::tour')).split('\n').at(-1)!;
      expect(JSON.parse(printed)).toMatchObject({ run_id: runId, state: 'succeeded', passed: true });
    });
  },
);
