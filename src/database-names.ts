/**
 * What a database may be called: shared by the server, which builds every
 * path from a validated name, and the replay tool, which selects by name.
 */
import path from 'node:path';
import { EngineError } from './errors';

const NAME = /^[a-z0-9_-]{1,64}$/;

/** Databases the service keeps for itself (the pilot records): clients cannot name or list them. */
export const SYSTEM_PREFIX = '_sqlscribe';

/** The service's own database of exercises (src/exercises/exercise-store.ts): named here, as snapshot rounds and the shutdown checkpoint must find it in single-DB mode too. */
export const EXERCISES_DATABASE = `${SYSTEM_PREFIX}_exercises.db`;

/** Whether `base` (without `.db`) is a name a client may use. */
export function isClientName(base: string): boolean {
  return NAME.test(base) && !base.startsWith(SYSTEM_PREFIX);
}

/**
 * The names of a class: `prefix-01` … `prefix-NN`, numbered from 1 and
 * zero-padded to at least two digits so that they sort in order. Copies of a
 * template and a class's tokens are named alike, so a token finds its copy.
 */
export function numberedNames(prefix: string, count: number): string[] {
  const width = Math.max(2, String(count).length);
  return Array.from({ length: count }, (_, index) => `${prefix}-${String(index + 1).padStart(width, '0')}`);
}

/** Anything beyond ASCII, where trim() and toLowerCase() would fold Unicode into a name. */
const NOT_ASCII = /[^\p{ASCII}]/u;

/**
 * Trims, lower-cases and appends `.db`; throws on anything else. The name is
 * checked on its exact code points before either folds it: `toLowerCase()`
 * makes the Kelvin sign (U+212A) a `k` and `trim()` drops a no-break or an
 * ideographic space, so `\u212Aey` would reach `key.db`. No character outside
 * ASCII is folded into a name: two names a client can write reach one file
 * only when they differ in ASCII case or surrounding ASCII spaces.
 */
export function normalizeDatabaseName(raw: unknown): string {
  if (typeof raw !== 'string' || NOT_ASCII.test(raw)) throw new EngineError('INVALID_DATABASE_NAME');
  const base = raw.trim().toLowerCase().replace(/\.db$/, '');
  if (!isClientName(base)) throw new EngineError('INVALID_DATABASE_NAME');
  return `${base}.db`;
}

/** Where a server keeps its databases: the data directory, and single-DB mode's file. */
export interface DatabasePlaces {
  readonly dir: string;
  readonly dbFile: string | null;
}

/** A database's file, by its name in the journal: single-DB mode's file by its base name, the others in the data directory. */
export function databaseFileIn(places: DatabasePlaces): (db: string) => string {
  return (db) =>
    places.dbFile !== null && db === path.basename(places.dbFile) ? places.dbFile : path.join(places.dir, db);
}
