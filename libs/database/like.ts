/** `text` with LIKE's wildcards and escape character escaped (`\` is PostgreSQL's default ESCAPE). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern matching any value that contains `text` literally. */
export function containsPattern(text: string): string {
  return `%${escapeLike(text)}%`;
}
