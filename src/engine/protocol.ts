/**
 * The plain-data interface between the command bus and the engine. Everything
 * here can cross a process boundary (structured clone), because the engine is
 * meant to run in killable child processes.
 */
import type { Principal } from '../access/principal';
import type { StatementKind } from './dialect/statement';
import type { TableSchema } from './schema/schema';
import type { BatchContext } from './deterministic-functions';
import type { EngineErrorData } from '../errors';
import type { ExportRequest } from './transfer/database-export';
import type { ResultType } from './types';

/** A value a client may bind to a parameter: JSON scalars only. */
export type SqlValue = number | string | boolean | null;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** A value read from SQLite, ready for JSON: BLOBs are base64 strings; integers beyond 2^53 stay bigint. */
export type ResultValue = number | bigint | string | boolean | null;

export interface ExecStatement {
  readonly sql: string;
  readonly kind: StatementKind;
  readonly params?: SqlParams;
  /** savepoint, release and rollback-to: the savepoint's name. */
  readonly savepoint?: string;
}

/** A statement without its parameters: what stays the same each time one text runs. */
export type StatementText = Omit<ExecStatement, 'params'>;

/**
 * `text` with `params`, its keys spelled out rather than spread: a spread per
 * statement cost more than a small INSERT, and left objects of many shapes.
 */
export function withParams(text: StatementText, params: SqlParams): ExecStatement {
  return text.savepoint === undefined
    ? { sql: text.sql, kind: text.kind, params }
    : { sql: text.sql, kind: text.kind, params, savepoint: text.savepoint };
}

export interface ExecRequest {
  readonly file: string;
  readonly statements: readonly ExecStatement[];
  readonly maxResultRows: number;
  /**
   * Most bytes of rows the whole request may return, counted as rows are
   * read, before anything is serialized; past it each result is cut with
   * `truncated`. Unbounded when absent (replay keeps no rows).
   */
  readonly maxResultBytes?: number;
  /** The batch's clock and seed; a fresh pair when absent. The journal records it so that replay gives the same values. */
  readonly context?: BatchContext;
  /**
   * Results go to an HTTP response as they are: the engine writes each
   * result's rows as JSON text (`rowsJson`, with `rows` left empty), so they
   * are serialized once, where they are read, and cross the process
   * boundary as one string.
   */
  readonly jsonRows?: boolean;
  /**
   * The largest the database may grow through this batch, in bytes (-max-database-mb, or the
   * token's maxDatabaseMb): SQLite refuses a page past it before the batch commits. Unbounded when
   * absent: replay and recovery apply what was accepted live.
   */
  readonly maxDatabaseBytes?: number;
  /**
   * Each result lists the cells that held a BLOB (StatementResult.blobs): a
   * BLOB reaches the server as its base64 text, which a TEXT value may equal,
   * and the exercise checker must tell the two apart.
   */
  readonly markBlobs?: boolean;
  /**
   * 'off': the batch runs with foreign key enforcement off, as SQLite runs a
   * connection that did not ask for it (an import whose script turns it off,
   * an uploaded file), in a transaction of its own (never grouped with other
   * batches), and its last result carries `foreignKeyViolations`. Journaled
   * (the entry's `foreignKeys`), so that replay runs it the same way.
   * Enforced when absent.
   */
  readonly foreignKeys?: 'off';
}

/** Rows of one table whose foreign keys point nowhere, as `PRAGMA foreign_key_check` lists them. */
export interface ForeignKeyViolation {
  readonly table: string;
  readonly rows: number;
}

/** What became of one batch of a group: its results, or the catalog error that rolled it back. */
export type GroupOutcome = { results: StatementResult[] } | { error: EngineErrorData };

/**
 * Write batches of one database that ran in one transaction, each in a
 * savepoint of its own, and wait, uncommitted, for their journal entries.
 * `outcomes` may be shorter than the group: the batches after it did not run
 * and must be sent again (see Engine.execHeldGroup).
 */
export interface HeldGroup {
  readonly outcomes: GroupOutcome[];
  /** Commits, recording `seq` as the last journal entry applied to the database. */
  commit(seq: number): Promise<void>;
  rollback(): Promise<void>;
}

export interface StatementResult {
  columns: string[];
  /**
   * The declared type of each result column (INT, TEXT, FLOAT, BOOL, BLOB;
   * NUMERIC for a NUMERIC-affinity column of a table that is not STRICT),
   * null for an expression; present when at least one column has one. JSON
   * writes FLOAT 7.0 as 7, so clients need this to show the value as typed.
   */
  types?: (ResultType | null)[];
  /** Empty when the request asked for `jsonRows`. */
  rows: ResultValue[][];
  /** With `jsonRows`: the rows as one JSON array of arrays, in chunks to be sent one after another (json-row-chunks.ts). */
  rowsJson?: string[];
  /** With `markBlobs`: the cells of `rows` that held a BLOB, each as row × columns + column; absent when none did. */
  blobs?: number[];
  message?: string;
  changes?: number;
  truncated?: true;
  /** The last result of a batch run with `foreignKeys: 'off'`: its database's violations after it, by table. */
  foreignKeyViolations?: ForeignKeyViolation[];
}

export interface RowsRequest {
  readonly file: string;
  readonly table: string;
  readonly limit: number;
  /** Rows to skip; 0 when `after` is given (the route refuses the two together). */
  readonly offset: number;
  /** A cursor from an earlier page's `next`: the page starts after the row it names. */
  readonly after: string | null;
}

export interface RowPage {
  table: string;
  total: number;
  columns: string[];
  /** The rows as one JSON array of arrays, written once by the engine (see ExecRequest.jsonRows). */
  rowsJson: string;
  /** A cursor for the page after this one; null when no row follows or the table has no key (row-key.ts). */
  next: string | null;
}

/**
 * Why a request's work must stop before it ends: its -request-timeout ran
 * out (`ms` after it began), or its client closed the connection.
 */
export interface RequestStop {
  readonly reason: 'deadline' | 'gone';
  readonly ms: number;
}

/** Who an engine call serves, and until when: set for the work of client requests. */
export interface CallContext {
  /** Aborted, with a RequestStop as its reason, when the request's work must stop. */
  readonly signal?: AbortSignal;
  /** The client (its token's id, else its address): no client holds more than its share of the engine processes at once. */
  readonly client?: string;
  /** Who sent the request, when the server requires tokens: what it may do, and whom the journal names. */
  readonly principal?: Principal;
  /** Whether the request has already stopped, asked without making its signal (which may be made on demand). */
  stopped?(): boolean;
  /**
   * Told now and then (PROGRESS_MS) while the work runs in an engine process
   * how many of its statements have started: what an import's progress lines
   * say. Work without it is never watched.
   */
  progress?(statements: number): void;
}

/**
 * What the command bus needs from an engine. Asynchronous on purpose: the
 * implementation may run the work in another process.
 */
export interface EngineHost {
  exec(request: ExecRequest, call?: CallContext): Promise<StatementResult[]>;
  /**
   * Runs write batches of one database in one held transaction (one engine
   * call, one journal write and one commit for all of them). A statement
   * index in a thrown error (timeout, crash) counts the statements of the
   * whole group, in order.
   */
  execHeldGroup(requests: readonly ExecRequest[], call?: CallContext): Promise<HeldGroup>;
  /** The seq of the last journal entry applied to the database, and of the entry that created it (0 when unknown). */
  journalPosition(file: string): Promise<JournalPosition>;
  tables(file: string): Promise<TableSchema[]>;
  schema(file: string, table: string): Promise<TableSchema | undefined>;
  rows(request: RowsRequest, call?: CallContext): Promise<RowPage>;
  /** Writes a copy of the database to `request.out` from one read snapshot (database-export.ts). */
  exportDatabase(file: string, request: ExportRequest, call?: CallContext): Promise<void>;
  /** The SQL that rebuilds an uploaded .sqlite file, after its checks (sqlite-upload.ts). */
  uploadStatements(file: string, call?: CallContext): Promise<string[]>;
  /** Opens a transaction that stays open across requests, in an engine of its own. */
  openSession(file: string): Promise<EngineSession>;
  /** Creates the database file (and its WAL settings) if it does not exist; `createdSeq` is its journal entry. */
  createDatabase(file: string, createdSeq?: number): Promise<void>;
  /**
   * Makes `target` a copy of `source`'s committed state, replacing any file
   * of that name (a reset), with its own journal position (`seq`) and
   * `template` recorded in it.
   */
  copyDatabase(source: string, target: string, seq: number | undefined, template: string): Promise<void>;
  /** Closes every handle on the file, so that it can be deleted. */
  closeDatabase(file: string): Promise<void>;
  close(): Promise<void>;
}

/** A transaction held open across requests, bound to one database and one engine. */
export interface EngineSession {
  /** A stopped request (see CallContext) ends the session: its engine is stopped with the work. */
  exec(request: ExecRequest, call?: CallContext): Promise<StatementResult[]>;
  /** Commits (recording `seq` as applied, when journaled) or rolls back, and gives the engine back. */
  end(commit: boolean, seq?: number): Promise<void>;
  /** Called once if the engine holding the transaction is lost (killed at the query timeout, or crashed). */
  onLost(listener: () => void): void;
}

export interface JournalPosition {
  applied: number;
  created: number;
  /** The template the database was copied from (POST /dbs with `from`); absent when it was not. */
  template?: string;
}
