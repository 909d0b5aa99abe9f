/**
 * A small reader for the CREATE TABLE and CREATE INDEX texts that SQLite keeps
 * in sqlite_schema. The PRAGMAs say almost everything about a table; what they
 * do not say is which INTEGER columns are BOOL (the `CHECK (("col") IN (0, 1))`
 * written right after the type, see types.ts) and the text of an expression in
 * an index. Both are read from the stored SQL here, with the dialect's tokenizer.
 */
import { isWord, nameOf, tokenize, type Token } from '../dialect/tokenize';
import { DECLARED_TYPE_COMMENT } from '../types';

/**
 * The top-level comma-separated items inside the first parenthesised group
 * that follows token index `from`: the column definitions of a CREATE TABLE,
 * or the indexed columns of a CREATE INDEX.
 */
function groupItems(tokens: Token[], from: number): Token[][] {
  const open = tokens.findIndex((t, i) => i >= from && t.text === '(');
  if (open < 0) return [];
  const items: Token[][] = [[]];
  let depth = 0;
  for (const token of tokens.slice(open + 1)) {
    if (token.text === '(') depth += 1;
    if (token.text === ')' && depth-- === 0) break;
    if (token.text === ',' && depth === 0) items.push([]);
    else items[items.length - 1]?.push(token);
  }
  return items.filter((item) => item.length > 0);
}

const TABLE_CONSTRAINTS = new Set(['CONSTRAINT', 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN']);

const BOOL_CHECK_TAIL = 'IN ( 0 , 1 ) )';

/**
 * True when `tokens` read `CHECK ( <name> IN ( 0 , 1 ) )` from `at`, with the
 * name alone or in parentheses (types.ts' boolCheckSql writes `((name) IN …`).
 */
function isBoolCheck(tokens: Token[], at: number, name: string): boolean {
  if (!isWord(tokens[at], 'CHECK') || tokens[at + 1]?.text !== '(') return false;
  const wrapped = tokens[at + 2]?.text === '(';
  const ident = tokens[wrapped ? at + 3 : at + 2];
  if (ident === undefined || (ident.kind !== 'word' && ident.kind !== 'identifier')) return false;
  if (nameOf(ident).toLowerCase() !== name) return false;
  let next = wrapped ? at + 4 : at + 3;
  if (wrapped && tokens[next++]?.text !== ')') return false;
  const tail = tokens.slice(next, next + 7).map((t) => t.text.toUpperCase());
  return tail.join(' ') === BOOL_CHECK_TAIL;
}

/**
 * The lower-cased names of the BOOL columns in a CREATE TABLE text: INTEGER
 * columns whose type is directly followed by `CHECK ((<col>) IN (0, 1))` (or
 * `CHECK (<col> IN (0, 1))`, without the inner parentheses). After
 * `ALTER TABLE … RENAME COLUMN` SQLite rewrites the name inside the check with
 * its own quoting, so any quoting and case of the name is accepted.
 */
export function boolColumnNames(createSql: string): Set<string> {
  const names = new Set<string>();
  for (const item of groupItems(tokenize(createSql), 0)) {
    const [first, type] = item;
    if (first === undefined || (first.kind === 'word' && TABLE_CONSTRAINTS.has(first.text.toUpperCase()))) continue;
    const name = nameOf(first).toLowerCase();
    if (isWord(type, 'INTEGER') && isBoolCheck(item, 2, name)) names.add(name);
  }
  return names;
}

/**
 * The declared types kept as comments in a CREATE TABLE text (types.ts'
 * declaredTypeComment), by lower-cased column name: `NVARCHAR(160)` for a
 * column stored as TEXT. Columns declared by their canonical name have none.
 */
export function declaredTypes(createSql: string): Map<string, string> {
  const types = new Map<string, string>();
  if (!createSql.includes('/* declared ')) return types;
  for (const item of groupItems(tokenize(createSql), 0)) {
    const first = item[0];
    const last = item[item.length - 1];
    if (
      first === undefined ||
      last === undefined ||
      (first.kind === 'word' && TABLE_CONSTRAINTS.has(first.text.toUpperCase()))
    )
      continue;
    const match = DECLARED_TYPE_COMMENT.exec(createSql.slice(first.end, last.end));
    if (match?.[1] !== undefined) types.set(nameOf(first).toLowerCase(), match[1]);
  }
  return types;
}

/**
 * The indexed terms of a CREATE INDEX text as written (`lower(name)`,
 * `"b" DESC`), in order, or [] when the text cannot be read.
 */
export function indexTermTexts(indexSql: string): string[] {
  const tokens = tokenize(indexSql);
  const on = tokens.findIndex((t) => isWord(t, 'ON'));
  if (on < 0) return [];
  return groupItems(tokens, on).map((item) => {
    const first = item[0];
    const last = item[item.length - 1];
    return first && last ? indexSql.slice(first.start, last.end) : '';
  });
}
