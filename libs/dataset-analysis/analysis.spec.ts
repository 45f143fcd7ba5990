import { describe, expect, it } from '@jest/globals';
import { localEmbed } from '#libs/evaluation/local-embedder.js';
import { annotationAnalysis, cohensKappa, fleissKappa, labelColumns } from './annotation.js';
import { clusterTerms, clusterTexts } from './clustering.js';
import { histogram, summary } from './stats.js';
import { analyzeTextColumn, textColumns, textProperties } from './text.js';

describe('text analysis', () => {
  it('counts characters, words and cl100k tokens, detects languages and readability', () => {
    expect(textProperties('hello world')).toEqual(
      expect.objectContaining({ chars: 11, words: 2, tokens: 2, language: null, empty: false, near_empty: true }),
    );
    const en = textProperties('The cat sat on the mat. It was a sunny and quiet afternoon in the garden.');
    expect(en).toEqual(expect.objectContaining({ words: 16, language: 'en', near_empty: false }));
    expect(en.flesch_reading_ease).toBeGreaterThan(80);
    expect(textProperties('Le chat est assis sur le tapis dans la maison de ma grand-mère.').language).toBe('fr');
    expect(textProperties('Die Katze sitzt auf der Matte und schläft den ganzen Nachmittag.').language).toBe('de');
    expect(textProperties('   ')).toEqual(expect.objectContaining({ empty: true, tokens: 0 }));
    expect(textProperties(null)).toEqual(expect.objectContaining({ empty: true, chars: 0 }));
  });

  it('summarises a column and finds text columns', () => {
    const a = analyzeTextColumn('q', ['How do I reset my password?', 'How do I reset my router?', '', 'ok']);
    expect(a).toEqual(expect.objectContaining({ rows: 4, empty_rate: 0.25, near_empty_rate: 0.25 }));
    expect(a.top_terms.slice(0, 1)).toEqual([{ term: 'reset', count: 2 }]);
    expect(a.words.summary).toEqual({ count: 4, mean: 3.25, median: 1, p90: 6, min: 0, max: 6 });
    expect(
      textColumns([
        { q: 'a question here', n: 3, tag: 'x' },
        { q: 'another one', n: 4, tag: 'y' },
      ]),
    ).toEqual(['q']);
  });

  it('builds histograms and summaries', () => {
    expect(histogram([])).toEqual({ edges: [], counts: [] });
    expect(histogram([2, 2])).toEqual({ edges: [2, 2], counts: [2] });
    expect(histogram([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).counts).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2]);
    expect(summary([5, 1, 3])).toEqual({ count: 3, mean: 3, median: 3, p90: 5, min: 1, max: 5 });
  });
});

describe('annotation agreement', () => {
  it("gives Cohen's kappa of the textbook example (0.4)", () => {
    const a = [...Array(20).fill('yes'), ...Array(5).fill('yes'), ...Array(10).fill('no'), ...Array(15).fill('no')];
    const b = [...Array(20).fill('yes'), ...Array(5).fill('no'), ...Array(10).fill('yes'), ...Array(15).fill('no')];
    expect(cohensKappa(a, b)).toBe(0.4);
    expect(cohensKappa(['a'], ['a'])).toBeNull();
  });

  it("gives Fleiss' kappa of the Wikipedia example (0.210)", () => {
    const rows = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ].map((counts) => Object.fromEntries(counts.map((c, i) => [`c${i}`, c])));
    expect(fleissKappa(rows)).toBeCloseTo(0.21, 2);
  });

  it('reports distributions per column and dimension, and the agreement of annotators', () => {
    const rows = [
      { a: 'pos', b: 'pos', text: 'great' },
      { a: 'neg', b: 'neg', text: 'bad' },
      { a: 'pos', b: 'neg', text: 'meh' },
      { a: 'neg', b: 'neg', text: 'awful' },
    ];
    expect(labelColumns([...rows, ...rows])).toEqual(['a', 'b']);
    const result = annotationAnalysis(rows, {
      labelColumns: ['a', 'b'],
      dimensions: { lang: ['en', 'en', 'fr', null] },
    });
    expect(result.columns[0].distribution).toEqual([
      { label: 'neg', count: 2, share: 0.5 },
      { label: 'pos', count: 2, share: 0.5 },
    ]);
    expect(result.columns[0].by_dimension.lang.fr).toEqual([{ label: 'pos', count: 1, share: 1 }]);
    expect(result.agreement).toEqual(
      expect.objectContaining({ method: 'cohen', kappa: 0.5, interpretation: 'moderate', rows: 4 }),
    );
  });
});

describe('clustering', () => {
  // A surface-level embedder (character n-grams) separates topics by the words they share.
  const topics: Record<string, string[]> = {
    cooking: [
      'cook the pasta recipe in the kitchen',
      'a quick pasta recipe to cook at home',
      'cook garlic for the pasta sauce recipe',
      'the kitchen recipe needs pasta and garlic',
      'how long to cook pasta for this recipe',
      'cook a creamy pasta recipe with garlic',
      'my favourite kitchen recipe is garlic pasta',
    ],
    football: [
      'the football team scored a goal in the match',
      'a late goal won the football match',
      'the team celebrated the goal after the match',
      'football fans cheered the winning goal',
      'the match ended with a football goal',
      'our football team needs a goal this match',
      'the goal decided the football match for the team',
    ],
    markets: [
      'stock market shares fell on earnings',
      'investors sold shares as the stock market dropped',
      'the stock market rallied and shares rose',
      'shares of the company lifted the stock market',
      'stock market investors bought shares today',
      'earnings moved shares and the stock market',
      'the stock market closed with shares higher',
    ],
  };
  const items = Object.entries(topics).flatMap(([topic, texts]) =>
    texts.map((text, i) => ({ row_id: `${topic}-${i}`, text, topic })),
  );
  const vectors = items.map((i) => localEmbed(i.text));

  it('recovers known topics, names them by distinctive terms, and is the same for a seed', async () => {
    const result = await clusterTexts(items, vectors, { seed: 7, k: 3 });
    expect(result.k).toBe(3);
    for (const cluster of result.clusters) {
      const members = result.points.filter((p) => p.cluster === cluster.id).map((p) => p.row_id.split('-')[0]);
      expect(new Set(members).size).toBe(1);
      expect(cluster.size).toBe(7);
      expect(cluster.exemplar_row_ids).toHaveLength(3);
    }
    const names = result.clusters.map((c) => c.terms.map((t) => t.term).join(' '));
    expect(names.some((n) => /goal|football/.test(n))).toBe(true);
    expect(await clusterTexts(items, vectors, { seed: 7, k: 3 })).toEqual(result);
    for (const p of result.points) expect(Math.abs(p.x) <= 1 && Math.abs(p.y) <= 1).toBe(true);
  });

  it('chooses k by silhouette', async () => {
    const result = await clusterTexts(items, vectors, { seed: 3 });
    expect(result.candidates.length).toBeGreaterThan(1);
    expect(result.k).toBe(3);
    expect(result.silhouette).toBeGreaterThan(0);
  });

  it('weighs terms by class-based TF-IDF', () => {
    const terms = clusterTerms(['apple banana apple', 'apple cherry', 'dog cat dog'], [0, 0, 1], 2);
    expect(terms[0][0].term).toBe('apple');
    expect(terms[1][0].term).toBe('dog');
  });

  it('handles tiny inputs', async () => {
    expect(await clusterTexts([], [], { seed: 1 })).toEqual(
      expect.objectContaining({ k: 0, clusters: [], points: [] }),
    );
    expect((await clusterTexts(items.slice(0, 2), vectors.slice(0, 2), { seed: 1 })).k).toBe(1);
  });
});
