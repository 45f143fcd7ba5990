// Servers and load generators as processes of their own, so a measure never shares an event
// loop with what it measures.
import { fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * What an npm script starts `entry` with (package.json): `flags`, node's flags before `entry`, then
 * BENCH_SERVICE_FLAGS (space-separated); `env`, the variables it sets before `node` (`NAME=value`).
 * BENCH_SERVICE_DROP (space-separated names: `--max-old-space-size`, `MALLOC_ARENA_MAX`) leaves
 * out the script's flags and variables of those names, to measure the service without them.
 */
function startOf(script, entry) {
  const words = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts[script].split(/\s+/);
  const at = words.indexOf(entry);
  const node = words.lastIndexOf('node', at);
  const extra = process.env.BENCH_SERVICE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  const drop = new Set(process.env.BENCH_SERVICE_DROP?.split(/\s+/).filter(Boolean) ?? []);
  const kept = (word) => !drop.has(word.split('=')[0]);
  let first = node;
  while (first > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[first - 1])) first--;
  const env = Object.fromEntries(
    words
      .slice(first, node)
      .filter(kept)
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  return { flags: [...words.slice(node + 1, at).filter(kept), ...extra], env };
}

/**
 * The flags and environment the API and a worker process are started with, as `npm start` and
 * `npm run start:worker` start them, so a benchmark runs the service as users do;
 * BENCH_SERVICE_FLAGS adds a setting to measure, such as `--max-semi-space-size=32`
 * (docs/operations.md#node-flags). The environment goes under the benchmark's own.
 */
const serviceStart = startOf('start', 'dist/src/main.js');
const workerStart = startOf('start:worker', 'dist/src/worker.js');
export const serviceNodeFlags = serviceStart.flags;
export const serviceEnv = serviceStart.env;
export const workerNodeFlags = workerStart.flags;
export const workerEnv = workerStart.env;

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns `node args…` and waits until `ready(output)` answers a base URL (or the process dies).
 * Its output is read (and its last 64 KB kept), as a collector of a service's logs would.
 */
export async function startServer(args, env, ready, { timeoutMs = 300_000 } = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let url;
  // The last 64 KB, for the message when it dies.
  const onData = (chunk) => {
    output += chunk;
    if (output.length > 131_072) output = output.slice(-65_536);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let dead;
  let stopping = false;
  void exited.then((e) => {
    dead = e;
    if (!stopping)
      process.stderr.write(`${args.join(' ')} exited (${e.code ?? e.signal}) unasked:\n${output.slice(-3000)}\n`);
  });
  const deadline = Date.now() + timeoutMs;
  while (!(url = await ready(output))) {
    if (dead)
      throw new Error(
        `${args.join(' ')} exited (${dead.code ?? dead.signal}) before it was ready:\n${output.slice(-3000)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`${args.join(' ')} not ready after ${timeoutMs} ms:\n${output.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid,
    output: () => output,
    async stop() {
      if (dead) return;
      stopping = true;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** CPU seconds (user and system) process `pid` has used so far, from /proc (Linux). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which may hold spaces and parentheses: utime and stime
  // are the 12th and 13th, in clock ticks (100 a second).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Process `pid`'s resident set in MB (VmRSS in /proc/<pid>/status), as `ps` and the kernel count it. */
export const rssMb = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/**
 * Process `pid`'s RSS sampled every `everyMs` from outside it while `work()` runs: `{ result, low,
 * peak, peakAt, seconds }`, the lowest and highest sample in MB (the lowest shows what it gave back
 * of what it held before), when the highest was taken and how long `work` ran (seconds from its
 * start). The samples are taken until `work` ends, whether it answers or throws.
 */
export async function rssDuring(pid, everyMs, work) {
  const t0 = performance.now();
  let low = rssMb(pid);
  let peak = low;
  let peakAt = 0;
  const sample = () => {
    const rss = rssMb(pid);
    low = Math.min(low, rss);
    if (rss > peak) [peak, peakAt] = [rss, (performance.now() - t0) / 1000];
  };
  const timer = setInterval(sample, everyMs);
  try {
    const result = await work();
    sample();
    return { result, low, peak, peakAt, seconds: (performance.now() - t0) / 1000 };
  } finally {
    clearInterval(timer);
  }
}

/**
 * `url` asked one request at a time, every `everyMs`, by a process of its own (bench/lib/prober.mjs)
 * while `work()` runs: `{ result, probe: { count, medianMs, maxMs, failed } }`. `maxMs` is the
 * longest the service kept a client waiting meanwhile.
 */
export async function probeDuring(url, everyMs, work) {
  const child = fork(join(root, 'bench', 'lib', 'prober.mjs'), [url, String(everyMs)], { stdio: 'ignore' });
  const report = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the prober exited (${code}) before it reported`)));
  });
  report.catch(() => undefined); // read below, unless work() throws first
  try {
    const result = await work();
    child.send('stop');
    return { result, probe: await report };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

/**
 * autocannon in its own process: `connections` keep-alive connections for `seconds` on `url`.
 * Answers req/s (mean), p50/p99 latency in ms, and the count of errors and non-2xx answers; given
 * the `pid` of the server, also the CPU time it spent a request (`cpuUs`, microseconds), a figure
 * that depends less than req/s on what else the machine is doing.
 */
export async function load(url, { headers = {}, connections = 32, seconds = 10, pid } = {}) {
  const args = [
    join(root, 'node_modules', 'autocannon', 'autocannon.js'),
    '-c',
    String(connections),
    '-d',
    String(seconds),
    '-j',
  ];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  const cpuBefore = pid === undefined ? 0 : cpuSeconds(pid);
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${stderr.slice(-2000)}`);
  const cpu = pid === undefined ? undefined : cpuSeconds(pid) - cpuBefore;
  const r = JSON.parse(stdout);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    ...(cpu === undefined ? {} : { cpuUs: (cpu * 1e6) / Math.max(1, r.requests.total) }),
  };
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `min / median / max` of the figures, each with `digits` decimals. */
export function spread(xs, digits = 0) {
  const sorted = [...xs].sort((a, b) => a - b);
  return `${sorted[0].toFixed(digits)} / ${median(sorted).toFixed(digits)} / ${sorted.at(-1).toFixed(digits)}`;
}
