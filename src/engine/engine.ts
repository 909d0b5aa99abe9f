/**
 * The engine: runs requests against SQLite, synchronously, in whatever process
 * hosts it. It knows nothing of HTTP; it takes and returns plain data.
 */
import fs from 'node:fs';
import { EngineError } from '../errors';
import { replaceWithRestored, writeDatabaseCopy } from './files/database-copy';
import { createDatabaseFile } from './files/database-file';
import { isReadonlyKind, type StatementKind } from './dialect/statement';
import { Connection, ConnectionPool, type ConnectionOptions } from './connection-pool';
import { readPosition, recordPosition } from './files/journal-position';
import type {
  ExecRequest,
  ExecStatement,
  ForeignKeyViolation,
  GroupOutcome,
  JournalPosition,
  RowPage,
  RowsRequest,
  StatementResult,
} from './protocol';
import { listTableSchemas, type TableSchema } from './schema/schema';
import { SessionTransaction } from './session-transaction';
import { runStatements, type StatementListener } from './statement-runner';
import { toEngineError } from './sqlite-errors';
import {
  boundedShape,
  isBoundedOn,
  isKeyRangeBoundedOn,
  keyRangeShape,
  type PointLookup,
} from './in-server/bounded-read';
import { isPlannedBoundedOn, plannedShape, plannedVisits } from './in-server/planned-read';
import { rewriteForStorage } from './dialect/rewrite';
import { readRowPage } from './rows/row-pages';
import { isRowPageBoundedOn } from './in-server/bounded-row-page';
import { stringifyJson } from '../json-text';
import { writeExport, type ExportRequest } from './transfer/database-export';

export interface EngineOptions {
  /** Most database handles kept open at once. @default 128 */
  maxOpenDatabases?: number;
  /** See ConnectionOptions.busyTimeoutMs. @default 0 */
  busyTimeoutMs?: number;
  /** See ConnectionOptions.syncCommits. @default true */
  syncCommits?: boolean;
  /** See ConnectionOptions.pageCacheKiB. @default 512 */
  pageCacheKiB?: number;
}

export class Engine {
  private readonly pool: ConnectionPool;
  /** The cross-request transaction this engine holds, if any (one per engine: one per process). */
  private session: SessionTransaction | null = null;
  /** A batch that ran and waits for its journal entry before it commits. */
  private held: Connection | null = null;

  private readonly connectionOptions: ConnectionOptions;

  constructor(options: EngineOptions = {}) {
    this.connectionOptions = {
      busyTimeoutMs: options.busyTimeoutMs ?? 0,
      syncCommits: options.syncCommits ?? true,
      ...(options.pageCacheKiB !== undefined && { pageCacheKiB: options.pageCacheKiB }),
    };
    this.pool = new ConnectionPool(options.maxOpenDatabases ?? 128, this.connectionOptions);
  }

  /** Runs every statement of the request in one transaction: all or nothing. */
  exec(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    const { connection, results } = this.run(request, onStatement);
    connection.commit();
    return withJsonRows(request, results);
  }

  /**
   * Runs a read-only batch here if every statement is a bounded point read
   * (bounded-read.ts), or if it is one SELECT whose plan bounds its work
   * (planned-read.ts); undefined, having run nothing, otherwise. The tables
   * are judged in the transaction that reads them, so that a table changed
   * meanwhile by another process is judged as it is read.
   */
  execBoundedRead(request: ExecRequest): StatementResult[] | undefined {
    const lookups = pointLookups(request);
    const one = request.statements.length === 1 ? request.statements[0] : undefined;
    const range = one === undefined ? undefined : keyRangeShape(one);
    const facts = one === undefined ? undefined : plannedShape(one);
    if (lookups === undefined && range === undefined && facts === undefined) return undefined;
    const sql = one !== undefined && (range !== undefined || facts !== undefined) ? preparedText(one) : undefined;
    return this.readHere(request, (connection) => {
      // A point read returns at most one row: read whole.
      if (lookups !== undefined && lookups.every((lookup) => isBoundedOn(connection, lookup))) return 'whole';
      if (one === undefined || sql === undefined) return undefined;
      if (range !== undefined && isKeyRangeBoundedOn(connection, range, sql))
        return range.limit <= request.maxResultRows ? 'whole' : 'row by row';
      if (facts === undefined || !isPlannedBoundedOn(connection, one, sql, facts)) return undefined;
      // Whole only when the plan's bound on rows is within the request's: else row by row stops where it is cut.
      return (plannedVisits(connection, sql) ?? Infinity) <= request.maxResultRows ? 'whole' : 'row by row';
    });
  }

  /**
   * Runs the request in a read transaction if `howToRead` says it is bounded, inside it (see
   * ResultLimits.readWhole); undefined, rolled back, otherwise.
   */
  private readHere(
    request: ExecRequest,
    howToRead: (connection: Connection) => 'whole' | 'row by row' | undefined,
  ): StatementResult[] | undefined {
    const connection = this.pool.get(request.file);
    connection.setBatchContext(request.context);
    connection.begin('DEFERRED');
    try {
      // Reads only, in the snapshot begin() checked the schema version of.
      const results = connection.schema.pinnedFor(() => {
        const how = howToRead(connection);
        return how === undefined
          ? undefined
          : runStatements(connection, request.statements, { ...request, readWhole: how === 'whole' });
      });
      if (results === undefined) {
        connection.rollback();
        return undefined;
      }
      connection.commit();
      return withJsonRows(request, results);
    } catch (error) {
      connection.rollback();
      throw error;
    }
  }

  /**
   * Runs the batch and keeps its transaction open: the journal entry is
   * written before the batch commits, so no committed change escapes the
   * journal. On failure nothing is held.
   */
  execHeld(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    if (this.held !== null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine already holds a batch') });
    const { connection, results } = this.run(request, onStatement);
    this.held = connection;
    return withJsonRows(request, results);
  }

  /**
   * Runs write batches of one database in one transaction, each in a
   * savepoint of its own so that a failed batch undoes only itself, and holds
   * the transaction like execHeld (batches that queued up for the
   * database's write lock share one engine call, one journal write and one
   * commit). Run in one transaction one after the other, they give what they
   * would give one transaction each, which is how replay applies them.
   *
   * Two cases need care. A statement can end the whole transaction
   * (INSERT OR ROLLBACK): the group is run again from the start without that
   * batch, with the same clocks and seeds, so the others give the same
   * results. And deferred foreign keys are checked only at COMMIT, where one
   * batch's violation would fail them all: once the schema has any, the
   * group stops after its first batch, and the caller sends the rest again.
   */
  execHeldGroup(requests: readonly ExecRequest[], onStatement?: StatementListener): GroupOutcome[] {
    if (this.held !== null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine already holds a batch') });
    const first = requests[0];
    if (first === undefined) throw new EngineError('INTERNAL', {}, { cause: new Error('empty group') });
    const connection = this.pool.get(first.file);
    const failed = new Map<number, EngineError>();
    for (;;) {
      const outcomes = this.tryGroup(connection, requests, failed, onStatement);
      if (outcomes === undefined) continue;
      this.held = connection;
      return outcomes;
    }
  }

  /** One attempt at a group; undefined when a batch ended the transaction (it is then in `failed`). */
  private tryGroup(
    connection: Connection,
    requests: readonly ExecRequest[],
    failed: Map<number, EngineError>,
    onStatement?: StatementListener,
  ): GroupOutcome[] | undefined {
    connection.noteWrite();
    connection.begin('IMMEDIATE', requests[0]?.foreignKeys);
    const outcomes: GroupOutcome[] = [];
    let offset = 0;
    try {
      for (const [index, request] of requests.entries()) {
        if (index > 0 && connection.schema.hasDeferredForeignKeys()) break;
        if (index > 0 && runsAlone(connection, request)) break;
        const known = failed.get(index);
        const ran = known
          ? { outcome: { error: known.toData() } }
          : runInSavepoint(connection, request, (statement, brief) => onStatement?.(offset + statement, brief));
        if ('ended' in ran) {
          failed.set(index, ran.ended);
          return undefined;
        }
        outcomes.push(ran.outcome);
        offset += request.statements.length;
      }
    } catch (error) {
      connection.rollback();
      throw error;
    }
    return outcomes;
  }

  /**
   * Replay's group (replay/entry-batch.ts): write batches that all succeeded
   * live, one after the other in one transaction, held like execHeld; how
   * many ran (the group stops after its first batch once the schema has
   * deferred foreign keys, as in execHeldGroup). Unlike execHeldGroup no batch
   * gets a savepoint of its own unless it handles savepoints itself: should
   * any batch fail, nothing is held and the error is thrown, and the caller
   * applies the batches again one transaction each. A savepoint per batch
   * cost a fifth of a replay of small entries.
   */
  execHeldRun(requests: readonly ExecRequest[]): number {
    if (this.held !== null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine already holds a batch') });
    const first = requests[0];
    if (first === undefined) throw new EngineError('INTERNAL', {}, { cause: new Error('empty group') });
    const connection = this.pool.get(first.file);
    connection.noteWrite();
    connection.begin('IMMEDIATE', first.foreignKeys);
    let ran = 0;
    try {
      // begin() read the schema version; only a batch of this transaction can move it (it holds the write lock).
      // While nothing can have moved it, what was read of it holds: a stretch of plain batches runs under one
      // pin, with no version check per batch and statement.
      while (ran < requests.length) {
        const plainRun = connection.schema.pinnedFor(() => runPlainStretch(connection, requests, ran));
        ran += plainRun.ran;
        if (plainRun.stopped || ran === requests.length) break;
        // The next batch may move the schema: it runs unpinned, in the group's savepoint.
        const request = requests[ran] as ExecRequest;
        if (ran > 0 && connection.schema.hasDeferredForeignKeys()) break;
        if (ran > 0 && runsAlone(connection, request)) break;
        connection.setBatchContext(request.context);
        runSavepointed(connection, request);
        ran++;
        // What it did to the schema is read again (by begin's sync) at the next check, unpinned once.
        if (ran < requests.length && connection.schema.hasDeferredForeignKeys()) break;
        if (connection.foreignKeysOff) break;
      }
    } catch (error) {
      connection.rollback();
      throw error;
    }
    this.held = connection;
    return ran;
  }

  commitHeld(seq: number): void {
    const connection = this.takeHeld();
    try {
      recordPosition(connection, 'applied', seq);
      connection.commit();
    } catch (error) {
      connection.rollback();
      throw error;
    }
  }

  rollbackHeld(): void {
    const connection = this.takeHeld();
    connection.rollback();
  }

  private takeHeld(): Connection {
    const connection = this.held;
    this.held = null;
    if (connection === null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine holds no batch') });
    return connection;
  }

  private run(
    request: ExecRequest,
    onStatement?: StatementListener,
  ): { connection: Connection; results: StatementResult[] } {
    const connection = this.pool.get(request.file);
    const writes = !request.statements.every((statement) => isReadonlyKind(statement.kind));
    if (writes) connection.noteWrite();
    connection.setBatchContext(request.context);
    connection.begin(writes ? 'IMMEDIATE' : 'DEFERRED', request.foreignKeys);
    try {
      return { connection, results: runReported(connection, request, onStatement) };
    } catch (error) {
      connection.rollback();
      throw error;
    }
  }

  journalPosition(file: string): JournalPosition {
    return readPosition(this.pool.get(file).db);
  }

  /**
   * Opens the session's transaction on a connection of its own, so that
   * requests outside the session (in this process too) see the state before it.
   */
  beginSession(file: string): void {
    if (this.session !== null)
      throw new EngineError('INTERNAL', {}, { cause: new Error('engine already holds a session') });
    this.session = new SessionTransaction(new Connection(file, this.connectionOptions));
  }

  execInSession(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    const session = this.activeSession();
    try {
      return withJsonRows(request, session.exec(request, onStatement));
    } catch (error) {
      if (!session.open) this.session = null;
      throw error;
    }
  }

  /** Ends the session; nothing to do when SQLite already ended its transaction. */
  endSession(commit: boolean, seq?: number): void {
    const session = this.session;
    this.session = null;
    session?.end(commit, seq);
  }

  private activeSession(): SessionTransaction {
    if (this.session === null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine holds no session') });
    return this.session;
  }

  /** Every table, read in one transaction: never half before and half after another process's change. */
  tables(file: string): TableSchema[] {
    const connection = this.pool.get(file);
    return connection.read(() => listTableSchemas(connection.db));
  }

  schema(file: string, table: string): TableSchema | undefined {
    return this.pool.get(file).tableSchema(table);
  }

  rows(request: RowsRequest): RowPage {
    const connection = this.pool.get(request.file);
    const cacheCount = !connection.db.inTransaction;
    // One read transaction, so that the table's schema, the count and the page agree.
    return connection.read((): RowPage => {
      const schema = connection.tableSchema(request.table);
      if (!schema) throw new EngineError('TABLE_NOT_FOUND', { table: request.table });
      return readRowPage(connection, schema, request, cacheCount);
    });
  }

  /**
   * A page of /rows read here if its work is bounded (bounded-row-page.ts);
   * undefined, having read nothing, otherwise, and for a table that does not
   * exist (the engine processes give that error, as for any other page).
   */
  rowsBounded(request: RowsRequest): RowPage | undefined {
    const connection = this.pool.get(request.file);
    return connection.read((): RowPage | undefined => {
      const schema = connection.tableSchema(request.table);
      if (schema === undefined || !isRowPageBoundedOn(connection, schema, request)) return undefined;
      return readRowPage(connection, schema, request, true);
    });
  }

  /** See database-export.ts: one read transaction, so the copy is one snapshot. */
  exportDatabase(file: string, request: ExportRequest): void {
    const connection = this.pool.get(file);
    connection.read(() => writeExport(connection.db, request));
  }

  /**
   * Makes the database file (whole, then renamed into place: database-file.ts),
   * or records the journal's creation in a file that exists already (the
   * single database of -db). A handle left open on a file deleted behind our
   * back would hide the new file, so it is closed first.
   */
  createDatabase(file: string, createdSeq?: number): void {
    this.pool.close(file);
    if (!fs.existsSync(file)) return createDatabaseFile(file, createdSeq);
    if (createdSeq === undefined) return;
    const connection = this.pool.get(file);
    connection.noteWrite();
    connection.begin('IMMEDIATE');
    recordPosition(connection, 'created', createdSeq);
    recordPosition(connection, 'applied', createdSeq);
    connection.commit();
  }

  /**
   * Makes `target` a copy of `source`'s committed state (database-copy.ts),
   * replacing a file of that name. This engine's handle on the source holds no
   * transaction between calls (a session has a connection of its own), so it
   * reads what is committed.
   */
  copyDatabase(source: string, target: string, seq: number | undefined, template: string): void {
    const image = this.pool.get(source).db.serialize();
    this.pool.close(target);
    writeDatabaseCopy(image, target, seq, template);
  }

  /** Replaces `target` with `source`, a rebuilt state already marked with its restore entry (database-copy.ts). */
  restoreDatabase(source: string, target: string): void {
    this.pool.close(target);
    replaceWithRestored(source, target);
  }

  closeDatabase(file: string): void {
    this.pool.close(file);
  }

  close(): void {
    this.session?.end(false);
    this.session = null;
    this.held?.rollback();
    this.held = null;
    this.pool.closeAll();
  }
}

/** With `jsonRows`, rows read by runStatements are JSON text already; results made elsewhere (bounded reads, integrity checks) become so here. */
/** The point lookup of every statement (bounded-read.ts), or undefined when one is not of that shape. */
function pointLookups(request: ExecRequest): PointLookup[] | undefined {
  const lookups: PointLookup[] = [];
  for (const statement of request.statements) {
    const lookup = boundedShape(statement);
    if (lookup === undefined) return undefined;
    lookups.push(lookup);
  }
  return lookups;
}

/**
 * A SELECT's text as the runner will prepare it (reads of the schema table are filtered, as the
 * runner does), for the deciders of reads run here; undefined when it cannot be rewritten (the
 * engine processes give its error).
 */
function preparedText(statement: ExecStatement): string | undefined {
  try {
    return rewriteForStorage({ sql: statement.sql, kind: statement.kind, level: 'table', readonly: true });
  } catch {
    return undefined;
  }
}

function withJsonRows(request: ExecRequest, results: StatementResult[]): StatementResult[] {
  if (request.jsonRows !== true) return results;
  for (const result of results) {
    if (result.rows.length === 0) continue;
    result.rowsJson = [stringifyJson(result.rows)];
    result.rows = [];
  }
  return results;
}

/**
 * Whether a batch must not join the transaction before it: foreign keys are
 * set per connection and only outside a transaction, so a batch that runs
 * without them has a transaction to itself, and so has every batch after it.
 */
function runsAlone(connection: Connection, request: ExecRequest): boolean {
  return request.foreignKeys === 'off' || connection.foreignKeysOff;
}

/**
 * The batch's statements run; a batch run with foreign keys off gets, on its
 * last result, what `PRAGMA foreign_key_check` then finds, counted by table
 * (the import answers it: the data came in as they are).
 */
function runReported(connection: Connection, request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
  const results = runStatements(connection, request.statements, request, onStatement);
  const last = results[results.length - 1];
  if (request.foreignKeys === 'off' && last !== undefined) last.foreignKeyViolations = foreignKeyViolations(connection);
  return results;
}

function foreignKeyViolations(connection: Connection): ForeignKeyViolation[] {
  const counts = new Map<string, number>();
  for (const row of connection.db.prepare('PRAGMA foreign_key_check').all() as Array<{ table: string }>)
    counts.set(row.table, (counts.get(row.table) ?? 0) + 1);
  return [...counts].map(([table, rows]) => ({ table, rows }));
}

/** The savepoint around each batch of a group: the reserved prefix keeps clients from naming it. */
const GROUP_SAVEPOINT = '"_sqlscribe_group"';
const SAVEPOINT_GROUP = `SAVEPOINT ${GROUP_SAVEPOINT}`;
const RELEASE_GROUP = `RELEASE ${GROUP_SAVEPOINT}`;

/** Runs one batch of a group: its outcome, or `ended` when its failure ended the whole transaction. */
function runInSavepoint(
  connection: Connection,
  request: ExecRequest,
  onStatement: StatementListener,
): { outcome: GroupOutcome } | { ended: EngineError } {
  connection.setBatchContext(request.context);
  connection.runPlain(SAVEPOINT_GROUP);
  try {
    const results = runReported(connection, request, onStatement);
    connection.runPlain(RELEASE_GROUP);
    return { outcome: { results: withJsonRows(request, results) } };
  } catch (error) {
    const engineError = toEngineError(error);
    if (!connection.db.inTransaction) return { ended: engineError };
    connection.db.exec(`ROLLBACK TO ${GROUP_SAVEPOINT}`);
    connection.db.exec(`RELEASE ${GROUP_SAVEPOINT}`);
    return { outcome: { error: engineError.toData() } };
  }
}

/** Reads and row changes: they neither move the schema nor touch savepoints. */
const SCHEMA_KEEPING_KINDS: ReadonlySet<StatementKind> = new Set(['select', 'insert', 'update', 'delete']);

/**
 * Whether a statement of a replay group needs nothing around it. Any other
 * may move the schema (DDL, or a ROLLBACK TO undoing some), so the next
 * batch checks the schema version again; and a client's SAVEPOINT, RELEASE
 * or ROLLBACK TO acts on the savepoints open at that moment, so the batches
 * before it must not have left one open (live, a SAVEPOINT never released is
 * committed by COMMIT): such a batch runs in a savepoint of its own.
 */
function keepsSchema(statement: ExecStatement): boolean {
  return SCHEMA_KEEPING_KINDS.has(statement.kind);
}

/**
 * Runs the plain batches of a replay group from `from` on, while the schema
 * is pinned: up to the first batch that may move the schema (not run), or
 * until the schema has deferred foreign keys (`stopped`: the group ends there,
 * after its first batch).
 */
function runPlainStretch(
  connection: Connection,
  requests: readonly ExecRequest[],
  from: number,
): { ran: number; stopped: boolean } {
  let index = from;
  for (; index < requests.length; index++) {
    const request = requests[index] as ExecRequest;
    if (!request.statements.every(keepsSchema)) break;
    if (index > 0 && connection.schema.hasDeferredForeignKeys()) return { ran: index - from, stopped: true };
    if (index > 0 && runsAlone(connection, request)) return { ran: index - from, stopped: true };
    connection.setBatchContext(request.context);
    runStatements(connection, request.statements, request);
  }
  return { ran: index - from, stopped: false };
}

/** A batch of a replay group that is not plain, in the group's savepoint; a failure is thrown, the caller rolls back. */
function runSavepointed(connection: Connection, request: ExecRequest): void {
  connection.prepare(`SAVEPOINT ${GROUP_SAVEPOINT}`).run();
  runStatements(connection, request.statements, request);
  connection.prepare(`RELEASE ${GROUP_SAVEPOINT}`).run();
}
