/**
 * Values in and out of SQLite: what clients bind, and what they read back.
 */
import { EngineError } from '../errors';
import { tokenize } from './dialect/tokenize';
import type { ResultValue, SqlParams, SqlValue } from './protocol';

type BindValue = number | bigint | string | null;

/**
 * JSON integers are bound as 64-bit integers: better-sqlite3 binds a JS number
 * as a REAL, which would store 5 as '5.0' in a TEXT column.
 */
function toBindValue(value: SqlValue, where: string): BindValue {
  if (value === null || typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 1n : 0n;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new EngineError('PARAMETER_MISMATCH', { detail: `${where} is not a finite number` });
    return Number.isSafeInteger(value) ? BigInt(value) : value;
  }
  throw new EngineError('PARAMETER_MISMATCH', { detail: `${where} must be a string, number, boolean or null` });
}

/** Named parameters may be sent with their sigil (":name") or without ("name"). */
function stripSigil(name: string): string {
  return /^[:@$]/.test(name) ? name.slice(1) : name;
}

export function toBindParameters(params: SqlParams | undefined): BindValue[] | [Record<string, BindValue>] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params.map((value, i) => toBindValue(value as SqlValue, `parameter ${i + 1}`));
  const named: Record<string, BindValue> = {};
  for (const [name, value] of Object.entries(params)) {
    const key = stripSigil(name);
    if (key in named) throw new EngineError('PARAMETER_MISMATCH', { detail: `parameter "${key}" is given twice` });
    named[key] = toBindValue(value, `parameter "${key}"`);
  }
  return [named];
}

/** Integers come from SQLite as bigint (safeIntegers); they stay bigint only when a number would lose digits. */
export function toResultValue(value: unknown, isBool: boolean): ResultValue {
  if (typeof value === 'bigint') {
    if (isBool && (value === 0n || value === 1n)) return value === 1n;
    // Number() rounds a bigint beyond 2^53 to a number that is no longer a safe integer: exactly the ones kept as bigint.
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value;
  }
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (Buffer.isBuffer(value)) return value.toString('base64');
  // SQLite gives nothing else; were it to, its text is the safest answer.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return String(value);
}

/**
 * Converts in place a raw row read with safe integers off (numbers, not
 * bigints): BOOL columns' 0 and 1 become false and true, blobs base64.
 * Returns false, leaving the row part converted, when a number is an integer
 * beyond 2^53: it may be an INTEGER rounded on its way out, which only a read
 * with safe integers on gives exactly (a REAL that large is read again too;
 * it comes back the same). The first `from` values (a page's key, kept for
 * its cursor) are checked but left as they are.
 */
export function convertNumberRow(row: unknown[], boolColumns: readonly boolean[], from = 0): boolean {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    if (typeof value === 'number') {
      if (value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER) return false;
      if (i >= from && boolColumns[i - from] === true && (value === 0 || value === 1)) row[i] = value === 1;
    } else if (i >= from && typeof value === 'object' && value !== null) {
      row[i] = toResultValue(value, false);
    }
  }
  return true;
}

/**
 * convertNumberRow for a result's row, every value converted, weighed as
 * convertRowWeighed weighs it; -1, the row part converted, when a number is
 * beyond 2^53 (the result is then read again with safe integers).
 */
export function convertNumberRowWeighed(row: unknown[], boolColumns: readonly boolean[]): number {
  let bytes = 2;
  for (let i = 0; i < row.length; i++) {
    let value = row[i];
    if (typeof value === 'number') {
      if (value > Number.MAX_SAFE_INTEGER || value < Number.MIN_SAFE_INTEGER) return -1;
      if (boolColumns[i] === true && (value === 0 || value === 1)) row[i] = value === 1;
    } else if (typeof value === 'object' && value !== null) row[i] = value = toResultValue(value, false);
    bytes += typeof value === 'string' ? value.length + 3 : 21;
  }
  return bytes;
}

/** Converts a raw row in place: the caller owns the array. */
export function convertRow(row: unknown[], boolColumns: readonly boolean[]): ResultValue[] {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    // Text, reals and NULL, most of a row, are already what JSON takes: left as they are.
    if (typeof value === 'bigint' || (typeof value === 'object' && value !== null))
      row[i] = toResultValue(value, boolColumns[i] === true);
  }
  return row as ResultValue[];
}

/**
 * Converts a raw row in place (convertRow) and gives about what it weighs as
 * JSON: its text (blobs as base64) and a few bytes for each number and
 * separator. A request's rows are counted by it as they are read, so that a
 * huge result is cut before it is held whole, in the engine or in the server.
 */
export function convertRowWeighed(row: unknown[], boolColumns: readonly boolean[]): number {
  let bytes = 2;
  for (let i = 0; i < row.length; i++) {
    let value = row[i];
    if (typeof value === 'bigint' || (typeof value === 'object' && value !== null))
      row[i] = value = toResultValue(value, boolColumns[i] === true);
    bytes += typeof value === 'string' ? value.length + 3 : 21;
  }
  return bytes;
}

/**
 * better-sqlite3 ignores keys of a parameter object that the statement does
 * not name; a client who sent one most likely misspelled a name, so it is
 * refused like a missing one.
 */
export function checkNamedParameters(sql: string, params: SqlParams | undefined): void {
  if (params === undefined || Array.isArray(params)) return;
  const names = new Set(
    tokenize(sql)
      .filter((token) => token.kind === 'parameter')
      .map((token) => stripSigil(token.text)),
  );
  for (const key of Object.keys(params)) {
    if (!names.has(stripSigil(key)))
      throw new EngineError('PARAMETER_MISMATCH', {
        detail: `the statement has no parameter named "${stripSigil(key)}"`,
      });
  }
}
