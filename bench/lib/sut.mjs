// A system under test for the benchmarks: a local HTTP server answering every request after `ms`,
// as a remote model would (`{ output: "answer to <input>" }`).
// `startSutProcess` runs it as a process of its own (`node bench/lib/sut.mjs <ms>`), as a real SUT is
// another machine's: its CPU is then not the service's.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startServer } from './processes.mjs';

export async function startSut(ms) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () =>
      setTimeout(() => {
        const { input } = JSON.parse(body);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ output: `answer to ${input}` }));
      }, ms),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/answer`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** The same SUT in a process of its own; `close` stops it. */
export async function startSutProcess(ms) {
  const server = await startServer(
    [fileURLToPath(import.meta.url), String(ms)],
    {},
    (output) => /listening (\S+)/.exec(output)?.[1],
  );
  return { url: server.url, close: () => server.stop() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sut = await startSut(Number(process.argv[2] ?? 50));
  process.stdout.write(`listening ${sut.url}\n`);
  process.on('SIGTERM', () => void sut.close().then(() => process.exit(0)));
}
