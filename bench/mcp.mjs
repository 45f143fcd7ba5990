// What an MCP tool call costs over the API operations it composes, measured in the same run: the
// official SDK's client calls a tool, and a plain client calls the same operations with the same
// API key, one after the other, BENCH_CALLS times each (alternating which goes first).
//
//   find_datasets   GET /datasets?workspace_id=…
//   show_dataset    GET /datasets/{id}, GET /datasets/{id}/schema, POST …/versions/{v}/query (3 rows)
//
// Limit: a tool call's median within 1.5 times the direct calls' median plus 10 ms (the JSON-RPC
// envelope, the argument and answer schema checks, the loopback socket per operation). Reported
// as median / limit (≤ 1 is within it), with the p95s. Exits 1 over the limit.
//
//   npm run build && node bench/mcp.mjs                       # embedded PGlite
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/mcp.mjs
//
// BENCH_CALLS (default 200), BENCH_ERA (legacy: the 2025 handshake, default; modern: 2026-07-28).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { withBenchApp, withDatabase } from './support.mjs';

const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const ERA = process.env.BENCH_ERA ?? 'legacy';
const ROWS = 200;

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function timed(fn) {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

await withDatabase((databaseUrl) =>
  withBenchApp(databaseUrl, {}, async ({ base, http, auth, ws, mode }) => {
    const key = (await http.post(`/workspaces/${ws}/api-keys`).set(auth).send({ name: 'bench', role: 'viewer' })).body
      .key;
    const csv = [
      'input,expected_output,topic',
      ...Array.from({ length: ROWS }, (_, i) => `question ${i},answer ${i},${i % 2 ? 'billing' : 'shipping'}`),
    ].join('\n');
    const dataset = (
      await http
        .post('/datasets/upload')
        .query({ workspace_id: ws })
        .set(auth)
        .attach('file', Buffer.from(csv), 'bench.csv')
    ).body;
    const versionId = dataset.latest_version.id;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const get = async (path) => {
      const res = await fetch(`${base}${path}`, { headers });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return res.json();
    };
    const direct = {
      find_datasets: () => get(`/datasets?workspace_id=${ws}&page_size=20`),
      show_dataset: async () => {
        await get(`/datasets/${dataset.id}`);
        await get(`/datasets/${dataset.id}/schema?version_id=${versionId}`);
        const res = await fetch(`${base}/datasets/${dataset.id}/versions/${versionId}/query`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ limit: 3, include_total: false }),
        });
        if (!res.ok) throw new Error(`query: ${res.status}`);
        await res.json();
      },
    };
    const client = new Client(
      { name: 'ews-bench', version: '1.0.0' },
      ERA === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', base), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const tool = {
      find_datasets: () => client.callTool({ name: 'find_datasets', arguments: {} }),
      show_dataset: () => client.callTool({ name: 'show_dataset', arguments: { dataset_id: dataset.id } }),
    };
    let failed = false;
    console.log(
      `MCP tool calls against their operations, ${mode}, ${ERA} revision, ${CALLS} calls each, ${new Date().toISOString().slice(0, 10)}`,
    );
    for (const name of Object.keys(direct)) {
      for (let i = 0; i < 20; i++) await Promise.all([direct[name](), tool[name]()].map((p) => p)); // warm-up
      const times = { direct: [], tool: [] };
      for (let i = 0; i < CALLS; i++) {
        const order = i % 2 ? ['direct', 'tool'] : ['tool', 'direct'];
        for (const way of order) times[way].push(await timed(way === 'direct' ? direct[name] : tool[name]));
      }
      const [d50, t50] = [quantile(times.direct, 0.5), quantile(times.tool, 0.5)];
      const limit = 1.5 * d50 + 10;
      const ratio = t50 / limit;
      failed ||= ratio > 1;
      console.log(
        `${name.padEnd(14)} direct p50 ${d50.toFixed(1)} ms p95 ${quantile(times.direct, 0.95).toFixed(1)} ms; ` +
          `tool p50 ${t50.toFixed(1)} ms p95 ${quantile(times.tool, 0.95).toFixed(1)} ms; ` +
          `limit ${limit.toFixed(1)} ms: ${ratio.toFixed(2)}x`,
      );
    }
    await client.close();
    process.exitCode = failed ? 1 : 0;
  }),
);
