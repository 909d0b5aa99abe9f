/**
 * What each command asks of the token that sent it. The rules, in one place:
 *
 * - reading a database (its tables, schema, rows, a read-only /exec) needs
 *   `read` and a database the token's patterns match;
 * - writing one (/exec that writes, every session, an import) needs `write`
 *   and a matching database; an export is a read;
 * - resetting a database to its template needs `write` and a matching
 *   database: a student who broke theirs starts again without the teacher;
 * - restoring a database to an earlier point (or undoing one's last write)
 *   needs `write` and a matching database, or `admin` on a server started
 *   with -restore-role admin; a dry run is held to the same rule;
 * - creating or dropping a database (copies from a template too), the pilot
 *   records, the tokens and the class view (GET /class) need `admin`. A `write` token may not create or drop even databases its
 *   patterns match: a student cannot drop the database the class works in,
 *   and a teacher's admin token makes them (POST /tokens for a class does);
 * - listing databases needs any token and shows only the matching ones;
 * - a database's history (GET /dbs/{db}/history: its journal entries, SQL
 *   included) is a read of that database: any token whose patterns match it,
 *   so a student reads their own database's history and no one else's;
 * - exercises: an admin writes them and reads the class's progress; every
 *   token lists them (without solution or check) and checks answers, which
 *   run on a scratch copy of the template whatever the token's databases:
 *   an exercise hands its template's contents out to whoever answers it.
 *
 * A server that requires no tokens has no principal, and nothing is checked.
 */
import { EngineError } from '../errors';
import { hasRole, mayTouch, type Principal, type AccessRole } from '../access/principal';
import { normalizeDatabaseName } from '../database-names';
import type { DatabaseDirectory } from '../services/database-directory';
import type { Batch } from './batch';
import type { Command, CommandType, DatabaseList } from './commands';

interface Rule {
  readonly role: AccessRole;
  /** The command names a database the token must be allowed to use. */
  readonly db: boolean;
  readonly action: string;
}

const RULES: { readonly [T in CommandType]: Rule } = {
  'list-databases': { role: 'read', db: false, action: 'listing databases' },
  'create-database': { role: 'admin', db: false, action: 'creating a database' },
  'copy-databases': { role: 'admin', db: false, action: 'copying a database' },
  'reset-database': { role: 'write', db: true, action: 'resetting a database to its template' },
  // -restore-role admin raises it (rulesFor).
  'restore-database': { role: 'write', db: true, action: 'restoring a database' },
  import: { role: 'write', db: true, action: 'importing into a database' },
  export: { role: 'read', db: true, action: 'exporting a database' },
  'list-tables': { role: 'read', db: true, action: 'reading tables' },
  'show-schema': { role: 'read', db: true, action: 'reading a schema' },
  'read-rows': { role: 'read', db: true, action: 'reading rows' },
  exec: { role: 'read', db: true, action: 'running SQL' },
  'begin-session': { role: 'write', db: true, action: 'a transaction session' },
  'end-session': { role: 'write', db: false, action: 'a transaction session' },
  'create-pilot': { role: 'admin', db: false, action: 'pilot records' },
  'get-pilot': { role: 'admin', db: false, action: 'pilot records' },
  'list-pilots': { role: 'admin', db: false, action: 'pilot records' },
  'summarize-pilots': { role: 'admin', db: false, action: 'pilot records' },
  'create-tokens': { role: 'admin', db: false, action: 'managing tokens' },
  'list-tokens': { role: 'admin', db: false, action: 'managing tokens' },
  'revoke-token': { role: 'admin', db: false, action: 'managing tokens' },
  // Who is stuck on what, with their statements: the teacher's view only.
  'class-activity': { role: 'admin', db: false, action: 'the class view' },
  history: { role: 'read', db: true, action: "reading a database's history" },
  // Exercises are handed out to every token; what a non-admin sees of one is narrowed by the service (no solution, no check).
  'list-exercises': { role: 'read', db: false, action: 'reading exercises' },
  'get-exercise': { role: 'read', db: false, action: 'reading exercises' },
  'exercise-tables': { role: 'read', db: false, action: 'reading exercises' },
  // An answer runs on a scratch copy of the template, never on a database of the token's: every token may check.
  'check-exercise': { role: 'read', db: false, action: 'checking an answer' },
  // One's own attempts: what a student's console marks as solved.
  'own-progress': { role: 'read', db: false, action: 'reading exercises' },
  'create-exercise': { role: 'admin', db: false, action: 'writing exercises' },
  'replace-exercise': { role: 'admin', db: false, action: 'writing exercises' },
  'delete-exercise': { role: 'admin', db: false, action: 'writing exercises' },
  // Who is stuck on what: the teacher's view only.
  'exercise-progress': { role: 'admin', db: false, action: "the class's progress" },
  'exercise-evidence': { role: 'admin', db: false, action: "the class's progress" },
};

/** What a server's flags change in the rules. */
export interface AccessOptions {
  /** -restore-role. @default 'write' */
  readonly restoreRole: 'write' | 'admin';
}

/** The rules of a server started with these options. */
function ruleOf(type: CommandType, options: AccessOptions): Rule {
  const rule = RULES[type];
  return type === 'restore-database' && options.restoreRole === 'admin' ? { ...rule, role: 'admin' } : rule;
}

export function requireRole(principal: Principal, needed: AccessRole, action: string): void {
  if (!hasRole(principal, needed)) throw new EngineError('ROLE_FORBIDDEN', { token: principal.name, role: principal.role, action, needed });
}

export function requireDatabase(principal: Principal, db: string): void {
  if (!mayTouch(principal, db)) throw new EngineError('DATABASE_FORBIDDEN', { token: principal.name, db });
}

/** Checks what can be known before the command runs; `exec`'s batch is checked by batchAccess once parsed. */
export function commandAccess(principal: Principal, command: Command, directory: DatabaseDirectory, options: AccessOptions = { restoreRole: 'write' }): void {
  const rule = ruleOf(command.type, options);
  requireRole(principal, rule.role, rule.action);
  if (!rule.db || !('db' in command)) return;
  const db = databaseNameOf(command.db, directory);
  if (db !== null) requireDatabase(principal, db);
}

/** The database a command names, normalized; null when it names none (the handler answers that). */
function databaseNameOf(db: unknown, directory: DatabaseDirectory): string | null {
  if (directory.single) return directory.resolve(db).name;
  if (db === undefined || db === null || db === '') return null;
  return normalizeDatabaseName(db);
}

/** A batch that writes needs `write`; creating or dropping a database needs `admin`. */
export function batchAccess(principal: Principal | undefined, batch: Batch): void {
  if (principal === undefined) return;
  if (batch.level === 'database') {
    // SHOW DATABASES writes nothing (its list is narrowed to the token's databases); the others need an admin.
    for (const { statement } of batch.statements) {
      if (statement.kind !== 'show-databases') requireRole(principal, 'admin', 'creating or dropping a database');
    }
    return;
  }
  if (batch.readonly || hasRole(principal, 'write')) return;
  const index = batch.statements.findIndex(({ statement }) => !statement.readonly);
  throw new EngineError('READ_TOKEN_WRITES', { token: principal.name, index }, { statement: index });
}

/** The databases a token may see, of those listed. */
export function visibleDatabases(principal: Principal | undefined, names: readonly string[]): string[] {
  return principal === undefined ? [...names] : names.filter((name) => mayTouch(principal, name));
}

export function visibleList(principal: Principal | undefined, list: DatabaseList): DatabaseList {
  const dbs = visibleDatabases(principal, list.dbs);
  return list.single === undefined || dbs.includes(list.single) ? { ...list, dbs } : { mode: list.mode, dbs };
}
