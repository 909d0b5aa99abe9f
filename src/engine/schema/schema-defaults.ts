/**
 * The `default` of a column in the schema record, read from the SQL text SQLite keeps in
 * PRAGMA table_xinfo's dflt_value, and the SQL written back for it.
 */

export type DefaultValue = number | string | boolean | null;

export interface ParsedDefault {
  hasDefault: boolean;
  default: DefaultValue;
  defaultSql: string | null;
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]+)$/;
const STRING = /^'((?:[^']|'')*)'$/;

/** The number a numeric literal stands for, or undefined when `sql` is not one. */
function numericLiteral(sql: string): number | undefined {
  if (DECIMAL.test(sql)) return Number(sql);
  const hex = HEX.exec(sql);
  if (!hex) return undefined;
  // SQLite reads hex literals as 64-bit two's complement integers.
  const value = BigInt.asIntN(64, BigInt(`0x${hex[2] ?? '0'}`));
  return Number(hex[1] === '-' ? -value : value);
}

/** `(5)` → `5`: the literal inside balanced outer parentheses, else `sql` itself. */
function unwrapParens(sql: string): string {
  let text = sql.trim();
  while (text.startsWith('(') && text.endsWith(')')) {
    const inner = text.slice(1, -1).trim();
    const literal = DECIMAL.test(inner) || HEX.test(inner) || STRING.test(inner) || /^(TRUE|FALSE|NULL)$/i.test(inner);
    if (!literal) break;
    text = inner;
  }
  return text;
}

/** The value of a DEFAULT's SQL text in its native type (see the module doc). */
function defaultValue(sql: string, isBool: boolean): DefaultValue {
  const text = unwrapParens(sql);
  const upper = text.toUpperCase();
  if (upper === 'NULL') return null;
  if (upper === 'TRUE' || upper === 'FALSE') return isBool ? upper === 'TRUE' : Number(upper === 'TRUE');
  const number = numericLiteral(text);
  if (number !== undefined) return isBool && (number === 0 || number === 1) ? number === 1 : number;
  const string = STRING.exec(text);
  if (string) return (string[1] ?? '').replace(/''/g, "'");
  // Not a literal (CURRENT_TIMESTAMP, (1 + 2)): reported as its SQL text.
  return sql;
}

/**
 * The default fields of a column from PRAGMA table_xinfo's dflt_value:
 * no DEFAULT → hasDefault false; `NULL` → default null; a numeric literal →
 * number (0/1 → boolean on a BOOL column); TRUE/FALSE → boolean on a BOOL
 * column, 1/0 elsewhere; a quoted string → the string; anything else → its
 * SQL text. `defaultSql` keeps the raw text so a rebuild is exact.
 */
export function parseDefault(dfltValue: unknown, isBool: boolean): ParsedDefault {
  if (dfltValue === null || dfltValue === undefined) return { hasDefault: false, default: null, defaultSql: null };
  // SQLite reports a DEFAULT as the text of its SQL.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  const sql = typeof dfltValue === 'string' ? dfltValue : String(dfltValue);
  return { hasDefault: true, default: defaultValue(sql, isBool), defaultSql: sql };
}

/** SQL for a default value given only in its native type. */
function literalSql(value: DefaultValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'NULL';
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * True when `sql` can follow DEFAULT as it is (a literal or a CURRENT_*
 * keyword). SQLite keeps `DEFAULT (1 + 2)` as `1 + 2`, without the
 * parentheses, so every other text is an expression that needs them back.
 */
function standsAlone(sql: string): boolean {
  const text = sql.trim();
  if (STRING.test(text) || numericLiteral(text) !== undefined) return true;
  if (/^[xX]'[0-9a-fA-F]*'$/.test(text)) return true;
  return /^(NULL|TRUE|FALSE|CURRENT_TIME|CURRENT_DATE|CURRENT_TIMESTAMP)$/i.test(text);
}

/**
 * The SQL after `DEFAULT` for a column of a schema record: the raw text when
 * there is one (parenthesised when it is an expression),
 * otherwise the literal written from `default`.
 */
export function defaultClauseSql(column: { default: DefaultValue; defaultSql: string | null }): string {
  const sql = column.defaultSql;
  if (sql === null) return literalSql(column.default);
  return standsAlone(sql) ? sql : `(${sql})`;
}
