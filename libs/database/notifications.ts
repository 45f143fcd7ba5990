import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { AppConfig } from '#libs/config/app-config.js';
import { CONNECT_TIMEOUT_MS, OPENED_DATABASE, type OpenedDatabase } from './data-source.factory.js';
import { Db } from './unit-of-work.js';

/**
 * Called with each notification's payload; with `undefined` when the listening connection is
 * lost and again once it is open again: notifications sent meanwhile may have been missed (read
 * again, or stop trusting what was kept).
 */
export type NotificationListener = (payload: string | undefined) => void;

const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * "Something changed" signals between processes on one database, sent with the transaction that
 * made the change. On PostgreSQL they are LISTEN/NOTIFY: `notify` is `pg_notify` on the open
 * transaction (delivered when it commits, never when it rolls back), and a process that listens
 * holds ONE dedicated connection outside the pool for every channel and listener, opened at the
 * first `listen` and opened again (with a resync to every listener) when it is lost. The
 * embedded database serves one process and has one connection that must never wait on a
 * listener: its notifications are delivered in-process after the commit.
 */
@Injectable()
export class DatabaseNotifications implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseNotifications');
  private readonly listeners = new Map<string, Set<NotificationListener>>();
  /** Channels the embedded engine itself listens on (sent by triggers). */
  private readonly engineChannels = new Set<string>();
  private client?: pg.Client;
  private connecting?: Promise<pg.Client>;
  private reconnectTimer?: NodeJS.Timeout;
  private reconnectDelay = RECONNECT_FIRST_MS;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    private readonly db: Db,
    @Inject(OPENED_DATABASE) private readonly opened: { db?: OpenedDatabase },
  ) {}

  /** Whether notifications stay in this process (the embedded database) rather than go between processes. */
  get inProcess(): boolean {
    return this.config.embedded;
  }

  /** Signals `payload` on `channel` when the open transaction commits (at once outside one). */
  async notify(channel: string, payload: string): Promise<void> {
    checkChannel(channel);
    if (this.config.embedded) this.db.afterCommit(() => this.deliver(channel, payload));
    else await this.db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /**
   * Calls `listener` for every notification on `channel` from now on; resolves once listening.
   * Returns the function that stops it. `fromDatabase`: the channel is also sent by SQL
   * (`pg_notify` in a trigger); on the embedded database the engine then hands those to this
   * process when their transaction commits, before the COMMIT returns. The engine's LISTEN
   * runs on its one session, so it must be asked for before any transaction can be open (at
   * module init), or an open transaction's rollback would undo it.
   */
  async listen(
    channel: string,
    listener: NotificationListener,
    options: { fromDatabase?: boolean } = {},
  ): Promise<() => void> {
    checkChannel(channel);
    if (options.fromDatabase && this.config.embedded && !this.engineChannels.has(channel)) {
      const pglite = this.opened.db?.pglite;
      if (!pglite) throw new Error('the embedded database is not open');
      this.engineChannels.add(channel);
      await pglite.listen(channel, (payload) => this.deliver(channel, payload));
    }
    let set = this.listeners.get(channel);
    const first = !set;
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    try {
      if (!this.config.embedded) {
        const client = await this.connection();
        if (first) await client.query(`LISTEN ${channel}`);
      }
    } catch (err) {
      this.forget(channel, listener);
      throw err;
    }
    return () => this.forget(channel, listener);
  }

  /**
   * Whether a notification sent now reaches this process's listeners: on the embedded database
   * always (delivered in-process); on PostgreSQL while the listening connection is open. A cache
   * kept coherent by notifications serves from memory only while this holds.
   */
  get live(): boolean {
    return this.config.embedded || this.client !== undefined;
  }

  /** How many listeners are registered (all channels). */
  get listenerCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private forget(channel: string, listener: NotificationListener): void {
    const set = this.listeners.get(channel);
    set?.delete(listener);
    // The channel stays LISTENed: a later stream reuses it, and an idle LISTEN costs nothing.
  }

  private deliver(channel: string, payload: string | undefined): void {
    for (const listener of [...(this.listeners.get(channel) ?? [])]) {
      try {
        listener(payload);
      } catch (err) {
        this.logger.warn(`a listener of ${channel} failed: ${(err as Error).message}`);
      }
    }
  }

  /** The listening connection, opened (with every channel listened again) when there is none. */
  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new Error('the database notifications are closed'));
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.config.env.DATABASE_URL,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('the database notifications are closed');
    }
    this.client = client;
    this.reconnectDelay = RECONNECT_FIRST_MS;
    return client;
  }

  /** The listening connection died: open another with backoff while anyone listens, then tell every listener to read again. */
  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn(`the LISTEN connection was lost${err ? ` (${err.message})` : ''}; opening another`);
    // Whatever was sent from now until the connection is back is missed: say so at once too.
    for (const channel of this.listeners.keys()) this.deliver(channel, undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closed || !this.listenerCount) return;
      this.connection().then(
        () => {
          for (const channel of this.listeners.keys()) this.deliver(channel, undefined);
        },
        (err: Error) => {
          this.logger.warn(`the LISTEN connection could not be opened again (${err.message}); retrying`);
          this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
          this.scheduleReconnect();
        },
      );
    }, this.reconnectDelay);
    this.reconnectTimer.unref();
  }
}

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`invalid notification channel name ${channel}`);
}
