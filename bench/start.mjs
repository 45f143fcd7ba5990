// Seconds from `npm start` to the first 200 of GET /live: a start that builds (dist/ removed first
// with BENCH_CLEAN=1, or after a source change) and starts that find dist/ current, on one
// DATA_DIR (the first start also creates and migrates the embedded database).
//
//   node bench/start.mjs                  # BENCH_STARTS=3 starts
//   BENCH_CLEAN=1 node bench/start.mjs    # the first start builds from nothing
//
// Each start is a process group of its own, ended with SIGTERM once /live answered.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const starts = Number(process.env.BENCH_STARTS ?? 3);

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One `npm start`: seconds to /live, and whether it built. */
export async function timedStart(cwd, env) {
  const port = await freePort();
  const began = performance.now();
  const child = spawn('npm', ['start'], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let done = false;
  void exited.then(() => (done = true));
  try {
    for (;;) {
      if (done) throw new Error(`npm start exited before /live answered:\n${output.slice(-3000)}`);
      const res = await fetch(`http://127.0.0.1:${port}/live`).catch(() => null);
      if (res?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { seconds: (performance.now() - began) / 1000, built: output.includes('> nest build'), output };
  } finally {
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.env.BENCH_CLEAN) rmSync(join(root, 'dist'), { recursive: true, force: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'ews-bench-start-'));
  try {
    console.log('| start | built | seconds to /live |\n|---|---|---|');
    for (let i = 1; i <= starts; i++) {
      const r = await timedStart(root, { DATA_DIR: dataDir, ADMIN_PASSWORD: 'bench-password-1' });
      console.log(`| ${i} | ${r.built ? 'yes' : 'no'} | ${r.seconds.toFixed(2)} |`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
