/**
 * A transaction held open across requests.
 *
 * Each request runs after a savepoint of its own, so that a failed statement
 * undoes that request only and the session stays open. The marker is never
 * released on success: releasing it would also release the savepoints the
 * client made after it, which the client may roll back to in a later request.
 * The client's SAVEPOINT, RELEASE and ROLLBACK TO are followed here, because
 * SQLite has no way to ask which savepoints exist.
 */
import { EngineError } from '../errors';
import { RESERVED_SAVEPOINT_PREFIX } from './dialect/statement';
import type { Connection } from './connection-pool';
import { recordPosition } from './files/journal-position';
import type { ExecRequest, ExecStatement, StatementResult } from './protocol';
import { runStatements, type StatementListener } from './statement-runner';
import { quoteIdentifier } from './types';

export class SessionTransaction {
  /** Open savepoints, oldest first, lower-cased (SQLite compares them case-insensitively). */
  private readonly savepoints: string[] = [];
  private requests = 0;

  constructor(private readonly connection: Connection) {
    // IMMEDIATE: the session holds the write lock from the start, as the specification's single slot implies.
    connection.noteWrite();
    connection.begin('IMMEDIATE');
  }

  /** False once SQLite ended the transaction itself (e.g. INSERT OR ROLLBACK on a conflict). */
  get open(): boolean {
    return this.connection.db.open && this.connection.db.inTransaction;
  }

  exec(request: ExecRequest, onStatement?: StatementListener): StatementResult[] {
    const marker = `${RESERVED_SAVEPOINT_PREFIX}_${++this.requests}`;
    this.connection.setBatchContext(request.context);
    this.savepoint(marker);
    try {
      return runStatements(this.connection, request.statements, request, onStatement, (statement) =>
        this.follow(statement, marker),
      );
    } catch (error) {
      this.undoRequest(marker, error);
      throw error;
    }
  }

  private undoRequest(marker: string, cause: unknown): void {
    if (!this.open) {
      this.connection.close();
      // SQLite may end the transaction at SQLITE_FULL: at the database's size bound the client hears that bound.
      if (cause instanceof EngineError && cause.errorName === 'DATABASE_TOO_LARGE')
        throw new EngineError(
          'SESSION_DATABASE_TOO_LARGE',
          cause.params,
          cause.statement === undefined ? {} : { statement: cause.statement },
        );
      throw new EngineError('SESSION_ABORTED', {});
    }
    this.run(`ROLLBACK TO ${quoteIdentifier(marker)}`);
    this.run(`RELEASE ${quoteIdentifier(marker)}`);
    this.savepoints.splice(this.savepoints.lastIndexOf(marker));
  }

  private savepoint(name: string): void {
    this.run(`SAVEPOINT ${quoteIdentifier(name)}`);
    this.savepoints.push(name.toLowerCase());
  }

  /** Mirrors the client's savepoint statements; sets a new marker if they went past this request's. */
  private follow(statement: ExecStatement, marker: string): void {
    const name = statement.savepoint?.toLowerCase();
    if (name === undefined) return;
    if (statement.kind === 'savepoint') this.savepoints.push(name);
    const at = this.savepoints.lastIndexOf(name);
    if (statement.kind === 'release') this.savepoints.splice(at);
    if (statement.kind === 'rollback-to') this.savepoints.splice(at + 1);
    if (!this.savepoints.includes(marker)) this.savepoint(marker);
  }

  private run(sql: string): void {
    this.connection.db.exec(sql);
  }

  /** With `seq`, the commit records it as the last journal entry applied. */
  end(commit: boolean, seq?: number): void {
    try {
      if (this.open && commit && seq !== undefined) recordPosition(this.connection, 'applied', seq);
      if (this.open) this.run(commit ? 'COMMIT' : 'ROLLBACK');
    } finally {
      this.connection.close();
    }
  }
}
