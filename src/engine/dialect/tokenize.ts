/**
 * A tokenizer for SQLite's SQL, following the rules of SQLite's own
 * tokenizer (https://sqlite.org/src/file/src/tokenize.c) closely enough that
 * the splitter, the classifier and the CREATE TABLE rewrite see the same
 * token boundaries SQLite will.
 *
 * Comments and whitespace are skipped. One deliberate difference: SQLite
 * accepts a `/*` comment left open at the very end of the input; we reject it
 * as a syntax error, because text hidden in an unterminated comment is never
 * what a client meant to send.
 */

import { EngineError } from '../../errors';

export type TokenKind = 'word' | 'string' | 'identifier' | 'number' | 'blob' | 'parameter' | 'punct' | 'semicolon';

export interface Token {
  readonly kind: TokenKind;
  /** The source text of the token, quotes included. */
  readonly text: string;
  /** Offset of the first character in the source. */
  readonly start: number;
  /** Offset just past the last character in the source. */
  readonly end: number;
  /** Words: the text in upper case. Strings and quoted identifiers: the unquoted, unescaped content. */
  readonly value?: string;
}

/** SQLite's whitespace: space, tab, newline, form feed, carriage return. */
const WHITESPACE = new Set([' ', '\t', '\n', '\f', '\r']);

/** Operators, longest first so that `->>` wins over `->` and `-`. */
const PUNCTUATION = [
  '->>',
  '->',
  '==',
  '<=',
  '<>',
  '<<',
  '>=',
  '>>',
  '!=',
  '||',
  '(',
  ')',
  ',',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '~',
  '.',
  '=',
  '<',
  '>',
  '|',
];

function syntaxError(detail: string): EngineError {
  return new EngineError('SYNTAX_ERROR', { detail });
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function isHexDigit(c: string | undefined): boolean {
  return c !== undefined && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

/**
 * SQLite's IdChar(): letters, digits, `_`, `$` and every character above 0x7f.
 * Compared by code, not by a regular expression: it runs for every character of every statement.
 */
function isIdChar(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x24 ||
    code > 0x7f
  );
}

function isIdStart(c: string | undefined): boolean {
  return isIdChar(c) && !isDigit(c) && c !== '$';
}

/** Splits `sql` into tokens; throws SYNTAX_ERROR on an unterminated literal or an unrecognized token. */
export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < sql.length) {
    const skipped = skipSpaceAndComments(sql, pos);
    if (skipped !== pos) {
      pos = skipped;
      continue;
    }
    const token = readToken(sql, pos);
    tokens.push(token);
    pos = token.end;
  }
  return tokens;
}

/** The offset of the first character at or after `pos` that is not whitespace or comment. */
function skipSpaceAndComments(sql: string, pos: number): number {
  const c = sql[pos];
  if (c !== undefined && WHITESPACE.has(c)) return pos + 1;
  if (sql.startsWith('--', pos)) {
    const newline = sql.indexOf('\n', pos);
    return newline === -1 ? sql.length : newline + 1;
  }
  if (sql.startsWith('/*', pos)) {
    const close = sql.indexOf('*/', pos + 2);
    if (close === -1) throw syntaxError('unterminated comment');
    return close + 2;
  }
  return pos;
}

function readToken(sql: string, pos: number): Token {
  const c = sql[pos] ?? '';
  const next = sql[pos + 1];
  if (c === ';') return { kind: 'semicolon', text: ';', start: pos, end: pos + 1 };
  if (c === "'") return readQuoted(sql, pos, "'", 'string', 'string literal');
  if (c === '"' || c === '`') return readQuoted(sql, pos, c, 'identifier', 'quoted identifier');
  if (c === '[') return readBracketed(sql, pos);
  if ((c === 'x' || c === 'X') && next === "'") return readBlob(sql, pos);
  if (isDigit(c) || (c === '.' && isDigit(next))) return readNumber(sql, pos);
  if (c === '?' || c === ':' || c === '@' || c === '$') return readParameter(sql, pos);
  if (isIdStart(c)) return readWord(sql, pos);
  return readPunct(sql, pos);
}

/** A literal closed by `quote`, where a doubled quote stands for one. */
function readQuoted(sql: string, pos: number, quote: string, kind: TokenKind, what: string): Token {
  let value = '';
  let i = pos + 1;
  for (;;) {
    const close = sql.indexOf(quote, i);
    if (close === -1) throw syntaxError(`unterminated ${what}`);
    value += sql.slice(i, close);
    if (sql[close + 1] !== quote) return { kind, text: sql.slice(pos, close + 1), start: pos, end: close + 1, value };
    value += quote;
    i = close + 2;
  }
}

/** `[name]`, MS Access style: no escape, the first `]` closes it. */
function readBracketed(sql: string, pos: number): Token {
  const close = sql.indexOf(']', pos + 1);
  if (close === -1) throw syntaxError('unterminated quoted identifier');
  const value = sql.slice(pos + 1, close);
  return { kind: 'identifier', text: sql.slice(pos, close + 1), start: pos, end: close + 1, value };
}

/** `x'0A1B'`: an even number of hex digits, as SQLite requires. */
function readBlob(sql: string, pos: number): Token {
  const close = sql.indexOf("'", pos + 2);
  if (close === -1) throw syntaxError('unterminated blob literal');
  const text = sql.slice(pos, close + 1);
  const hex = sql.slice(pos + 2, close);
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw syntaxError(`unrecognized token: "${text}"`);
  return { kind: 'blob', text, start: pos, end: close + 1 };
}

/**
 * Decimal, real (`1.5e3`, `.5`) or hex (`0x1F`) numbers. SQLite 3.46+ also
 * takes `_` between digits (`1_000`). A number running into a letter
 * (`12abc`) is an unrecognized token in SQLite too.
 */
function readNumber(sql: string, pos: number): Token {
  let i: number;
  if (sql[pos] === '0' && (sql[pos + 1] === 'x' || sql[pos + 1] === 'X') && isHexDigit(sql[pos + 2])) {
    i = scanDigits(sql, pos + 2, isHexDigit);
  } else {
    i = scanDigits(sql, pos, isDigit);
    if (sql[i] === '.') i = scanDigits(sql, i + 1, isDigit);
    i = scanExponent(sql, i);
  }
  if (isIdChar(sql[i])) {
    let bad = i;
    while (isIdChar(sql[bad])) bad++;
    throw syntaxError(`unrecognized token: "${sql.slice(pos, bad)}"`);
  }
  return { kind: 'number', text: sql.slice(pos, i), start: pos, end: i };
}

function scanDigits(sql: string, pos: number, digit: (c: string | undefined) => boolean): number {
  let i = pos;
  while (digit(sql[i]) || (sql[i] === '_' && i > pos && digit(sql[i - 1]) && digit(sql[i + 1]))) i++;
  return i;
}

function scanExponent(sql: string, pos: number): number {
  const c = sql[pos];
  if (c !== 'e' && c !== 'E') return pos;
  const sign = sql[pos + 1] === '+' || sql[pos + 1] === '-' ? 1 : 0;
  if (!isDigit(sql[pos + 1 + sign])) return pos;
  return scanDigits(sql, pos + 1 + sign, isDigit);
}

/** `?`, `?12`, `:name`, `@name`, `$name`. */
function readParameter(sql: string, pos: number): Token {
  let i = pos + 1;
  if (sql[pos] === '?') {
    while (isDigit(sql[i])) i++;
  } else {
    while (isIdChar(sql[i])) i++;
    if (i === pos + 1) throw syntaxError(`unrecognized token: "${sql[pos] ?? ''}"`);
  }
  return { kind: 'parameter', text: sql.slice(pos, i), start: pos, end: i };
}

function readWord(sql: string, pos: number): Token {
  let i = pos + 1;
  while (isIdChar(sql[i])) i++;
  const text = sql.slice(pos, i);
  return { kind: 'word', text, start: pos, end: i, value: text.toUpperCase() };
}

function readPunct(sql: string, pos: number): Token {
  const op = PUNCTUATION.find((p) => sql.startsWith(p, pos));
  if (op === undefined) throw syntaxError(`unrecognized token: "${sql[pos] ?? ''}"`);
  return { kind: 'punct', text: op, start: pos, end: pos + op.length };
}

// Helpers shared by the splitter, the classifier and the rewrite.

/** True when `token` is a bare word equal (case-insensitively) to one of `words` (given in upper case). */
export function isWord(token: Token | undefined, ...words: string[]): boolean {
  return token !== undefined && token.kind === 'word' && words.includes(token.value ?? '');
}

export function isPunct(token: Token | undefined, text: string): boolean {
  return token !== undefined && token.kind === 'punct' && token.text === text;
}

/** The index of the `)` that closes the `(` at `open`; throws SYNTAX_ERROR when there is none. */
export function closingParen(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) depth++;
    else if (isPunct(tokens[i], ')') && --depth === 0) return i;
  }
  throw syntaxError('incomplete input');
}

/** SQLite's own wording for the token where parsing stopped. */
export function nearError(token: Token | undefined): EngineError {
  return syntaxError(token === undefined ? 'incomplete input' : `near "${token.text}"`);
}

/** Whether a token can name a table, column or schema: a bare word, a quoted identifier, or a string (SQLite allows one). */
export function isNameToken(token: Token | undefined): boolean {
  return token !== undefined && (token.kind === 'word' || token.kind === 'identifier' || token.kind === 'string');
}

/** The name a name token stands for: the unquoted content, or a bare word as written. */
export function nameOf(token: Token): string {
  return token.kind === 'word' ? token.text : (token.value ?? token.text);
}

/** The index just past `[IF NOT EXISTS] [schema .] name` starting at `i`; throws SYNTAX_ERROR when no name is there. */
export function skipTableName(tokens: readonly Token[], i: number): number {
  let at = i;
  if (isWord(tokens[at], 'IF') && isWord(tokens[at + 1], 'NOT') && isWord(tokens[at + 2], 'EXISTS')) at += 3;
  if (!isNameToken(tokens[at])) throw nearError(tokens[at]);
  if (isPunct(tokens[at + 1], '.')) {
    if (!isNameToken(tokens[at + 2])) throw nearError(tokens[at + 2]);
    return at + 3;
  }
  return at + 1;
}
