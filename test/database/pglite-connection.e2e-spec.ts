import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { BatchingPgliteConnection, TURN_BUDGET_MS } from '#libs/database/pglite-connection.js';
import { describeOn } from '../utils/database-mode.js';

/**
 * node-postgres on the embedded engine through BatchingPgliteConnection, against a real PGlite:
 * a statement's messages reach the engine as one call, and whatever goes wrong inside a batch
 * (a statement that does not parse, a value its parameter cannot take, an error inside a
 * transaction) answers as PostgreSQL would, leaving the connection usable.
 */
describeOn('embedded', 'the connection to the embedded engine')(
  'node-postgres through BatchingPgliteConnection',
  () => {
    let pglite: PGlite;
    let client: pg.Client;
    /** The messages of each call node-postgres made to the engine, by their type bytes. */
    const calls: string[] = [];

    beforeAll(async () => {
      pglite = await PGlite.create();
      const execProtocolStream = pglite.execProtocolStream.bind(pglite);
      pglite.execProtocolStream = (message, options) => {
        calls.push(messageTypes(message));
        return execProtocolStream(message, options);
      };
      client = new pg.Client({ connection: new BatchingPgliteConnection(pglite) } as pg.ClientConfig);
      await client.connect();
      await client.query('CREATE TABLE probe (id int PRIMARY KEY, note text NOT NULL)');
      await client.query(`INSERT INTO probe SELECT g, 'note ' || g FROM generate_series(1, 20) g`);
    });

    afterAll(async () => {
      await client?.end();
      await pglite?.close();
    });

    /** The type bytes of the protocol messages in `bytes` (P parse, B bind, D describe, E execute, S sync, Q query…). */
    function messageTypes(bytes: Uint8Array): string {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let types = '';
      for (let at = 0; at < bytes.length; at += 1 + view.getInt32(at + 1)) types += String.fromCharCode(bytes[at]);
      return types;
    }

    const lastCalls = async (work: () => Promise<unknown>) => {
      calls.length = 0;
      await work();
      return [...calls];
    };

    it('sends a prepared statement as one call: Parse to Sync the first time, Bind to Sync after', async () => {
      const byId = (id: number) =>
        client.query({ name: 'probe_by_id', text: 'SELECT note FROM probe WHERE id = $1', values: [id] });
      expect(await lastCalls(() => byId(3))).toEqual(['PBDES']);
      const again = await lastCalls(async () => expect((await byId(4)).rows).toEqual([{ note: 'note 4' }]));
      expect(again).toEqual(['BDES']);
    });

    it('sends an unnamed statement with parameters as one call, and a simple query as its own', async () => {
      expect(
        await lastCalls(async () =>
          expect((await client.query('SELECT count(*)::int AS n FROM probe WHERE id > $1', [10])).rows).toEqual([
            { n: 10 },
          ]),
        ),
      ).toEqual(['PBDES']);
      expect(await lastCalls(() => client.query('SELECT 1'))).toEqual(['Q']);
    });

    it('answers a statement that does not parse with its error, and the next statement runs', async () => {
      await expect(client.query('SELEC note FROM probe WHERE id = $1', [1])).rejects.toMatchObject({ code: '42601' });
      expect((await client.query('SELECT note FROM probe WHERE id = $1', [1])).rows).toEqual([{ note: 'note 1' }]);
    });

    it('answers a value its parameter cannot take with its error, and the prepared statement still runs', async () => {
      const byId = (id: unknown) =>
        client.query({ name: 'probe_by_id', text: 'SELECT note FROM probe WHERE id = $1', values: [id] });
      await expect(byId('not a number')).rejects.toMatchObject({ code: '22P02' });
      expect((await byId(5)).rows).toEqual([{ note: 'note 5' }]);
    });

    it('keeps a transaction aborted by an error until its rollback, and undoes its writes', async () => {
      await client.query('BEGIN');
      await client.query('INSERT INTO probe VALUES ($1, $2)', [100, 'kept?']);
      await expect(client.query('INSERT INTO probe VALUES ($1, $2)', [1, 'duplicate'])).rejects.toMatchObject({
        code: '23505',
      });
      await expect(client.query('SELECT 1 AS one WHERE $1::int = 1', [1])).rejects.toMatchObject({ code: '25P02' });
      await client.query('ROLLBACK');
      expect((await client.query('SELECT count(*)::int AS n FROM probe WHERE id = $1', [100])).rows).toEqual([
        { n: 0 },
      ]);
    });

    it('lets the event loop turn while statements follow one another for longer than TURN_BUDGET_MS', async () => {
      // One statement that keeps the engine busy for a while, then the same again and again, each asked for as the one
      // before answers (as a unit of work or a run's summary does): the engine answers in the promise that asked it.
      const busy = 'SELECT count(*) FROM generate_series(1, 300000)';
      // The fastest of three: statements no faster than it, so no more of them fit in the budget than the bound says.
      let oneMs = Infinity;
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        await client.query(busy);
        oneMs = Math.min(oneMs, performance.now() - started);
      }
      const statements = Math.ceil((6 * TURN_BUDGET_MS) / Math.max(1, oneMs)) + 4;
      let done = 0;
      let doneWhenTurned: number | undefined;
      setImmediate(() => (doneWhenTurned = done));
      for (let i = 0; i < statements; i++) {
        await client.query(busy);
        done++;
      }
      // Without a turn between them the callback ran after the last of them (all ran in one turn).
      expect(doneWhenTurned).toBeDefined();
      expect(doneWhenTurned!).toBeLessThan(statements);
      expect(doneWhenTurned!).toBeLessThanOrEqual(Math.ceil(TURN_BUDGET_MS / Math.max(1, oneMs)) + 2);
    });
  },
);
