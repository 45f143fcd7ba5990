// stopword 3 ships no types (and @types/stopword describes version 2): what this service uses of it.
declare module 'stopword' {
  export const eng: string[];
  export const fra: string[];
  export const deu: string[];
  export const spa: string[];
  export const ita: string[];
  export const por: string[];
  export const nld: string[];
  export function removeStopwords(tokens: string[], stopwords?: string[]): string[];
}
