/**
 * Where offsets land: the key of the row at an offset of a table, learnt
 * from the pages already read, so that a later page at or past that offset
 * seeks to the key and steps over only the rows after it, instead of over
 * every row from the table's start. A class paging through a table with
 * next and previous, or many clients reading the same page, read each page
 * for about the cost of a cursor page.
 *
 * Only for a key of one term that holds no NULL (the rowid, an INTEGER
 * PRIMARY KEY, a STRICT or NOT NULL primary key of one column): `>=` on it
 * is a seek, and the rows at or past the key are exactly the rows at or past
 * the offset while the data is unchanged. A position holds for one
 * `dataStamp` of the connection (no write since, by anyone); the positions
 * go with the table's schema record, so a schema change forgets them.
 */
import type { TableSchema } from '../schema/schema';
import type { KeyValue } from './row-cursor';
import type { RowKey, TableOrder } from './row-key';

/** Positions kept per table: a walk's recent pages, each one the next's start. */
const POSITIONS_PER_TABLE = 32;
/** A text or blob key longer than this is not kept: the memo stays small whatever the keys hold. */
const MAX_KEY_CHARS = 1024;

export interface Position {
  /** How many rows come before the row whose key this is. */
  readonly offset: number;
  readonly key: KeyValue;
}

interface TablePositions {
  stamp: string;
  /** Offset → key, oldest first. */
  readonly keys: Map<number, KeyValue>;
}

const byTable = new WeakMap<TableSchema, TablePositions>();

/** The key a page may seek by: one term that holds no NULL; null when the table has no such key. */
export function seekableKey(order: TableOrder): RowKey | null {
  const key = order.key;
  return key !== null && key.terms.length === 1 && !key.nullable ? key : null;
}

/** The known position nearest below or at `offset` for the data of `stamp`; undefined if none. */
export function nearestPosition(schema: TableSchema, stamp: string, offset: number): Position | undefined {
  const table = byTable.get(schema);
  if (table === undefined || table.stamp !== stamp) return undefined;
  let best: Position | undefined;
  for (const [at, key] of table.keys) {
    if (at <= offset && (best === undefined || at > best.offset)) best = { offset: at, key };
  }
  return best;
}

/** Records that the row `offset` rows from the start holds `key`, in the data of `stamp`. */
export function notePosition(schema: TableSchema, stamp: string, offset: number, key: KeyValue): void {
  if (offset === 0 || !keepable(key)) return;
  let table = byTable.get(schema);
  if (table === undefined || table.stamp !== stamp) {
    table = { stamp, keys: new Map() };
    byTable.set(schema, table);
  }
  table.keys.delete(offset);
  table.keys.set(offset, key);
  if (table.keys.size > POSITIONS_PER_TABLE) table.keys.delete(table.keys.keys().next().value as number);
}

function keepable(key: KeyValue): boolean {
  if (typeof key === 'string') return key.length <= MAX_KEY_CHARS;
  if (Buffer.isBuffer(key)) return key.length <= MAX_KEY_CHARS;
  return true;
}
