/**
 * The five column types of sqlscribe and how they are stored.
 *
 * Tables are created STRICT so that SQLite itself enforces INT, FLOAT, TEXT
 * and BLOB (https://sqlite.org/stricttables.html). STRICT accepts only INT,
 * INTEGER, REAL, TEXT, BLOB and ANY as type names, so FLOAT is stored as REAL,
 * and BOOL as INTEGER with the check `CHECK (("col") IN (0, 1))` written right
 * after the type.
 *
 * The aliases are the type names teaching scripts use (Chinook, Northwind,
 * Sakila, the examples of https://sqlite.org/datatype3.html#affinity_name_examples).
 * Dates and times have no type of their own: SQLite has none either, and its
 * date functions read ISO-8601 text, so DATE, TIME, DATETIME and TIMESTAMP are
 * TEXT. BLOB is a type of its own rather than TEXT because scripts fill it
 * with X'…' literals, which a STRICT TEXT column refuses.
 */

export type ColumnType = 'INT' | 'TEXT' | 'FLOAT' | 'BOOL' | 'BLOB';

/** The type names SQLite's STRICT tables accept that we use. */
export type StorageType = 'INTEGER' | 'REAL' | 'TEXT' | 'BLOB';

export const COLUMN_TYPES: readonly ColumnType[] = ['INT', 'TEXT', 'FLOAT', 'BOOL', 'BLOB'];

const ALIASES: ReadonlyMap<string, ColumnType> = new Map([
  ['INT', 'INT'],
  ['INTEGER', 'INT'],
  ['BIGINT', 'INT'],
  ['SMALLINT', 'INT'],
  ['TINYINT', 'INT'],
  ['MEDIUMINT', 'INT'],
  ['INT2', 'INT'],
  ['INT8', 'INT'],
  ['UNSIGNED BIG INT', 'INT'],
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
  ['NVARCHAR', 'TEXT'],
  ['NCHAR', 'TEXT'],
  ['NATIVE CHARACTER', 'TEXT'],
  ['VARYING CHARACTER', 'TEXT'],
  ['CLOB', 'TEXT'],
  ['DATE', 'TEXT'],
  ['TIME', 'TEXT'],
  ['DATETIME', 'TEXT'],
  ['TIMESTAMP', 'TEXT'],
  ['BLOB', 'BLOB'],
  ['BOOL', 'BOOL'],
  ['BOOLEAN', 'BOOL'],
]);

/** Types that may carry a length or precision, as in VARCHAR(20) or DECIMAL(10, 2). */
const SIZED = new Set([
  'VARCHAR',
  'CHAR',
  'CHARACTER VARYING',
  'CHARACTER',
  'NUMERIC',
  'DECIMAL',
  'NVARCHAR',
  'NCHAR',
  'NATIVE CHARACTER',
  'VARYING CHARACTER',
]);

/** A declared type read into its name and size, both normalized (upper case, single spaces, no blanks in the size). */
function parseDeclared(declared: string): { name: string; size: string } | undefined {
  const match = /^\s*([A-Za-z][A-Za-z0-9 ]*?)\s*(\(\s*\d+\s*(,\s*\d+\s*)?\))?\s*$/.exec(declared);
  if (!match) return undefined;
  return { name: (match[1] ?? '').toUpperCase().replace(/\s+/g, ' '), size: (match[2] ?? '').replace(/\s+/g, '') };
}

/**
 * The canonical type of a declared type name, or undefined when it is not one
 * of ours. Case and inner whitespace do not matter; a size in parentheses is
 * accepted where SQL allows one (`VARCHAR(20)`).
 */
export function canonicalType(declared: string): ColumnType | undefined {
  const parsed = parseDeclared(declared);
  if (parsed === undefined) return undefined;
  if (parsed.size !== '' && !SIZED.has(parsed.name)) return undefined;
  return ALIASES.get(parsed.name);
}

/**
 * The type of a declared type name outside the alias table, for an import
 * (import-script.ts), which takes any type SQLite accepts: the alias of the
 * name without its size when there is one (`DATETIME(6)`, `TINYINT(1)`), else
 * the type SQLite's affinity rules give the name
 * (https://sqlite.org/datatype3.html#determination_of_column_affinity), in
 * their order: it contains INT → INT; CHAR, CLOB or TEXT → TEXT (so
 * `BLOB SUB_TYPE TEXT` is TEXT); BLOB, or no type at all → BLOB; REAL, FLOA
 * or DOUB → FLOAT; anything else is NUMERIC affinity, which the alias table
 * maps to FLOAT. `/exec` keeps refusing such names (4002): a typo there is
 * worth an error, a published script is taken as it is.
 */
export function affinityType(declared: string): ColumnType {
  const unsized = parseDeclared(declared.replace(/\(.*\)\s*$/s, ''));
  const alias = unsized === undefined ? undefined : ALIASES.get(unsized.name);
  if (alias !== undefined) return alias;
  const name = declared.toUpperCase();
  if (name.includes('INT')) return 'INT';
  if (name.includes('CHAR') || name.includes('CLOB') || name.includes('TEXT')) return 'TEXT';
  if (name.includes('BLOB') || name.trim() === '') return 'BLOB';
  if (name.includes('REAL') || name.includes('FLOA') || name.includes('DOUB')) return 'FLOAT';
  return ALIASES.get('NUMERIC') as ColumnType;
}

/**
 * How an import keeps a declared type outside the alias table beside its
 * affinity type (declaredTypeComment): upper case, single spaces, no blanks in
 * the size; undefined when it holds anything a comment or DECLARED_TYPE_COMMENT
 * cannot carry.
 */
export function affinitySpelling(declared: string): string | undefined {
  const spelling = declared
    .trim()
    .toUpperCase()
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1');
  return /^[A-Z0-9_ (),]+$/.test(spelling) ? spelling : undefined;
}

/**
 * The declared type as /schema reports it beside the canonical one
 * (`NVARCHAR(160)` for `nvarchar( 160 )`), or undefined when it is not one of ours.
 */
export function declaredSpelling(declared: string): string | undefined {
  const parsed = parseDeclared(declared);
  if (parsed === undefined || canonicalType(declared) === undefined) return undefined;
  return parsed.name + parsed.size;
}

/**
 * Declared types that are not the canonical name are kept in the stored
 * CREATE TABLE as a comment before the storage type, since STRICT tables keep
 * only the storage name (PRAGMA table_info says TEXT for NVARCHAR(160)).
 * SQLite keeps comments inside the statement text, through ALTER TABLE too.
 */
export function declaredTypeComment(spelling: string): string {
  return `/* declared ${spelling} */ `;
}

/** Finds declaredTypeComment's comment in a column definition's text; group 1 is the spelling. */
export const DECLARED_TYPE_COMMENT = /\/\* declared ([A-Z0-9_ (),]+) \*\//;

export function storageType(type: ColumnType): StorageType {
  switch (type) {
    case 'INT':
    case 'BOOL':
      return 'INTEGER';
    case 'FLOAT':
      return 'REAL';
    case 'TEXT':
      return 'TEXT';
    case 'BLOB':
      return 'BLOB';
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
 * A column's type affinity, in the names the schema record uses: INT
 * (INTEGER affinity), TEXT, BLOB (SQLite's BLOB affinity, once called NONE:
 * a value is kept as it is given), FLOAT (REAL) and NUMERIC.
 */
export type Affinity = 'INT' | 'TEXT' | 'BLOB' | 'FLOAT' | 'NUMERIC';

/**
 * The affinity SQLite gives a declared type, by its rules in order
 * (https://sqlite.org/datatype3.html, 3.1 "Determination of column
 * affinity"): INT anywhere in it → INTEGER; else CHAR, CLOB or TEXT → TEXT;
 * else BLOB, or no type at all → BLOB; else REAL, FLOA or DOUB → REAL; else
 * NUMERIC. So `FLOATING POINT` is INTEGER (it holds "INT"), `STRING`,
 * `DECIMAL(10,2)` and `DATETIME` are NUMERIC, `BLOB SUB_TYPE TEXT` is TEXT.
 */
export function affinityOf(declared: string): Affinity {
  const upper = declared.toUpperCase();
  if (upper.includes('INT')) return 'INT';
  if (upper.includes('CHAR') || upper.includes('CLOB') || upper.includes('TEXT')) return 'TEXT';
  if (upper.includes('BLOB') || upper.trim() === '') return 'BLOB';
  if (upper.includes('REAL') || upper.includes('FLOA') || upper.includes('DOUB')) return 'FLOAT';
  return 'NUMERIC';
}

/**
 * The type to report for a column read back from SQLite. A STRICT table's
 * type is enforced, and its declared type is a storage name (INTEGER, REAL,
 * TEXT, BLOB, ANY): its canonical name, and BLOB for ANY, which keeps every
 * value as it is given. Any other table's type is what SQLite does with the
 * values, its affinity (affinityOf); BOOL where the column is one of ours or
 * declares BOOL or BOOLEAN, in either kind of table.
 */
export function reportedType(declared: string, isBool: boolean, strict: boolean): string {
  if (isBool) return 'BOOL';
  if (strict) return canonicalType(declared) ?? 'BLOB';
  return affinityOf(declared);
}

/** The type of a result column in `types`: one of ours, or NUMERIC for a NUMERIC-affinity column of a table that is not STRICT. */
export type ResultType = ColumnType | 'NUMERIC';

/**
 * The type `types` gives a result column that reads a table column declared
 * `declared` (SQLite's decltype; null for an expression), as the column's
 * schema record reports it (reportedType), except that a column of a table
 * that is not STRICT declared without any type is null: it keeps each value
 * as it was given, so no one type tells a client how to read them.
 */
export function resultColumnType(declared: string | null, strict: boolean): ResultType | null {
  if (declared === null) return null;
  if (strict) return canonicalType(declared) ?? null;
  if (declared.trim() === '') return null;
  return canonicalType(declared) === 'BOOL' ? 'BOOL' : affinityOf(declared);
}

/** Quote an identifier for SQL: "name", with inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
