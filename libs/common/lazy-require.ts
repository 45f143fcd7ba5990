import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded the first time it is called for, not when the process starts: for
 * the large ones a start never uses (stdlib's distributions are some 700 files), so that
 * `npm start` answers sooner. Synchronous, so the functions that use the package stay so.
 *
 *   const wilcoxon = lazyRequire<typeof import('@stdlib/stats-wilcoxon')>('@stdlib/stats-wilcoxon');
 *   wilcoxon()(differences, options);
 */
export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
