// Clustering 10,000 rows with the local embedder: embedding, k chosen by silhouette (2..10),
// naming and the 2-D map, timed, with the process's peak RSS. The library the cluster runs use.
//
//   npm run build && node bench/clustering.mjs        (BENCH_CLUSTER_ROWS, default 10000)
import { clusterTexts } from '#libs/dataset-analysis/clustering.js';
import { localEmbed } from '#libs/evaluation/local-embedder.js';

const rows = Number(process.env.BENCH_CLUSTER_ROWS ?? 10_000);
const TOPICS = [
  ['pasta', 'recipe', 'kitchen', 'garlic', 'oven', 'sauce'],
  ['football', 'goal', 'match', 'team', 'referee', 'league'],
  ['stock', 'market', 'shares', 'investors', 'earnings', 'bank'],
  ['password', 'account', 'login', 'reset', 'email', 'security'],
  ['flight', 'airport', 'ticket', 'luggage', 'gate', 'delay'],
];
const FILLER = ['the', 'a', 'how', 'to', 'my', 'with', 'for', 'today', 'please', 'help', 'about', 'again'];
let state = 7;
const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = (list) => list[Math.floor(random() * list.length)];
const items = Array.from({ length: rows }, (_, i) => {
  const topic = TOPICS[i % TOPICS.length];
  const words = Array.from({ length: 10 }, (_, j) => (j % 2 ? pick(topic) : pick(FILLER)));
  return { row_id: `row-${i}`, text: words.join(' ') };
});

let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
const t0 = performance.now();
const vectors = items.map((item) => localEmbed(item.text));
const embedded = performance.now();
const result = await clusterTexts(items, vectors, { seed: 42 });
const done = performance.now();
clearInterval(sampler);
console.log(
  `clustering ${rows} rows (local embedder, k by silhouette 2..10): ${((done - t0) / 1000).toFixed(1)} s (embedding ${((embedded - t0) / 1000).toFixed(1)} s); k = ${result.k}, silhouette ${result.silhouette}; peak rss ${Math.round(peak / 1e6)} MB`,
);
console.log(`  clusters: ${result.clusters.map((c) => `${c.name} (${c.size})`).join('; ')}`);
