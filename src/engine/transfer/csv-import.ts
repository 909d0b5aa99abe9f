/**
 * A CSV file as the statements that load it into one table: a CREATE TABLE
 * when the table does not exist yet (types given, or inferred from the
 * values), then INSERTs of a few hundred rows each.
 *
 * Inference, per column over every row: INT when every value is an integer
 * that fits 64 bits, else FLOAT when every value is a number, else TEXT; a
 * column with no value at all is TEXT. NULL (an empty unquoted field) fits
 * every type.
 */
import { EngineError } from '../../errors';
import { parseCsv, type CsvField } from './csv-records';
import type { TableSchema } from '../schema/schema';
import { textLiteral } from './sql-literal';
import { canonicalType, quoteIdentifier, type ColumnType } from '../types';

const ROWS_PER_INSERT = 500;
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export interface CsvImport {
  statements: string[];
  /** Data rows (the header not counted). */
  rows: number;
  created: boolean;
}

/** `?types=INT,TEXT,…`: one type (or alias) per column. */
export function parseCsvTypes(text: string): ColumnType[] {
  return text.split(',').map((name) => {
    const type = canonicalType(name);
    if (type === undefined)
      throw new EngineError('INVALID_QUERY_PARAMETER', {
        name: 'types',
        detail: `${JSON.stringify(name.trim())} is not a column type`,
      });
    return type;
  });
}

function fitsInt(value: string): boolean {
  if (!INTEGER.test(value)) return false;
  const n = BigInt(value);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

export function inferType(values: Iterable<CsvField>): ColumnType {
  let seen = false;
  let int = true;
  let number = true;
  for (const value of values) {
    if (value === null) continue;
    seen = true;
    if (int && !fitsInt(value)) int = false;
    if (!int && !NUMBER.test(value)) number = false;
    if (!number) return 'TEXT';
  }
  if (!seen) return 'TEXT';
  return int ? 'INT' : 'FLOAT';
}

/** A CSV value as the literal of its column's type; what does not fit goes as text, for SQLite's STRICT check to refuse by column. */
function literal(value: CsvField, type: ColumnType): string {
  if (value === null) return 'NULL';
  if (type === 'INT' && fitsInt(value)) return BigInt(value).toString();
  if (type === 'FLOAT' && NUMBER.test(value)) return /[.eE]/.test(value) ? value : `${value}.0`;
  if (type === 'BOOL' && /^(true|false|1|0)$/i.test(value)) return /^(true|1)$/i.test(value) ? '1' : '0';
  if (type === 'BLOB') return `X'${Buffer.from(value, 'base64').toString('hex')}'`;
  return textLiteral(value);
}

function columnsOf(header: readonly CsvField[]): string[] {
  const names = header.map((name, index) => {
    if (name === null || name.trim() === '')
      throw new EngineError('IMPORT_CSV_INVALID', { line: 1, detail: `header field ${index + 1} is empty` });
    return name;
  });
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name.toLowerCase()))
      throw new EngineError('IMPORT_CSV_INVALID', { line: 1, detail: `column ${name} appears twice` });
    seen.add(name.toLowerCase());
  }
  return names;
}

/** The existing table's type for each CSV column; the header must name exactly the table's columns. */
function typesFromTable(table: TableSchema, columns: readonly string[]): ColumnType[] {
  const byName = new Map(table.columns.map((column) => [column.name.toLowerCase(), column]));
  const missing = table.columns.filter(
    (column) => !columns.some((name) => name.toLowerCase() === column.name.toLowerCase()),
  );
  const extra = columns.filter((name) => !byName.has(name.toLowerCase()));
  if (missing.length > 0 || extra.length > 0) {
    const detail = [
      extra.length > 0 ? `not in the table: ${extra.join(', ')}` : '',
      missing.length > 0 ? `missing from the CSV: ${missing.map((c) => c.name).join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    throw new EngineError('IMPORT_CSV_COLUMNS', { table: table.name, detail });
  }
  // The declared type first: a table that is not STRICT reports its affinity as `type` (BLOB for a column
  // declared without one, whose CSV text must stay text), and its declared type as written.
  return columns.map((name) => {
    const column = byName.get(name.toLowerCase());
    return canonicalType(column?.declaredType ?? column?.type ?? '') ?? 'TEXT';
  });
}

export function csvImport(
  text: string,
  table: string,
  existing: TableSchema | undefined,
  given: ColumnType[] | undefined,
): CsvImport {
  const [header, ...rows] = parseCsv(text);
  if (header === undefined)
    throw new EngineError('IMPORT_CSV_INVALID', { line: 1, detail: 'the file is empty: a header row is needed' });
  const columns = columnsOf(header);
  if (given !== undefined && given.length !== columns.length) {
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'types',
      detail: `${given.length} types for ${columns.length} columns`,
    });
  }
  const types =
    existing !== undefined
      ? typesFromTable(existing, columns)
      : (given ?? columns.map((_, i) => inferType(rows.map((row) => row[i] ?? null))));
  const statements: string[] = [];
  const name = quoteIdentifier(existing?.name ?? table);
  if (existing === undefined)
    statements.push(`CREATE TABLE ${name} (${columns.map((c, i) => `${quoteIdentifier(c)} ${types[i]}`).join(', ')})`);
  const head = `INSERT INTO ${name} (${columns.map(quoteIdentifier).join(', ')}) VALUES\n`;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const tuples = rows
      .slice(start, start + ROWS_PER_INSERT)
      .map((row) => `(${row.map((value, i) => literal(value, types[i] ?? 'TEXT')).join(', ')})`);
    statements.push(head + tuples.join(',\n'));
  }
  return { statements, rows: rows.length, created: existing === undefined };
}
