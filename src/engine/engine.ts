/**
 * The engine: runs requests against SQLite, synchronously, in whatever process
 * hosts it. It knows nothing of HTTP; it takes and returns plain data.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../errors';
import { rewriteForStorage } from './dialect/rewrite';
import { isReadonlyKind, type StatementKind } from './dialect/statement';
import { ConnectionPool, type Connection } from './connection-pool';
import type { ExecRequest, ExecStatement, ResultValue, RowPage, RowsRequest, StatementResult } from './protocol';
import { listTableSchemas, readTableSchema, type TableSchema } from './schema';
import { toEngineError } from './sqlite-errors';
import { canonicalType, quoteIdentifier } from './types';
import { convertRow, toBindParameters } from './values';

const MESSAGE_VERBS: Partial<Record<StatementKind, string>> = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' };

export interface EngineOptions {
  /** Most database handles kept open at once. @default 128 */
  maxOpenDatabases?: number;
}

export class Engine {
  private readonly pool: ConnectionPool;

  constructor(options: EngineOptions = {}) {
    this.pool = new ConnectionPool(options.maxOpenDatabases ?? 128);
  }

  /**
   * Runs every statement of the request in one transaction: all or nothing.
   * `onStatement` hears each statement's index before it runs, so that a host
   * that must stop a runaway statement knows which one it stopped.
   */
  exec(request: ExecRequest, onStatement?: (index: number) => void): StatementResult[] {
    const connection = this.pool.get(request.file);
    const writes = !request.statements.every((statement) => isReadonlyKind(statement.kind));
    connection.db.exec(writes ? 'BEGIN IMMEDIATE' : 'BEGIN');
    let index = 0;
    try {
      const results: StatementResult[] = [];
      for (; index < request.statements.length; index++) {
        onStatement?.(index);
        results.push(runStatement(connection, request.statements[index] as ExecStatement, request.maxResultRows));
      }
      connection.db.exec('COMMIT');
      return results;
    } catch (error) {
      if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
      const engineError = toEngineError(error, (table, column) => connection.isBool(table, column));
      engineError.statement = index;
      throw engineError;
    }
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
  createDatabase(file: string): void {
    this.pool.close(file);
    this.pool.get(file);
  }

  closeDatabase(file: string): void {
    this.pool.close(file);
  }

  close(): void {
    this.pool.closeAll();
  }
}

function runStatement(connection: Connection, statement: ExecStatement, maxRows: number): StatementResult {
  if (statement.kind === 'integrity-check') return integrityCheck(connection.db);
  const sql = rewriteForStorage({ sql: statement.sql, kind: statement.kind, level: 'table', readonly: statement.kind === 'select' });
  const prepared = connection.prepare(sql);
  const params = toBindParameters(statement.params);
  const verb = MESSAGE_VERBS[statement.kind];
  if (prepared.reader && (statement.kind === 'select' || verb)) return readRows(connection, prepared, params, maxRows, verb);
  // ALTER TABLE … ADD COLUMN on a STRICT table runs SQLite's own check query, so it "returns data": run it, answer OK.
  if (prepared.reader) return { ...readRows(connection, prepared, params, maxRows, verb), columns: [], rows: [], message: 'OK', changes: 0 };
  const info = prepared.run(...params);
  return verb ? { columns: [], rows: [], message: `${verb} ${info.changes}`, changes: info.changes } : { columns: [], rows: [], message: 'OK', changes: 0 };
}

/**
 * Reads a result set, keeping at most maxRows rows. A statement that writes
 * (INSERT … RETURNING) is run to the end so that every change is applied.
 */
function readRows(connection: Connection, prepared: Database.Statement, params: unknown[], maxRows: number, verb: string | undefined): StatementResult {
  const columns = prepared.columns();
  const bools = columns.map((column) => isBoolColumn(connection, column));
  const rows: ResultValue[][] = [];
  let seen = 0;
  for (const row of prepared.raw(true).iterate(...params) as IterableIterator<unknown[]>) {
    seen++;
    if (rows.length < maxRows) rows.push(convertRow(row, bools));
    else if (!verb) break;
  }
  const result: StatementResult = { columns: columns.map((column) => column.name), rows };
  if (seen > rows.length) result.truncated = true;
  if (verb) Object.assign(result, { message: `${verb} ${seen}`, changes: seen });
  return result;
}

function isBoolColumn(connection: Connection, column: Database.ColumnDefinition): boolean {
  if (column.table === null || column.column === null) return false;
  if (column.type !== null && canonicalType(column.type) === 'BOOL') return true;
  return connection.isBool(column.table, column.column);
}

/** INTEGRITY CHECK: SQLite's integrity check plus foreign-key violations, one row per problem. */
function integrityCheck(db: Database.Database): StatementResult {
  const problems = (db.pragma('integrity_check') as Array<{ integrity_check: string }>)
    .map((row) => row.integrity_check)
    .filter((text) => text !== 'ok');
  const violations = db.pragma('foreign_key_check') as Array<{ table: string; rowid: bigint | null; parent: string }>;
  for (const violation of violations) {
    problems.push(`foreign key violation: ${violation.table} row ${violation.rowid ?? '?'} references a missing row of ${violation.parent}`);
  }
  const rows = problems.length === 0 ? [['ok']] : problems.map((problem) => [problem]);
  return { columns: ['result'], rows, message: problems.length === 0 ? 'OK' : `${problems.length} problems`, changes: 0 };
}
