/**
 * Each database records, inside the transaction of every journaled batch, the
 * seq of the last journal entry applied to it. After a crash that is how the
 * server knows which entries to apply again. Clients cannot reach the
 * table: names starting with _sqlscribe are refused by the dialect and hidden
 * from /tables.
 */
import type Database from 'better-sqlite3';
import type { Connection } from '../connection-pool';
import type { JournalPosition } from '../protocol';

export const META_TABLE = '_sqlscribe_meta';

/** The table's definition, for a new database file and for one that predates it. */
export const META_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT`;

/**
 * The template a database was copied from (POST /dbs with `from`), which its
 * reset returns it to. A table of its own: the position table holds integers
 * only (STRICT), and a copy made from a copy must name its own template.
 */
export const TEMPLATE_TABLE = '_sqlscribe_template';
export const TEMPLATE_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${TEMPLATE_TABLE} (name TEXT NOT NULL) STRICT`;

function ensureTable(connection: Connection): void {
  connection.prepare(META_TABLE_DDL).run();
}

/** Must run inside the batch's transaction, before its COMMIT. */
export function recordPosition(connection: Connection, key: 'applied' | 'created', seq: number): void {
  ensureTable(connection);
  connection
    .prepare(
      `INSERT INTO ${META_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    )
    .run(key, BigInt(seq));
}

export function readPosition(db: Database.Database): JournalPosition {
  const exists = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(META_TABLE);
  if (!exists) return { applied: 0, created: 0 };
  const rows = db.prepare(`SELECT key, value FROM ${META_TABLE}`).safeIntegers(false).all() as Array<{
    key: string;
    value: number;
  }>;
  const value = (key: string): number => rows.find((row) => row.key === key)?.value ?? 0;
  const template = readTemplate(db);
  return { applied: value('applied'), created: value('created'), ...(template === null ? {} : { template }) };
}

/** The template the database was copied from, or null when it was not made from one. */
export function readTemplate(db: Database.Database): string | null {
  const exists = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(TEMPLATE_TABLE);
  if (!exists) return null;
  const row = db.prepare(`SELECT name FROM ${TEMPLATE_TABLE} LIMIT 1`).get() as { name: string } | undefined;
  return row?.name ?? null;
}
