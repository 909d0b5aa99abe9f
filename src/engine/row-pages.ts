/**
 * One page of GET /rows, by offset or after a cursor, in the table's key
 * order (row-key.ts). An offset page makes SQLite step over every row before
 * it; a cursor page starts where the key is greater than the cursor's, which
 * SQLite finds by searching the rowid or the key's index, at any depth.
 *
 * Each page reads one row more than asked: its presence says whether a
 * `next` cursor is worth giving, so a walk ends on its last full page rather
 * than on an extra empty one.
 */
import { EngineError } from '../errors';
import type { Connection } from './connection-pool';
import type { RowPage, RowsRequest } from './protocol';
import { decodeCursor, encodeCursor, type KeyValue } from './row-cursor';
import { tableOrder, type RowKey, type TableOrder } from './row-key';
import type { TableSchema } from './schema';
import { quoteIdentifier } from './types';
import { convertRow } from './values';
import { rowsJsonText } from './json-row-chunks';

type BindValue = Exclude<KeyValue, null> | null;

export interface PageQuery {
  readonly sql: string;
  readonly params: BindValue[];
  /** Leading columns of each row that hold the key, not asked for by the client. */
  readonly keyColumns: number;
}

/** Must run inside the read transaction that read `schema`, so that the count and the page agree with it. */
export function readRowPage(connection: Connection, schema: TableSchema, request: RowsRequest, cacheCount: boolean): RowPage {
  const order = tableOrder(connection.db, schema);
  const query = pageQuery(schema, order, request);
  // A view's count is not kept: what it counts may depend on more than its tables' data (random(), the clock).
  const total = connection.countRows(quoteIdentifier(schema.name), cacheCount && schema.kind === 'table');
  const raw = connection.prepare(query.sql).raw(true).all(...query.params) as unknown[][];
  const more = raw.length > request.limit;
  const page = more ? raw.slice(0, request.limit) : raw;
  const last = page.at(-1);
  const next = more && last !== undefined && order.key !== null ? nextCursor(schema, order.key, last) : null;
  const bools = schema.columns.map((column) => column.type === 'BOOL');
  // `next` is made above from the raw key values: the rows may be converted in place now.
  const rows = query.keyColumns === 0 ? page.map((row) => convertRow(row, bools)) : page.map((row) => convertRow(row.slice(query.keyColumns), bools));
  return { table: schema.name, total: Number(total), columns: schema.columns.map((column) => column.name), rowsJson: rowsJsonText(rows), next };
}

/** The SELECT of a page: the key's terms first (to make `next` from), then the table's columns. */
export function pageQuery(schema: TableSchema, order: TableOrder, request: RowsRequest): PageQuery {
  const table = quoteIdentifier(schema.name);
  const limit = BigInt(request.limit) + 1n;
  const key = order.key;
  if (request.after === null) {
    const select = key === null ? '*' : `${key.terms.join(', ')}, *`;
    const orderBy = order.orderBy === '' ? '' : ` ORDER BY ${order.orderBy}`;
    const sql = `SELECT ${select} FROM ${table}${orderBy} LIMIT ? OFFSET ?`;
    return { sql, params: [limit, BigInt(request.offset)], keyColumns: key === null ? 0 : key.terms.length };
  }
  if (key === null) throw new EngineError('ROWS_NO_KEY', { table: schema.name, detail: order.noKeyReason ?? 'no key' });
  const values = cursorValues(schema, key, request.after);
  const after = afterCondition(key.terms, values);
  const sql = `SELECT ${key.terms.join(', ')}, * FROM ${table} WHERE ${after.sql} ORDER BY ${order.orderBy} LIMIT ?`;
  return { sql, params: [...after.params, limit], keyColumns: key.terms.length };
}

/** The key values of a cursor made for this table and this key; ROWS_CURSOR_MISMATCH otherwise. */
function cursorValues(schema: TableSchema, key: RowKey, text: string): readonly KeyValue[] {
  const cursor = decodeCursor(text);
  // Table and column names are found without regard to case, as SQLite does.
  if (cursor.table.toLowerCase() !== schema.name.toLowerCase()) {
    throw new EngineError('ROWS_CURSOR_MISMATCH', { table: schema.name, detail: 'it was made for another table' });
  }
  const same = cursor.names.length === key.names.length && cursor.names.every((name, i) => name.toLowerCase() === key.names[i]?.toLowerCase());
  if (!same) throw new EngineError('ROWS_CURSOR_MISMATCH', { table: schema.name, detail: 'the table\'s key changed since it was made' });
  if (!key.nullable && cursor.values.includes(null)) throw new EngineError('ROWS_CURSOR_INVALID', { detail: 'its key holds NULL where the table\'s cannot' });
  return cursor.values;
}

function nextCursor(schema: TableSchema, key: RowKey, last: unknown[]): string {
  return encodeCursor({ table: schema.name, names: key.names, values: last.slice(0, key.terms.length) as KeyValue[] });
}

/**
 * Rows whose key comes after `values` in ORDER BY order. Without NULLs this
 * is one row-value comparison, which SQLite turns into a search of the rowid
 * or of the key's index. SQLite sorts NULL first, but a comparison with NULL
 * is neither true nor false; so a cursor holding a NULL (only possible in a
 * nullable key) spells the order out term by term instead.
 */
export function afterCondition(terms: readonly string[], values: readonly KeyValue[]): { sql: string; params: BindValue[] } {
  if (!values.includes(null)) {
    const sql = terms.length === 1 ? `${terms[0]} > ?` : `(${terms.join(', ')}) > (${terms.map(() => '?').join(', ')})`;
    return { sql, params: [...values] };
  }
  return termByTerm(terms, values, 0);
}

function termByTerm(terms: readonly string[], values: readonly KeyValue[], i: number): { sql: string; params: BindValue[] } {
  const term = terms[i] as string;
  const value = values[i] ?? null;
  const isLast = i === terms.length - 1;
  if (value === null) {
    if (isLast) return { sql: `${term} IS NOT NULL`, params: [] };
    const rest = termByTerm(terms, values, i + 1);
    return { sql: `(${term} IS NOT NULL OR (${term} IS NULL AND ${rest.sql}))`, params: rest.params };
  }
  if (isLast) return { sql: `${term} > ?`, params: [value] };
  const rest = termByTerm(terms, values, i + 1);
  return { sql: `(${term} > ? OR (${term} = ? AND ${rest.sql}))`, params: [value, value, ...rest.params] };
}
