/** JSON for a jsonb column: PostgreSQL's jsonb refuses the NUL character, so it becomes U+FFFD rather than failing the landing. */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? v.replace(/\u0000/g, '\uFFFD') : v)) : text;
}
