/**
 * The key that /rows pages a table by: the terms of its ORDER BY, which the
 * offset pages and the cursor pages share so that a client may switch from
 * one to the other mid-walk.
 *
 * - A table without a primary key: its rowid.
 * - An INTEGER PRIMARY KEY: that column, which is the rowid under its own name.
 * - A WITHOUT ROWID table, or a primary key that can hold no NULL (STRICT or
 *   NOT NULL columns): the key columns, unique and never NULL.
 * - Any other primary key of a rowid table: a table made outside the service
 *   may hold NULLs there, several of them, so the rowid follows the key
 *   columns to break those ties. Rows with a non-NULL key keep the order they
 *   had before the rowid was added, since a primary key is unique.
 *
 * When a column takes every name of the rowid (rowid, _rowid_, oid) and the
 * rowid is needed, there is no key: such a table pages by offset only, in the
 * order it always had.
 *
 * A view has neither a rowid nor a key: it pages by offset only, in the
 * order its own SELECT gives (its ORDER BY, if it has one).
 */
import type Database from 'better-sqlite3';
import type { TableSchema } from '../schema/schema';
import { quoteIdentifier } from '../types';

export interface RowKey {
  /** The ORDER BY terms as SQL, in key order. */
  readonly terms: readonly string[];
  /** The terms' names as a cursor records them: column names, or the rowid name used. */
  readonly names: readonly string[];
  /** Some term may hold NULL, so a cursor may carry one. */
  readonly nullable: boolean;
}

/** Where /rows finds its order: a key, or only the order kept for offset pages. */
export interface TableOrder {
  readonly key: RowKey | null;
  /** The ORDER BY clause's terms; '' for a view, read in its own order. */
  readonly orderBy: string;
  /** Why there is no key, when there is none. */
  readonly noKeyReason?: string;
}

const ROWID_NAMES = ['rowid', '_rowid_', 'oid'] as const;

/** Keyed by the cached schema record: a schema change brings a new record, and so a new key. */
const orders = new WeakMap<TableSchema, TableOrder>();

export function tableOrder(db: Database.Database, schema: TableSchema): TableOrder {
  let order = orders.get(schema);
  if (order === undefined) {
    order = readTableOrder(db, schema);
    orders.set(schema, order);
  }
  return order;
}

function readTableOrder(db: Database.Database, schema: TableSchema): TableOrder {
  if (schema.kind === 'view') return { key: null, orderBy: '', noKeyReason: 'it is a view' };
  const pk = schema.primaryKey === '' ? [] : schema.primaryKey.split(',');
  const rowid = rowidName(schema);
  if (pk.length === 0)
    return rowid === null ? noKey(['rowid'], 'every name of its rowid is a column') : keyOf([rowid], false);
  if (schema.withoutRowid || isRowidAlias(db, schema) || pkNeverNull(schema, pk)) return keyOf(pk, false);
  return rowid === null
    ? noKey(pk, 'its primary key may hold NULL and every name of its rowid is a column')
    : keyOf([...pk, rowid], true);
}

function keyOf(names: readonly string[], nullable: boolean): TableOrder {
  const terms = names.map(quoteIdentifier);
  return { key: { terms, names, nullable }, orderBy: terms.join(', ') };
}

/** The order of offset pages as it always was, for a table no cursor can follow. */
function noKey(order: readonly string[], reason: string): TableOrder {
  return {
    key: null,
    orderBy: order.map((name) => (name === 'rowid' ? name : quoteIdentifier(name))).join(', '),
    noKeyReason: reason,
  };
}

/** The first name of the rowid that no column takes; null when all are taken. */
function rowidName(schema: TableSchema): string | null {
  const taken = new Set(schema.columns.map((column) => column.name.toLowerCase()));
  return ROWID_NAMES.find((name) => !taken.has(name)) ?? null;
}

/**
 * An INTEGER PRIMARY KEY is the rowid itself and has no index of its own;
 * any other primary key of a rowid table is kept in an index SQLite made
 * for it (origin 'pk'). Asking SQLite beats reading the declared type,
 * which misses the INTEGER PRIMARY KEY DESC that is not an alias.
 */
function isRowidAlias(db: Database.Database, schema: TableSchema): boolean {
  if (schema.withoutRowid || schema.primaryKey.includes(',')) return false;
  const sql = "SELECT count(*) FROM pragma_index_list(?, 'main') WHERE origin = 'pk'";
  return Number(db.prepare(sql).pluck().safeIntegers(false).get(schema.name)) === 0;
}

/** STRICT tables refuse NULL in a primary key; elsewhere each key column must say NOT NULL. */
function pkNeverNull(schema: TableSchema, pk: readonly string[]): boolean {
  if (schema.strict) return true;
  const notNull = new Set(schema.columns.filter((column) => column.notNull).map((column) => column.name.toLowerCase()));
  return pk.every((name) => notNull.has(name.toLowerCase()));
}
