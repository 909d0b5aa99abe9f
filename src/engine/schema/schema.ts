/**
 * The table schema record that GET /schema answers with (for tables and views), read from SQLite's PRAGMAs and sqlite_schema, and the CREATE TABLE that
 * rebuilds a table from such a record.
 *
 * Tables made by sqlscribe are STRICT, with BOOL stored as INTEGER plus the
 * check of types.ts; tables made elsewhere may declare any type, and report
 * their affinity as `type` and the type as written as `declaredType`
 * (types.ts' reportedType).
 */
import { boolColumnNames, declaredTypes, indexTermTexts } from './schema-sql';
import { parseDefault } from './schema-defaults';
import { canonicalType, reportedType } from '../types';
import { buildViewSchema, type ResultColumn, type ViewSource } from './view-schema';
import type {
  ColumnReference,
  ColumnSchema,
  IndexSchema,
  ReferenceAction,
  TableSchema,
  TriggerSchema,
} from './schema-record';

export type {
  ColumnReference,
  ColumnSchema,
  IndexSchema,
  ReferenceAction,
  TableSchema,
  TriggerSchema,
} from './schema-record';

/** A narrow seam over better-sqlite3's Database so tests can use the real one. */
export interface SchemaDatabase {
  prepare(sql: string): SchemaStatement;
}
interface SchemaStatement {
  safeIntegers(toggle: boolean): SchemaStatement;
  all(...params: unknown[]): unknown[];
  columns(): ResultColumn[];
}
export type Database = SchemaDatabase;

interface MasterRow {
  type: 'table' | 'view';
  name: string;
  rootpage: number;
  sql: string | null;
}
interface XInfoRow {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
  hidden: number;
}
interface IndexListRow {
  name: string;
  unique: number;
  origin: string;
}
interface IndexInfoRow {
  seqno: number;
  name: string | null;
}
interface ForeignKeyRow {
  id: number;
  seq: number;
  table: string;
  from: string;
  to: string | null;
  on_update: string;
  on_delete: string;
}
interface TableListRow {
  type: string;
  wr: number;
  strict: number;
}

/** Catalog numbers are small: read them as numbers whatever the connection's default (the engine reads bigints). */
function rows<T>(db: Database, sql: string, ...params: unknown[]): T[] {
  return db
    .prepare(sql)
    .safeIntegers(false)
    .all(...params) as T[];
}

/** Tables that are SQLite's own or the service's bookkeeping, never shown. */
function isInternal(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('sqlite_') || lower.startsWith('_sqlscribe');
}

function findTable(db: Database, table: string): MasterRow | undefined {
  const sql = "SELECT type, name, rootpage, sql FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE";
  return rows<MasterRow>(db, sql, table)[0];
}

/** A table or a view, by name without regard to case (the two share one namespace in SQLite). */
function findTableOrView(db: Database, name: string): MasterRow | undefined {
  const sql =
    "SELECT type, name, rootpage, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE";
  return rows<MasterRow>(db, sql, name)[0];
}

/** The triggers on a table or view; a trigger's tbl_name is written as its ON clause wrote it, so without regard to case. */
function readTriggers(db: Database, table: string): TriggerSchema[] {
  const sql =
    "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE ORDER BY name";
  return rows<{ name: string; sql: string | null }>(db, sql, table).map((row) => ({
    name: row.name,
    sql: row.sql ?? '',
  }));
}

/** How a view's columns find their types: a statement's result columns, and the schema of the tables they come from. */
function viewSource(db: Database): ViewSource {
  const tables = new Map<string, Omit<TableSchema, 'triggers'> | undefined>();
  return {
    resultColumns(sql) {
      try {
        return db.prepare(sql).columns();
      } catch {
        return undefined; // a view broken by a change to its tables
      }
    },
    columnType(table, column) {
      const key = table.toLowerCase();
      if (!tables.has(key)) {
        const master = findTable(db, table);
        tables.set(key, master === undefined ? undefined : buildTableSchema(db, master));
      }
      return tables.get(key)?.columns.find((c) => c.name.toLowerCase() === column.toLowerCase())?.type ?? null;
    },
  };
}

/** The real columns: hidden 1 marks the hidden columns of a virtual table. */
function columnRows(db: Database, table: string): XInfoRow[] {
  const all = rows<XInfoRow>(db, "SELECT * FROM pragma_table_xinfo(?, 'main') ORDER BY cid", table);
  return all.filter((row) => row.hidden !== 1);
}

/** Names of the pk columns in key order (table_xinfo's pk is the 1-based position). */
function pkNames(columns: XInfoRow[]): string[] {
  return columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
}

function indexColumns(db: Database, index: string): IndexInfoRow[] {
  return rows<IndexInfoRow>(db, "SELECT seqno, name FROM pragma_index_info(?, 'main') ORDER BY seqno", index);
}

/** Lower-cased names of the columns that a UNIQUE constraint covers alone. */
function uniqueColumns(db: Database, table: string): Set<string> {
  const unique = new Set<string>();
  for (const index of rows<IndexListRow>(db, "SELECT * FROM pragma_index_list(?, 'main')", table)) {
    if (index.origin !== 'u') continue;
    const [only, ...more] = indexColumns(db, index.name);
    if (only?.name && more.length === 0) unique.add(only.name.toLowerCase());
  }
  return unique;
}

/** The pk column at `position` of a parent table, for `REFERENCES parent` without a column. */
function parentPkColumn(db: Database, parent: string, position: number): string {
  const found = findTable(db, parent);
  return found ? (pkNames(columnRows(db, found.name))[position] ?? '') : '';
}

/**
 * An ON DELETE or ON UPDATE action as PRAGMA foreign_key_list names it, as the
 * record reports it: as declared, but NO ACTION (also what an omitted action
 * is) as RESTRICT, as the API has always said. The two differ only for a key
 * whose check is deferred to COMMIT.
 */
function referenceAction(action: string): ReferenceAction {
  const upper = action.toUpperCase();
  return upper === 'CASCADE' || upper === 'SET NULL' || upper === 'SET DEFAULT' ? upper : 'RESTRICT';
}

/**
 * Each column's foreign key, by lower-cased column name. SQLite numbers a
 * table's foreign keys from the last declared (id 0), so going through them
 * by descending id keeps the first one declared when a column has several.
 */
function columnReferences(db: Database, table: string): Map<string, ColumnReference> {
  const sql = "SELECT * FROM pragma_foreign_key_list(?, 'main') ORDER BY id DESC, seq";
  const references = new Map<string, ColumnReference>();
  for (const fk of rows<ForeignKeyRow>(db, sql, table)) {
    const key = fk.from.toLowerCase();
    if (references.has(key)) continue;
    const column = fk.to ?? parentPkColumn(db, fk.table, fk.seq);
    references.set(key, {
      table: fk.table,
      column,
      onDelete: referenceAction(fk.on_delete),
      onUpdate: referenceAction(fk.on_update),
    });
  }
  return references;
}

/** The CREATE INDEX indexes of a table, by name; an expression is reported as written. */
function readIndexes(db: Database, table: string): IndexSchema[] {
  const list = rows<IndexListRow>(db, "SELECT * FROM pragma_index_list(?, 'main')", table);
  const masterSql = "SELECT name, rootpage, sql FROM sqlite_schema WHERE type = 'index' AND name = ?";
  const indexes = list
    .filter((index) => index.origin === 'c')
    .map((index): IndexSchema => {
      const master = rows<MasterRow>(db, masterSql, index.name)[0];
      const terms = indexTermTexts(master?.sql ?? '');
      const columns = indexColumns(db, index.name).map((c) => c.name ?? terms[c.seqno] ?? '');
      const rootPage = master?.rootpage ?? 0;
      return { name: index.name, column: columns.join(','), rootPage, unique: index.unique === 1, columns };
    });
  return indexes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Lower-cased names of the columns reported as BOOL: the check of types.ts, or a declared BOOL/BOOLEAN. */
function boolNames(master: MasterRow, columns: XInfoRow[]): Set<string> {
  const checked = boolColumnNames(master.sql ?? '');
  const names = columns.map((c) => c.name.toLowerCase());
  return new Set(names.filter((name, i) => checked.has(name) || canonicalType(columns[i]?.type ?? '') === 'BOOL'));
}

/**
 * A column's `type` and, when it differs, `declaredType`. A STRICT table keeps
 * only the storage name, so a type spelled otherwise is read from the comment
 * sqlscribe keeps it in (types.ts' declaredTypeComment); any other table keeps
 * the declared type as written, which PRAGMA table_xinfo gives back as it is
 * (an empty one for a column declared without a type).
 */
function columnType(
  row: XInfoRow,
  isBool: boolean,
  strict: boolean,
  commented: string | undefined,
): Pick<ColumnSchema, 'type' | 'declaredType'> {
  const type = reportedType(row.type, isBool, strict);
  const declaredType = commented ?? (strict && type !== 'BLOB' ? undefined : row.type);
  const same = declaredType === undefined || declaredType.toUpperCase() === type;
  return same ? { type } : { type, declaredType };
}

function buildSchema(db: Database, master: MasterRow): TableSchema {
  const record = master.type === 'view' ? buildViewSchema(master, viewSource(db)) : buildTableSchema(db, master);
  return { ...record, triggers: readTriggers(db, master.name) };
}

function buildTableSchema(db: Database, master: MasterRow): Omit<TableSchema, 'triggers'> {
  const name = master.name;
  const rowsOfColumns = columnRows(db, name);
  const bools = boolNames(master, rowsOfColumns);
  const unique = uniqueColumns(db, name);
  const references = columnReferences(db, name);
  const declared = declaredTypes(master.sql ?? '');
  const info = rows<TableListRow>(db, "SELECT * FROM pragma_table_list(?) WHERE schema = 'main'", name)[0];
  const strict = info?.strict === 1;
  const columns = rowsOfColumns.map((row): ColumnSchema => {
    const key = row.name.toLowerCase();
    const isBool = bools.has(key);
    return {
      name: row.name,
      ...columnType(row, isBool, strict, declared.get(key)),
      pk: row.pk > 0,
      notNull: row.notnull === 1,
      unique: unique.has(key),
      ...parseDefault(row.dflt_value, isBool),
      references: references.get(key) ?? null,
    };
  });
  return {
    name,
    kind: 'table',
    primaryKey: pkNames(rowsOfColumns).join(','),
    rootPage: master.rootpage,
    strict,
    withoutRowid: info?.wr === 1,
    columns,
    indexes: readIndexes(db, name),
  };
}

/**
 * The schema record of one table or view of the main database, found by name
 * without regard to case (the record carries the stored name); undefined when
 * there is no such table or view or it is internal (sqlite_*, _sqlscribe*).
 */
export function readTableSchema(db: Database, table: string): TableSchema | undefined {
  const master = findTableOrView(db, table);
  if (master === undefined || isInternal(master.name)) return undefined;
  return buildSchema(db, master);
}

/**
 * The schema records of every user table and view, ordered by name; internal
 * tables and the shadow tables of virtual tables (FTS5's `x_data`…) are left out.
 */
export function listTableSchemas(db: Database): TableSchema[] {
  const shadowSql = "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'";
  const shadow = new Set(rows<{ name: string }>(db, shadowSql).map((r) => r.name));
  const mastersSql =
    "SELECT type, name, rootpage, sql FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name";
  const masters = rows<MasterRow>(db, mastersSql);
  return masters.filter((m) => !isInternal(m.name) && !shadow.has(m.name)).map((m) => buildSchema(db, m));
}

/**
 * Lower-cased names of the BOOL columns of a table (found without regard to
 * case): INTEGER columns carrying the check of types.ts, and columns that a
 * table made elsewhere declares BOOL or BOOLEAN. Empty for an unknown table.
 */
export function boolColumns(db: Database, table: string): Set<string> {
  const master = findTable(db, table);
  return master ? boolNames(master, columnRows(db, master.name)) : new Set();
}
