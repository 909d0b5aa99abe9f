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
 * search: no join, subquery, function call, recursion or scan. Anything else,
 * however cheap it looks, goes to the engine processes.
 */
import type { Connection } from '../connection-pool';
import type { ExecStatement } from '../protocol';
import { isPunct, isWord, nameOf, tokenize, type Token } from '../dialect/tokenize';

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

/** The table and key column of a statement of the shape above, from its text alone. */
export function pointLookup(sql: string): PointLookup | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch {
    return undefined;
  }
  if (!isWord(tokens[0], 'SELECT')) return undefined;
  let i = skipColumns(tokens, isWord(tokens[1], 'ALL') ? 2 : 1);
  if (i < 0 || !isWord(tokens[i], 'FROM')) return undefined;
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

/**
 * Shapes of recent texts: a class sends the same few SELECTs over and over,
 * and the shape depends on the text alone. Bounded like the splitter's cache.
 */
const SHAPE_CACHE_SIZE = 512;
const SHAPE_CACHE_MAX_LENGTH = 2048;
const shapes = new Map<string, PointLookup | null>();

function cachedPointLookup(sql: string): PointLookup | undefined {
  const known = shapes.get(sql);
  if (known !== undefined) return known ?? undefined;
  const lookup = pointLookup(sql);
  if (sql.length <= SHAPE_CACHE_MAX_LENGTH) {
    if (shapes.size >= SHAPE_CACHE_SIZE) shapes.delete(shapes.keys().next().value as string);
    shapes.set(sql, lookup === undefined ? null : Object.freeze(lookup));
  }
  return lookup;
}

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
