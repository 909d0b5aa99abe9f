/**
 * An uploaded .sqlite file as the SQL that rebuilds it (sql-dump.ts), after
 * checks: it is a SQLite database, it passes `PRAGMA integrity_check`, it
 * holds none of the service's names. Its column types need no check: the
 * import gives a type outside ours the one its affinity gives
 * (import-script.ts), as it does a script's. Runs in an engine process: a hostile file is opened there, read-only,
 * under the query timeout, never in the server.
 */
import Database from 'better-sqlite3';
import { EngineError } from '../../errors';
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

export function uploadStatements(file: string): string[] {
  const db = open(file);
  try {
    checkIntegrity(db);
    checkNames(db);
    const statements: string[] = [];
    db.exec('BEGIN');
    try {
      for (const statement of dumpStatements(db)) statements.push(statement);
    } finally {
      db.exec('COMMIT');
    }
    return statements;
  } finally {
    db.close();
  }
}
