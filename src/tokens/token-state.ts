/**
 * The tokens made through POST /tokens, kept in the data directory as
 * `_sqlscribe_tokens.json`: the `_sqlscribe` prefix is one no client database
 * may take, and the name does not end in `.db`, so neither /dbs nor SQL can
 * reach it (the pilot records' `_sqlscribe_pilots.db` is hidden the same way).
 * It holds hashes, never secrets. Written whole to a temporary file, synced,
 * then renamed over the old one: a crash leaves the old list or the new one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SYSTEM_PREFIX } from '../database-names';
import { isAccessRole, isDatabaseMb, type AccessRole } from '../access/principal';
import { isSecretHash } from '../access/token-secret';

export const TOKENS_STATE_FILE = `${SYSTEM_PREFIX}_tokens.json`;

export interface StoredToken {
  readonly id: string;
  readonly name: string;
  readonly role: AccessRole;
  readonly databases: readonly string[];
  readonly hash: string;
  /** ISO time. */
  readonly created: string;
  /** ISO time, or null for never. */
  readonly expires: string | null;
  /** See Principal.maxDatabaseMb; absent in files written before it existed. */
  readonly maxDatabaseMb?: number;
}

function isStoredToken(value: unknown): value is StoredToken {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.id === 'string' &&
    typeof v.name === 'string' &&
    isAccessRole(v.role) &&
    Array.isArray(v.databases) &&
    v.databases.every((d) => typeof d === 'string') &&
    isSecretHash(v.hash) &&
    typeof v.created === 'string' &&
    (v.expires === null || typeof v.expires === 'string') &&
    (v.maxDatabaseMb === undefined || isDatabaseMb(v.maxDatabaseMb))
  );
}

export class TokenStateFile {
  constructor(private readonly file: string) {}

  static in(dir: string): TokenStateFile {
    return new TokenStateFile(path.join(dir, TOKENS_STATE_FILE));
  }

  /** The stored tokens; none when the file does not exist. A damaged file stops the server: tokens must not silently vanish or revive. */
  load(): StoredToken[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const doc = JSON.parse(text) as { tokens?: unknown };
    if (!Array.isArray(doc.tokens) || !doc.tokens.every(isStoredToken))
      throw new Error(
        `${this.file} is damaged: expected {"tokens": [...]} with id, name, role, databases, hash, created, expires`,
      );
    return doc.tokens;
  }

  save(tokens: readonly StoredToken[]): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.tmp`;
    const fd = fs.openSync(temporary, 'w', 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify({ format: 1, tokens }, null, 1)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, this.file);
  }
}
