/**
 * The schema record of a view, in the shape of a table's so that /tables,
 * /schema and /rows treat both alike: no key, no root page, no indexes, and
 * columns that declare nothing but a name and, where it can be known, a type.
 *
 * A view declares no types. SQLite reports, for each result column of a
 * SELECT, the table column it comes straight from (its "origin", followed
 * through nested views). Such a column has its origin's type, BOOL included;
 * any other column (an expression, an aggregate, a literal) has type null:
 * its values may be of any type, row by row.
 *
 * A view whose tables were dropped or changed under it cannot be prepared
 * (SQLite checks a view only when it is used); it is still listed, with no
 * columns, so that one broken view does not hide the rest of the schema.
 */
import type { ColumnSchema, TableSchema } from './schema-record';
import { quoteIdentifier } from '../types';

/** One result column as better-sqlite3's Statement.columns() reports it. */
export interface ResultColumn {
  name: string;
  table: string | null;
  column: string | null;
}

/** What reading a view needs from the database: its result columns, and the type of a table's column. */
export interface ViewSource {
  resultColumns(sql: string): ResultColumn[] | undefined;
  columnType(table: string, column: string): string | null;
}

export interface ViewMaster {
  name: string;
  sql: string | null;
}

function viewColumn(column: ResultColumn, source: ViewSource): ColumnSchema {
  const type = column.table !== null && column.column !== null ? source.columnType(column.table, column.column) : null;
  return {
    name: column.name,
    type,
    pk: false,
    notNull: false,
    unique: false,
    hasDefault: false,
    default: null,
    defaultSql: null,
    references: null,
  };
}

export function buildViewSchema(master: ViewMaster, source: ViewSource): Omit<TableSchema, 'triggers'> {
  const columns = source.resultColumns(`SELECT * FROM ${quoteIdentifier(master.name)}`) ?? [];
  return {
    name: master.name,
    kind: 'view',
    primaryKey: '',
    rootPage: 0,
    strict: false,
    withoutRowid: false,
    columns: columns.map((column) => viewColumn(column, source)),
    indexes: [],
    sql: master.sql ?? '',
  };
}
