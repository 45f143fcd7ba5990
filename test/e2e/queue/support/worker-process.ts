import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  workerId: string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/**
 * Starts `worker-child.ts` in its own Node.js process and waits until it takes jobs. A cold start
 * compiles the worker's sources first, which took more than 30 s while the whole suite ran on two
 * cores: the wait allows 75 s, within the test's 120 s.
 */
export async function spawnWorker(env: Record<string, string>, timeoutMs = 75_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', join(here, 'register-ts.mjs'), join(here, 'worker-child.ts')], {
    cwd: join(here, '..', '..', '..', '..'),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const workerId = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker process not ready within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = () => {
      const match = output.match(/^READY (\S+)$/m);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker process exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
  return { child, workerId, exited, output: () => output };
}
