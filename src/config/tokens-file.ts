/**
 * -tokens-file: tokens kept as configuration, read once at start-up.
 *
 *     { "tokens": [ { "name": "teacher", "role": "admin", "hash": "sha256:<64 hex>" },
 *                   { "name": "alumno-07", "role": "write", "databases": ["alumno-07"],
 *                     "hash": "sha256:…", "expires": "2027-07-01T00:00:00Z" },
 *                   { "name": "big-template", "role": "admin", "hash": "sha256:…", "maxDatabaseMb": 2048 } ] }
 *
 * The file holds hashes, never secrets. Any fault makes the server refuse
 * to start (exit 2) with one line saying where.
 */
import fs from 'node:fs';
import { OptionsError } from './options-values';
import { MAX_DATABASE_MB, isAccessRole, isDatabaseMb, normalizePattern, type AccessRole } from '../access/principal';
import { isSecretHash } from '../access/token-secret';

export interface FileToken {
  readonly id: string;
  readonly name: string;
  readonly role: AccessRole;
  readonly databases: readonly string[];
  readonly hash: string;
  /** ms since the epoch, or null for never. */
  readonly expiresMs: number | null;
  /** See Principal.maxDatabaseMb. */
  readonly maxDatabaseMb?: number;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const FIELDS = new Set(['name', 'role', 'databases', 'hash', 'expires', 'maxDatabaseMb']);

export function isTokenName(value: unknown): value is string {
  return typeof value === 'string' && NAME.test(value);
}

/** Parses the file's text; `where` prefixes every message. @throws OptionsError */
export function parseTokensFile(text: string, where: string): FileToken[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new OptionsError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  const tokens = (doc as { tokens?: unknown } | null)?.tokens;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(tokens))
    throw new OptionsError(`${where}: expected an object with a "tokens" array`);
  const seen = new Set<string>();
  return tokens.map((item, index) => {
    const token = parseToken(item, `${where}: tokens[${index}]`);
    if (seen.has(token.name))
      throw new OptionsError(`${where}: tokens[${index}]: the name ${JSON.stringify(token.name)} is used twice`);
    seen.add(token.name);
    return token;
  });
}

function parseToken(item: unknown, where: string): FileToken {
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    throw new OptionsError(`${where}: expected an object`);
  const value = item as Record<string, unknown>;
  const unknown = Object.keys(value).find((key) => !FIELDS.has(key));
  if (unknown !== undefined)
    throw new OptionsError(`${where}: unknown field ${JSON.stringify(unknown)} (known: ${[...FIELDS].join(', ')})`);
  if (!isTokenName(value.name))
    throw new OptionsError(`${where}: "name" must be 1 to 64 characters of A-Z, a-z, 0-9, _, . and -`);
  if (!isAccessRole(value.role)) throw new OptionsError(`${where}: "role" must be admin, write or read`);
  if (!isSecretHash(value.hash))
    throw new OptionsError(
      `${where}: "hash" must be "sha256:" and 64 lowercase hex digits (the hash, never the secret)`,
    );
  const databases = parseDatabases(value.databases, value.role, where);
  const expiresMs =
    value.expires === undefined ? null : typeof value.expires === 'string' ? Date.parse(value.expires) : NaN;
  if (expiresMs !== null && !Number.isFinite(expiresMs))
    throw new OptionsError(`${where}: "expires" must be an ISO date-time such as 2027-07-01T00:00:00Z`);
  if (value.maxDatabaseMb !== undefined && !isDatabaseMb(value.maxDatabaseMb))
    throw new OptionsError(`${where}: "maxDatabaseMb" must be a whole number of MiB from 1 to ${MAX_DATABASE_MB}`);
  const size = value.maxDatabaseMb === undefined ? {} : { maxDatabaseMb: value.maxDatabaseMb };
  return {
    id: `file:${value.name}`,
    name: value.name,
    role: value.role,
    databases,
    hash: value.hash,
    expiresMs,
    ...size,
  };
}

function parseDatabases(raw: unknown, role: AccessRole, where: string): string[] {
  if (raw === undefined && role === 'admin') return ['*'];
  if (!Array.isArray(raw) || raw.length === 0)
    throw new OptionsError(`${where}: "databases" must be a non-empty array of names or patterns such as "clase-*"`);
  return raw.map((entry) => {
    const pattern = normalizePattern(entry);
    if (pattern === null)
      throw new OptionsError(
        `${where}: ${JSON.stringify(entry)} is not a database name or pattern (a-z, 0-9, _, - and *)`,
      );
    return pattern;
  });
}

/** Reads and parses the file (a flag converter: flagValue names the flag). */
export function readTokensFile(file: string): FileToken[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new OptionsError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseTokensFile(text, file);
}
