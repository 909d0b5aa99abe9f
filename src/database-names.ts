/**
 * What a database may be called: shared by the server, which builds every
 * path from a validated name, and the replay tool, which selects by name.
 */
import { EngineError } from './errors';

const NAME = /^[a-z0-9_-]{1,64}$/;

/** Databases the service keeps for itself (the pilot records): clients cannot name or list them. */
export const SYSTEM_PREFIX = '_sqlscribe';

/** Whether `base` (without `.db`) is a name a client may use. */
export function isClientName(base: string): boolean {
  return NAME.test(base) && !base.startsWith(SYSTEM_PREFIX);
}

/** Trims, lower-cases and appends `.db`; throws on anything else. */
export function normalizeDatabaseName(raw: unknown): string {
  if (typeof raw !== 'string') throw new EngineError('INVALID_DATABASE_NAME');
  const base = raw.trim().toLowerCase().replace(/\.db$/, '');
  if (!isClientName(base)) throw new EngineError('INVALID_DATABASE_NAME');
  return `${base}.db`;
}
