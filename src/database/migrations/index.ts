import { Foundation1763800000000 } from './1763800000000-foundation.js';

/** Every migration, in order. Families append theirs; the same list runs on PostgreSQL and PGlite. */
export const migrations = [Foundation1763800000000];
