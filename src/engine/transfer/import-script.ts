/**
 * A whole .sql script as the statements an import runs: split by the one
 * splitter, each classified like an /exec statement, with no cap on their
 * number. The import is one transaction, so a script's own BEGIN (as its first
 * statement) and COMMIT or END (as its last) — what dump tools write around
 * their output — are skipped; any other transaction control is refused.
 *
 * What dumps and teaching scripts carry besides is taken as SQLite takes it
 * (docs/api.md, "Import and export"): `PRAGMA foreign_keys` anywhere sets how
 * the import treats foreign keys (off anywhere: the whole import runs without
 * enforcement, as the rows of a `.dump` after its `PRAGMA foreign_keys=OFF`
 * do in sqlite3), the connection settings of NO_OP_PRAGMAS are skipped (they
 * reach nothing the database keeps), any type SQLite accepts gets the type
 * its affinity gives (rewrite.ts withAffinityTypes), and double-quoted
 * literals in triggers and views are single-quoted (quoted-literals.ts).
 */
import { EngineError } from '../../errors';
import { classifyStatement } from '../dialect/classify';
import { withAffinityTypes } from '../dialect/rewrite';
import type { ClassifiedStatement } from '../dialect/statement';
import type { ExecStatement } from '../protocol';
import { namesOf, singleQuoteLiterals } from './quoted-literals';

/** A trigger or view whose double-quoted literals the import single-quoted. */
export interface RewrittenObject {
  readonly type: 'trigger' | 'view';
  readonly name: string;
  readonly literals: number;
}

export interface ImportScript {
  statements: ExecStatement[];
  /** The script's index of statements[0]: 1 when a leading BEGIN was skipped, so that errors name the statement as the script counts it. */
  offset: number;
  /** The script's index of each of `statements` (skipped statements leave gaps). */
  positions: number[];
  /** 'off' when the script turns foreign keys off: the import then runs without enforcement. */
  foreignKeys: 'on' | 'off';
  /** The PRAGMA statements taken as settings rather than run, as the script wrote them. */
  settings: string[];
  rewritten: RewrittenObject[];
}

export interface ImportScriptOptions {
  /** Names (any case) of the tables and columns already in the database: double-quoted tokens naming one stay identifiers. */
  readonly knownNames?: Iterable<string>;
  /** How foreign keys are treated when the script does not say (an uploaded file: 'off', as SQLite opens it). */
  readonly foreignKeys?: 'on' | 'off';
}

/**
 * The PRAGMA settings of a connection that an import skips as no-ops: each
 * sets how this one connection reads, writes or caches, and nothing the
 * database keeps or answers (the service sets its own connections: WAL,
 * synchronous, cache). A dump or a teaching script writes them for sqlite3;
 * one with any other name is refused as in /exec.
 */
export const NO_OP_PRAGMAS: ReadonlySet<string> = new Set([
  'auto_vacuum',
  'automatic_index',
  'busy_timeout',
  'cache_size',
  'cache_spill',
  'encoding',
  'journal_mode',
  'journal_size_limit',
  'locking_mode',
  'mmap_size',
  'page_size',
  'synchronous',
  'temp_store',
  'threads',
  'wal_autocheckpoint',
]);

/** `PRAGMA [main.]name [= value | (value)]`: the name lower-cased and the value, or undefined when it is not that shape. */
const PRAGMA_SHAPE = /^PRAGMA\s+(?:(?:main|"main")\s*\.\s*)?([A-Za-z_]+)\s*(?:=\s*(.*?)|\(\s*(.*?)\s*\))?\s*;?\s*$/is;

type ScriptSetting = { kind: 'foreign-keys'; on: boolean | undefined } | { kind: 'no-op' };

/** What a PRAGMA of the script is to the import, or undefined when it is none of its settings. */
function settingOf(sql: string): ScriptSetting | undefined {
  // Nearly every statement of a big script is an INSERT: it is told apart by its first letters.
  if (!/^\s*PRAGMA\b/i.test(sql)) return undefined;
  const match = PRAGMA_SHAPE.exec(sql.trim());
  if (match === null) return undefined;
  const name = (match[1] ?? '').toLowerCase();
  const value = (match[2] ?? match[3])?.replace(/^['"]|['"]$/g, '').toLowerCase();
  if (name === 'foreign_keys') {
    if (value === undefined) return { kind: 'foreign-keys', on: undefined };
    if (['on', '1', 'true', 'yes'].includes(value)) return { kind: 'foreign-keys', on: true };
    if (['off', '0', 'false', 'no'].includes(value)) return { kind: 'foreign-keys', on: false };
    return undefined;
  }
  return NO_OP_PRAGMAS.has(name) ? { kind: 'no-op' } : undefined;
}

function isWrapper(sql: string, words: readonly string[]): boolean {
  const first = /^[A-Za-z]+/.exec(sql)?.[0]?.toUpperCase() ?? '';
  return words.includes(first);
}

function classifyAt(sql: string, index: number): ClassifiedStatement {
  try {
    const statement = classifyStatement(sql);
    if (statement.level === 'database')
      throw new EngineError('UNSUPPORTED_STATEMENT', {
        detail: `${sql.split(/\s+/).slice(0, 2).join(' ').toUpperCase()} inside an import (it acts on the data directory, not on the database)`,
      });
    return statement;
  } catch (error) {
    const engineError =
      error instanceof EngineError && error.errorName === 'TRANSACTION_CONTROL'
        ? new EngineError('IMPORT_TRANSACTION_CONTROL', {
            detail: String(error.params.detail ?? 'transaction control'),
          })
        : error;
    if (engineError instanceof EngineError) engineError.statement = index;
    throw engineError;
  }
}

/** The name a CREATE TRIGGER or CREATE VIEW gives, as written without its quotes. */
function objectName(sql: string): string {
  const match =
    /^\s*CREATE\s+(?:TEMP(?:ORARY)?\s+)?(?:TRIGGER|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:main\s*\.\s*)?("(?:[^"]|"")*"|\[[^\]]*\]|`[^`]*`|[^\s(]+)/i.exec(
      sql,
    );
  const name = match?.[1] ?? '?';
  return /^["[`]/.test(name) ? name.slice(1, -1).replace(/""/g, '"') : name;
}

/** The indexes of the script's statements the import runs: without the settings and the dump's BEGIN … COMMIT around them. */
function runRange(texts: readonly string[]): { from: number; to: number } {
  let from = 0;
  let to = texts.length;
  while (from < to && settingOf(texts[from] as string) !== undefined) from++;
  if (from < to && isWrapper(texts[from] as string, ['BEGIN'])) from += 1;
  while (to > from && settingOf(texts[to - 1] as string) !== undefined) to--;
  if (to > from && isWrapper(texts[to - 1] as string, ['COMMIT', 'END'])) to -= 1;
  return { from, to };
}

export function importScript(texts: readonly string[], options: ImportScriptOptions = {}): ImportScript {
  const { from, to } = runRange(texts);
  const plan: ImportScript = {
    statements: [],
    offset: from,
    positions: [],
    foreignKeys: options.foreignKeys ?? 'on',
    settings: [],
    rewritten: [],
  };
  const names = new Set<string>([...(options.knownNames ?? [])].map((name) => name.toLowerCase()));
  const bodies: Array<{ at: number; classified: ClassifiedStatement }> = [];
  for (let index = 0; index < texts.length; index++) {
    const sql = texts[index] as string;
    const setting = settingOf(sql);
    if (setting !== undefined) {
      plan.settings.push(sql);
      if (setting.kind === 'foreign-keys' && setting.on === false) plan.foreignKeys = 'off';
      continue;
    }
    if (index < from || index >= to) continue;
    const classified = classifyAt(sql, index);
    if (classified.kind === 'create-table' || classified.kind === 'alter-table')
      for (const name of namesOf(sql)) names.add(name);
    if (classified.kind === 'create-trigger' || classified.kind === 'create-view')
      bodies.push({ at: plan.statements.length, classified });
    const { kind, savepoint } = classified;
    const text = withAffinityTypes(classified);
    plan.statements.push(savepoint === undefined ? { sql: text, kind } : { sql: text, kind, savepoint });
    plan.positions.push(index);
  }
  if (plan.statements.length === 0) throw new EngineError('EMPTY_SQL');
  // After every table of the script is known: a trigger may come before the table it writes.
  for (const { at, classified } of bodies) {
    const { sql, literals } = singleQuoteLiterals(classified.sql, names);
    if (literals === 0) continue;
    plan.statements[at] = { sql, kind: classified.kind };
    plan.rewritten.push({
      type: classified.kind === 'create-trigger' ? 'trigger' : 'view',
      name: objectName(sql),
      literals,
    });
  }
  return plan;
}
