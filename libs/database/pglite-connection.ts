import { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';

type BackendMessage = { name: string };
type ParseOptions = Parameters<typeof serialize.parse>[0];
type BindOptions = Parameters<typeof serialize.bind>[0];
type ExecuteOptions = Parameters<typeof serialize.execute>[0];
type PortalOptions = Parameters<typeof serialize.describe>[0];

/** How long the engine's calls may hold the event loop before the next one waits for a turn of it. */
export const TURN_BUDGET_MS = 20;

/**
 * How long the embedded engine's calls have held the event loop in this turn of it, kept per
 * engine: every caller (node-postgres's connection below, the bulk writer's COPY) asks it before
 * a call, so a run of calls from any of them lets the loop turn once TURN_BUDGET_MS is spent.
 */
export class EngineTurns {
  /** When the calls of this turn of the event loop began; undefined once it turned. */
  private heldSince: number | undefined;

  /**
   * Before a call of the engine: nothing when the calls of this turn are within the budget, else
   * a promise of the next turn to wait for. The first call of a turn notes the time and asks to
   * hear when the loop turns again (one `setImmediate` a turn, not a call).
   */
  take(): Promise<void> | undefined {
    if (this.heldSince === undefined) {
      this.heldSince = performance.now();
      setImmediate(() => (this.heldSince = undefined));
      return undefined;
    }
    return performance.now() - this.heldSince > TURN_BUDGET_MS ? nextTurn() : undefined;
  }
}

const turnsByEngine = new WeakMap<PGlite, EngineTurns>();

/** The engine's EngineTurns, shared by everything that calls it. */
export function engineTurns(pglite: PGlite): EngineTurns {
  let turns = turnsByEngine.get(pglite);
  if (!turns) turnsByEngine.set(pglite, (turns = new EngineTurns()));
  return turns;
}

/**
 * node-postgres's connection to the embedded database: what `@electric-sql/pglite/node-postgres`'s
 * `PglitePgConnection` does, but handing PGlite the messages of a statement together. node-postgres
 * writes a prepared statement as Parse, Bind, Describe, Execute and Sync in one go, as it would
 * to a socket; PGlite's adapter gave each to the engine on its own, and each call entered the
 * WebAssembly engine, ran its protocol loop and synchronised the file system once more. Here the
 * messages up to a Sync or a Flush are one call, as a server reads them from one packet: a warm
 * prepared read costs one call instead of four (bench/http-get.mjs;
 * docs/performance.md#an-authenticated-get-of-a-record). A simple
 * query, COPY data and the authentication messages go at once, as before.
 *
 * The engine runs on this thread and answers within the promise that asked it, so statements that
 * follow one another (a run's summary read a page after a page, a unit of work's statements, the
 * requests waiting for the connection) ran within one turn of the event loop: nothing else ran
 * until the last, no request was read, no health check answered, no timer fired, and a keep-alive
 * connection whose idle timer fell due meanwhile was closed with a request in it
 * (docs/performance.md#runs). A call made when the engine's calls have held the loop for more than
 * TURN_BUDGET_MS waits for the next turn first (EngineTurns). (A turn before every call cost the GET of a
 * record much of its rate, docs/performance.md#runs: 32 requests' statements then interleave.)
 *
 * The engine answers the batch in order; the answers are emitted as the adapter emitted them
 * (each message by its name, `errorMessage` for an error, `message` when someone listens for it),
 * and an error ends nothing early: the engine skips to the Sync as PostgreSQL does.
 */
export class BatchingPgliteConnection extends EventEmitter {
  /** Read by node-postgres's client. */
  _connecting = false;
  readonly stream = { destroy: () => this.end() };
  readonly parsedStatements: Record<string, string> = {};
  readonly submittedNamedStatements: Record<string, string> = {};
  private pending: Uint8Array[] = [];
  /** The engine's answers come in order: each call waits for the one before. */
  private queue: Promise<unknown>;
  private forwardMessages = false;
  private readonly turns: EngineTurns;

  constructor(private readonly pglite: PGlite) {
    super();
    this.turns = engineTurns(pglite);
    this.on('newListener', (event) => {
      if (event === 'message') this.forwardMessages = true;
    });
    this.queue = pglite.waitReady;
  }

  async connect(): Promise<void> {
    this._connecting = true;
    await this.pglite.waitReady;
    process.nextTick(() => this.emit('readyForQuery'));
  }

  // Held until the Sync or Flush that ends them.
  parse(query: ParseOptions): void {
    this.pending.push(serialize.parse(query));
  }
  bind(config: BindOptions): void {
    this.pending.push(serialize.bind(config));
  }
  describe(msg: PortalOptions): void {
    this.pending.push(serialize.describe(msg));
  }
  execute(config: ExecuteOptions): void {
    this.pending.push(serialize.execute(config));
  }
  close(msg: PortalOptions): void {
    this.pending.push(serialize.close(msg));
  }

  sync(): void {
    this.send(serialize.sync());
  }
  flush(): void {
    this.send(serialize.flush());
  }
  query(text: string): void {
    this.send(serialize.query(text));
  }
  sendCopyFromChunk(chunk: Buffer): void {
    this.send(serialize.copyData(chunk));
  }
  endCopyFrom(): void {
    this.send(serialize.copyDone());
  }
  sendCopyFail(message: string): void {
    this.send(serialize.copyFail(message));
  }
  sendSASLInitialResponseMessage(mechanism: string, initialResponse: string): void {
    this.send(serialize.sendSASLInitialResponseMessage(mechanism, initialResponse));
  }
  sendSCRAMClientFinalMessage(additionalData: string): void {
    this.send(serialize.sendSCRAMClientFinalMessage(additionalData));
  }

  // The engine is in this process: no TLS, startup, password or cancel request to send.
  requestSsl(): void {}
  startup(): void {}
  password(): void {}
  cancel(): void {}
  ref(): void {}
  unref(): void {}

  end(): void {
    this.queue = this.queue.then(() => {
      this.emit('end');
    });
    for (const event of this.eventNames()) if (event !== 'newListener') this.removeAllListeners(event);
    this.forwardMessages = false;
  }

  /** Sends `last` with whatever waits before it, as one call of the engine. */
  private send(last: Uint8Array): void {
    const messages = this.pending.length ? Buffer.concat(this.pending.concat(last)) : last;
    this.pending = [];
    this.queue = this.queue
      .then(() => this.turns.take())
      .then(() => this.pglite.execProtocolStream(messages, { throwOnError: false }))
      .then((answers: BackendMessage[]) => {
        for (const answer of answers) {
          if (this.forwardMessages) this.emit('message', answer);
          this.emit(answer.name === 'error' ? 'errorMessage' : answer.name, answer);
        }
      })
      .catch((err: unknown) => {
        this.emit('error', err);
      });
  }
}

/** node-postgres's options for the embedded engine: one connection, handed the engine through BatchingPgliteConnection. */
export function embeddedPgConfig(pglite: PGlite) {
  return {
    poolSize: 1,
    user: 'postgres',
    password: 'dummy',
    database: 'postgres',
    host: 'localhost',
    port: 5432,
    connection: new BatchingPgliteConnection(pglite),
  };
}
