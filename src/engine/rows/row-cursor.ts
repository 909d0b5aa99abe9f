/**
 * The /rows cursor: where a page ended, as text a client hands back in
 * `after`. It is base64url of a small JSON record naming the table, the key's
 * terms and the last row's key values, each value tagged with its SQLite
 * storage class so that it binds back exactly as it was read (an INTEGER
 * stays an integer, a BLOB stays a blob).
 *
 * Clients are told it is opaque. It is not signed: a client who edits one
 * only moves where its next page starts, which offset paging allows anyway.
 * What matters is that any text at all, edited or not, is either followed or
 * refused with a 400, never a crash.
 */
import { EngineError } from '../../errors';

/** A key value as SQLite gave it (the engine reads integers as bigint). */
export type KeyValue = bigint | number | string | Buffer | null;

export interface RowCursor {
  /** The table's name as stored. */
  readonly table: string;
  /** The key's term names (RowKey.names). */
  readonly names: readonly string[];
  readonly values: readonly KeyValue[];
}

type TaggedValue = null | ['i' | 'r' | 't' | 'b', string];

interface CursorRecord {
  v: 1;
  t: string;
  k: string[];
  x: TaggedValue[];
}

/** Far above any real key (a cursor comes back in a URL), low enough that no one can make the engine parse megabytes. */
const MAX_CURSOR_LENGTH = 8192;

export function encodeCursor(cursor: RowCursor): string {
  const record: CursorRecord = { v: 1, t: cursor.table, k: [...cursor.names], x: cursor.values.map(tagValue) };
  return Buffer.from(JSON.stringify(record), 'utf8').toString('base64url');
}

/** Reads a cursor's text; ROWS_CURSOR_INVALID for anything that is not a cursor this service made. */
export function decodeCursor(text: string): RowCursor {
  if (text.length === 0) throw invalid('it is empty');
  if (text.length > MAX_CURSOR_LENGTH) throw invalid(`it is longer than ${MAX_CURSOR_LENGTH} characters`);
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw invalid('it is not base64url text');
  const record = parseRecord(Buffer.from(text, 'base64url').toString('utf8'));
  if (record.k.length === 0 || record.k.length !== record.x.length) throw invalid('its key is not well formed');
  return { table: record.t, names: record.k, values: record.x.map(untagValue) };
}

function parseRecord(json: string): CursorRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw invalid('it does not decode');
  }
  if (!isRecord(parsed)) throw invalid('it does not decode to a cursor');
  return parsed;
}

function isRecord(value: unknown): value is CursorRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return record.v === 1 && typeof record.t === 'string' && isStringArray(record.k) && Array.isArray(record.x);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function tagValue(value: KeyValue): TaggedValue {
  if (value === null) return null;
  if (typeof value === 'bigint') return ['i', value.toString()];
  // String() keeps Infinity, which a REAL column can hold and JSON cannot.
  if (typeof value === 'number') return ['r', String(value)];
  if (typeof value === 'string') return ['t', value];
  return ['b', value.toString('base64')];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function untagValue(tagged: unknown): KeyValue {
  if (tagged === null) return null;
  if (!Array.isArray(tagged) || tagged.length !== 2 || typeof tagged[1] !== 'string')
    throw invalid('a key value is not well formed');
  const [tag, text] = tagged as [unknown, string];
  if (tag === 't') return text;
  if (tag === 'i') return integerValue(text);
  if (tag === 'r') return realValue(text);
  if (tag === 'b' && /^[A-Za-z0-9+/]*={0,2}$/.test(text)) return Buffer.from(text, 'base64');
  throw invalid('a key value is not well formed');
}

function integerValue(text: string): bigint {
  if (!/^-?\d{1,19}$/.test(text)) throw invalid('a key integer is not well formed');
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) throw invalid('a key integer is out of range');
  return value;
}

function realValue(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || Number.isNaN(value)) throw invalid('a key number is not well formed');
  return value;
}

function invalid(detail: string): EngineError {
  return new EngineError('ROWS_CURSOR_INVALID', { detail });
}
