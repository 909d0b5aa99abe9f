/**
 * Rewrites CREATE TABLE and ALTER TABLE … ADD COLUMN into what SQLite stores:
 * each column's type name becomes the STRICT storage type of
 * its canonical type, BOOL gains its CHECK, and tables become STRICT so that
 * SQLite itself enforces the types (https://sqlite.org/stricttables.html).
 *
 * The rewrite splices by token offsets, so every other byte of the statement
 * (defaults, constraints, comments, spacing) is kept as the client wrote it.
 */

import { EngineError } from '../../errors';
import {
  affinitySpelling,
  affinityType,
  boolCheckSql,
  canonicalType,
  declaredSpelling,
  declaredTypeComment,
  quoteIdentifier,
  storageType,
} from '../types';
import { classifyStatement } from './classify';
import { applyNameEdits, checkNames } from './internal-names';
import { guardIntrospection } from './pragma-guards';
import { explainedStart } from './pragmas';
import type { ClassifiedStatement } from './statement';
import {
  closingParen,
  isNameToken,
  isPunct,
  isWord,
  nameOf,
  nearError,
  skipTableName,
  tokenize,
  type Token,
} from './tokenize';

/** Replace source[start, end) by text. */
interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The words that open a table constraint inside CREATE TABLE's parentheses. */
const TABLE_CONSTRAINTS = ['CONSTRAINT', 'PRIMARY', 'UNIQUE', 'CHECK', 'FOREIGN'];

/** The words that open a column constraint, and so end a column's type name. */
const COLUMN_CONSTRAINTS = [
  'CONSTRAINT',
  'PRIMARY',
  'NOT',
  'NULL',
  'UNIQUE',
  'CHECK',
  'DEFAULT',
  'COLLATE',
  'REFERENCES',
  'GENERATED',
  'AS',
];

/**
 * The SQL to run for a statement: CREATE TABLE and ALTER TABLE … ADD COLUMN
 * rewritten for storage, reads of the schema table filtered, the arguments of
 * introspection functions checked (pragma-guards.ts), EXPLAIN of what the
 * explained statement would run, anything else unchanged. Throws UNKNOWN_TYPE
 * for a column with no type or a type that is not one of ours.
 */
export function rewriteForStorage(stmt: ClassifiedStatement): string {
  if (stmt.kind === 'create-table') return rewriteCreateTable(stmt.sql);
  if (stmt.kind === 'alter-table') return rewriteAlterTable(stmt.sql);
  // A PRAGMA's one argument was checked when it was classified (pragmas.ts).
  if (stmt.kind === 'pragma') return stmt.sql;
  if (stmt.kind === 'explain') return rewriteExplained(stmt.sql);
  return guardIntrospection(hideInternalSchemaRows(stmt.sql));
}

/** EXPLAIN [QUERY PLAN] shows what the service would run: the explained statement as it would be rewritten. */
function rewriteExplained(sql: string): string {
  const tokens = statementTokens(sql);
  const first = tokens[explainedStart(tokens)];
  if (first === undefined) throw nearError(first);
  return sql.slice(0, first.start) + rewriteForStorage(classifyStatement(sql.slice(first.start)));
}

/**
 * Reads of SQLite's schema table go through a subquery that leaves out the
 * service's own rows (internal-names.ts). Most statements never name it, so
 * they are not tokenized again.
 */
function hideInternalSchemaRows(sql: string): string {
  if (!/sqlite_/i.test(sql)) return sql;
  return applyNameEdits(sql, checkNames(sql, tokenize(sql)));
}

function statementTokens(sql: string): Token[] {
  const tokens = tokenize(sql);
  while (tokens.length > 0 && tokens[tokens.length - 1]?.kind === 'semicolon') tokens.pop();
  return tokens;
}

/** CREATE TABLE [IF NOT EXISTS] [schema.]name ( defs ) [options] */
function rewriteCreateTable(sql: string): string {
  const tokens = statementTokens(sql);
  const open = skipTableName(tokens, 2);
  if (!isPunct(tokens[open], '(')) throw nearError(tokens[open]);
  const close = closingParen(tokens, open);
  const edits: Edit[] = [];
  const strict = strictEdit(tokens, close);
  // A table the client declared STRICT names SQLite's storage types (a dump of a sqlscribe table is one): no declared spelling to keep.
  const keepDeclared = strict !== undefined;
  for (const [from, to] of definitions(tokens, open + 1, close)) {
    if (!isWord(tokens[from], ...TABLE_CONSTRAINTS)) edits.push(columnTypeEdit(tokens, from, to, sql, keepDeclared));
  }
  if (strict !== undefined) edits.push(strict);
  return applyEdits(sql, edits);
}

/** ALTER TABLE [schema.]name ADD [COLUMN] coldef; the other ALTER forms are left as they are. */
function rewriteAlterTable(sql: string): string {
  const tokens = statementTokens(sql);
  let at = skipTableName(tokens, 2);
  if (!isWord(tokens[at], 'ADD')) return sql;
  at++;
  if (isWord(tokens[at], 'COLUMN')) at++;
  return applyEdits(sql, [columnTypeEdit(tokens, at, tokens.length, sql, true)]);
}

/** The [from, to) token ranges of the comma-separated definitions between `from` and `to`. */
function definitions(tokens: readonly Token[], from: number, to: number): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = from;
  let i = from;
  while (i < to) {
    if (isPunct(tokens[i], '(')) {
      i = closingParen(tokens, i) + 1;
      continue;
    }
    if (isPunct(tokens[i], ',')) {
      ranges.push([start, i]);
      start = i + 1;
    }
    i++;
  }
  ranges.push([start, to]);
  return ranges;
}

/** Where a column definition's type name is: none when `first` is undefined (the column has no type). */
interface TypeSpan {
  readonly column: string;
  /** The column's name token, after which a missing type goes. */
  readonly nameToken: Token;
  readonly first: Token | undefined;
  readonly last: Token | undefined;
  /** The type's words and size as one name (`DOUBLE PRECISION`, `VARCHAR(20)`). */
  readonly name: string;
}

/**
 * The type of the column definition in tokens[from, to). A type name is a
 * run of names (`DOUBLE PRECISION`) with an optional size in parentheses,
 * ending where the first column constraint starts.
 */
function typeSpan(tokens: readonly Token[], from: number, to: number, sql: string): TypeSpan {
  const nameToken = tokens[from];
  if (nameToken === undefined || from >= to || !isNameToken(nameToken)) throw nearError(nameToken);
  const column = nameOf(nameToken);
  let end = from + 1;
  while (end < to && isNameToken(tokens[end]) && !isWord(tokens[end], ...COLUMN_CONSTRAINTS)) end++;
  const words = tokens.slice(from + 1, end);
  const first = words[0];
  if (first === undefined) return { column, nameToken, first, last: undefined, name: '' };
  let size = '';
  if (end < to && isPunct(tokens[end], '(')) {
    const closeSize = closingParen(tokens, end);
    size = sql.slice(tokens[end]?.start ?? 0, tokens[closeSize]?.end ?? 0);
    end = closeSize + 1;
  }
  return { column, nameToken, first, last: tokens[end - 1] ?? first, name: words.map(nameOf).join(' ') + size };
}

/**
 * The edit that replaces the type of the column definition in tokens[from, to)
 * by its storage type. A declared spelling other than the canonical name is
 * kept in a comment (types.ts).
 */
function columnTypeEdit(tokens: readonly Token[], from: number, to: number, sql: string, keepDeclared: boolean): Edit {
  const { column, first, last, name } = typeSpan(tokens, from, to, sql);
  if (first === undefined || last === undefined) throw new EngineError('UNKNOWN_TYPE', { type: '(none)', column });
  const canonical = canonicalType(name);
  if (canonical === undefined)
    throw new EngineError('UNKNOWN_TYPE', { type: sql.slice(first.start, last.end), column });
  const check = canonical === 'BOOL' ? ` ${boolCheckSql(quoteIdentifier(column))}` : '';
  const spelling = declaredSpelling(name) ?? canonical;
  const comment = spelling === canonical || !keepDeclared ? '' : declaredTypeComment(spelling);
  return { start: first.start, end: last.end, text: `${comment}${storageType(canonical)}${check}` };
}

/**
 * An import's CREATE TABLE or ALTER TABLE … ADD COLUMN with every column type
 * that rewriteForStorage would refuse (4002) replaced by the type SQLite's
 * affinity rules give it (types.ts affinityType), its spelling kept in the
 * declared-type comment: `description BLOB SUB_TYPE TEXT` becomes
 * `description /* declared BLOB SUB_TYPE TEXT *\/ TEXT`, and a column with no
 * type gets BLOB. Done before the statement runs, so the journal holds the
 * statement that ran and replay needs no import rule. Any other statement,
 * and one whose types are all known, comes back unchanged.
 */
export function withAffinityTypes(stmt: ClassifiedStatement): string {
  if (stmt.kind !== 'create-table' && stmt.kind !== 'alter-table') return stmt.sql;
  const tokens = statementTokens(stmt.sql);
  const edits: Edit[] = [];
  const add = (from: number, to: number): void => {
    const edit = affinityTypeEdit(tokens, from, to, stmt.sql);
    if (edit !== undefined) edits.push(edit);
  };
  if (stmt.kind === 'create-table') {
    const open = skipTableName(tokens, 2);
    if (!isPunct(tokens[open], '(')) return stmt.sql;
    const close = closingParen(tokens, open);
    // A table the client declared STRICT names SQLite's storage types: SQLite itself says which it takes.
    if (tokens.slice(close + 1).some((token) => isWord(token, 'STRICT'))) return stmt.sql;
    for (const [from, to] of definitions(tokens, open + 1, close))
      if (!isWord(tokens[from], ...TABLE_CONSTRAINTS)) add(from, to);
  } else {
    let at = skipTableName(tokens, 2);
    if (!isWord(tokens[at], 'ADD')) return stmt.sql;
    at++;
    if (isWord(tokens[at], 'COLUMN')) at++;
    add(at, tokens.length);
  }
  return applyEdits(stmt.sql, edits);
}

function affinityTypeEdit(tokens: readonly Token[], from: number, to: number, sql: string): Edit | undefined {
  const { nameToken, first, last, name } = typeSpan(tokens, from, to, sql);
  if (first === undefined || last === undefined)
    return { start: nameToken.end, end: nameToken.end, text: ` ${affinityType('')}` };
  if (canonicalType(name) !== undefined) return undefined;
  const type = affinityType(name);
  const spelling = affinitySpelling(sql.slice(first.start, last.end));
  return {
    start: first.start,
    end: last.end,
    text: `${spelling === undefined ? '' : declaredTypeComment(spelling)}${type}`,
  };
}

/**
 * Appends STRICT to the table options: `) STRICT`, or `, STRICT` after
 * options already there (`WITHOUT ROWID, STRICT`); nothing when the client
 * wrote STRICT.
 */
function strictEdit(tokens: readonly Token[], close: number): Edit | undefined {
  const options = tokens.slice(close + 1);
  if (options.some((token) => isWord(token, 'STRICT'))) return undefined;
  const last = options[options.length - 1];
  if (last === undefined) {
    const end = tokens[close]?.end ?? 0;
    return { start: end, end, text: ' STRICT' };
  }
  return { start: last.end, end: last.end, text: ', STRICT' };
}

/** Applies edits that do not overlap, last first so that earlier offsets stay valid. */
function applyEdits(sql: string, edits: readonly Edit[]): string {
  let out = sql;
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  }
  return out;
}
