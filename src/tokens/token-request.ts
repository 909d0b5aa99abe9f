/**
 * The body of POST /tokens, as token specs. Either one token,
 * `{ name, role, databases, expires?, maxDatabaseMb? }`, or a class,
 * `{ prefix, count, role, expires?, from?, maxDatabaseMb? }`: `count` tokens named `prefix-01` …
 * `prefix-NN`, each bound to the database of its own name (made, when it is
 * missing, as a copy of the template `from` or empty). `maxDatabaseMb` lets the
 * token's writes grow a database past -max-database-mb (or keeps them below it).
 */
import { numberedNames } from '../database-names';
import { EngineError } from '../errors';
import { MAX_DATABASE_MB, isAccessRole, isDatabaseMb, normalizePattern, type AccessRole } from '../access/principal';
import { isTokenName } from '../config/tokens-file';
import type { TokenSpec } from './token-registry';

/** The most tokens one request makes: a school's largest class, several times over. */
export const MAX_CLASS_SIZE = 500;

const SINGLE_FIELDS = new Set(['name', 'role', 'databases', 'expires', 'maxDatabaseMb']);
const CLASS_FIELDS = new Set(['prefix', 'count', 'role', 'expires', 'from', 'maxDatabaseMb']);

function invalid(detail: string): EngineError {
  return new EngineError('TOKEN_REQUEST_INVALID', { detail });
}

export interface TokenRequest {
  readonly specs: TokenSpec[];
  /** A class: each token's one database, which the caller may create. */
  readonly isClass: boolean;
  /** A class's template: its missing databases are made as copies of it. */
  readonly from?: string;
}

export function readTokenRequest(body: unknown, nowMs: number): TokenRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('send a JSON object: {name, role, databases} or {prefix, count, role}');
  const value = body as Record<string, unknown>;
  const isClass = value.prefix !== undefined || value.count !== undefined;
  const fields = isClass ? CLASS_FIELDS : SINGLE_FIELDS;
  const unknown = Object.keys(value).find((key) => !fields.has(key));
  if (unknown !== undefined) throw invalid(`unknown field "${unknown}" (known: ${[...fields].join(', ')})`);
  const role = readRole(value.role);
  const expiresMs = readExpiry(value.expires, nowMs);
  const size = readDatabaseMb(value.maxDatabaseMb);
  if (!isClass)
    return {
      isClass,
      specs: [
        { name: readName(value.name), role, databases: readDatabases(value.databases, role), expiresMs, ...size },
      ],
    };
  const specs = classNames(value.prefix, value.count).map((name) => ({
    name,
    role,
    databases: [name],
    expiresMs,
    ...size,
  }));
  if (value.from === undefined) return { isClass, specs };
  if (typeof value.from !== 'string' || value.from.trim() === '')
    throw invalid('"from" must name the template database the class copies');
  return { isClass, specs, from: value.from };
}

function readRole(raw: unknown): AccessRole {
  if (!isAccessRole(raw)) throw invalid('"role" must be admin, write or read');
  return raw;
}

function readName(raw: unknown): string {
  if (!isTokenName(raw)) throw invalid('"name" must be 1 to 64 characters of A-Z, a-z, 0-9, _, . and -');
  return raw;
}

function readDatabases(raw: unknown, role: AccessRole): string[] {
  if (raw === undefined && role === 'admin') return ['*'];
  if (!Array.isArray(raw) || raw.length === 0)
    throw invalid('"databases" must be a non-empty array of database names or patterns such as "clase-*"');
  return raw.map((entry) => {
    const pattern = normalizePattern(entry);
    if (pattern === null)
      throw invalid(`${JSON.stringify(entry)} is not a database name or pattern (a-z, 0-9, _, - and *)`);
    return pattern;
  });
}

function readDatabaseMb(raw: unknown): { maxDatabaseMb?: number } {
  if (raw === undefined || raw === null) return {};
  if (!isDatabaseMb(raw)) throw invalid(`"maxDatabaseMb" must be a whole number of MiB from 1 to ${MAX_DATABASE_MB}`);
  return { maxDatabaseMb: raw };
}

function readExpiry(raw: unknown, nowMs: number): number | null {
  if (raw === undefined || raw === null) return null;
  const ms = typeof raw === 'string' ? Date.parse(raw) : NaN;
  if (!Number.isFinite(ms)) throw invalid('"expires" must be an ISO date-time such as 2027-07-01T00:00:00Z');
  if (ms <= nowMs) throw invalid('"expires" is in the past');
  return ms;
}

/** `prefix-01` … `prefix-NN`, zero-padded to at least two digits. */
function classNames(prefix: unknown, count: unknown): string[] {
  const base = typeof prefix === 'string' ? prefix.trim().toLowerCase() : '';
  if (!/^[a-z0-9_-]{1,58}$/.test(base) || base.startsWith('_sqlscribe'))
    throw invalid('"prefix" must be 1 to 58 characters of a-z, 0-9, _ and - (it starts each database name)');
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1 || count > MAX_CLASS_SIZE) {
    throw new EngineError('TOKEN_CLASS_TOO_LARGE', { max: MAX_CLASS_SIZE, count: JSON.stringify(count) ?? 'none' });
  }
  return numberedNames(base, count);
}
