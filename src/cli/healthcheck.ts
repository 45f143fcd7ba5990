/**
 * The image's HEALTHCHECK: healthy when this container's process answers GET /live within the
 * bound. The API answers on PORT; a worker (`node dist/src/worker.js`) serves no API and answers
 * on WORKER_HEALTH_PORT instead, so a port that refuses the connection sends the probe to the
 * other. A port that accepts and then fails or hangs is unhealthy: that process is there and
 * not answering. Exits 0 (healthy) or 1, as Docker's HEALTHCHECK expects.
 */
const TIMEOUT_MS = 4_000;

function ports(): number[] {
  return [process.env.PORT ?? '3000', process.env.WORKER_HEALTH_PORT ?? '']
    .map(Number)
    .filter((port) => Number.isInteger(port) && port > 0);
}

function refused(err: unknown): boolean {
  return (err as { cause?: { code?: string } })?.cause?.code === 'ECONNREFUSED';
}

async function probe(): Promise<string> {
  for (const port of ports()) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/live`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
      return res.ok ? '' : `:${port}/live answered ${res.status}`;
    } catch (err) {
      if (!refused(err)) return `:${port}/live: ${(err as Error).message}`;
    }
  }
  return `nothing answers on ${ports().join(' or ')}`;
}

probe().then(
  (problem) => {
    if (problem) process.stderr.write(`unhealthy: ${problem}\n`);
    process.exit(problem ? 1 : 0);
  },
  (err) => {
    process.stderr.write(`unhealthy: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
