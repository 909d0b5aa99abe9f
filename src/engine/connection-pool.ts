/**
 * Open database handles, bounded: the least recently used is closed first, so
 * that a directory of thousands of databases works with a fixed number of
 * file descriptors.
 */
import Database from 'better-sqlite3';
import { DeterministicFunctions, newBatchContext, type BatchContext } from './deterministic-functions';
import { defineIntrospectionGuards } from './dialect/pragma-guards';
import type { TableSchema } from './schema/schema';
import { SchemaCache } from './schema/schema-cache';

/** SQLite's largest page count (it clamps a larger one): no bound but its own. */
const UNBOUNDED_PAGES = 4294967294;

/** Statements prepared once per connection and reused (prepare costs more than a point query). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * WAL mode is stored in the file, so it is set once, when a database is
 * created. Switching takes an exclusive lock: a file made elsewhere that is
 * not in WAL yet may meet another process switching it at the same moment, so
 * only then is a short busy wait allowed.
 */
export function useWal(db: Database.Database): void {
  if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
  const before = Number(db.pragma('busy_timeout', { simple: true }));
  db.pragma('busy_timeout = 2000');
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${before}`);
}

export interface ConnectionOptions {
  mustExist?: boolean;
  /**
   * How long SQLite waits for a lock another process holds for a moment
   * (while it checkpoints or closes the last handle on the file) before it
   * answers SQLITE_BUSY. The wait blocks the whole process, so it is 0 in the
   * server process; an engine process runs one call at a time and may wait.
   * Writers never meet here: the service serializes them itself.
   * @default 0
   */
  busyTimeoutMs?: number;
  /**
   * False: commits are not synced to disk (PRAGMA synchronous = OFF). Only for
   * a rebuild into new files that its owner syncs once at the end (the replay
   * tool): a crash meanwhile loses the rebuild, which is run again; never for
   * the server's own files, whose commits must survive a power cut.
   * @default true
   */
  syncCommits?: boolean;
  /**
   * The most memory SQLite's page cache of this handle may hold, in KiB. A
   * server holds a handle on every database a class uses, in each of its
   * processes: SQLite's own 2 MB each would be most of the server's memory.
   * A lesson over a Chinook-sized database reads no slower with 512 KiB
   * (pages beyond it come from the system's file cache).
   * @default 512
   */
  pageCacheKiB?: number;
}

export class Connection {
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** The text of the statement at the end of `statements` (the most recently used). */
  private newest: string | undefined;
  /** Statements that read no schema (SAVEPOINT, RELEASE), by text: prepared once, run with no schema check. */
  private readonly plainStatements = new Map<string, Database.Statement>();
  /** What the schema says (tables, BOOL columns, result shapes), kept until it changes. */
  readonly schema: SchemaCache;
  /**
   * Row counts by table (`total` must not cost O(rows) on every page).
   * A count holds while the connection's dataStamp is unchanged.
   */
  private readonly counts = new Map<string, { stamp: string; count: bigint }>();
  private readonly dataVersion: Database.Statement;
  private writes = 0;
  /** The bound limitSize last set, in bytes; null: none (SQLite's own). */
  private sizeLimit: number | null = null;
  /** A transaction begun with foreign keys off is open (or ended without them set back yet). */
  private foreignKeysAreOff = false;
  private readonly functions: DeterministicFunctions;
  /** Transaction control, prepared once: db.exec would parse the text on every request. */
  private readonly control: Readonly<Record<'DEFERRED' | 'IMMEDIATE' | 'COMMIT' | 'ROLLBACK', Database.Statement>>;

  constructor(
    readonly file: string,
    options: ConnectionOptions = {},
  ) {
    this.db = new Database(file, { timeout: options.busyTimeoutMs ?? 0, fileMustExist: options.mustExist === true });
    this.db.defaultSafeIntegers(true);
    useWal(this.db);
    if (options.syncCommits === false) this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = -${Math.trunc(options.pageCacheKiB ?? 512)}`);
    this.db.pragma('foreign_keys = ON');
    this.schema = new SchemaCache(this.db);
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.functions = new DeterministicFunctions(this.db);
    defineIntrospectionGuards(this.db);
    this.control = {
      DEFERRED: this.db.prepare('BEGIN DEFERRED'),
      IMMEDIATE: this.db.prepare('BEGIN IMMEDIATE'),
      COMMIT: this.db.prepare('COMMIT'),
      ROLLBACK: this.db.prepare('ROLLBACK'),
    };
  }

  commit(): void {
    this.control.COMMIT.run();
    this.restoreForeignKeys();
  }

  /** Rolls back the open transaction, if there is one. */
  rollback(): void {
    if (this.db.inTransaction) this.control.ROLLBACK.run();
    this.restoreForeignKeys();
  }

  /** Whether the open transaction runs with foreign keys off (begin's `foreignKeys`): no other batch may join it. */
  get foreignKeysOff(): boolean {
    return this.foreignKeysAreOff;
  }

  /**
   * Back to enforcement once the transaction has ended: SQLite ignores the
   * pragma inside one, so a COMMIT that failed and left it open restores
   * nothing, and the rollback that follows does.
   */
  private restoreForeignKeys(): void {
    if (!this.foreignKeysAreOff || this.db.inTransaction) return;
    this.db.pragma('foreign_keys = ON');
    this.foreignKeysAreOff = false;
  }

  /** Fixes the clock and the seed of the batch about to run (a fresh pair unless replaying). */
  setBatchContext(context: BatchContext = newBatchContext()): void {
    this.functions.set(context);
  }

  /**
   * Opens a transaction and, inside it, checks what this connection keeps
   * (statements, schema facts, row counts) against the schema version the
   * transaction sees: another process may have changed the schema since.
   */
  begin(mode: 'DEFERRED' | 'IMMEDIATE', foreignKeys?: 'off'): void {
    // Only outside a transaction does SQLite take the setting; commit and rollback set it back.
    if (foreignKeys === 'off') {
      this.db.pragma('foreign_keys = OFF');
      this.foreignKeysAreOff = true;
    }
    try {
      this.control[mode].run();
      this.sync();
    } catch (error) {
      this.rollback();
      throw error;
    }
  }

  /** Runs `read` in the transaction already open, or in a read transaction of its own. */
  read<T>(read: () => T): T {
    if (this.db.inTransaction) {
      this.sync();
      return read();
    }
    this.begin('DEFERRED');
    try {
      const result = read();
      this.commit();
      return result;
    } catch (error) {
      this.rollback();
      throw error;
    }
  }

  /** Drops what was kept for an older schema; must run inside the transaction that will use what is kept. */
  private sync(): void {
    if (!this.schema.sync()) return;
    this.statements.clear();
    this.newest = undefined;
    this.counts.clear();
  }

  /**
   * A prepared statement, from the cache when its text was prepared before
   * at the current schema version. After a schema change (this transaction's
   * own, or another connection's) every statement is prepared again, so that
   * its columns are the new ones.
   */
  prepare(sql: string): Database.Statement {
    this.sync();
    const cached = this.statements.get(sql);
    if (cached) {
      // A batch repeats one statement many times: it is the newest already, and needs no move to the end.
      if (this.newest !== sql) {
        this.statements.delete(sql);
        this.statements.set(sql, cached);
        this.newest = sql;
      }
      return cached;
    }
    const statement = this.db.prepare(sql);
    this.statements.set(sql, statement);
    this.newest = sql;
    if (this.statements.size > STATEMENT_CACHE_SIZE) {
      const oldest = this.statements.keys().next().value as string;
      this.statements.delete(oldest);
    }
    return statement;
  }

  /**
   * Runs a statement that reads no schema, such as a group's SAVEPOINT and
   * RELEASE: prepared once rather than parsed on every run (db.exec), and
   * with no schema version check.
   */
  runPlain(sql: string): void {
    let statement = this.plainStatements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.plainStatements.set(sql, statement);
    }
    statement.run();
  }

  /**
   * Bounds how large the database may grow from now on (PRAGMA max_page_count): SQLite then
   * answers SQLITE_FULL at the first page past it, before anything commits. A database already
   * larger keeps its size (SQLite never sets the bound below it): deletes go on, growth does not.
   * Undefined lifts the bound. Set only when it changes: most batches of a database carry the same.
   */
  limitSize(bytes: number | undefined): void {
    const limit = bytes ?? null;
    if (limit === this.sizeLimit) return;
    const pageSize = Number(this.db.pragma('page_size', { simple: true }));
    const pages = limit === null ? UNBOUNDED_PAGES : Math.max(1, Math.floor(limit / pageSize));
    this.db.pragma(`max_page_count = ${pages}`);
    this.sizeLimit = limit;
  }

  /** The bound limitSize set, in bytes; null: none. */
  get sizeLimitBytes(): number | null {
    return this.sizeLimit;
  }

  /** Told before this connection writes: row counts read before may no longer hold. */
  noteWrite(): void {
    this.writes++;
  }

  /** The schema record of a table (see readTableSchema), read once per schema version. */
  tableSchema(table: string): TableSchema | undefined {
    return this.read(() => this.schema.table(table));
  }

  /**
   * What names the data this connection's read transaction sees: SQLite's
   * data_version (changes committed by other connections) and this
   * connection's own write count. Facts read from the data (row counts,
   * where an offset lands) hold while it is unchanged. Must be called inside
   * a read transaction that this connection opened with nothing written yet:
   * PRAGMA data_version then reads the snapshot that the transaction sees
   * (https://sqlite.org/pragma.html#pragma_data_version).
   */
  dataStamp(): string {
    return `${this.dataVersion.get() as bigint}/${this.writes}`;
  }

  /**
   * count(*) of a table; `quotedTable` is the table's quoted name. Kept for
   * as long as `stamp` (dataStamp) is unchanged; null, inside a transaction
   * that may have written (a held batch of an in-process engine), keeps nothing.
   */
  countRows(quotedTable: string, stamp: string | null): bigint {
    const count = (): bigint =>
      this.prepare(`SELECT count(*) FROM ${quotedTable}`).pluck().safeIntegers(true).get() as bigint;
    if (stamp === null) return count();
    const cached = this.counts.get(quotedTable);
    if (cached !== undefined && cached.stamp === stamp) return cached.count;
    const fresh = count();
    this.counts.set(quotedTable, { stamp, count: fresh });
    return fresh;
  }

  /** Whether table.column is a BOOL column; cached until the schema changes. */
  isBool(table: string, column: string): boolean {
    return this.schema.isBool(table, column);
  }

  close(): void {
    this.statements.clear();
    this.plainStatements.clear();
    this.newest = undefined;
    if (this.db.open) this.db.close();
  }
}

export class ConnectionPool {
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly capacity: number,
    private readonly options: ConnectionOptions = {},
  ) {}

  get(file: string): Connection {
    let connection = this.connections.get(file);
    if (connection) {
      this.connections.delete(file);
    } else {
      connection = new Connection(file, this.options);
      this.evictIfFull();
    }
    this.connections.set(file, connection);
    return connection;
  }

  private evictIfFull(): void {
    // Never evict a handle inside a transaction: it holds work in progress.
    for (const [file, connection] of this.connections) {
      if (this.connections.size < this.capacity) return;
      if (connection.db.inTransaction) continue;
      connection.close();
      this.connections.delete(file);
    }
  }

  close(file: string): void {
    this.connections.get(file)?.close();
    this.connections.delete(file);
  }

  closeAll(): void {
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }
}
