// Logins under attack: the time of one argon2id hash here; a real login while 50 parallel
// guesses on unknown e-mails are in flight; 30 parallel wrong passwords for one account; 100
// parallel correct logins of different users by clients that honour Retry-After.
//
//   npm run build && node bench/login.mjs                      # embedded PGlite
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/login.mjs
//
// Extra variables go to the app (e.g. PASSWORD_HASH_CONCURRENCY=64 PASSWORD_HASH_QUEUE=1000 to
// take the bound away). Clients run in this process over real HTTP (fetch).
import argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { asNpmStartRuns, withBenchApp, withDatabase } from './support.mjs';

asNpmStartRuns();

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const appEnv = Object.fromEntries(
  ['PASSWORD_HASH_CONCURRENCY', 'PASSWORD_HASH_QUEUE', 'LOGIN_MAX_FAILURES']
    .filter((k) => process.env[k])
    .map((k) => [k, process.env[k]]),
);
const PASSWORD = 'correct-horse-battery';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => Math.round(x);
let resets = 0;

async function timeArgon2() {
  const hash = await argon2.hash(PASSWORD, { type: argon2.argon2id });
  const hashes = [];
  const verifies = [];
  for (let i = 0; i < 7; i++) {
    let t = performance.now();
    await argon2.hash(`${PASSWORD}${i}`, { type: argon2.argon2id });
    hashes.push(performance.now() - t);
    t = performance.now();
    await argon2.verify(hash, 'wrong-password');
    verifies.push(performance.now() - t);
  }
  return {
    hash,
    hashMs: median(hashes),
    verifyMs: median(verifies),
    min: Math.min(...verifies),
    max: Math.max(...verifies),
  };
}

/** One login; with `patient`, a 429 auth_busy is retried after Retry-After. */
async function login(base, email, password, { patient = false, start = performance.now() } = {}) {
  for (let tries = 1; ; tries++) {
    let res;
    try {
      res = await fetch(`${base}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
    } catch (err) {
      // A kept-alive socket the server closed as it was reused (seen when the event loop lags seconds).
      if (!patient) return { status: 'network error', at: performance.now() - start, tries };
      resets++;
      await sleep(1000);
      continue;
    }
    const body = await res.json();
    if (!patient || res.status !== 429 || body.error_code !== 'auth_busy') {
      return {
        status: res.status,
        code: body.error_code,
        retryAfter: res.headers.get('retry-after'),
        at: performance.now() - start,
        tries,
      };
    }
    await sleep(Number(res.headers.get('retry-after')) * 1000);
  }
}

function tally(answers) {
  const counts = {};
  for (const a of answers)
    counts[`${a.status}${a.code ? ` ${a.code}` : ''}`] = (counts[`${a.status}${a.code ? ` ${a.code}` : ''}`] ?? 0) + 1;
  return Object.entries(counts)
    .map(([k, n]) => `${n} × ${k}`)
    .join(', ');
}

/** Samples the process's resident memory and event-loop delay while `work` runs. */
async function peakRss(work) {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    return { result: await work(), peakMb: Math.round(peak / 2 ** 20), lagMs: Math.round(delay.max / 1e6) };
  } finally {
    clearInterval(timer);
    delay.disable();
  }
}

const argonFigures = await timeArgon2();
console.log(
  `argon2id (m=64 MiB, t=3, p=4), median of 7 in this process: hash ${ms(argonFigures.hashMs)} ms, verify ${ms(argonFigures.verifyMs)} ms (${ms(argonFigures.min)}–${ms(argonFigures.max)}); load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);

await withDatabase((databaseUrl) =>
  withBenchApp(databaseUrl, { RUN_WORKERS: 'false', ...appEnv }, async ({ app, base, mode }) => {
    const { DataSource } = await import('typeorm');
    const dataSource = app.get(DataSource);
    const newUser = async () => {
      const email = `user-${randomBytes(5).toString('hex')}@bench.local`;
      await dataSource.query(
        `INSERT INTO users (email, display_name, password_hash, system_role, status) VALUES ($1, 'bench', $2, 'user', 'active')`,
        [email, argonFigures.hash],
      );
      return email;
    };
    const env = app.get((await import('#libs/config/app-config.js')).AppConfig).env;
    console.log(
      `\n${mode}, node ${process.version}, app env ${JSON.stringify(appEnv)}, PASSWORD_HASH_CONCURRENCY=${env.PASSWORD_HASH_CONCURRENCY ?? 'n/a'} PASSWORD_HASH_QUEUE=${env.PASSWORD_HASH_QUEUE ?? (env.PASSWORD_HASH_CONCURRENCY ? 2 * env.PASSWORD_HASH_CONCURRENCY : 'n/a')}`,
    );

    const real = await newUser();
    const quiet = [];
    for (let i = 0; i < 5; i++) quiet.push((await login(base, real, PASSWORD, { patient: true })).at);
    console.log(`real login alone: median ${ms(median(quiet))} ms (${quiet.map(ms).join(', ')})`);

    for (let round = 1; round <= ROUNDS; round++) {
      const start = performance.now();
      const { result, peakMb, lagMs } = await peakRss(async () => {
        const guesses = Array.from({ length: 50 }, () =>
          login(base, `nobody-${randomBytes(6).toString('hex')}@bench.local`, 'guess-password', { start }),
        );
        const mine = login(base, real, PASSWORD, { patient: true, start });
        return { guesses: await Promise.all(guesses), mine: await mine };
      });
      const busy = result.guesses.filter((g) => g.status === 429);
      const judged = result.guesses.filter((g) => g.status === 401);
      console.log(
        `round ${round}: 50 guesses → ${tally(result.guesses)}; 429s answered within ${busy.length ? ms(Math.max(...busy.map((g) => g.at))) : '-'} ms, ` +
          `last 401 at ${judged.length ? ms(Math.max(...judged.map((g) => g.at))) : '-'} ms; real login ${result.mine.status} after ${ms(result.mine.at)} ms (${result.mine.tries} tries); peak rss ${peakMb} MB, longest event-loop stall ${lagMs} ms`,
      );
      await sleep(1000);
    }

    const victim = await newUser();
    const wrong = await Promise.all(
      Array.from({ length: 30 }, () => login(base, victim, 'wrong-password', { patient: true })),
    );
    console.log(
      `30 parallel wrong passwords for one account: ${tally(wrong)}; Retry-After of the 429s: ${[...new Set(wrong.filter((w) => w.code === 'rate_limited').map((w) => w.retryAfter))].join(', ')}`,
    );

    const emails = await Promise.all(Array.from({ length: 100 }, () => newUser()));
    const start = performance.now();
    resets = 0;
    const {
      result: hundred,
      peakMb,
      lagMs,
    } = await peakRss(() => Promise.all(emails.map((e) => login(base, e, PASSWORD, { patient: true, start }))));
    const latencies = hundred.map((h) => h.at);
    console.log(
      `100 parallel correct logins (honouring Retry-After): ${tally(hundred)}; all done in ${ms(Math.max(...latencies))} ms, median ${ms(median(latencies))} ms; ` +
        `${hundred.filter((h) => h.tries > 1).length} clients retried, ${hundred.reduce((n, h) => n + h.tries - 1, 0)} retries, ${resets} connection resets retried; peak rss ${peakMb} MB, longest event-loop stall ${lagMs} ms`,
    );
  }),
);
