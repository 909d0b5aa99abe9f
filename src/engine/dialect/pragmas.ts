/**
 * The PRAGMAs a client may send, and the reason each other one is refused:
 * introspection, read-only and confined to the caller's database.
 *
 * SQLite's introspection pragmas (https://sqlite.org/pragma.html) read the
 * schema of one database and change nothing, so they are answered as SQLite
 * answers them, as a statement (`PRAGMA table_info(t)`) or as a table-valued
 * function in a SELECT (`FROM pragma_table_info('t')`). Everything else a
 * PRAGMA can do stays refused, each group with its true reason: files, the
 * process and other databases (`[SQ1003]`, as ATTACH is), settings of the
 * connection that every client's statements share and replay could not repeat
 * (`[SQ1101]`), and the rest, which sqlscribe does not answer (`[SQ1100]`).
 * Only the schema `main` is read (`[SQ1102]`): `temp` belongs to the engine's
 * connection, not to the database.
 *
 * The service's own tables stay out of sight here as everywhere
 * (internal-names.ts): a PRAGMA naming one is refused, and the arguments of a
 * pragma_* function, which may be any expression, are checked as the
 * statement runs (pragma-guards.ts).
 */
import { EngineError } from '../../errors';
import { RESERVED_SAVEPOINT_PREFIX } from './statement';
import { isPunct, isWord, nameOf, nearError, type Token } from './tokenize';

/** What an introspection pragma takes between its parentheses (or after `=`). */
export type PragmaArgument =
  /** Nothing: `PRAGMA foreign_keys` (a value would set it). */
  | 'none'
  /** A table's name; SQLite answers no rows without one. */
  | 'table'
  /** An index's name; no rows without one. */
  | 'index'
  /** A table's name, or none for every table. */
  | 'any-table'
  /** A table's name or the most errors to report, or neither. */
  | 'check';

/** The one list of introspection pragmas answered, with the argument each takes. */
export const INTROSPECTION_PRAGMAS: ReadonlyMap<string, PragmaArgument> = new Map<string, PragmaArgument>([
  ['table_info', 'table'],
  ['table_xinfo', 'table'],
  ['index_list', 'table'],
  ['index_info', 'index'],
  ['index_xinfo', 'index'],
  ['foreign_key_list', 'table'],
  ['foreign_key_check', 'any-table'],
  ['integrity_check', 'check'],
  ['quick_check', 'check'],
  ['foreign_keys', 'none'],
]);

const ANSWERED = [...INTROSPECTION_PRAGMAS.keys()].join(', ');

/** Why a PRAGMA reaches outside the database ([SQ1003]), read or set: its files, the process, other databases. */
const FILES = "a setting of the database's files, which the server keeps for every connection";
const PROCESS = 'a setting of the engine process every database shares';
const OUTSIDE_PRAGMAS: ReadonlyMap<string, string> = new Map([
  ['database_list', "it shows the server's file paths"],
  ['table_list', "it lists the service's own tables"],
  ['writable_schema', "it would let statements write SQLite's schema table past the service's checks"],
  ['trusted_schema', "it would let the schema's views and triggers call any function"],
  ...['journal_mode', 'synchronous', 'locking_mode', 'wal_checkpoint', 'wal_autocheckpoint'].map(
    (name): [string, string] => [name, FILES],
  ),
  ...['journal_size_limit', 'page_size', 'max_page_count', 'auto_vacuum', 'incremental_vacuum'].map(
    (name): [string, string] => [name, FILES],
  ),
  ...['data_store_directory', 'temp_store_directory'].map((name): [string, string] => [name, "a path of the server's"]),
  ...['cache_size', 'cache_spill', 'mmap_size', 'temp_store', 'threads', 'busy_timeout'].map(
    (name): [string, string] => [name, PROCESS],
  ),
  ...['soft_heap_limit', 'hard_heap_limit', 'shrink_memory', 'cell_size_check'].map((name): [string, string] => [
    name,
    PROCESS,
  ]),
]);

/** Settings of the connection: harmless to read for some, but set they would change every client's statements. */
const SETTING_REASONS: ReadonlyMap<string, string> = new Map([
  [
    'foreign_keys',
    'the service enforces foreign keys on every connection; PRAGMA foreign_keys with no value reads the setting',
  ],
  ['user_version', "it writes the database file's header, which the journal does not record"],
  ['application_id', "it writes the database file's header, which the journal does not record"],
  ['schema_version', "it writes the database file's header, which the journal does not record"],
]);
/** Settings of the engine's connection: set, each would change the statements of every client after it. */
const CONNECTION_SETTINGS: ReadonlySet<string> = new Set([
  'recursive_triggers',
  'case_sensitive_like',
  'defer_foreign_keys',
  'ignore_check_constraints',
  'legacy_alter_table',
  'reverse_unordered_selects',
  'query_only',
  'read_uncommitted',
  'count_changes',
  'full_column_names',
  'short_column_names',
  'empty_result_callbacks',
  'automatic_index',
  'analysis_limit',
  'encoding',
  'secure_delete',
  'default_cache_size',
  'legacy_file_format',
]);
const SHARED_CONNECTION =
  "it would change the engine's connection, which every client's statements share, and replay could not repeat it";

/** A PRAGMA statement as written: `PRAGMA [schema.]name [= value | (value)]`. */
export interface PragmaParts {
  readonly schema: Token | undefined;
  readonly name: string;
  readonly nameToken: Token;
  /** The value, when one was written: a name, a string or a signed number. */
  readonly value: Token | undefined;
  /** The value was given in parentheses or after `=`. */
  readonly form: 'none' | 'equals' | 'call';
}

/** Reads the parts of a PRAGMA statement's tokens (without its `;`); throws SYNTAX_ERROR on any other shape. */
export function pragmaParts(tokens: readonly Token[]): PragmaParts {
  let i = 1;
  let schema: Token | undefined;
  if (isPunct(tokens[i + 1], '.')) {
    schema = tokens[i];
    i += 2;
  }
  const nameToken = tokens[i];
  if (nameToken === undefined || (nameToken.kind !== 'word' && nameToken.kind !== 'identifier'))
    throw nearError(nameToken);
  if (schema !== undefined && schema.kind !== 'word' && schema.kind !== 'identifier') throw nearError(schema);
  const name = nameOf(nameToken).toLowerCase();
  i++;
  if (i === tokens.length) return { schema, name, nameToken, value: undefined, form: 'none' };
  const form = isPunct(tokens[i], '=') ? 'equals' : isPunct(tokens[i], '(') ? 'call' : undefined;
  if (form === undefined) throw nearError(tokens[i]);
  i++;
  // A number may carry its sign: `PRAGMA cache_size = -2000`.
  if (isPunct(tokens[i], '-') || isPunct(tokens[i], '+')) i++;
  const value = tokens[i];
  if (value === undefined || !['word', 'identifier', 'string', 'number'].includes(value.kind)) throw nearError(value);
  i++;
  if (form === 'call') {
    if (!isPunct(tokens[i], ')')) throw nearError(tokens[i]);
    i++;
  }
  if (i < tokens.length) throw nearError(tokens[i]);
  return { schema, name, nameToken, value, form };
}

/**
 * Checks a PRAGMA statement: returns when it is an introspection read of the
 * main schema naming none of the service's objects, and throws the error of
 * its reason otherwise.
 */
export function checkPragma(tokens: readonly Token[]): void {
  const parts = pragmaParts(tokens);
  const argument = INTROSPECTION_PRAGMAS.get(parts.name);
  if (argument === undefined || (argument === 'none' && parts.form !== 'none')) {
    throw refusedPragma(parts.name, parts.form !== 'none');
  }
  if (parts.schema !== undefined) checkSchemaName(nameOf(parts.schema), `PRAGMA ${nameOf(parts.schema)}.${parts.name}`);
  checkArgument(parts.name, argument, parts.value);
}

/** The error of a pragma that is not an introspection read: `set` when a value was written. */
export function refusedPragma(name: string, set: boolean): EngineError {
  const outside = OUTSIDE_PRAGMAS.get(name);
  if (outside !== undefined) return new EngineError('FORBIDDEN_STATEMENT', { detail: `PRAGMA ${name} (${outside})` });
  const reason = SETTING_REASONS.get(name) ?? (CONNECTION_SETTINGS.has(name) ? SHARED_CONNECTION : undefined);
  if (set && reason !== undefined) return new EngineError('PRAGMA_SETTING', { name, reason });
  return new EngineError('PRAGMA_NOT_ANSWERED', { name, answered: ANSWERED });
}

/** Throws INTROSPECTION_SCHEMA unless `schema` is main (any case). */
export function checkSchemaName(schema: string, detail: string): void {
  if (schema.toLowerCase() !== 'main') throw new EngineError('INTROSPECTION_SCHEMA', { detail, schema });
}

function checkArgument(name: string, argument: PragmaArgument, value: Token | undefined): void {
  if (value === undefined) {
    if (argument === 'table' || argument === 'index')
      throw formError(`PRAGMA ${name} takes ${argumentWords(argument)}`);
    return;
  }
  const isName = value.kind === 'word' || value.kind === 'identifier' || value.kind === 'string';
  if (!isName && !(argument === 'check' && value.kind === 'number'))
    throw formError(`PRAGMA ${name} takes ${argumentWords(argument)}, not ${value.text}`);
  if (isName && isInternalObject(nameOf(value))) {
    throw new EngineError('FORBIDDEN_STATEMENT', { detail: `the name ${nameOf(value)}` });
  }
}

function argumentWords(argument: PragmaArgument): string {
  if (argument === 'index') return `an index name: PRAGMA index_info(i)`;
  if (argument === 'check') return 'a table name or the most problems to list';
  return 'a table name: PRAGMA table_info(t)';
}

function formError(detail: string): EngineError {
  return new EngineError('INTROSPECTION_FORM', { detail });
}

/** The index SQLite makes for a UNIQUE or PRIMARY KEY constraint of a service table is named after it. */
const INTERNAL_AUTOINDEX = `sqlite_autoindex_${RESERVED_SAVEPOINT_PREFIX}`;

/** Whether a table or index name is one of the service's own objects (any case). */
export function isInternalObject(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith(RESERVED_SAVEPOINT_PREFIX) || lower.startsWith(INTERNAL_AUTOINDEX);
}

/** The introspection pragma a `pragma_*` name stands for, or undefined. */
export function introspectionFunction(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (!lower.startsWith('pragma_')) return undefined;
  const pragma = lower.slice('pragma_'.length);
  return INTROSPECTION_PRAGMAS.has(pragma) ? pragma : undefined;
}

/** The error for a `pragma_*` function that is not an introspection one: as its PRAGMA read would get. */
export function refusedPragmaFunction(name: string): EngineError {
  return refusedPragma(name.toLowerCase().slice('pragma_'.length), false);
}

/** `EXPLAIN` or `EXPLAIN QUERY PLAN`: the index of the explained statement's first token, or -1 when there is none. */
export function explainedStart(tokens: readonly Token[]): number {
  if (!isWord(tokens[0], 'EXPLAIN')) return -1;
  return isWord(tokens[1], 'QUERY') && isWord(tokens[2], 'PLAN') ? 3 : 1;
}
