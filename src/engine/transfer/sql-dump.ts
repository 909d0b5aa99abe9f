/**
 * A database as SQL statements: what GET /dbs/{db}/export?format=sql sends,
 * what format=sqlite is built from, and what an uploaded .sqlite file is
 * turned into before it is imported (so that the journal holds SQL only and
 * replay needs no side files).
 *
 * Order: tables, then their rows (parents before the tables whose foreign
 * keys point at them, since foreign keys are enforced on import), then
 * indexes, views and triggers (after the rows, so that no trigger fires on
 * them). The service's own objects (`_sqlscribe*`) and SQLite's (`sqlite_*`)
 * are never part of it.
 */
import type Database from 'better-sqlite3';
import { quoteIdentifier } from '../types';
import { sqlLiteral, type StoredValue } from './sql-literal';

/** Rows per INSERT, and about the most text one INSERT gathers before it is cut. */
const ROWS_PER_INSERT = 500;
const TEXT_PER_INSERT = 1024 * 1024;

export interface SchemaObject {
  type: 'table' | 'index' | 'view' | 'trigger';
  name: string;
  tableName: string;
  sql: string;
}

/** Names the service or SQLite keep for themselves. */
export function isInternalName(name: string): boolean {
  return /^(sqlite_|_sqlscribe)/i.test(name);
}

/** The schema objects of the main database that have SQL, in creation order; shadow tables of virtual tables left out. */
export function schemaObjects(db: Database.Database): SchemaObject[] {
  const shadow = new Set(
    db
      .prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'")
      .pluck()
      .all() as string[],
  );
  const rows = db
    .prepare('SELECT type, name, tbl_name AS tableName, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid')
    .all() as SchemaObject[];
  return rows.filter((row) => !shadow.has(row.name));
}

/** The user's objects: internal ones left out. */
export function userObjects(db: Database.Database): SchemaObject[] {
  return schemaObjects(db).filter((object) => !isInternalName(object.name) && !isInternalName(object.tableName));
}

/**
 * The tables in an order that inserts parents first: a table comes after
 * those its foreign keys name (a table naming itself, or a cycle, keeps
 * creation order for what is left).
 */
export function insertOrder(db: Database.Database, tables: readonly string[]): string[] {
  const known = new Map(tables.map((name) => [name.toLowerCase(), name]));
  const parents = new Map(
    tables.map((name) => {
      const named = db.prepare('SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)').pluck().all(name) as string[];
      return [
        name,
        named
          .map((parent) => known.get(parent.toLowerCase()))
          .filter((parent): parent is string => parent !== undefined && parent !== name),
      ];
    }),
  );
  const ordered: string[] = [];
  const placed = new Set<string>();
  for (;;) {
    const left = tables.filter((name) => !placed.has(name));
    const next = left.find((name) => (parents.get(name) ?? []).every((parent) => placed.has(parent))) ?? left[0];
    if (next === undefined) return ordered;
    ordered.push(next);
    placed.add(next);
  }
}

/** The columns an INSERT names: generated (hidden) columns cannot be written. */
function writableColumns(db: Database.Database, table: string): string[] {
  return db
    .prepare('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid')
    .pluck()
    .all(table) as string[];
}

/** The INSERTs that put a table's rows back, a few hundred rows each. */
export function* insertStatements(db: Database.Database, table: string): Generator<string> {
  const columns = writableColumns(db, table);
  const list = columns.map(quoteIdentifier).join(', ');
  const head = `INSERT INTO ${quoteIdentifier(table)} (${list}) VALUES\n`;
  const read = db
    .prepare(`SELECT ${list} FROM ${quoteIdentifier(table)}`)
    .raw(true)
    .safeIntegers(true);
  let tuples: string[] = [];
  let length = 0;
  for (const row of read.iterate() as IterableIterator<StoredValue[]>) {
    const tuple = `(${row.map(sqlLiteral).join(', ')})`;
    tuples.push(tuple);
    length += tuple.length;
    if (tuples.length >= ROWS_PER_INSERT || length >= TEXT_PER_INSERT) {
      yield head + tuples.join(',\n');
      tuples = [];
      length = 0;
    }
  }
  if (tuples.length > 0) yield head + tuples.join(',\n');
}

/** The whole database as statements (without their `;`), read in whatever transaction the caller holds. */
export function* dumpStatements(db: Database.Database): Generator<string> {
  const objects = userObjects(db);
  const tables = objects.filter((object) => object.type === 'table');
  for (const table of tables) yield table.sql;
  for (const table of insertOrder(
    db,
    tables.map((object) => object.name),
  ))
    yield* insertStatements(db, table);
  for (const type of ['index', 'view', 'trigger'] as const) {
    for (const object of objects) if (object.type === type) yield object.sql;
  }
}
