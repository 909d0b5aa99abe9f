/**
 * The one place where SQLite's and better-sqlite3's errors become catalog
 * errors: they are translated at this one boundary, and the original is kept
 * as the cause.
 */
import { EngineError, type ErrorName, type ErrorParams } from '../errors';
import { BOOL_CHECK_TEXT } from './types';

/** Answers whether a column holds BOOL, to name the right type in a mismatch. */
export type BoolLookup = (table: string, column: string) => boolean;

interface SqliteLikeError {
  code: string;
  message: string;
}

function isSqliteError(error: unknown): error is SqliteLikeError {
  return (
    error instanceof Error && error.name === 'SqliteError' && typeof (error as { code?: unknown }).code === 'string'
  );
}

const STORAGE_TYPE_NAMES: Readonly<Record<string, string>> = {
  INTEGER: 'INT',
  REAL: 'FLOAT',
  TEXT: 'TEXT',
  BLOB: 'BLOB',
};

/** "cannot store TEXT value in INTEGER column t.c" — SQLite's STRICT type error. */
function datatypeError(message: string, isBool: BoolLookup): [ErrorName, ErrorParams] {
  const match = /^cannot store (\w+) value in (\w+) column (.+)$/.exec(message);
  if (!match) return ['TYPE_MISMATCH', { column: '?', expected: '?', actual: message }];
  const [, actual = '', expected = '', column = ''] = match;
  const dot = column.lastIndexOf('.');
  const bool = dot > 0 && isBool(column.slice(0, dot), column.slice(dot + 1));
  return [
    'TYPE_MISMATCH',
    {
      column,
      expected: bool ? 'BOOL' : (STORAGE_TYPE_NAMES[expected] ?? expected),
      actual: STORAGE_TYPE_NAMES[actual] ?? actual,
    },
  ];
}

function unquote(identifier: string): string {
  const quoted = /^(["`[])(.*)["`\]]$/.exec(identifier);
  return quoted ? (quoted[2] ?? '').replace(/""/g, '"') : identifier;
}

function checkError(detail: string): [ErrorName, ErrorParams, ConstraintFields?] {
  const bool = BOOL_CHECK_TEXT.exec(detail);
  if (bool)
    return ['TYPE_MISMATCH', { column: unquote(bool[1] ?? ''), expected: 'BOOL', actual: 'INT other than 0 or 1' }];
  // SQLite names the constraint (or gives its expression), not the table.
  return ['CONSTRAINT_CHECK', { detail }, detail === '' ? undefined : { constraint: detail }];
}

/** The fields a learner's error box shows: the table and columns a constraint is about. */
export interface ConstraintFields {
  table?: string;
  columns?: string[];
  constraint?: string;
}

/**
 * "t.a, t.b" (NOT NULL, UNIQUE, PRIMARY KEY name their columns this way)
 * becomes { table: 't', columns: ['a', 'b'] }; anything else (an index on
 * expressions: "index 'name'") names no columns.
 */
export function columnFields(detail: string): ConstraintFields | undefined {
  const parts = detail.split(', ').map((part) => /^([^.\s]+)\.(.+)$/.exec(part));
  if (parts.length === 0 || parts.some((part) => part === null)) return undefined;
  const table = parts[0]?.[1] ?? '';
  if (parts.some((part) => part?.[1] !== table)) return undefined;
  return { table, columns: parts.map((part) => part?.[2] ?? '') };
}

function withColumns(name: ErrorName, detail: string): [ErrorName, ErrorParams, ConstraintFields?] {
  return [name, { detail }, columnFields(detail)];
}

function constraintError(
  code: string,
  message: string,
  isBool: BoolLookup,
): [ErrorName, ErrorParams, ConstraintFields?] {
  const detail = message.replace(/^[A-Z ]+constraint failed:?\s*/, '');
  switch (code) {
    case 'SQLITE_CONSTRAINT_NOTNULL':
      return withColumns('CONSTRAINT_NOT_NULL', detail);
    case 'SQLITE_CONSTRAINT_UNIQUE':
      return withColumns('CONSTRAINT_UNIQUE', detail);
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return withColumns('CONSTRAINT_PRIMARY_KEY', detail);
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      // SQLite's message is the bare "FOREIGN KEY constraint failed": no colon then, rather than one with nothing after it.
      return ['CONSTRAINT_FOREIGN_KEY', { detail: detail === message || detail === '' ? '' : `: ${detail}` }];
    case 'SQLITE_CONSTRAINT_CHECK':
      return checkError(detail);
    case 'SQLITE_CONSTRAINT_DATATYPE':
      return datatypeError(message, isBool);
    default:
      return ['CONSTRAINT_OTHER', { detail: message }];
  }
}

/** SQLITE_ERROR covers many causes; its message tells them apart. */
const MESSAGE_RULES: ReadonlyArray<[RegExp, ErrorName, string]> = [
  [/^no such table: (.+)$/, 'NO_SUCH_TABLE', 'table'],
  [/^no such column: (.+)$/, 'NO_SUCH_COLUMN', 'column'],
  [/^no such index: (.+)$/, 'NO_SUCH_INDEX', 'index'],
  [/^no such function: (.+)$/, 'NO_SUCH_FUNCTION', 'function'],
  [/^no such savepoint: (.+)$/, 'NO_SUCH_SAVEPOINT', 'savepoint'],
  [/^(?:table|view) "?(.+?)"? already exists$/, 'TABLE_EXISTS', 'table'],
  [/^index (.+) already exists$/, 'INDEX_EXISTS', 'index'],
  [/syntax error|incomplete input|unrecognized token/, 'SYNTAX_ERROR', 'detail'],
  [
    /parser stack overflow|too large|too many (terms|columns|arguments|FROM)|too deep|recursion limit/i,
    'SQL_TOO_COMPLEX',
    'detail',
  ],
  // load_extension() is refused by SQLite itself in this build.
  [/^not authorized$/, 'FORBIDDEN_STATEMENT', 'load_extension()'],
  [/^(ambiguous column name|no such collation|wrong number of arguments|no tables specified)/, 'NAME_ERROR', 'detail'],
];

function messageError(message: string): [ErrorName, ErrorParams] {
  for (const [pattern, name, param] of MESSAGE_RULES) {
    const match = pattern.exec(message);
    if (match)
      return [
        name,
        name === 'FORBIDDEN_STATEMENT'
          ? { detail: param }
          : { [param]: param === 'detail' ? message : (match[1] ?? message) },
      ];
  }
  return ['SQL_ERROR', { detail: message }];
}

function primaryCodeError(code: string, message: string): [ErrorName, ErrorParams] {
  const primary = code.replace(/^(SQLITE_[A-Z]+).*$/, '$1');
  switch (primary) {
    case 'SQLITE_ERROR':
      return messageError(message);
    // Only an INTEGER PRIMARY KEY (the rowid) raises this: it takes nothing but integers.
    case 'SQLITE_MISMATCH':
      return ['TYPE_MISMATCH', { column: 'INTEGER PRIMARY KEY', expected: 'INT', actual: 'not an integer' }];
    case 'SQLITE_TOOBIG':
      return ['VALUE_TOO_LARGE', { detail: message }];
    case 'SQLITE_RANGE':
      return ['PARAMETER_MISMATCH', { detail: message }];
    case 'SQLITE_IOERR':
      return ['STORAGE_IO', {}];
    case 'SQLITE_FULL':
      return ['STORAGE_FULL', {}];
    case 'SQLITE_CORRUPT':
    case 'SQLITE_NOTADB':
      return ['STORAGE_CORRUPT', {}];
    case 'SQLITE_READONLY':
      return ['STORAGE_READONLY', {}];
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return ['STORAGE_BUSY', {}];
    case 'SQLITE_AUTH':
      return ['FORBIDDEN_STATEMENT', { detail: 'this statement' }];
    default:
      return ['INTERNAL', {}];
  }
}

/** better-sqlite3 reports parameter count problems as RangeError/TypeError. */
function driverError(error: Error): [ErrorName, ErrorParams] | undefined {
  if (error instanceof RangeError || /parameter|bind/i.test(error.message))
    return ['PARAMETER_MISMATCH', { detail: error.message }];
  if (/more than one statement/.test(error.message))
    return ['BAD_REQUEST', { detail: 'one statement per "sql" when parameters are given' }];
  return undefined;
}

/** Errors of the file system itself (making or removing a database file): the same storage codes SQLite's would get. */
const FILE_SYSTEM_ERRORS: Readonly<Record<string, ErrorName>> = {
  ENOSPC: 'STORAGE_FULL',
  EDQUOT: 'STORAGE_FULL',
  EIO: 'STORAGE_IO',
  EROFS: 'STORAGE_READONLY',
  EACCES: 'STORAGE_READONLY',
};

/** Translates any error raised while running SQL, or while making a database file, into a catalog error. */
export function toEngineError(error: unknown, isBool: BoolLookup = () => false): EngineError {
  if (error instanceof EngineError) return error;
  const fileSystem = FILE_SYSTEM_ERRORS[(error as NodeJS.ErrnoException | undefined)?.code ?? ''];
  if (fileSystem !== undefined) return new EngineError(fileSystem, {}, { cause: error });
  if (isSqliteError(error)) {
    const [name, params, fields] = error.code.startsWith('SQLITE_CONSTRAINT')
      ? constraintError(error.code, error.message, isBool)
      : primaryCodeError(error.code, error.message);
    return new EngineError(
      name,
      params,
      fields === undefined
        ? { sqliteCode: error.code, cause: error }
        : { sqliteCode: error.code, details: { ...fields }, cause: error },
    );
  }
  const driver = error instanceof Error ? driverError(error) : undefined;
  if (driver) return new EngineError(driver[0], driver[1], { cause: error });
  return new EngineError('INTERNAL', {}, { cause: error });
}
