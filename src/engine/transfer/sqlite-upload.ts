/**
 * An uploaded .sqlite file as the SQL that rebuilds it (sql-dump.ts), after
 * checks: it is a SQLite database, it passes `PRAGMA integrity_check`, it
 * holds none of the service's names, and every column type maps to one of
 * ours. Runs in an engine process: a hostile file is opened there, read-only,
 * under the query timeout, never in the server.
 */
import Database from 'better-sqlite3';
import { EngineError } from '../../errors';
import { classifyStatement } from '../dialect/classify';
import { rewriteForStorage } from '../dialect/rewrite';
import { dumpStatements, schemaObjects } from './sql-dump';

function open(file: string): Database.Database {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return db;
  } catch (error) {
    throw new EngineError('IMPORT_NOT_SQLITE', { detail: (error as Error).message });
  }
}

function checkIntegrity(db: Database.Database): void {
  let problems: string[];
  try {
    problems = (db.pragma('integrity_check') as Array<{ integrity_check: string }>)
      .map((row) => row.integrity_check)
      .filter((text) => text !== 'ok');
  } catch (error) {
    throw new EngineError('IMPORT_SQLITE_CORRUPT', { detail: (error as Error).message });
  }
  if (problems.length > 0) throw new EngineError('IMPORT_SQLITE_CORRUPT', { detail: problems.slice(0, 3).join('; ') });
}

/** SQLite makes sqlite_sequence and sqlite_stat* itself; anything else with a reserved name was put there. */
function checkNames(db: Database.Database): void {
  for (const object of schemaObjects(db)) {
    if (
      /^_sqlscribe/i.test(object.name) ||
      (/^sqlite_/i.test(object.name) && !/^sqlite_(sequence|stat\d)$/i.test(object.name))
    ) {
      throw new EngineError('IMPORT_INTERNAL_NAME', { name: `${object.type} ${object.name}` });
    }
  }
}

/** Each CREATE TABLE as sqlscribe would store it: a type with no mapping is named with its table and column. */
function checkTypes(statement: string): void {
  if (!/^\s*CREATE\s+TABLE\b/i.test(statement)) return;
  const classified = classifyStatement(statement);
  if (classified.kind !== 'create-table') return;
  try {
    rewriteForStorage(classified);
  } catch (error) {
    if (error instanceof EngineError && error.errorName === 'UNKNOWN_TYPE') {
      const table =
        /^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?("(?:[^"]|"")*"|\[[^\]]*\]|`[^`]*`|\S+?)\s*\(/i.exec(
          statement,
        )?.[1] ?? '?';
      throw new EngineError('IMPORT_UNMAPPABLE_TYPE', {
        table,
        column: String(error.params.column),
        type: String(error.params.type),
      });
    }
    throw error;
  }
}

export function uploadStatements(file: string): string[] {
  const db = open(file);
  try {
    checkIntegrity(db);
    checkNames(db);
    const statements: string[] = [];
    db.exec('BEGIN');
    try {
      for (const statement of dumpStatements(db)) {
        checkTypes(statement);
        statements.push(statement);
      }
    } finally {
      db.exec('COMMIT');
    }
    return statements;
  } finally {
    db.close();
  }
}
