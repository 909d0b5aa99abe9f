/**
 * Who sent a request, once its token is known: a role and the databases it
 * may touch. Pure: the token registry makes principals, the HTTP layer and
 * the command bus ask them questions.
 */

/** Ordered: each role may do everything the one before it may. (A server's own role is ServerRole, elsewhere.) */
export const ROLES = ['read', 'write', 'admin'] as const;
export type AccessRole = (typeof ROLES)[number];

export interface Principal {
  /** Stable, never secret: what the journal and the engine shares key on. */
  readonly id: string;
  readonly name: string;
  readonly role: AccessRole;
  /** Database names or `*` globs, without `.db`. An admin touches every database whatever this says. */
  readonly databases: readonly string[];
  /**
   * The largest a database may grow through this token's writes, in MiB, in place of
   * -max-database-mb (a teacher whose template is larger); absent: the flag's.
   */
  readonly maxDatabaseMb?: number;
}

/** The largest -max-database-mb and a token's maxDatabaseMb may say: 1 TiB, well inside SQLite's page count. */
export const MAX_DATABASE_MB = 1024 * 1024;

/** Whether `value` is a database size a token may carry: whole MiB from 1 to MAX_DATABASE_MB. */
export function isDatabaseMb(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_DATABASE_MB;
}

/**
 * The bytes a write of `principal` may make a database (its token's override, else the server's
 * -max-database-mb); undefined, unbounded, when neither says (a service built without the flag).
 */
export function databaseLimitBytes(principal: Principal | undefined, serverMb: number | undefined): number | undefined {
  const mb = principal?.maxDatabaseMb ?? serverMb;
  return mb === undefined ? undefined : mb * 1024 * 1024;
}

/** The -token holder. */
export const ADMIN_PRINCIPAL: Principal = Object.freeze({
  id: 'admin',
  name: 'admin',
  role: 'admin',
  databases: Object.freeze(['*']),
});

/** The fields a journal entry carries about who ran it (never the secret). */
export interface TokenStamp {
  tokenId?: string;
  tokenName?: string;
}

export function isAccessRole(value: unknown): value is AccessRole {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function hasRole(principal: Principal, needed: AccessRole): boolean {
  return ROLES.indexOf(principal.role) >= ROLES.indexOf(needed);
}

/** A pattern of a token's databases: a client name where `*` stands for any run of characters. */
const PATTERN = /^[a-z0-9_*-]{1,64}$/;

/** Lower-cased and without `.db`, or null when it is not a pattern. */
export function normalizePattern(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const pattern = raw.trim().toLowerCase().replace(/\.db$/, '');
  return PATTERN.test(pattern) ? pattern : null;
}

/** Whether `name` (with or without `.db`) matches the glob; only `*` is special. */
export function matchesPattern(pattern: string, name: string): boolean {
  const base = name.toLowerCase().replace(/\.db$/, '');
  const parts = pattern.split('*');
  if (parts.length === 1) return base === pattern;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (base.length < first.length + last.length || !base.startsWith(first) || !base.endsWith(last)) return false;
  let at = first.length;
  const end = base.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = base.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

export function mayTouch(principal: Principal, db: string): boolean {
  return principal.role === 'admin' || principal.databases.some((pattern) => matchesPattern(pattern, db));
}

export function stampOf(principal: Principal | undefined): TokenStamp {
  return principal === undefined ? {} : { tokenId: principal.id, tokenName: principal.name };
}
