/**
 * The four column types of sqlscribe and how they are stored.
 *
 * Tables are created STRICT so that SQLite itself enforces INT, FLOAT and TEXT
 * (https://sqlite.org/stricttables.html). STRICT accepts only INT, INTEGER, REAL,
 * TEXT, BLOB and ANY as type names, so FLOAT is stored as REAL, and BOOL as
 * INTEGER with the check `CHECK (("col") IN (0, 1))` written right after the type.
 */

export type ColumnType = 'INT' | 'TEXT' | 'FLOAT' | 'BOOL';

/** The type names SQLite's STRICT tables accept that we use. */
export type StorageType = 'INTEGER' | 'REAL' | 'TEXT';

export const COLUMN_TYPES: readonly ColumnType[] = ['INT', 'TEXT', 'FLOAT', 'BOOL'];

const ALIASES: ReadonlyMap<string, ColumnType> = new Map([
  ['INT', 'INT'],
  ['INTEGER', 'INT'],
  ['BIGINT', 'INT'],
  ['SMALLINT', 'INT'],
  ['FLOAT', 'FLOAT'],
  ['REAL', 'FLOAT'],
  ['DOUBLE', 'FLOAT'],
  ['DOUBLE PRECISION', 'FLOAT'],
  ['NUMERIC', 'FLOAT'],
  ['DECIMAL', 'FLOAT'],
  ['TEXT', 'TEXT'],
  ['VARCHAR', 'TEXT'],
  ['CHAR', 'TEXT'],
  ['CHARACTER VARYING', 'TEXT'],
  ['CHARACTER', 'TEXT'],
  ['STRING', 'TEXT'],
  ['BOOL', 'BOOL'],
  ['BOOLEAN', 'BOOL'],
]);

/** Types that may carry a length or precision, as in VARCHAR(20) or DECIMAL(10, 2). */
const SIZED = new Set(['VARCHAR', 'CHAR', 'CHARACTER VARYING', 'CHARACTER', 'NUMERIC', 'DECIMAL']);

/**
 * The canonical type of a declared type name, or undefined when it is not one
 * of ours. Case and inner whitespace do not matter; a size in parentheses is
 * accepted where SQL allows one (`VARCHAR(20)`).
 */
export function canonicalType(declared: string): ColumnType | undefined {
  const match = /^\s*([A-Za-z][A-Za-z ]*?)\s*(\(\s*\d+\s*(,\s*\d+\s*)?\))?\s*$/.exec(declared);
  if (!match) return undefined;
  const name = (match[1] ?? '').toUpperCase().replace(/\s+/g, ' ');
  if (match[2] !== undefined && !SIZED.has(name)) return undefined;
  return ALIASES.get(name);
}

export function storageType(type: ColumnType): StorageType {
  switch (type) {
    case 'INT':
    case 'BOOL':
      return 'INTEGER';
    case 'FLOAT':
      return 'REAL';
    case 'TEXT':
      return 'TEXT';
  }
}

/**
 * The SQL of the check that makes an INTEGER column a BOOL column. The column
 * is parenthesized because SQLite's error message for a check whose text
 * starts with a quoted identifier shows only that identifier; this way the
 * message is the whole expression, and recognizable as ours.
 */
export function boolCheckSql(quotedColumn: string): string {
  return `CHECK ((${quotedColumn}) IN (0, 1))`;
}

/** Recognizes the text of boolCheckSql's check in an error message; group 1 is the quoted column. */
export const BOOL_CHECK_TEXT = /^\((.+)\) IN \(0, 1\)$/;

/**
 * The type to report for a column read back from SQLite: the declared type
 * mapped to its canonical name when it is one of ours, else the declared type
 * as it is (tables made outside sqlscribe may declare anything).
 */
export function reportedType(declared: string, isBool: boolean): string {
  if (isBool) return 'BOOL';
  return canonicalType(declared) ?? declared.toUpperCase();
}

/** Quote an identifier for SQL: "name", with inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
