/**
 * Reads whose cost is bounded by construction, so that they need no time
 * limit and may run in the server's own process (the round trip to
 * an engine process costs a point SELECT many times what SQLite does).
 *
 * The -query-timeout exists because a statement can run for ever and only
 * killing its process stops it. A statement of exactly this shape
 *
 *   SELECT * | col [, col …] FROM table WHERE pk = <parameter or literal>
 *
 * on a STRICT table (so an ordinary table, not a virtual one nor a view) whose primary
 * key is that one column, and which has no generated columns (whose
 * expressions could be costly), reads at most one row through one B-tree
 * search: no join, subquery, function call, recursion or scan.
 *
 * A range of such a table by its key with a LIMIT is bounded by the LIMIT:
 *
 *   SELECT * | col [, col …] FROM table [WHERE key <op> value [AND key <op> value]]
 *     [ORDER BY key [ASC | DESC]] LIMIT <number>
 *
 * (op one of < <= > >=; value a `?` or a literal), when the key is the table's
 * INTEGER PRIMARY KEY and SQLite plans it as one walk of the table's rowid
 * B-tree with one constraint per term (or a plain scan, without WHERE) and
 * no sort: every row the walk meets is in the range, so it visits at most
 * LIMIT + 1 rows. The LIMIT must be within the planner's row budget, and
 * times the table's largest row within its byte budget (planned-read.ts).
 * Anything else, however cheap it looks, goes to the planner or to the engine
 * processes.
 */
import type { Connection } from '../connection-pool';
import type { ExecStatement } from '../protocol';
import { isPunct, isWord, nameOf, tokenize, type Token } from '../dialect/tokenize';
import { BYTE_BUDGET, MAX_FILE_BYTES, ROW_BUDGET, planStatsOf } from './planned-read';
import { memoByText } from './text-memo';

export interface PointLookup {
  table: string;
  column: string;
}

function isPlainName(token: Token | undefined): token is Token {
  return token !== undefined && (token.kind === 'word' || token.kind === 'identifier');
}

function isValue(token: Token | undefined): boolean {
  return token !== undefined && (token.kind === 'parameter' || token.kind === 'number' || token.kind === 'string');
}

/** The select list at tokens[at…]: `*` or plain column names separated by commas; the index after it, or -1. */
function skipColumns(tokens: readonly Token[], at: number): number {
  if (isPunct(tokens[at], '*')) return at + 1;
  let i = at;
  for (;;) {
    if (!isPlainName(tokens[i]) || isWord(tokens[i], 'FROM')) return -1;
    i++;
    if (!isPunct(tokens[i], ',')) return i;
    i++;
  }
}

/** The tokens of `SELECT [ALL] * | col [, col …] FROM …` and where its FROM is; undefined for any other text. */
function selectFrom(sql: string): { tokens: Token[]; from: number } | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch {
    return undefined;
  }
  if (!isWord(tokens[0], 'SELECT')) return undefined;
  const from = skipColumns(tokens, isWord(tokens[1], 'ALL') ? 2 : 1);
  return from >= 0 && isWord(tokens[from], 'FROM') ? { tokens, from } : undefined;
}

/** The table and key column of a statement of the shape above, from its text alone. */
export function pointLookup(sql: string): PointLookup | undefined {
  const select = selectFrom(sql);
  if (select === undefined) return undefined;
  const { tokens } = select;
  let i = select.from;
  const table = tokens[i + 1];
  const where = tokens[i + 2];
  const column = tokens[i + 3];
  i += 4;
  // A negative number literal is two tokens.
  if (isPunct(tokens[i], '=') && isPunct(tokens[i + 1], '-') && tokens[i + 2]?.kind === 'number') i += 3;
  else if (isPunct(tokens[i], '=') && isValue(tokens[i + 1])) i += 2;
  else return undefined;
  if (!isPlainName(table) || !isWord(where, 'WHERE') || !isPlainName(column) || i !== tokens.length) return undefined;
  return { table: nameOf(table), column: nameOf(column) };
}

/** Shapes of recent texts, each worked out once (text-memo.ts). */
const SHAPE_CACHE_SIZE = 512;
const SHAPE_CACHE_MAX_LENGTH = 2048;
const cachedPointLookup = memoByText(pointLookup, SHAPE_CACHE_SIZE, SHAPE_CACHE_MAX_LENGTH);
const cachedKeyRange = memoByText(keyRange, SHAPE_CACHE_SIZE, SHAPE_CACHE_MAX_LENGTH);

/** The point lookup of a statement of the shape above, from its text alone (no database needed yet). */
export function boundedShape(statement: ExecStatement): PointLookup | undefined {
  return statement.kind === 'select' ? cachedPointLookup(statement.sql) : undefined;
}

/** Whether a lookup of the shape above is a bounded point read on this connection's database. */
export function isBoundedOn(connection: Connection, lookup: PointLookup): boolean {
  const schema = connection.tableSchema(lookup.table);
  // A view is never a point read: its SELECT may join, scan or call anything.
  if (
    schema === undefined ||
    schema.kind !== 'table' ||
    !schema.strict ||
    schema.primaryKey.toLowerCase() !== lookup.column.toLowerCase()
  )
    return false;
  return !connection.schema.hasGeneratedColumns(schema.name);
}

export interface KeyRange {
  readonly table: string;
  /** The key the WHERE terms and ORDER BY name; undefined when they name none (a plain scan). */
  readonly column: string | undefined;
  /** The WHERE terms, each a bound on the key. */
  readonly terms: number;
  /** How many `?` the text holds (bound to nothing to read its plan). */
  readonly parameters: number;
  readonly limit: number;
}

const RANGE_OPERATORS: readonly string[] = ['<', '<=', '>', '>='];

/** The index after a value at tokens[at] (a `?`, a literal or a negative number), or -1. */
function skipValue(tokens: readonly Token[], at: number): number {
  if (isPunct(tokens[at], '-') && tokens[at + 1]?.kind === 'number') return at + 2;
  const token = tokens[at];
  if (token?.kind === 'parameter') return token.text === '?' ? at + 1 : -1;
  return isValue(token) ? at + 1 : -1;
}

/** The key range of a SELECT of the range shape above, from its text alone (no database needed yet). */
export function keyRangeShape(statement: ExecStatement): KeyRange | undefined {
  return statement.kind === 'select' ? cachedKeyRange(statement.sql) : undefined;
}

/** The table, key and limit of a statement of the range shape above, from its text alone. */
export function keyRange(sql: string): KeyRange | undefined {
  const select = selectFrom(sql);
  if (select === undefined) return undefined;
  const { tokens } = select;
  const table = tokens[select.from + 1];
  if (!isPlainName(table)) return undefined;
  let i = select.from + 2;
  const keys: string[] = [];
  let terms = 0;
  if (isWord(tokens[i], 'WHERE')) {
    for (;;) {
      const column = tokens[i + 1];
      const operator = tokens[i + 2];
      if (!isPlainName(column) || operator?.kind !== 'punct' || !RANGE_OPERATORS.includes(operator.text))
        return undefined;
      keys.push(nameOf(column).toLowerCase());
      terms++;
      i = skipValue(tokens, i + 3);
      if (i < 0) return undefined;
      if (!isWord(tokens[i], 'AND') || terms === 2) break;
    }
  }
  if (isWord(tokens[i], 'ORDER') && isWord(tokens[i + 1], 'BY') && isPlainName(tokens[i + 2])) {
    keys.push(nameOf(tokens[i + 2] as Token).toLowerCase());
    i += 3;
    if (isWord(tokens[i], 'ASC', 'DESC')) i++;
  }
  const limit = tokens[i + 1];
  if (!isWord(tokens[i], 'LIMIT') || limit?.kind !== 'number' || !/^\d+$/.test(limit.text) || i + 2 !== tokens.length)
    return undefined;
  const column = keys[0];
  if (keys.some((name) => name !== column)) return undefined;
  return {
    table: nameOf(table),
    column,
    terms,
    parameters: tokens.filter((token) => token.kind === 'parameter').length,
    limit: Number(limit.text),
  };
}

/**
 * Whether a statement of the range shape is bounded by its LIMIT on this connection's database
 * (see the header). Must run inside the read transaction that will run it.
 */
export function isKeyRangeBoundedOn(connection: Connection, range: KeyRange, sql: string): boolean {
  if (range.limit > ROW_BUDGET) return false;
  const schema = connection.tableSchema(range.table);
  if (schema === undefined || schema.kind !== 'table' || !schema.strict) return false;
  if (range.column !== undefined && schema.primaryKey.toLowerCase() !== range.column) return false;
  if (connection.schema.hasGeneratedColumns(schema.name)) return false;
  const stats = planStatsOf(connection);
  const version = stats.sync();
  // The facts are gathered by walking the table's pages; with sqlite_stat4 a plan may follow the values bound.
  if (stats.fileBytes() > MAX_FILE_BYTES || stats.table('sqlite_stat4') !== undefined) return false;
  if (range.limit * stats.largestRow(schema.name) > BYTE_BUDGET) return false;
  return walksTheRange(connection, range, sql, schema.name, version.schema);
}

/** Plans read, per connection and text, kept while the schema is the same (a plan follows only the schema without sqlite_stat4). */
const walks = new WeakMap<Connection, Map<string, { schema: string; walks: boolean }>>();

function walksTheRange(connection: Connection, range: KeyRange, sql: string, table: string, schema: string): boolean {
  let known = walks.get(connection);
  if (known === undefined) {
    known = new Map();
    walks.set(connection, known);
  }
  const cached = known.get(sql);
  if (cached !== undefined && cached.schema === schema) return cached.walks;
  const plan = connection.db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...Array.from({ length: range.parameters }, () => null)) as Array<{ detail: string }>;
  const verdict = plan.length === 1 && sameWalk(plan[0]?.detail ?? '', table, range.terms);
  if (known.size >= SHAPE_CACHE_SIZE) known.delete(known.keys().next().value as string);
  known.set(sql, { schema, walks: verdict });
  return verdict;
}

/** A plan line that walks the table's rowid B-tree, bounded by one constraint per WHERE term (or none, a scan). */
function sameWalk(detail: string, table: string, terms: number): boolean {
  if (terms === 0) return detail.toLowerCase() === `scan ${table}`.toLowerCase();
  const prefix = `SEARCH ${table} USING INTEGER PRIMARY KEY (`;
  if (detail.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase() || !detail.endsWith(')')) return false;
  const constraints = detail.slice(prefix.length, -1).split(' AND ');
  return constraints.length === terms && constraints.every((term) => /^rowid(<|<=|>|>=)\?$/.test(term));
}
