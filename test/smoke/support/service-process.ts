import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  /** Resolves once the process has exited, with how long after `signalledAt` (when a signal was sent through `signal`). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  output(): string;
  /** The JSON log lines written so far. */
  logs(): Array<Record<string, unknown> & { msg: string }>;
  /** Sends the signal and notes when, for `exited`. */
  signal(signal: NodeJS.Signals): number;
}

export interface RunningService extends ServiceProcess {
  url: string;
}

/**
 * `src/main.ts`, exactly what `npm start` runs, from the TypeScript sources in a child process
 * of its own (the queue tests' loader: no build). It listens on a free port of 127.0.0.1.
 */
export function spawnService(env: Record<string, string>): ServiceProcess {
  return watch(
    spawn(
      process.execPath,
      ['--import', join(root, 'test', 'e2e', 'queue', 'support', 'register-ts.mjs'), join(root, 'src', 'main.ts')],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
}

/**
 * `npm start` itself in `cwd` (a checkout: its prestart step, then `node dist/src/main.js`), as the
 * leader of a process group of its own: `signal` reaches npm and the service under it.
 */
export function spawnNpmStart(cwd: string, env: Record<string, string>): ServiceProcess {
  const child = spawn('npm', ['start'], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      npm_config_update_notifier: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // 'close': once the service under npm, which writes to the same pipes, has exited too.
  return watch(child, (signal) => process.kill(-child.pid!, signal), 'close');
}

function watch(
  child: ChildProcess,
  kill: (signal: NodeJS.Signals) => void = (signal) => child.kill(signal),
  end: 'exit' | 'close' = 'exit',
): ServiceProcess {
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once(end, (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal, at: Date.now() })),
  );
  return {
    child,
    exited,
    output: () => output,
    logs: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        }),
    signal: (signal) => {
      const at = Date.now();
      kill(signal);
      return at;
    },
  };
}

/** Waits until the service logs the address it listens on and answers /ready with 200. */
export async function untilReady(service: ServiceProcess, timeoutMs: number): Promise<RunningService> {
  const deadline = Date.now() + timeoutMs;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void service.exited.then((e) => (exit = e));
  let url: string | undefined;
  for (;;) {
    if (exit)
      throw new Error(
        `the service exited (${exit.code ?? exit.signal}) before it was ready:\n${service.output().slice(-4000)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`the service was not ready within ${timeoutMs} ms:\n${service.output().slice(-4000)}`);
    url ??= service.logs().find((l) => typeof l.url === 'string' && l.msg.startsWith('listening on'))?.url as
      string | undefined;
    if (url) {
      const ready = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
      if (ready?.status === 200) return { ...service, url };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Kills the process if it still runs (a test's clean-up). */
export function killIfRunning(service: ServiceProcess | undefined): void {
  if (service && service.child.exitCode === null && service.child.signalCode === null) service.signal('SIGKILL');
}
