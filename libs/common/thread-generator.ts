import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, type ResourceLimits, type Transferable, Worker } from 'node:worker_threads';

/**
 * An async generator run on a worker thread, consumed on this one as if it ran here: its values
 * arrive in order (their buffers moved, not copied), its return value is the consumer's, its
 * errors are thrown to the consumer with their class and fields, and it runs at most `ahead`
 * values ahead of the consumer. A consumer that stops early (break, a throw, `return()`) ends
 * the thread; a run that finished leaves it for the next for IDLE_MS. Work that is plain computation (parsing and encoding a file) runs beside the
 * event loop instead of on it: node's own thread stays free for requests and, on the embedded
 * database, for PGlite, which runs on it.
 *
 * The worker module calls `serveGenerator`; the consumer calls `generatorOnThread` with the
 * module's URL (`siblingModule`). Messages: `{ start, credit }` and `{ credit }` to the worker;
 * `{ value }`, `{ done }` or `{ error }` from it.
 */

/** Names a module of loader hooks that transpile TypeScript: set where the sources run unbuilt in a process without them (jest). */
export const TYPESCRIPT_HOOKS_ENV = 'WORKER_TYPESCRIPT_HOOKS';

/** An error as it crosses between threads: its class name, message and own fields. */
export interface ThreadError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
  stack?: string;
}

type FromWorker<T, R> = { value: T } | { done: R } | { error: ThreadError };

/** The URL of module `name` beside `importMetaUrl`, with its extension (.js when built, .ts from the sources). */
export function siblingModule(importMetaUrl: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(importMetaUrl))}`, importMetaUrl);
}

export interface GeneratorOnThreadOptions {
  /** Values the worker may produce before the consumer takes them (default 2). */
  ahead?: number;
  /** Heap limits of a thread started for this run (a kept thread keeps those it was started with). */
  resourceLimits?: ResourceLimits;
  /** Rebuilds errors of the classes named: the consumer catches them as it would on its own thread. */
  errors?: Record<string, (fields: Record<string, unknown>, message: string) => Error>;
}

/** A thread that finished its last run waits this long for the next before it ends (its code stays compiled). */
const IDLE_MS = 10_000;

/** Threads that finished a run cleanly, one per module at most, kept warm for the next run. */
const idle = new Map<string, { worker: Worker; timer: NodeJS.Timeout; gone: () => void }>();

function takeThread(entry: URL, resourceLimits: ResourceLimits | undefined): Worker {
  const kept = idle.get(entry.href);
  if (kept) {
    idle.delete(entry.href);
    clearTimeout(kept.timer);
    kept.worker.off('exit', kept.gone);
    kept.worker.ref();
    return kept.worker;
  }
  return startWorker(entry, resourceLimits);
}

function keepThread(entry: URL, worker: Worker): void {
  if (idle.has(entry.href)) {
    void worker.terminate();
    return;
  }
  // Idle, it keeps no process alive; after IDLE_MS, or if it dies, it is gone.
  const gone = () => {
    if (idle.get(entry.href)?.worker === worker) idle.delete(entry.href);
  };
  const timer = setTimeout(() => {
    gone();
    void worker.terminate();
  }, IDLE_MS).unref();
  worker.unref();
  idle.set(entry.href, { worker: worker.once('exit', gone), timer, gone });
}

/** Ends the threads kept warm (the application's shutdown): nothing is left running once it stops. */
export async function endIdleThreads(): Promise<void> {
  const kept = [...idle.values()];
  idle.clear();
  await Promise.all(
    kept.map(({ worker, timer }) => {
      clearTimeout(timer);
      return worker.terminate();
    }),
  );
}

/**
 * Runs `serveGenerator`'s generator of module `entry` over `input` on a worker thread: one that
 * finished a run within the last IDLE_MS, else a new one (a warm thread encodes an upload about a
 * quarter faster than a new one).
 */
export async function* generatorOnThread<T, R>(
  entry: URL,
  input: unknown,
  options: GeneratorOnThreadOptions = {},
): AsyncGenerator<T, R> {
  const worker = takeThread(entry, options.resourceLimits);
  const inbox: Array<FromWorker<T, R>> = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const onMessage = (message: FromWorker<T, R>) => {
    inbox.push(message);
    notify();
  };
  const onError = (err: Error) => {
    failure ??= err;
    notify();
  };
  const onExit = (code: number) => {
    failure ??= new Error(`the worker thread of ${entry.pathname} stopped (exit code ${code}) before it finished`);
    notify();
  };
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  worker.postMessage({ start: input, credit: options.ahead ?? 2 });
  let finished = false;
  try {
    for (;;) {
      while (!inbox.length && !failure) await new Promise<void>((resolve) => (wake = resolve));
      const message = inbox.shift();
      if (!message) throw failure!;
      if ('error' in message) {
        finished = true;
        throw revive(message.error, options.errors ?? {});
      }
      if ('done' in message) {
        finished = true;
        return message.done;
      }
      yield message.value;
      worker.postMessage({ credit: 1 });
    }
  } finally {
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    // A run that ended on its own leaves the thread ready for the next; one cut short (the
    // consumer stopped, the thread failed) ends it.
    if (finished && !failure) keepThread(entry, worker);
    else await worker.terminate();
  }
}

function startWorker(entry: URL, resourceLimits: ResourceLimits | undefined): Worker {
  // The sources running unbuilt under jest: the thread loads them through the hooks named, which
  // transpile TypeScript. (A process started with such hooks on its command line passes them on
  // to its threads by itself.)
  const hooks = process.env[TYPESCRIPT_HOOKS_ENV];
  if (!entry.pathname.endsWith('.ts') || !hooks) return new Worker(entry, { resourceLimits });
  const bootstrap = `require('node:module').register(${JSON.stringify(hooks)}); import(${JSON.stringify(entry.href)});`;
  return new Worker(bootstrap, { eval: true, resourceLimits });
}

function revive(error: ThreadError, known: NonNullable<GeneratorOnThreadOptions['errors']>): Error {
  const make = known[error.name];
  if (make) return make(error.fields, error.message);
  const err = new Error(error.message);
  err.name = error.name;
  if (error.stack) err.stack = `${error.stack}\n    (on a worker thread)`;
  return err;
}

function serialize(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { name: err.constructor.name, message: err.message, fields, stack: err.stack };
}

/**
 * The worker module's side: runs `run(input)` for each run a consumer starts, one at a time, and
 * hands its values over as the consumer grants credit, moving the buffers `transfer` names.
 */
export function serveGenerator<I, T, R>(
  run: (input: I) => AsyncGenerator<T, R>,
  transfer: (value: T) => Transferable[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveGenerator runs on a worker thread (generatorOnThread starts it)');
  let credit = 0;
  let wake: (() => void) | undefined;
  const serve = async (input: I) => {
    try {
      const values = run(input);
      for (;;) {
        const step = await values.next();
        if (step.done) {
          port.postMessage({ done: step.value });
          return;
        }
        while (credit === 0) await new Promise<void>((resolve) => (wake = resolve));
        credit--;
        port.postMessage({ value: step.value }, transfer(step.value));
      }
    } catch (err) {
      port.postMessage({ error: serialize(err) });
    }
  };
  port.on('message', (message: { start?: I; credit: number }) => {
    if ('start' in message) {
      credit = message.credit;
      void serve(message.start as I);
      return;
    }
    credit += message.credit;
    wake?.();
    wake = undefined;
  });
}
