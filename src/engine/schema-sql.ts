/**
 * A small reader for the CREATE TABLE and CREATE INDEX texts that SQLite keeps
 * in sqlite_schema. The PRAGMAs say almost everything about a table; what they
 * do not say is which INTEGER columns are BOOL (the `CHECK (("col") IN (0, 1))`
 * written right after the type, see types.ts) and the text of an expression in
 * an index. Both are read from the stored SQL here.
 *
 * The tokenizer follows https://sqlite.org/lang_keywords.html and
 * https://sqlite.org/lang_expr.html for quoting: "ident", `ident`, [ident] and
 * 'string', with doubled quotes inside; comments are skipped.
 */

export type TokenKind = 'word' | 'ident' | 'string' | 'number' | 'punct' | 'other';

export interface Token {
  kind: TokenKind;
  /** The token as written. */
  text: string;
  start: number;
  end: number;
}

const CLOSERS: Readonly<Record<string, string>> = { '"': '"', '`': '`', '[': ']', "'": "'" };

/** End (exclusive) of a quoted token starting at `start`; doubled closers are escapes. */
function quotedEnd(sql: string, start: number): number {
  const close = CLOSERS[sql[start] ?? ''] ?? '';
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === close) {
      if (close !== ']' && sql[i + 1] === close) i += 2;
      else return i + 1;
    } else i += 1;
  }
  return sql.length;
}

/** End (exclusive) of whitespace or a comment at `i`, or `i` when there is none. */
function skipEnd(sql: string, i: number): number {
  if (/\s/.test(sql[i] ?? '')) return i + 1;
  if (sql.startsWith('--', i)) {
    const nl = sql.indexOf('\n', i);
    return nl < 0 ? sql.length : nl + 1;
  }
  if (sql.startsWith('/*', i)) {
    const close = sql.indexOf('*/', i + 2);
    return close < 0 ? sql.length : close + 2;
  }
  return i;
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const NUMBER = /(0[xX][0-9a-fA-F]+|(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)/y;

function matchAt(re: RegExp, sql: string, i: number): number {
  re.lastIndex = i;
  const m = re.exec(sql);
  return m ? i + m[0].length : i;
}

function tokenAt(sql: string, i: number): Token {
  const ch = sql[i] ?? '';
  let end: number;
  let kind: TokenKind;
  if (/[xX]/.test(ch) && sql[i + 1] === "'") [kind, end] = ['other', quotedEnd(sql, i + 1)];
  else if (ch in CLOSERS) [kind, end] = [ch === "'" ? 'string' : 'ident', quotedEnd(sql, i)];
  else if ((end = matchAt(WORD, sql, i)) > i) kind = 'word';
  else if ((end = matchAt(NUMBER, sql, i)) > i) kind = 'number';
  else [kind, end] = ['punct', i + 1];
  return { kind, text: sql.slice(i, end), start: i, end };
}

/** The tokens of `sql`, without whitespace and comments. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const skipped = skipEnd(sql, i);
    if (skipped > i) {
      i = skipped;
      continue;
    }
    const token = tokenAt(sql, i);
    tokens.push(token);
    i = token.end;
  }
  return tokens;
}

/** The name an identifier token stands for: quotes removed, doubled quotes undone. */
export function unquote(token: Token): string {
  const open = token.text[0] ?? '';
  const close = CLOSERS[open];
  if (token.kind === 'word' || close === undefined) return token.text;
  const inner = token.text.slice(1, -1);
  return close === ']' ? inner : inner.split(close + close).join(close);
}

function isWord(token: Token | undefined, word: string): boolean {
  return token !== undefined && token.kind === 'word' && token.text.toUpperCase() === word;
}

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
  if (ident === undefined || (ident.kind !== 'word' && ident.kind !== 'ident')) return false;
  if (unquote(ident).toLowerCase() !== name) return false;
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
    const name = unquote(first).toLowerCase();
    if (isWord(type, 'INTEGER') && isBoolCheck(item, 2, name)) names.add(name);
  }
  return names;
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
