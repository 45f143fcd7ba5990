import type { Tiktoken } from 'js-tiktoken';
import { lazyRequire } from './lazy-require.js';

// js-tiktoken's ranks (5.6 MB of source) load with the first text counted, not at every start.
const tiktoken = lazyRequire<typeof import('js-tiktoken')>('js-tiktoken');

let encoder: Tiktoken | undefined;
/** Tokens of a text under cl100k_base (GPT-4, GPT-3.5), built once: counts match what the common chat models bill. */
export function countTokens(text: string): number {
  encoder ??= tiktoken().getEncoding('cl100k_base');
  return encoder.encode(text).length;
}
