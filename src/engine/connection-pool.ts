/**
 * Open database handles, bounded: the least recently used is closed first, so
 * that a directory of thousands of databases works with a fixed number of
 * file descriptors.
 */
import Database from 'better-sqlite3';
import { DeterministicFunctions, newBatchContext, type BatchContext } from './deterministic-functions';
import { boolColumns } from './schema';

/** Statements prepared once per connection and reused (prepare costs more than a point query). */
const STATEMENT_CACHE_SIZE = 256;

export class Connection {
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly schemaVersion: Database.Statement;
  private boolCache = new Map<string, Set<string>>();
  private boolCacheVersion = -1n;
  private readonly functions: DeterministicFunctions;

  constructor(readonly file: string, options: { mustExist?: boolean } = {}) {
    // timeout 0: the busy wait would block the event loop; the service serializes writers itself.
    this.db = new Database(file, { timeout: 0, fileMustExist: options.mustExist === true });
    this.db.defaultSafeIntegers(true);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.schemaVersion = this.db.prepare('PRAGMA schema_version').pluck();
    this.functions = new DeterministicFunctions(this.db);
  }

  /** Fixes the clock and the seed of the batch about to run (a fresh pair unless replaying). */
  setBatchContext(context: BatchContext = newBatchContext()): void {
    this.functions.set(context);
  }

  prepare(sql: string): Database.Statement {
    const cached = this.statements.get(sql);
    if (cached) {
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    const statement = this.db.prepare(sql);
    this.statements.set(sql, statement);
    if (this.statements.size > STATEMENT_CACHE_SIZE) {
      const oldest = this.statements.keys().next().value as string;
      this.statements.delete(oldest);
    }
    return statement;
  }

  /** Whether table.column is a BOOL column; cached until the schema changes. */
  isBool(table: string, column: string): boolean {
    const version = this.schemaVersion.get() as bigint;
    if (version !== this.boolCacheVersion) {
      this.boolCache = new Map();
      this.boolCacheVersion = version;
    }
    const key = table.toLowerCase();
    let columns = this.boolCache.get(key);
    if (!columns) {
      columns = boolColumns(this.db, table);
      this.boolCache.set(key, columns);
    }
    return columns.has(column.toLowerCase());
  }

  close(): void {
    this.statements.clear();
    if (this.db.open) this.db.close();
    this.functions.close();
  }
}

export class ConnectionPool {
  private readonly connections = new Map<string, Connection>();

  constructor(private readonly capacity: number) {}

  get(file: string): Connection {
    let connection = this.connections.get(file);
    if (connection) {
      this.connections.delete(file);
    } else {
      connection = new Connection(file);
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
