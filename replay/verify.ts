/**
 * Compares a rebuilt database with a live one: schema and every row, value
 * by value with its type. Says the first difference, or nothing.
 */
import Database from 'better-sqlite3';
import { META_TABLE } from '../src/engine/files/journal-position';

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

function open(file: string): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.defaultSafeIntegers(true);
  return db;
}

/** The user's schema: SQLite's own objects and the service's bookkeeping are not part of it. */
function schemaOf(db: Database.Database): SchemaRow[] {
  return db
    .prepare(
      `SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' AND tbl_name <> ? ORDER BY type, name`,
    )
    .all(META_TABLE) as SchemaRow[];
}

function rowsQuery(db: Database.Database, table: string): string {
  const quoted = `"${table.replace(/"/g, '""')}"`;
  const withoutRowid =
    (
      db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').safeIntegers(false).get(table) as
        { wr: number } | undefined
    )?.wr === 1;
  // Rowids are part of the state: replay must give the same ones.
  return withoutRowid ? `SELECT * FROM ${quoted}` : `SELECT rowid AS "(rowid)", * FROM ${quoted} ORDER BY rowid`;
}

function describe(value: unknown): string {
  if (Buffer.isBuffer(value)) return `BLOB x'${value.toString('hex')}'`;
  if (typeof value === 'bigint') return `INTEGER ${value}`;
  if (typeof value === 'number') return `REAL ${value}`;
  if (typeof value === 'string') return `TEXT ${JSON.stringify(value)}`;
  return 'NULL';
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return typeof a === typeof b && (a === b || (Number.isNaN(a) && Number.isNaN(b)));
}

function compareSchemas(live: SchemaRow[], rebuilt: SchemaRow[]): string | null {
  const key = (row: SchemaRow): string => `${row.type} ${row.name}`;
  const rebuiltByKey = new Map(rebuilt.map((row) => [key(row), row]));
  for (const row of live) {
    const other = rebuiltByKey.get(key(row));
    if (!other) return `${key(row)} is missing from the rebuild`;
    if (other.sql !== row.sql)
      return `${key(row)} differs: live ${JSON.stringify(row.sql)}, rebuilt ${JSON.stringify(other.sql)}`;
    rebuiltByKey.delete(key(row));
  }
  const extra = rebuiltByKey.keys().next();
  return extra.done ? null : `${extra.value} is only in the rebuild`;
}

function compareTable(live: Database.Database, rebuilt: Database.Database, table: string): string | null {
  const liveRows = live.prepare(rowsQuery(live, table)).raw(true).iterate() as IterableIterator<unknown[]>;
  const rebuiltRows = rebuilt.prepare(rowsQuery(rebuilt, table)).raw(true).iterate() as IterableIterator<unknown[]>;
  const columns = live
    .prepare(rowsQuery(live, table))
    .columns()
    .map((column) => column.name);
  for (let index = 0; ; index++) {
    const a = liveRows.next();
    const b = rebuiltRows.next();
    if (a.done && b.done) return null;
    if (a.done || b.done) {
      // The other iterator is still open: its connection could not be closed ("busy executing a query").
      liveRows.return?.();
      rebuiltRows.return?.();
      return `table ${table}: ${a.done ? 'the rebuild has more rows' : 'the rebuild has fewer rows'} (from row ${index + 1})`;
    }
    const column = a.value.findIndex((value, i) => !sameValue(value, b.value[i]));
    if (column >= 0) {
      liveRows.return?.();
      rebuiltRows.return?.();
      return `table ${table}, row ${index + 1}, column ${columns[column]}: live ${describe(a.value[column])}, rebuilt ${describe(b.value[column])}`;
    }
  }
}

/** The first difference between two database files, or null when they hold the same schema and rows. */
export function compareDatabases(liveFile: string, rebuiltFile: string): string | null {
  const live = open(liveFile);
  const rebuilt = open(rebuiltFile);
  try {
    const liveSchema = schemaOf(live);
    const difference = compareSchemas(liveSchema, schemaOf(rebuilt));
    if (difference) return difference;
    for (const { name } of liveSchema.filter((row) => row.type === 'table')) {
      const tableDifference = compareTable(live, rebuilt, name);
      if (tableDifference) return tableDifference;
    }
    return null;
  } finally {
    live.close();
    rebuilt.close();
  }
}
