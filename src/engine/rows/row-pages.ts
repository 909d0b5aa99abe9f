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
import { EngineError } from '../../errors';
import type { Connection } from '../connection-pool';
import type { ResultValue, RowPage, RowsRequest } from '../protocol';
import { decodeCursor, encodeCursor, type KeyValue } from './row-cursor';
import { tableOrder, type RowKey, type TableOrder } from './row-key';
import type { TableSchema } from '../schema/schema';
import { quoteIdentifier } from '../types';
import { convertNumberRow, convertRow } from '../values';
import { rowsJsonText } from './json-row-chunks';
import { nearestPosition, notePosition, seekableKey, type Position } from './offset-seeks';

type BindValue = Exclude<KeyValue, null> | null;

export interface PageQuery {
  readonly sql: string;
  readonly params: BindValue[];
  /** Leading columns of each row that hold the key, not asked for by the client. */
  readonly keyColumns: number;
  /** Where each of the key's values is in a row: its leading columns, or the table's own key columns. */
  readonly keyAt: readonly number[];
}

/** Must run inside the read transaction that read `schema`, so that the count and the page agree with it. */
export function readRowPage(
  connection: Connection,
  schema: TableSchema,
  request: RowsRequest,
  cacheCount: boolean,
): RowPage {
  const order = tableOrder(connection.db, schema);
  // A view's count is not kept: what it counts may depend on more than its tables' data (random(), the clock).
  const stamp = cacheCount && schema.kind === 'table' ? connection.dataStamp() : null;
  // Where offsets land is kept (offset-seeks.ts) while the data is as it was, for a key a page can seek by.
  const seekKey = request.after === null ? seekableKey(order) : null;
  const seeks = stamp === null || seekKey === null ? null : { stamp, key: seekKey };
  const from = seeks === null ? undefined : nearestPosition(schema, seeks.stamp, request.offset);
  const query =
    seeks === null || from === undefined
      ? pageQuery(schema, order, request)
      : seekPageQuery(schema, order.orderBy, seeks.key, from, request);
  const total = connection.countRows(quoteIdentifier(schema.name), stamp);
  const bools = schema.columns.map((column) => column.type === 'BOOL');
  const read = readPage(connection, query, bools, order.key === null || keyReadsExactly(schema, order.key));
  // A key read as a number is an INTEGER (keyReadsExactly): the cursor says so, as it does of a bigint.
  const keyOf = (row: unknown[]): KeyValue[] =>
    query.keyAt.map((i) => {
      const value = row[i];
      return typeof value === 'number' && !read.safe ? BigInt(value) : (value as KeyValue);
    });
  const more = read.rows.length > request.limit;
  if (seeks !== null) notePositions(schema, seeks.stamp, request, read.rows, keyOf);
  const page = more ? read.rows.slice(0, request.limit) : read.rows;
  const last = page.at(-1);
  const next = more && last !== undefined && order.key !== null ? nextCursor(schema, order.key, keyOf(last)) : null;
  // `next` is made above from the raw key values: the rows may be converted in place now.
  const rows = query.keyColumns === 0 ? page : page.map((row) => row.slice(query.keyColumns));
  if (read.safe) for (const row of rows) convertRow(row, bools);
  return {
    table: schema.name,
    total: Number(total),
    columns: schema.columns.map((column) => column.name),
    rowsJson: rowsJsonText(rows as ResultValue[][]),
    next,
  };
}

/** An offset page that starts at a known position's key and steps over only the rows between it and the offset. */
function seekPageQuery(
  schema: TableSchema,
  orderBy: string,
  key: RowKey,
  from: Position,
  request: RowsRequest,
): PageQuery {
  const columns = keyColumnsOf(schema, key);
  const sql = `SELECT ${columns.select} FROM ${quoteIdentifier(schema.name)} WHERE ${key.terms[0] as string} >= ? ORDER BY ${orderBy} LIMIT ? OFFSET ?`;
  const params: BindValue[] = [from.key, BigInt(request.limit) + 1n, BigInt(request.offset - from.offset)];
  return { sql, params, keyColumns: columns.keyColumns, keyAt: columns.keyAt };
}

/** Where this page's first row and the row after it (the next page's first) are, for pages still to come. */
function notePositions(
  schema: TableSchema,
  stamp: string,
  request: RowsRequest,
  rows: readonly unknown[][],
  keyOf: (row: unknown[]) => KeyValue[],
): void {
  const first = rows[0];
  if (first !== undefined) notePosition(schema, stamp, request.offset, keyOf(first)[0] ?? null);
  const after = rows[request.limit];
  if (after !== undefined) notePosition(schema, stamp, request.offset + request.limit, keyOf(after)[0] ?? null);
}

/**
 * The page's rows: the key's values raw, the table's columns converted
 * unless `safe` says they were read with safe integers and are still raw. Reading integers
 * as numbers costs about a fifth less than as bigints (one object each, then
 * converted back), and most pages hold none beyond 2^53: so a page is read
 * that way when the key's numbers can only be INTEGERs, and read again with
 * safe integers when it holds a number that large. Both reads run in the
 * same read transaction, so they see the same rows.
 */
function readPage(
  connection: Connection,
  query: PageQuery,
  bools: readonly boolean[],
  numbersAllowed: boolean,
): { rows: unknown[][]; safe: boolean } {
  const statement = connection.prepare(query.sql).raw(true);
  if (numbersAllowed) {
    const rows = statement.safeIntegers(false).all(...query.params) as unknown[][];
    if (rows.every((row) => convertNumberRow(row, bools, query.keyColumns))) {
      return { rows, safe: false };
    }
  }
  return { rows: statement.safeIntegers(true).all(...query.params) as unknown[][], safe: true };
}

/**
 * Whether a number read from the key can only be an INTEGER (so that it goes
 * into a cursor as one): the rowid, or a STRICT table's INT column (its TEXT
 * columns hold no number at all). Elsewhere a REAL 5.0 and an INTEGER 5 read
 * alike as numbers. (A BLOB key is read the safe way: the fast read converts
 * blobs in place, and a cursor needs the bytes.)
 */
function keyReadsExactly(schema: TableSchema, key: RowKey): boolean {
  return key.names.every((name) => {
    const column = schema.columns[columnIndex(schema, name)];
    if (column === undefined) return true;
    return schema.strict && (column.type === 'INT' || column.type === 'INTEGER' || column.type === 'TEXT');
  });
}

/**
 * The SELECT of a page: the table's columns, after the key's terms (to make
 * `next` from) unless every term is one of those columns already.
 */
export function pageQuery(schema: TableSchema, order: TableOrder, request: RowsRequest): PageQuery {
  const table = quoteIdentifier(schema.name);
  const limit = BigInt(request.limit) + 1n;
  const key = order.key;
  if (request.after === null) {
    const columns = key === null ? { select: '*', keyColumns: 0, keyAt: [] } : keyColumnsOf(schema, key);
    const orderBy = order.orderBy === '' ? '' : ` ORDER BY ${order.orderBy}`;
    const sql = `SELECT ${columns.select} FROM ${table}${orderBy} LIMIT ? OFFSET ?`;
    return { sql, params: [limit, BigInt(request.offset)], keyColumns: columns.keyColumns, keyAt: columns.keyAt };
  }
  if (key === null) throw new EngineError('ROWS_NO_KEY', { table: schema.name, detail: order.noKeyReason ?? 'no key' });
  return cursorPageQuery(schema, order.orderBy, key, cursorValues(schema, key, request.after), limit);
}

/** The SELECT of a page after the row whose key holds `values`. */
export function cursorPageQuery(
  schema: TableSchema,
  orderBy: string,
  key: RowKey,
  values: readonly KeyValue[],
  limit: bigint,
): PageQuery {
  const after = afterCondition(key.terms, values);
  const columns = keyColumnsOf(schema, key);
  const sql = `SELECT ${columns.select} FROM ${quoteIdentifier(schema.name)} WHERE ${after.sql} ORDER BY ${orderBy} LIMIT ?`;
  return { sql, params: [...after.params, limit], keyColumns: columns.keyColumns, keyAt: columns.keyAt };
}

/** Where a column of this name is in the table's rows (-1 for none: the rowid), found without regard to case as SQLite does. */
function columnIndex(schema: TableSchema, name: string): number {
  const lower = name.toLowerCase();
  return schema.columns.findIndex((column) => column.name.toLowerCase() === lower);
}

/** What a page selects so that the key's values can be found in each row, and where. */
function keyColumnsOf(schema: TableSchema, key: RowKey): { select: string; keyColumns: number; keyAt: number[] } {
  const at = key.names.map((name) => columnIndex(schema, name));
  if (at.every((i) => i >= 0)) return { select: '*', keyColumns: 0, keyAt: at };
  return { select: `${key.terms.join(', ')}, *`, keyColumns: key.terms.length, keyAt: key.terms.map((_, i) => i) };
}

/** The key values of a cursor made for this table and this key; ROWS_CURSOR_MISMATCH otherwise. */
function cursorValues(schema: TableSchema, key: RowKey, text: string): readonly KeyValue[] {
  const cursor = decodeCursor(text);
  // Table and column names are found without regard to case, as SQLite does.
  if (cursor.table.toLowerCase() !== schema.name.toLowerCase()) {
    throw new EngineError('ROWS_CURSOR_MISMATCH', { table: schema.name, detail: 'it was made for another table' });
  }
  const same =
    cursor.names.length === key.names.length &&
    cursor.names.every((name, i) => name.toLowerCase() === key.names[i]?.toLowerCase());
  if (!same)
    throw new EngineError('ROWS_CURSOR_MISMATCH', {
      table: schema.name,
      detail: "the table's key changed since it was made",
    });
  if (!key.nullable && cursor.values.includes(null))
    throw new EngineError('ROWS_CURSOR_INVALID', { detail: "its key holds NULL where the table's cannot" });
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
export function afterCondition(
  terms: readonly string[],
  values: readonly KeyValue[],
): { sql: string; params: BindValue[] } {
  if (!values.includes(null)) {
    const sql = terms.length === 1 ? `${terms[0]} > ?` : `(${terms.join(', ')}) > (${terms.map(() => '?').join(', ')})`;
    return { sql, params: [...values] };
  }
  return termByTerm(terms, values, 0);
}

function termByTerm(
  terms: readonly string[],
  values: readonly KeyValue[],
  i: number,
): { sql: string; params: BindValue[] } {
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
