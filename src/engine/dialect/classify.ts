/**
 * Sorts one statement into the statements sqlscribe accepts, or rejects it with the engine error
 * of its class. Only the leading keywords are read: SQLite itself checks the
 * rest when the statement is prepared.
 */

import { EngineError } from '../../errors';
import {
  isReadonlyKind,
  levelOf,
  RESERVED_SAVEPOINT_PREFIX,
  STORED_KINDS,
  type ClassifiedStatement,
  type StatementKind,
} from './statement';
import { checkNames } from './internal-names';
import { checkPragma, explainedStart } from './pragmas';
import {
  classifyCreateTrigger,
  classifyCreateView,
  classifyDropObject,
  rejectTextAfterTrigger,
} from './schema-objects';
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

/** Handing a transaction to /exec would break the request-as-transaction rule; sessions do it instead. */
const TRANSACTION_VERBS = ['BEGIN', 'COMMIT', 'END'];
/** These reach outside the database file: other files, or file paths. PRAGMA is read by pragmas.ts, each by its own rule. */
const FORBIDDEN_VERBS = ['ATTACH', 'DETACH', 'VACUUM'];
const UNSUPPORTED_VERBS = ['REINDEX', 'ANALYZE'];

/** Verbs that a WITH clause may lead to, and the kind each gives. */
const WITH_VERBS: ReadonlyMap<string, StatementKind> = new Map([
  ['SELECT', 'select'],
  ['VALUES', 'select'],
  ['INSERT', 'insert'],
  ['REPLACE', 'insert'],
  ['UPDATE', 'update'],
  ['DELETE', 'delete'],
]);

type Kinded = Pick<ClassifiedStatement, 'kind' | 'database' | 'ifExists' | 'ifNotExists' | 'savepoint'>;

/**
 * Classifications of recent statement texts (clients and replay send
 * the same few statements over and over, and classifying one tokenizes it
 * whole). The classification depends on the text alone; refused statements
 * are not kept, nor long ones.
 */
const CLASSIFIED_CACHE_SIZE = 512;
const CLASSIFIED_CACHE_MAX_LENGTH = 2048;
const classified = new Map<string, ClassifiedStatement>();

/**
 * Classifies one statement (as returned by splitStatements; a trailing `;`
 * is tolerated). Throws EMPTY_SQL, SYNTAX_ERROR, TRANSACTION_CONTROL,
 * FORBIDDEN_STATEMENT or UNSUPPORTED_STATEMENT.
 */
export function classifyStatement(sql: string): ClassifiedStatement {
  const known = classified.get(sql);
  if (known !== undefined) return known;
  const statement = Object.freeze(classifyText(sql));
  if (sql.length <= CLASSIFIED_CACHE_MAX_LENGTH) {
    if (classified.size >= CLASSIFIED_CACHE_SIZE) classified.delete(classified.keys().next().value as string);
    classified.set(sql, statement);
  }
  return statement;
}

function classifyText(sql: string): ClassifiedStatement {
  const tokens = tokenize(sql);
  while (tokens.length > 0 && tokens[tokens.length - 1]?.kind === 'semicolon') tokens.pop();
  if (tokens.length === 0) throw new EngineError('EMPTY_SQL');
  if (isWord(tokens[0], 'EXPLAIN')) return classifyExplain(sql, tokens);
  const kinded = classifyTokens(tokens);
  if (kinded.kind === 'create-trigger') rejectTextAfterTrigger(sql, tokens);
  else rejectSecondStatement(tokens);
  const level = levelOf(kinded.kind);
  // A PRAGMA's one argument was checked by its own rule (pragmas.ts).
  if (level === 'table' && kinded.kind !== 'pragma') checkNames(sql, tokens, { stored: STORED_KINDS.has(kinded.kind) });
  return { sql, ...kinded, level, readonly: isReadonlyKind(kinded.kind) };
}

/**
 * EXPLAIN [QUERY PLAN] of a statement: accepted when the statement itself
 * would be, refused with the statement's own error otherwise. It is a read
 * whatever it explains: SQLite compiles the statement and lists its bytecode
 * or its plan, and never runs it. sqlscribe's own statements (CREATE
 * DATABASE, INTEGRITY CHECK…) are not SQLite's, so they have nothing to show.
 */
function classifyExplain(sql: string, tokens: readonly Token[]): ClassifiedStatement {
  const first = tokens[explainedStart(tokens)];
  if (first === undefined || isWord(first, 'EXPLAIN')) throw nearError(first);
  const explained = classifyStatement(sql.slice(first.start));
  if (explained.level === 'database' || explained.kind === 'integrity-check') {
    const words = explained.sql.split(/\s+/).slice(0, 2).join(' ').replace(/;+$/, '');
    throw new EngineError('EXPLAIN_NOT_SQLITE', { detail: words.toUpperCase() });
  }
  return { sql, kind: 'explain', level: 'table', readonly: true };
}

function classifyTokens(tokens: readonly Token[]): Kinded {
  const first = tokens[0];
  const verb = first?.kind === 'word' ? (first.value ?? '') : '';
  if (TRANSACTION_VERBS.includes(verb)) throw new EngineError('TRANSACTION_CONTROL', { detail: verb });
  if (FORBIDDEN_VERBS.includes(verb)) throw new EngineError('FORBIDDEN_STATEMENT', { detail: verb });
  if (UNSUPPORTED_VERBS.includes(verb)) throw unsupported(verb);
  switch (verb) {
    case 'SELECT':
    case 'VALUES':
      return { kind: 'select' };
    case 'INSERT':
    case 'REPLACE':
      return { kind: 'insert' };
    case 'UPDATE':
      return { kind: 'update' };
    case 'DELETE':
      return { kind: 'delete' };
    case 'WITH':
      return { kind: classifyWith(tokens) };
    case 'CREATE':
      return classifyCreate(tokens);
    case 'DROP':
      return classifyDrop(tokens);
    case 'PRAGMA':
      checkPragma(tokens);
      return { kind: 'pragma' };
    default:
      return classifyOther(tokens, verb);
  }
}

function classifyOther(tokens: readonly Token[], verb: string): Kinded {
  switch (verb) {
    case 'ALTER':
      if (!isWord(tokens[1], 'TABLE')) throw nearError(tokens[1]);
      return { kind: 'alter-table' };
    case 'SAVEPOINT':
      return { kind: 'savepoint', savepoint: savepointName(tokens, 1) };
    case 'RELEASE':
      return { kind: 'release', savepoint: savepointName(tokens, isWord(tokens[1], 'SAVEPOINT') ? 2 : 1) };
    case 'ROLLBACK':
      return classifyRollback(tokens);
    case 'INTEGRITY':
      expectExactly(tokens, ['INTEGRITY', 'CHECK']);
      return { kind: 'integrity-check' };
    case 'SHOW':
      expectExactly(tokens, ['SHOW', 'DATABASES']);
      return { kind: 'show-databases' };
    default:
      throw nearError(tokens[0]);
  }
}

function unsupported(detail: string): EngineError {
  return new EngineError('UNSUPPORTED_STATEMENT', { detail });
}

/** `tokens` must be exactly these words, e.g. INTEGRITY CHECK with nothing after. */
function expectExactly(tokens: readonly Token[], words: readonly string[]): void {
  words.forEach((word, i) => {
    if (!isWord(tokens[i], word)) throw nearError(tokens[i]);
  });
  if (tokens.length > words.length) throw nearError(tokens[words.length]);
}

/**
 * The kind of the statement a WITH clause leads to. The CTE list is walked
 * structurally (`name [(cols)] AS [NOT] [MATERIALIZED] (…)`, comma-separated)
 * rather than by searching for a verb, because REPLACE and friends may also
 * be CTE or column names.
 */
function classifyWith(tokens: readonly Token[]): StatementKind {
  let i = isWord(tokens[1], 'RECURSIVE') ? 2 : 1;
  for (;;) {
    if (!isNameToken(tokens[i])) throw nearError(tokens[i]);
    i++;
    if (isPunct(tokens[i], '(')) i = closingParen(tokens, i) + 1;
    if (!isWord(tokens[i], 'AS')) throw nearError(tokens[i]);
    i++;
    if (isWord(tokens[i], 'NOT')) i++;
    if (isWord(tokens[i], 'MATERIALIZED')) i++;
    if (!isPunct(tokens[i], '(')) throw nearError(tokens[i]);
    i = closingParen(tokens, i) + 1;
    if (!isPunct(tokens[i], ',')) break;
    i++;
  }
  const main = tokens[i];
  const kind = main?.kind === 'word' ? WITH_VERBS.get(main.value ?? '') : undefined;
  if (kind === undefined) throw nearError(main);
  return kind;
}

function classifyCreate(tokens: readonly Token[]): Kinded {
  const second = tokens[1];
  if (isWord(second, 'TEMP', 'TEMPORARY')) throw unsupported(`CREATE TEMP ${objectName(tokens[2])}`);
  if (isWord(second, 'TABLE')) return classifyCreateTable(tokens);
  if (isWord(second, 'INDEX') || (isWord(second, 'UNIQUE') && isWord(tokens[2], 'INDEX')))
    return { kind: 'create-index' };
  if (isWord(second, 'VIEW')) return classifyCreateView(tokens);
  if (isWord(second, 'TRIGGER')) return classifyCreateTrigger(tokens);
  if (isWord(second, 'VIRTUAL') && isWord(tokens[2], 'TABLE')) throw unsupported('CREATE VIRTUAL TABLE');
  if (isWord(second, 'DATABASE')) return createDatabase(tokens);
  throw nearError(isWord(second, 'UNIQUE', 'VIRTUAL') ? tokens[2] : second);
}

/** What CREATE TEMP makes, for the error detail: TABLE, VIEW or TRIGGER. */
function objectName(token: Token | undefined): string {
  return isWord(token, 'TABLE', 'VIEW', 'TRIGGER') ? (token?.value ?? '') : 'TABLE';
}

/**
 * A table in the `temp` schema is a temporary table by another name. And
 * CREATE TABLE … AS SELECT would make columns with no declared type, which
 * sqlscribe cannot enforce.
 */
function classifyCreateTable(tokens: readonly Token[]): Kinded {
  const end = skipTableName(tokens, 2);
  const schema = end >= 3 && isPunct(tokens[end - 2], '.') ? tokens[end - 3] : undefined;
  if (schema !== undefined && nameOf(schema).toLowerCase() === 'temp') throw unsupported('CREATE TEMP TABLE');
  if (isWord(tokens[end], 'AS')) {
    throw unsupported('CREATE TABLE … AS SELECT: declare the columns and their types, then INSERT … SELECT');
  }
  return { kind: 'create-table' };
}

function classifyDrop(tokens: readonly Token[]): Kinded {
  const second = tokens[1];
  if (isWord(second, 'TABLE')) return { kind: 'drop-table' };
  if (isWord(second, 'INDEX')) return { kind: 'drop-index' };
  if (isWord(second, 'VIEW')) return classifyDropObject(tokens, 'drop-view');
  if (isWord(second, 'TRIGGER')) return classifyDropObject(tokens, 'drop-trigger');
  if (isWord(second, 'DATABASE')) return dropDatabase(tokens);
  throw nearError(second);
}

/** ROLLBACK [TRANSACTION] TO [SAVEPOINT] name is a savepoint statement; a bare ROLLBACK ends a transaction. */
function classifyRollback(tokens: readonly Token[]): Kinded {
  const to = isWord(tokens[1], 'TRANSACTION') ? 2 : 1;
  if (!isWord(tokens[to], 'TO')) throw new EngineError('TRANSACTION_CONTROL', { detail: 'ROLLBACK' });
  return {
    kind: 'rollback-to',
    savepoint: savepointName(tokens, isWord(tokens[to + 1], 'SAVEPOINT') ? to + 2 : to + 1),
  };
}

/** The one name that ends a savepoint statement, at `at`. */
function savepointName(tokens: readonly Token[], at: number): string {
  const token = tokens[at];
  if (token === undefined || !isNameToken(token)) throw nearError(token);
  if (tokens.length > at + 1) throw nearError(tokens[at + 1]);
  const name = nameOf(token);
  if (name.toLowerCase().startsWith(RESERVED_SAVEPOINT_PREFIX))
    throw unsupported(`savepoint names starting with ${RESERVED_SAVEPOINT_PREFIX}`);
  return name;
}

/** CREATE DATABASE [IF NOT EXISTS] name */
function createDatabase(tokens: readonly Token[]): Kinded {
  const ifNotExists = isWord(tokens[2], 'IF') && isWord(tokens[3], 'NOT') && isWord(tokens[4], 'EXISTS');
  const database = databaseName(tokens, ifNotExists ? 5 : 2);
  return { kind: 'create-database', database, ifNotExists };
}

/** DROP DATABASE [IF EXISTS] name */
function dropDatabase(tokens: readonly Token[]): Kinded {
  const ifExists = isWord(tokens[2], 'IF') && isWord(tokens[3], 'EXISTS');
  const database = databaseName(tokens, ifExists ? 4 : 2);
  return { kind: 'drop-database', database, ifExists };
}

/**
 * The database name at `i`, which must end the statement: a bare word, or a
 * quoted name ("x", 'x', `x`, [x]) for the content. A bare name cannot hold
 * `-` or `.` (SQL reads `a-b` as a subtraction), so those names need quotes.
 * The name is validated later, where POST /dbs validates its names.
 */
function databaseName(tokens: readonly Token[], i: number): string {
  const token = tokens[i];
  if (token === undefined || !isNameToken(token)) throw nearError(token);
  if (i + 1 < tokens.length) throw nearError(tokens[i + 1]);
  return nameOf(token);
}

/**
 * A semicolon left inside one statement means the caller did not split the
 * request; classifying only the first statement would let the rest through.
 */
function rejectSecondStatement(tokens: readonly Token[]): void {
  const semicolon = tokens.find((token) => token.kind === 'semicolon');
  if (semicolon !== undefined) throw nearError(semicolon);
}
