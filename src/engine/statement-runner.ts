/**
 * Runs the statements of one request on one connection, inside whatever
 * transaction the caller opened: an auto-commit batch or a session.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { withQuotingHint } from './dialect/quoting-hint';
import { unguardedName } from './dialect/pragma-guards';
import { rewriteForStorage } from './dialect/rewrite';
import { isReadonlyKind, type StatementKind } from './dialect/statement';
import type { Connection } from './connection-pool';
import type { ExecStatement, ResultValue, StatementResult } from './protocol';
import { isNameToken, isPunct, isWord, nameOf, tokenize } from './dialect/tokenize';
import { readTableSchema } from './schema/schema';
import { toEngineError } from './sqlite-errors';
import { findForeignKeyFailure, foreignKeyError } from './foreign-key-failure';
import { checkNamedParameters, convertNumberRowWeighed, convertRowWeighed, toBindParameters } from './values';
import { JsonRowChunks } from './rows/json-row-chunks';
import { forgetBriefInserts, isBriefInsert } from './brief-inserts';
import { sizeLimitError } from './size-limit';

const MESSAGE_VERBS: Partial<Record<StatementKind, string>> = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' };

/**
 * Hears each statement's index before it runs, so that a host stopping a
 * runaway statement knows which one it stopped; `brief` says the statement
 * cannot be one (brief-inserts.ts).
 */
export type StatementListener = (index: number, brief: boolean) => void;

/** Kinds that change no schema: anything else makes the brief INSERTs be judged again. */
const ROW_KINDS: ReadonlySet<StatementKind> = new Set(['select', 'insert', 'update', 'delete']);

/**
 * Runs the statements in order. On failure it throws the catalog error with
 * the failing statement's index, leaving the transaction for the caller to
 * roll back. `afterEach` lets a session follow its savepoints.
 */
export function runStatements(
  connection: Connection,
  statements: readonly ExecStatement[],
  limits: ResultLimits,
  onStatement?: StatementListener,
  afterEach?: (statement: ExecStatement) => void,
): StatementResult[] {
  const results: StatementResult[] = [];
  const budget: RowBudget = {
    rows: limits.maxResultRows,
    bytesLeft: limits.maxResultBytes ?? Infinity,
    json: limits.jsonRows === true,
    whole: limits.readWhole === true,
    blobs: limits.markBlobs === true,
  };
  // A batch that writes is replayed: each of its SELECTs runs to its end, so that random() and the like
  // are called as many times live as on replay, whatever -max-result-rows keeps of the rows.
  const complete = !statements.every((statement) => isReadonlyKind(statement.kind));
  // Each writing batch sets its own bound (or none): the connection is shared by every token's batches.
  if (complete) connection.limitSize(limits.maxDatabaseBytes);
  const runAt = (index: number): void => {
    const statement = statements[index] as ExecStatement;
    if (!ROW_KINDS.has(statement.kind)) forgetBriefInserts(connection);
    if (onStatement !== undefined) {
      const bind = (): unknown[] => toBindParameters(statement.params);
      onStatement(index, statement.kind === 'insert' && isBriefInsert(connection, statement.sql, bind));
    }
    try {
      results.push(runStatement(connection, statement, budget, complete));
      afterEach?.(statement);
    } catch (error) {
      const engineError = explained(
        connection,
        statement,
        toEngineError(error, (table, column) => connection.isBool(table, column)),
      );
      engineError.statement = index;
      throw engineError;
    }
  };
  if (!checksSchemaOnce(connection, statements)) {
    for (let index = 0; index < statements.length; index++) runAt(index);
    return results;
  }
  // The first statement checks the schema version (its prepare does); the others cannot move it.
  runAt(0);
  connection.schema.pinnedFor(() => {
    for (let index = 1; index < statements.length; index++) runAt(index);
  });
  return results;
}

/** Reads and row changes: they cannot move the schema (a trigger cannot run DDL) nor touch savepoints. */
const SCHEMA_KEEPING_KINDS: ReadonlySet<StatementKind> = new Set(['select', 'insert', 'update', 'delete']);

/**
 * Whether only the first statement needs to check the schema version: true
 * for a batch of several reads and row changes inside a transaction, where
 * the others need not (the transaction fixes what other connections can do to
 * the schema, and none of these statements changes it). A version check is a
 * PRAGMA run per statement, a tenth of a small INSERT's cost.
 */
function checksSchemaOnce(connection: Connection, statements: readonly ExecStatement[]): boolean {
  if (statements.length < 2) return false;
  for (const statement of statements) if (!SCHEMA_KEEPING_KINDS.has(statement.kind)) return false;
  return connection.db.inTransaction;
}

/** Errors whose words SQLite leaves vague, made precise from the statement (only on failure: the success path pays nothing). */
function explained(connection: Connection, statement: ExecStatement, error: EngineError): EngineError {
  if (error.errorName === 'STORAGE_FULL') return sizeLimitError(connection, error);
  if (error.sqliteCode === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    const target = statement.kind === 'insert' || statement.kind === 'update' ? targetTable(statement.sql) : undefined;
    const failure = findForeignKeyFailure(connection, statement, target);
    return failure === undefined ? error : foreignKeyError(error, failure);
  }
  if (error.errorName === 'SYNTAX_ERROR') return withQuotingHint(error, statement.sql);
  return namedMismatch(connection, statement, error);
}

/**
 * Only an INTEGER PRIMARY KEY raises SQLITE_MISMATCH (it is the rowid and
 * takes nothing but integers), and SQLite does not say which table: the
 * statement does.
 */
function namedMismatch(connection: Connection, statement: ExecStatement, error: EngineError): EngineError {
  if (error.sqliteCode !== 'SQLITE_MISMATCH') return error;
  const table = targetTable(statement.sql);
  const key = table === undefined ? undefined : readTableSchema(connection.db, table)?.primaryKey;
  const column = table !== undefined && key ? `${table}.${key}` : 'INTEGER PRIMARY KEY';
  return new EngineError(
    'TYPE_MISMATCH',
    { column, expected: 'INT', actual: 'not an integer' },
    { sqliteCode: 'SQLITE_MISMATCH' },
  );
}

/** The table an INSERT, REPLACE or UPDATE writes to. */
function targetTable(sql: string): string | undefined {
  const tokens = tokenize(sql);
  const at = tokens.findIndex((token) => isWord(token, 'INTO', 'UPDATE'));
  let name = tokens[at + 1];
  if (isWord(name, 'OR')) name = tokens[at + 3];
  if (isPunct(tokens[at + 2], '.')) name = tokens[at + 3];
  return name !== undefined && isNameToken(name) ? nameOf(name) : undefined;
}

function runStatement(
  connection: Connection,
  statement: ExecStatement,
  budget: RowBudget,
  complete: boolean,
): StatementResult {
  if (statement.kind === 'integrity-check') return integrityCheck(connection.db);
  const readonly = isReadonlyKind(statement.kind);
  const sql = rewriteForStorage({ sql: statement.sql, kind: statement.kind, level: 'table', readonly });
  const prepared = connection.prepare(sql);
  checkNamedParameters(statement.sql, statement.params);
  const params = toBindParameters(statement.params);
  const verb = MESSAGE_VERBS[statement.kind];
  if (prepared.reader && (readonly || verb)) return readRows(connection, prepared, params, budget, verb, complete);
  // ALTER TABLE … ADD COLUMN on a STRICT table runs SQLite's own check query, so it "returns data": run it, answer OK.
  if (prepared.reader) {
    const checked = readRows(connection, prepared, params, budget, verb, complete);
    delete checked.types;
    return { ...checked, columns: [], rows: [], message: 'OK', changes: 0 };
  }
  const info = prepared.run(...params);
  return verb
    ? { columns: [], rows: [], message: `${verb} ${info.changes}`, changes: info.changes }
    : { columns: [], rows: [], message: 'OK', changes: 0 };
}

/** What a request may still return: rows per statement, bytes for the whole request. */
interface RowBudget {
  readonly rows: number;
  bytesLeft: number;
  /** Rows are kept as JSON text, each written as it is read, so a big result is never held twice. */
  readonly json: boolean;
  /** See ResultLimits.readWhole. */
  readonly whole: boolean;
  /** See ResultLimits.markBlobs. */
  readonly blobs: boolean;
}

/** The limits a request carries (ExecRequest has them). */
export interface ResultLimits {
  readonly maxResultRows: number;
  readonly maxResultBytes?: number;
  /** Each result's rows are written as JSON text as they are read (ExecRequest.jsonRows). */
  readonly jsonRows?: boolean;
  /**
   * The statements' work is bounded before they run (the reads run in the server process): each
   * result is read in one call, which costs about half what reading it row by row does, and then
   * cut to the limits. Unbounded work is read row by row, to stop at the limits.
   */
  readonly readWhole?: boolean;
  /** See ExecRequest.maxDatabaseBytes. */
  readonly maxDatabaseBytes?: number;
  /** Each result says which of its cells held a BLOB (ExecRequest.markBlobs). */
  readonly markBlobs?: boolean;
}

/**
 * Reads a result set, keeping at most -max-result-rows rows and what fits in
 * the request's -max-result-bytes. A statement that writes (INSERT …
 * RETURNING) is run to the end so that every change is applied.
 */
function readRows(
  connection: Connection,
  prepared: Database.Statement,
  params: unknown[],
  budget: RowBudget,
  verb: string | undefined,
  complete: boolean,
): StatementResult {
  const { names, bools, types } = connection.schema.shape(prepared);
  const rows: ResultValue[][] = [];
  const jsonRows = new JsonRowChunks();
  let kept = 0;
  let seen = 0;
  let full = false;
  const raw = prepared.raw(true);
  // A read whose work is bounded is read whole, its integers as numbers when it can be (readWhole);
  // not when its blobs are to be marked, as readWhole converts them to text at once.
  const whole = budget.whole && !verb && !budget.blobs ? readWhole(raw, params, bools) : undefined;
  const blobs: number[] = [];
  const read = whole?.rows ?? (budget.whole ? raw.all(...params) : raw.iterate(...params));
  for (const row of read as Iterable<unknown[]>) {
    seen++;
    if (!full && kept < budget.rows) {
      if (budget.blobs) markBlobs(row, kept, blobs);
      // Weighed once converted: a blob weighs its base64 text either way.
      const bytes = whole?.weights[seen - 1] ?? convertRowWeighed(row, bools);
      if (bytes <= budget.bytesLeft) {
        budget.bytesLeft -= bytes;
        kept++;
        if (budget.json) jsonRows.add(row as ResultValue[], bytes);
        else rows.push(row as ResultValue[]);
        continue;
      }
      full = true;
    }
    if (!verb && !complete) break;
  }
  // `types` sits between columns and rows, as the API documents; a result of expressions only (SELECT 1) has none.
  // A column named after an expression that reads an introspection function is named as the client wrote it.
  const columns = names.map(unguardedName);
  const result: StatementResult = types ? { columns, types: [...types], rows } : { columns, rows };
  // No rows (INSERT, CREATE…) stay a plain [], which the response writes on its fast path.
  if (!jsonRows.empty) result.rowsJson = jsonRows.done();
  if (blobs.length > 0) result.blobs = blobs;
  if (seen > kept) result.truncated = true;
  if (verb) Object.assign(result, { message: `${verb} ${seen}`, changes: seen });
  return result;
}

/** Adds the cells of row `index` that hold a BLOB, before they become base64 text (StatementResult.blobs). */
function markBlobs(row: unknown[], index: number, blobs: number[]): void {
  for (let column = 0; column < row.length; column++)
    if (Buffer.isBuffer(row[column])) blobs.push(index * row.length + column);
}

/**
 * A read result whole, its integers read as numbers and each row converted
 * and weighed (convertNumberRowWeighed): a bigint per integer, converted
 * back, cost about an eighth of the read. Undefined when a number is beyond
 * 2^53 (it may be an INTEGER rounded on its way out): the caller reads the
 * result again with safe integers. Only for a statement that writes nothing,
 * which may run twice.
 */
function readWhole(
  raw: Database.Statement,
  params: unknown[],
  bools: readonly boolean[],
): { rows: unknown[][]; weights: number[] } | undefined {
  let rows: unknown[][];
  try {
    rows = raw.safeIntegers(false).all(...params) as unknown[][];
  } finally {
    // The statement is cached for every other reader, which expects safe integers.
    raw.safeIntegers(true);
  }
  const weights: number[] = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const weight = convertNumberRowWeighed(rows[i] as unknown[], bools);
    if (weight < 0) return undefined;
    weights[i] = weight;
  }
  return { rows, weights };
}

/** INTEGRITY CHECK: SQLite's integrity check plus foreign-key violations, one row per problem. */
function integrityCheck(db: Database.Database): StatementResult {
  const problems = (db.pragma('integrity_check') as Array<{ integrity_check: string }>)
    .map((row) => row.integrity_check)
    .filter((text) => text !== 'ok');
  const violations = db.pragma('foreign_key_check') as Array<{ table: string; rowid: bigint | null; parent: string }>;
  for (const violation of violations) {
    problems.push(
      `foreign key violation: ${violation.table} row ${violation.rowid ?? '?'} references a missing row of ${violation.parent}`,
    );
  }
  const rows = problems.length === 0 ? [['ok']] : problems.map((problem) => [problem]);
  return {
    columns: ['result'],
    rows,
    message: problems.length === 0 ? 'OK' : `${problems.length} problems`,
    changes: 0,
  };
}
