/**
 * The engine: runs requests against SQLite, synchronously, in whatever process
 * hosts it. It knows nothing of HTTP; it takes and returns plain data.
 */
import { EngineError } from '../errors';
import { isReadonlyKind } from './dialect/statement';
import { Connection, ConnectionPool } from './connection-pool';
import { readPosition, recordPosition } from './journal-position';
import type { ExecRequest, JournalPosition, RowPage, RowsRequest, StatementResult } from './protocol';
import { listTableSchemas, readTableSchema, type TableSchema } from './schema';
import { SessionTransaction } from './session-transaction';
import { runStatements, type StatementListener } from './statement-runner';
import { quoteIdentifier } from './types';
import { convertRow } from './values';

export interface EngineOptions {
  /** Most database handles kept open at once. @default 128 */
  maxOpenDatabases?: number;
}

export class Engine {
  private readonly pool: ConnectionPool;
  /** The cross-request transaction this engine holds, if any (one per engine: one per process). */
  private session: SessionTransaction | null = null;
  /** A batch that ran and waits for its journal entry before it commits. */
  private held: Connection | null = null;

  constructor(options: EngineOptions = {}) {
    this.pool = new ConnectionPool(options.maxOpenDatabases ?? 128);
  }

  /** Runs every statement of the request in one transaction: all or nothing. */
  exec(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    const { connection, results } = this.run(request, onStatement);
    connection.db.exec('COMMIT');
    return results;
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
    return results;
  }

  commitHeld(seq: number): void {
    const connection = this.takeHeld();
    try {
      recordPosition(connection, 'applied', seq);
      connection.db.exec('COMMIT');
    } catch (error) {
      if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
      throw error;
    }
  }

  rollbackHeld(): void {
    const connection = this.takeHeld();
    if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
  }

  private takeHeld(): Connection {
    const connection = this.held;
    this.held = null;
    if (connection === null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine holds no batch') });
    return connection;
  }

  private run(request: ExecRequest, onStatement?: StatementListener): { connection: Connection; results: StatementResult[] } {
    const connection = this.pool.get(request.file);
    const writes = !request.statements.every((statement) => isReadonlyKind(statement.kind));
    connection.setBatchContext(request.context);
    connection.db.exec(writes ? 'BEGIN IMMEDIATE' : 'BEGIN');
    try {
      return { connection, results: runStatements(connection, request.statements, request.maxResultRows, onStatement) };
    } catch (error) {
      if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
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
    if (this.session !== null) throw new EngineError('INTERNAL', {}, { cause: new Error('engine already holds a session') });
    this.session = new SessionTransaction(new Connection(file));
  }

  execInSession(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    const session = this.activeSession();
    try {
      return session.exec(request, onStatement);
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

  tables(file: string): TableSchema[] {
    return listTableSchemas(this.pool.get(file).db);
  }

  schema(file: string, table: string): TableSchema | undefined {
    return readTableSchema(this.pool.get(file).db, table);
  }

  rows(request: RowsRequest): RowPage {
    const connection = this.pool.get(request.file);
    const schema = readTableSchema(connection.db, request.table);
    if (!schema) throw new EngineError('TABLE_NOT_FOUND', { table: request.table });
    const table = quoteIdentifier(schema.name);
    const order = schema.primaryKey === '' ? 'rowid' : schema.primaryKey.split(',').map(quoteIdentifier).join(', ');
    // One read transaction, so that the count and the page agree.
    return connection.db.transaction((): RowPage => {
      const total = connection.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as bigint;
      const page = connection.prepare(`SELECT * FROM ${table} ORDER BY ${order} LIMIT ? OFFSET ?`).raw(true);
      const bools = schema.columns.map((column) => column.type === 'BOOL');
      const rows = (page.all(BigInt(request.limit), BigInt(request.offset)) as unknown[][]).map((row) => convertRow(row, bools));
      return { table: schema.name, total: Number(total), columns: schema.columns.map((column) => column.name), rows };
    })();
  }

  /** A handle left open on a file deleted behind our back would hide the new file. */
  createDatabase(file: string, createdSeq?: number): void {
    this.pool.close(file);
    const connection = this.pool.get(file);
    if (createdSeq === undefined) return;
    connection.db.exec('BEGIN IMMEDIATE');
    recordPosition(connection, 'created', createdSeq);
    recordPosition(connection, 'applied', createdSeq);
    connection.db.exec('COMMIT');
  }

  closeDatabase(file: string): void {
    this.pool.close(file);
  }

  close(): void {
    this.session?.end(false);
    this.session = null;
    if (this.held?.db.inTransaction) this.held.db.exec('ROLLBACK');
    this.held = null;
    this.pool.closeAll();
  }
}
