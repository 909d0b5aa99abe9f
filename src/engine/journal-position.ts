/**
 * Each database records, inside the transaction of every journaled batch, the
 * seq of the last journal entry applied to it. After a crash that is how the
 * server knows which entries to apply again. Clients cannot reach the
 * table: names starting with _sqlscribe are refused by the dialect and hidden
 * from /tables.
 */
import type Database from 'better-sqlite3';
import type { Connection } from './connection-pool';
import type { JournalPosition } from './protocol';

export const META_TABLE = '_sqlscribe_meta';

/** The table's definition, for a new database file and for one that predates it. */
export const META_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT`;

function ensureTable(connection: Connection): void {
  connection.prepare(META_TABLE_DDL).run();
}

/** Must run inside the batch's transaction, before its COMMIT. */
export function recordPosition(connection: Connection, key: 'applied' | 'created', seq: number): void {
  ensureTable(connection);
  connection.prepare(`INSERT INTO ${META_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(key, BigInt(seq));
}

export function readPosition(db: Database.Database): JournalPosition {
  const exists = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(META_TABLE);
  if (!exists) return { applied: 0, created: 0 };
  const rows = db.prepare(`SELECT key, value FROM ${META_TABLE}`).safeIntegers(false).all() as Array<{ key: string; value: number }>;
  const value = (key: string): number => rows.find((row) => row.key === key)?.value ?? 0;
  return { applied: value('applied'), created: value('created') };
}
