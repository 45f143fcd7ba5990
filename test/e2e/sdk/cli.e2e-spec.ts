import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FakeUpstream } from '../../utils/fake-upstream.js';
import { builtSdkPackage, repoRoot, run } from '../../utils/sdk-package.js';
import { sutWithConnection } from '../../utils/suts.js';
import { startTestApp, type TestApp } from '../../utils/test-app.js';

type Outcome = { code: number; stdout: string; stderr: string };

/**
 * The `ews` command of the SDK package, as a CI job runs it: the packed tarball installed with
 * npm into a fresh project, `node_modules/.bin/ews` run as its own process with EWS_URL and
 * EWS_API_KEY, against the app and a local SUT that answers right, then regresses on purpose.
 */
describe('sdk: the ews command', () => {
  let t: TestApp;
  let sut: FakeUpstream;
  let project: string;
  let env: Record<string, string>;
  let ws: string;
  let owner: Awaited<ReturnType<TestApp['factory']['actor']>>;
  /** The SUT's answer to a country; the test turns some wrong. */
  const answers: Record<string, string> = {
    France: 'Paris',
    Italy: 'Rome',
    Spain: 'Madrid',
    Peru: 'Lima',
    Chile: 'Santiago',
    Japan: 'Tokyo',
  };
  const dirs: string[] = [];

  const ews = (args: string[], extra: Record<string, string> = {}): Promise<Outcome> =>
    new Promise((resolve) => {
      execFile(
        join(project, 'node_modules', '.bin', 'ews'),
        args,
        { cwd: project, env: { PATH: process.env.PATH ?? '', ...env, ...extra }, timeout: 90_000 },
        (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
        },
      );
    });

  /** A SUT whose connection `staging` is the local SUT. */
  const staging = (name: string) =>
    sutWithConnection(t, owner.auth, ws, {
      name,
      connection: { name: 'staging', kind: 'http', http: { url: sut.url('/answer') }, max_concurrency: 2 },
    });
  /** `ews run --gate` on the continents dataset, its result in <name>.json. */
  const gatedRun = (name: string, ...more: string[]) => [
    'run',
    '--gate',
    '--dataset',
    'continents',
    '--sut',
    'geo-bot',
    '--eval-config',
    'release',
    '--no-progress',
    '--out',
    join(project, `${name}.json`),
    ...more,
  ];

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    const baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    sut = await FakeUpstream.start();
    sut.on('POST', '/answer', (req) => {
      const country = /of (\w+)\?/.exec((req.body as { question: string }).question)?.[1] ?? '';
      return { json: { answer: answers[country] ?? 'unknown' }, delayMs: 20 };
    });
    // The package as `npm run build` packs it, installed with npm as a CI job installs it (no dependencies: nothing from a registry).
    project = mkdtempSync(join(tmpdir(), 'ews-cli-project-'));
    dirs.push(project);
    const tarball = await builtSdkPackage();
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ci-job', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel', 'error', tarball], {
      cwd: project,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });

    owner = await t.factory.actor();
    ws = (await t.http.post('/workspaces').set(owner.auth).send({ name: 'ci' }).expect(201)).body.id;
    const key = (
      await t.http
        .post(`/workspaces/${ws}/api-keys`)
        .set(owner.auth)
        .send({ name: 'pipeline', role: 'member' })
        .expect(201)
    ).body.key as string;
    env = { EWS_URL: baseUrl, EWS_API_KEY: key };
    await staging('geo-bot');
    await t.http
      .post('/eval-configs')
      .set(owner.auth)
      .send({
        workspace_id: ws,
        name: 'release',
        metrics: [{ config_name: 'exact_match', min_pass_rate: 0.8 }],
        pass_rule: { min_pass_rate: 0.8 },
      })
      .expect(201);
  }, 240_000);
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await sut?.close();
    await t?.close();
  });

  const csv = (countries: string[]) =>
    ['input,expected_output', ...countries.map((c) => `capital of ${c}?,${answers[c] ?? c}`)].join('\n') + '\n';
  let passing: string;
  /** The continents dataset and the run the gate test compares with. */
  let continents: { datasetId: string; base: string };

  it('uploads a file as a dataset, then as its next version', async () => {
    const file = join(project, 'capitals.csv');
    writeFileSync(file, csv(['France', 'Italy', 'Spain']));
    const first = await ews(['upload', file, '--dataset', 'capitals', '--tag', 'ci']);
    expect(first).toEqual(expect.objectContaining({ code: 0 }));
    expect(first.stdout).toMatch(/^created dataset capitals \([0-9a-f-]{36}\): version 1 \([0-9a-f-]{36}\), 3 rows$/m);
    writeFileSync(file, csv(['France', 'Italy', 'Spain', 'Peru', 'Chile', 'Japan']));
    const second = await ews(['upload', file, '--dataset', 'capitals', '--message', 'six countries']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/new version of dataset capitals .*: version 2 .*, 6 rows/);
  });

  it('runs by names, follows the run live, prints the summary, writes the result and exits 0 when it passes', async () => {
    const out = join(project, 'result.json');
    const outcome = await ews([
      'run',
      '--dataset',
      'capitals',
      '--version',
      '2',
      '--sut',
      'geo-bot',
      '--connection',
      'staging',
      '--eval-config',
      'release',
      '--tag',
      'pr-1',
      '--gate',
      '--label',
      'main',
      '--out',
      out,
    ]);
    expect(outcome.stderr).toMatch(/^started run [0-9a-f-]{36} .*: 6 items$/m);
    // Not a terminal: a line per state change and per tenth of the items, from the live stream.
    expect(outcome.stderr).toContain('state: running');
    expect(outcome.stderr).toMatch(/^progress: 6\/6 100%/m);
    expect(outcome.stderr).toContain('state: succeeded');
    expect(outcome.stdout).toMatch(/exact_match\s+1\.000\s+100\.0%\s+80\.0%\s+yes/);
    expect(outcome.stdout).toContain('Verdict: PASSED');
    expect(outcome.code).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(result).toEqual(
      expect.objectContaining({
        exit_code: 0,
        verdict: { exit: 0, passed: true, reasons: [] },
        run: expect.objectContaining({
          state: 'succeeded',
          tags: ['pr-1'],
          progress: expect.objectContaining({ total: 6 }),
        }),
        // Recorded with its label: what the next `--baseline latest` finds.
        gate: expect.objectContaining({ verdict: 'pass', record: expect.objectContaining({ label: 'main' }) }),
      }),
    );
    passing = result.run.id;
  });

  it('exits 1 when the run fails its pass rule, naming the metric, with the diff against the last run whose gate passed', async () => {
    answers.Peru = 'Cusco';
    answers.Chile = 'Valparaiso';
    const out = join(project, 'regressed.json');
    const outcome = await ews([
      'run',
      '--dataset',
      'capitals',
      '--sut',
      'geo-bot',
      '--eval-config',
      'release',
      '--baseline',
      'latest',
      '--out',
      out,
      '--no-progress',
    ]);
    expect(outcome.stderr).not.toContain('progress:');
    expect(outcome.stdout).toContain('Verdict: FAILED');
    expect(outcome.stdout).toMatch(/metric exact_match passes on 0\.67 of rows, below its 0\.80/);
    expect(outcome.stdout).toContain(`against base ${passing}: 6 rows`);
    expect(outcome.stdout).toMatch(/regressed 2, improved 0/);
    expect(outcome.code).toBe(1);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(result).toEqual(
      expect.objectContaining({
        exit_code: 1,
        baseline_run_id: passing,
        diff: expect.objectContaining({ summary: expect.objectContaining({ regressed: 2 }) }),
      }),
    );

    const diff = await ews([
      'diff',
      result.run.id,
      passing,
      '--fail-on-regression',
      '--out',
      join(project, 'diff.json'),
    ]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/exact_match\s+1\.000\s+0\.667\s+-0\.333/);
    expect(JSON.parse(readFileSync(join(project, 'diff.json'), 'utf8')).summary.regressed).toBe(2);
    expect((await ews(['diff', result.run.id, passing])).code).toBe(0);
  });

  it("applies the release gate with --gate: the project's test plan per dimension value, Markdown and JUnit files, exit 1 naming the metric and the dimension", async () => {
    Object.assign(answers, { Peru: 'Lima', Chile: 'Santiago' });
    const file = join(project, 'continents.csv');
    const continent: Record<string, string> = {
      France: 'europe',
      Italy: 'europe',
      Spain: 'europe',
      Peru: 'americas',
      Chile: 'americas',
      Japan: 'asia',
    };
    writeFileSync(
      file,
      [
        'input,expected_output,continent',
        ...Object.keys(continent).map((c) => `capital of ${c}?,${answers[c]},${continent[c]}`),
      ].join('\n') + '\n',
    );
    const upload = await ews(['upload', file, '--dataset', 'continents']);
    expect(upload.code).toBe(0);
    const datasetId = /^created dataset continents \(([0-9a-f-]{36})\)/m.exec(upload.stdout)![1];
    for (const value of ['europe', 'americas', 'asia']) {
      await t.http
        .post(`/datasets/${datasetId}/dimensions:assign`)
        .set(owner.auth)
        .send({ dimension: 'continent', value, rule: { field: 'continent', op: 'eq', value } })
        .expect(201);
    }
    const suts = (await t.http.get('/suts').query({ workspace_id: ws, q: 'geo-bot' }).set(owner.auth).expect(200)).body
      .items as Array<{ id: string; name: string }>;
    const sutId = suts.find((s) => s.name === 'geo-bot')!.id;
    // Overall exact match 0.5 is enough; the Americas must reach 0.9.
    const plan = (
      await t.http
        .post('/test-plans')
        .set(owner.auth)
        .send({
          workspace_id: ws,
          name: 'geo release',
          datasets: [{ dataset_id: datasetId }],
          metrics: [
            {
              name: 'exact_match',
              threshold: { operator: '>=', value: 0.5 },
              per_dimension: [{ dimension: 'continent', value: 'americas', threshold: { operator: '>=', value: 0.9 } }],
            },
          ],
        })
        .expect(201)
    ).body.id;
    const projectId = (
      await t.http
        .post('/projects')
        .set(owner.auth)
        .send({
          workspace_id: ws,
          name: 'geo bot',
          dimensions: [
            {
              name: 'continent',
              description: 'Where the country is',
              values: ['europe', 'americas', 'asia'].map((value) => ({ value, description: '' })),
            },
          ],
          sut_ids: [sutId],
        })
        .expect(201)
    ).body.id;
    await t.http.put(`/projects/${projectId}/test-plan`).set(owner.auth).send({ test_plan: plan }).expect(200);

    const gated = (name: string) =>
      gatedRun(name, '--markdown', join(project, `${name}.md`), '--junit', join(project, `${name}.xml`));
    const unchanged = await ews(gated('unchanged'));
    expect(unchanged.stdout).toMatch(/^gate: pass$/m);
    expect(unchanged.code).toBe(0);
    const base = JSON.parse(readFileSync(join(project, 'unchanged.json'), 'utf8'));
    expect(base).toEqual(
      expect.objectContaining({
        exit_code: 0,
        verdict: { exit: 0, passed: true, reasons: [] },
        gate: expect.objectContaining({
          verdict: 'pass',
          project_id: projectId,
          test_plan: expect.objectContaining({ name: 'geo release' }),
        }),
      }),
    );
    expect(readFileSync(join(project, 'unchanged.md'), 'utf8')).toMatch(/^## ✅ Release gate passed: /);
    expect(readFileSync(join(project, 'unchanged.xml'), 'utf8')).toMatch(
      /<testsuites name="ews release gate" tests="\d+" failures="0"/,
    );

    Object.assign(answers, { Peru: 'Cusco', Chile: 'Valparaiso' });
    const regressed = await ews([...gated('regressed'), '--baseline', base.run.id]);
    expect(regressed.stdout).toMatch(/^gate: fail$/m);
    expect(regressed.stdout).toContain('exact_match on continent=americas: mean 0 misses >= 0.9');
    expect(regressed.code).toBe(1);
    const result = JSON.parse(readFileSync(join(project, 'regressed.json'), 'utf8'));
    expect(result).toEqual(
      expect.objectContaining({
        exit_code: 1,
        baseline_run_id: base.run.id,
        gate: expect.objectContaining({ verdict: 'fail', baseline_run_id: base.run.id }),
      }),
    );
    expect(result.verdict.reasons).toContain('exact_match on continent=americas: mean 0 misses >= 0.9');
    // Overall the run still clears 0.5: only the dimension value fails it.
    expect(result.gate.checks).toContainEqual(
      expect.objectContaining({ kind: 'threshold', metric: 'exact_match', status: 'pass' }),
    );
    const markdown = readFileSync(join(project, 'regressed.md'), 'utf8');
    expect(markdown).toMatch(/^## ❌ Release gate failed: /);
    // The operator is escaped alike in the Threshold and the Detail cells.
    expect(markdown).toContain(
      '| dimension_threshold | exact_match | continent=americas | &gt;= 0.9 | 0 |  |  | exact_match on continent=americas: mean 0 misses &gt;= 0.9 |',
    );
    expect(markdown).not.toMatch(/\| >=/);
    expect(readFileSync(join(project, 'regressed.xml'), 'utf8')).toContain(
      '<testcase classname="ews.gate.dimension_threshold" name="exact_match continent=americas &gt;= 0.9">',
    );
    expect(
      (
        await ews([
          'run',
          '--markdown',
          'x.md',
          '--dataset',
          'continents',
          '--sut',
          'geo-bot',
          '--metrics',
          'exact_match',
        ])
      ).stderr,
    ).toContain('--project, --label, --markdown and --junit go with --gate');
    continents = { datasetId, base: base.run.id };
  });

  it('compares with the last run whose recorded gate passed, with the label: not with a run whose gate failed', async () => {
    Object.assign(answers, { Peru: 'Lima', Chile: 'Santiago' });
    const gated = (name: string, ...more: string[]) =>
      ews(gatedRun(name, '--label', 'main', '--baseline', 'latest', ...more));
    const result = (name: string) => JSON.parse(readFileSync(join(project, `${name}.json`), 'utf8'));
    // No verdict of `main` passed yet on this dataset: allowed, the first run goes without a baseline.
    const first = await gated('main-1', '--allow-no-baseline');
    expect(first.stderr).toContain(
      'no run of this SUT on this dataset has passed a recorded gate with label "main": no baseline to compare with (--allow-no-baseline)',
    );
    expect(first.code).toBe(0);
    const good = result('main-1').run.id as string;
    expect(result('main-1').gate.record).toEqual(expect.objectContaining({ label: 'main', verdict: 'pass' }));

    // Peru wrong: the eval config still passes (5 of 6 >= 0.8), the plan's Americas threshold (0.9) does not.
    answers.Peru = 'Cusco';
    const failing = await gated('main-2');
    expect(failing.code).toBe(1);
    expect(result('main-2')).toEqual(
      expect.objectContaining({
        baseline_run_id: good,
        run: expect.objectContaining({ passed: true }),
        gate: expect.objectContaining({ verdict: 'fail' }),
      }),
    );
    // The same regression again: still compared with the last good run, and still failing.
    const again = await gated('main-3');
    expect(again.code).toBe(1);
    expect(result('main-3')).toEqual(
      expect.objectContaining({ baseline_run_id: good, gate: expect.objectContaining({ verdict: 'fail' }) }),
    );
    expect(again.stdout).toContain(`against base ${good}: 6 rows`);
    answers.Peru = 'Lima';
  });

  it('exits 2 before any run starts when the baseline asked for is missing, unknown or of another dataset', async () => {
    const file = join(project, 'pair.csv');
    writeFileSync(file, csv(['France', 'Italy']));
    const upload = await ews(['upload', file, '--dataset', 'pair']);
    const datasetId = /^created dataset pair \(([0-9a-f-]{36})\)/m.exec(upload.stdout)![1];
    const runsOfPair = async () =>
      (await t.http.get('/runs').query({ workspace_id: ws, dataset_id: datasetId }).set(owner.auth).expect(200)).body
        .total as number;
    const run = (...more: string[]) =>
      ews(['run', '--dataset', 'pair', '--sut', 'geo-bot', '--metrics', 'exact_match', '--no-progress', ...more]);

    // Metrics on the command line, no eval config, no recorded gate on this dataset: nothing to compare with is an error.
    const none = await run('--baseline', 'latest');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      'ews: --baseline latest: no run of this SUT on this dataset has passed a recorded gate (`ews run --gate` records one; --allow-no-baseline lets the first run of a pipeline go without)',
    );
    const unknown = await run('--baseline', '00000000-0000-4000-8000-000000000000');
    expect(unknown).toEqual(
      expect.objectContaining({
        code: 2,
        stderr: 'ews: --baseline: no run 00000000-0000-4000-8000-000000000000 in this workspace\n',
      }),
    );
    const otherDataset = await run('--baseline', continents.base);
    expect(otherDataset.code).toBe(2);
    expect(otherDataset.stderr).toContain(`ews: --baseline: run ${continents.base} ran on another dataset`);
    expect((await run('--baseline', 'yesterday')).stderr).toContain('--baseline takes a run id or "latest"');
    expect((await run('--baseline', continents.base, '--allow-no-baseline')).stderr).toContain(
      '--baseline-label and --allow-no-baseline go with --baseline latest',
    );
    expect(await runsOfPair()).toBe(0);

    // Allowed: the run goes without a comparison and passes.
    const allowed = await run('--baseline', 'latest', '--allow-no-baseline');
    expect(allowed.stdout).toContain('Verdict: PASSED');
    expect(allowed.stdout).not.toContain('against base');
    expect(allowed.code).toBe(0);
    expect(await runsOfPair()).toBe(1);
  });

  it("writes the run's report as a PDF", async () => {
    const out = join(project, 'report.pdf');
    const outcome = await ews(['report', passing, '--pdf', '--template-only', '--out', out]);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(readFileSync(out).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('exits 2 on every error, saying what went wrong', async () => {
    const noKey = await ews(['run', '--dataset', 'capitals'], { EWS_API_KEY: '' });
    expect(noKey).toEqual(expect.objectContaining({ code: 2, stderr: expect.stringContaining('set EWS_API_KEY') }));
    const unknown = await ews(['run', '--dataset', 'nope', '--sut', 'geo-bot', '--metrics', 'exact_match']);
    expect(unknown).toEqual(
      expect.objectContaining({ code: 2, stderr: expect.stringContaining('no dataset named "nope"') }),
    );
    const revoked = await ews(['diff', passing, passing], { EWS_API_KEY: 'ews_not_a_key' });
    expect(revoked).toEqual(
      expect.objectContaining({ code: 2, stderr: expect.stringMatching(/^ews: 401 unauthenticated/) }),
    );
    expect((await ews(['deploy'])).code).toBe(2);
    const help = await ews(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 failed');
  });

  it('runs the ews steps of the GitHub Actions workflow and the GitLab CI job in examples/ci', async () => {
    await staging('support-bot');
    mkdirSync(join(project, 'eval'), { recursive: true });
    writeFileSync(join(project, 'eval', 'questions.csv'), csv(['France', 'Italy', 'Spain']));
    const github = parseYaml(readFileSync(join(repoRoot, 'examples', 'ci', 'github-actions.yml'), 'utf8')) as {
      jobs: { evaluate: { steps: Array<{ run?: string }> } };
    };
    const gitlab = parseYaml(readFileSync(join(repoRoot, 'examples', 'ci', 'gitlab-ci.yml'), 'utf8')) as {
      evaluate: { script: string[] };
    };
    const jobs = {
      // GitHub's ${{ … }} expressions are filled in before the shell sees the step.
      github: github.jobs.evaluate.steps.flatMap((step) =>
        step.run?.includes('npx ews') ? [step.run.replace(/\$\{\{[^}]+\}\}/g, 'abc123')] : [],
      ),
      gitlab: gitlab.evaluate.script.filter((line) => line.includes('npx ews')),
    };
    // Every script line is a string (an unquoted `: ` would make it a mapping, which GitLab refuses).
    expect(gitlab.evaluate.script.every((line) => typeof line === 'string')).toBe(true);
    for (const steps of Object.values(jobs)) {
      expect(steps.length).toBe(2);
      for (const step of steps) {
        const { stdout } = await run('sh', ['-ec', step], {
          cwd: project,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: project,
            ...env,
            CI_COMMIT_SHA: 'abc123',
            npm_config_update_notifier: 'false',
          },
          timeout: 90_000,
        });
        expect(stdout).toMatch(step.includes('ews run') ? /Verdict: PASSED/ : /dataset support-questions/);
      }
      // No project carries a plan for support-bot: the gate judges by the eval config's pass rule.
      expect(JSON.parse(readFileSync(join(project, 'ews-result.json'), 'utf8'))).toEqual(
        expect.objectContaining({ exit_code: 0, gate: expect.objectContaining({ verdict: 'pass', test_plan: null }) }),
      );
      expect(readFileSync(join(project, 'ews-gate.md'), 'utf8')).toMatch(/^## ✅ Release gate passed: /);
      expect(readFileSync(join(project, 'ews-junit.xml'), 'utf8')).toContain('<testsuites name="ews release gate"');
      for (const f of ['ews-result.json', 'ews-gate.md', 'ews-junit.xml']) rmSync(join(project, f));
    }
  });
});
