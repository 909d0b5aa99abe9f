/**
 * Values written back as SQL literals, for dumps and imports: each literal
 * reads back as exactly the value it was made from (integers of any size,
 * doubles to the last bit, text, blobs, NULL).
 */

/** A value as better-sqlite3 reads it with safeIntegers: integers are bigints. */
export type StoredValue = bigint | number | string | Uint8Array | null;

export function sqlLiteral(value: StoredValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return realLiteral(value);
  if (typeof value === 'string') return textLiteral(value);
  return `X'${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`;
}

/**
 * A REAL stays a REAL: `2.0`, not `2` (an integer literal in a column without
 * a type would be stored as one). JavaScript's shortest round-trip form reads
 * back to the same double in SQLite, which rounds decimal text correctly.
 */
function realLiteral(value: number): string {
  if (Number.isNaN(value)) return 'NULL';
  if (!Number.isFinite(value)) return value > 0 ? '9e999' : '-9e999';
  const text = String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}

export function textLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
