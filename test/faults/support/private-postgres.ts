import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL server of its own (initdb in a temp directory, run as the `postgres`
 * user), so a test can stop and start a real server without disturbing the shared one that
 * other test files use at the same time.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  static create(port = 55_000 + Math.floor(Math.random() * 5_000)): PrivatePostgres {
    const version = readdirSync('/usr/lib/postgresql').sort().pop();
    if (!version) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
    const dir = mkdtempSync(join(tmpdir(), 'ews-pg-'));
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    );
    const pg = new PrivatePostgres(dir, port, `/usr/lib/postgresql/${version}/bin`);
    pg.asPostgres(`${pg.bin}/initdb -D ${dir}/data -A trust -U postgres`);
    pg.start();
    pg.asPostgres(`${pg.bin}/createdb -h 127.0.0.1 -p ${port} -U postgres ews`);
    return pg;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/ews`;
  }

  start(): void {
    this.asPostgres(
      `${this.bin}/pg_ctl -D ${this.dir}/data -o "-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1" -l ${this.dir}/log -w start`,
    );
  }

  stop(): void {
    this.asPostgres(`${this.bin}/pg_ctl -D ${this.dir}/data -m fast -w stop`);
  }

  destroy(): void {
    try {
      this.stop();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private asPostgres(command: string): void {
    execFileSync('su', ['postgres', '-c', command], { stdio: 'pipe' });
  }
}
