/**
 * SQLite says only "FOREIGN KEY constraint failed". A learner needs to know
 * which reference failed, so on that error (never on the success path) the
 * statement is run once more inside a savepoint with the foreign keys
 * deferred, PRAGMA foreign_key_check names the row that breaks a reference,
 * and the savepoint is rolled back: nothing of the second run stays.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../errors';
import type { Connection } from './connection-pool';
import { rewriteForStorage } from './dialect/rewrite';
import type { ExecStatement } from './protocol';
import { toBindParameters } from './values';
import { sqlLiteral, type StoredValue } from './transfer/sql-literal';

const SAVEPOINT = '_sqlscribe_fk_explain';

interface Violation {
  table: string;
  rowid: bigint | number | null;
  parent: string;
  fkid: bigint | number;
}

interface ForeignKeyRow {
  id: bigint | number;
  table: string;
  from: string;
  to: string | null;
}

/** Which reference failed: the child table and columns, the parent they point to, and the child's values. */
export interface ForeignKeyFailure {
  table: string;
  columns: string[];
  references: { table: string; columns: string[] };
  values: unknown[];
  /** The statement wrote the child row (its reference has no parent), or removed/changed the parent a child still uses. */
  side: 'child' | 'parent';
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function violationKey(violation: Violation): string {
  return `${violation.table}\u0000${String(violation.rowid)}\u0000${String(violation.fkid)}`;
}

/**
 * Every broken reference of the database. Read before and after the second
 * run, so that one broken before (rows loaded with the keys off) is not
 * blamed on this statement. O(rows with references), on the failure path only.
 */
function violations(db: Database.Database): Violation[] {
  return db.pragma('foreign_key_check') as Violation[];
}

function primaryKeyOf(db: Database.Database, table: string): string[] {
  const columns = db.pragma(`table_info(${quoteName(table)})`) as Array<{ name: string; pk: bigint | number }>;
  return columns
    .filter((column) => Number(column.pk) > 0)
    .sort((a, b) => Number(a.pk) - Number(b.pk))
    .map((column) => column.name);
}

function describe(
  db: Database.Database,
  violation: Violation,
  target: string | undefined,
): ForeignKeyFailure | undefined {
  const keys = (db.pragma(`foreign_key_list(${quoteName(violation.table)})`) as ForeignKeyRow[]).filter(
    (key) => Number(key.id) === Number(violation.fkid),
  );
  if (keys.length === 0) return undefined;
  const columns = keys.map((key) => key.from);
  const parentKey = keys.every((key) => key.to !== null)
    ? keys.map((key) => key.to ?? '')
    : primaryKeyOf(db, violation.parent);
  let values: unknown[] = [];
  if (violation.rowid !== null) {
    const row = db
      .prepare(`SELECT ${columns.map(quoteName).join(', ')} FROM ${quoteName(violation.table)} WHERE rowid = ?`)
      .raw(true)
      .get(violation.rowid) as unknown[] | undefined;
    values = row ?? [];
  }
  const side = target !== undefined && target.toLowerCase() === violation.table.toLowerCase() ? 'child' : 'parent';
  return { table: violation.table, columns, references: { table: violation.parent, columns: parentKey }, values, side };
}

/** Runs the failed statement again with the foreign keys deferred and names the first reference it breaks; undefined if it cannot tell. */
export function findForeignKeyFailure(
  connection: Connection,
  statement: ExecStatement,
  target: string | undefined,
): ForeignKeyFailure | undefined {
  const db = connection.db;
  // A deferred key fails at COMMIT, not in a statement: there is nothing to run again.
  if (Number(db.pragma('defer_foreign_keys', { simple: true })) !== 0) return undefined;
  const before = new Set(violations(db).map(violationKey));
  db.exec(`SAVEPOINT ${SAVEPOINT}`);
  try {
    db.pragma('defer_foreign_keys = ON');
    const sql = rewriteForStorage({ sql: statement.sql, kind: statement.kind, level: 'table', readonly: false });
    const prepared = db.prepare(sql);
    const params = toBindParameters(statement.params);
    if (prepared.reader) prepared.all(...params);
    else prepared.run(...params);
    const found = violations(db).find((violation) => !before.has(violationKey(violation)));
    return found === undefined ? undefined : describe(db, found, target);
  } catch {
    return undefined;
  } finally {
    db.pragma('defer_foreign_keys = OFF');
    db.exec(`ROLLBACK TO ${SAVEPOINT}`);
    db.exec(`RELEASE ${SAVEPOINT}`);
  }
}

function pairs(table: string, columns: readonly string[], values: readonly unknown[]): string {
  return columns
    .map((column, index) =>
      index < values.length ? `${table}.${column} = ${sqlLiteral(values[index] as StoredValue)}` : `${table}.${column}`,
    )
    .join(', ');
}

/** The catalog error with the failing reference in words and in fields. */
export function foreignKeyError(error: EngineError, failure: ForeignKeyFailure): EngineError {
  const names = (table: string, columns: readonly string[]): string =>
    columns.map((column) => `${table}.${column}`).join(', ');
  const words =
    failure.side === 'child'
      ? `${pairs(failure.table, failure.columns, failure.values)} has no ${names(failure.references.table, failure.references.columns)}`
      : `${pairs(failure.references.table, failure.references.columns, failure.values)} is still referenced by ${names(failure.table, failure.columns)}`;
  const details = { ...error.details, table: failure.table, columns: failure.columns, references: failure.references };
  const options = { sqliteCode: error.sqliteCode, details, cause: error.cause };
  const explained = new EngineError(
    'CONSTRAINT_FOREIGN_KEY',
    { detail: `: ${words}` },
    error.statement === undefined ? options : { ...options, statement: error.statement },
  );
  return explained;
}
