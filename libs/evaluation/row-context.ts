import type { ChatMessage, RowContext } from './sut/sut.types.js';

/** Which columns hold the canonical fields (a dataset's mapping, or a sample's). */
export interface RowMapping {
  input?: string | null;
  expected_output?: string | null;
  context?: string | null;
}

/** The value at a dotted column path (`meta.lang`, `turns.0`), or undefined. */
export function valueAt(data: unknown, path: string): unknown {
  let current = data;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** A row as adapters and judges see it: its data, its canonical fields by the mapping (columns of the same names by default), and its conversation so far. */
export function rowContext(
  data: Record<string, unknown>,
  mapping: RowMapping = {},
  extra: { row_id?: string; history?: ChatMessage[]; session_id?: string | null; turn?: number | null } = {},
): RowContext {
  const field = (name: keyof RowMapping) => {
    const column = mapping[name] ?? name;
    return valueAt(data, column);
  };
  return {
    row_id: extra.row_id ?? 'sample',
    data,
    input: field('input'),
    expected_output: field('expected_output'),
    context: field('context'),
    session_id: extra.session_id ?? null,
    turn: extra.turn ?? null,
    history: extra.history ?? [],
  };
}
