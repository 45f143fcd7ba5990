// A system under test for the benchmarks: a local HTTP server answering every request after `ms`,
// as a remote model would (`{ output: "answer to <input>" }`).
import { createServer } from 'node:http';

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
