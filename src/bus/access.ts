/**
 * Checks a command against its token, by the `role` and `db` of the
 * command's row in ./command-rules.ts (which says, in prose, who may do
 * what), and a parsed /exec batch by what its statements do.
 *
 * A server that requires no tokens has no principal, and nothing is checked.
 */
import { EngineError } from '../errors';
import { hasRole, mayTouch, type Principal, type AccessRole } from '../access/principal';
import { normalizeDatabaseName } from '../database-names';
import type { DatabaseDirectory } from '../services/databases/database-directory';
import type { Batch } from '../engine/batch';
import { COMMAND_RULES, type CommandRule } from './command-rules';
import type { Command, CommandType, DatabaseList } from './commands';

/** What a server's flags change in the rules. */
export interface AccessOptions {
  /** -restore-role. @default 'write' */
  readonly restoreRole: 'write' | 'admin';
}

/** The rules of a server started with these options. */
function ruleOf(type: CommandType, options: AccessOptions): Pick<CommandRule<CommandType>, 'role' | 'db' | 'action'> {
  const rule = COMMAND_RULES[type];
  return type === 'restore-database' && options.restoreRole === 'admin' ? { ...rule, role: 'admin' } : rule;
}

export function requireRole(principal: Principal, needed: AccessRole, action: string): void {
  if (!hasRole(principal, needed))
    throw new EngineError('ROLE_FORBIDDEN', { token: principal.name, role: principal.role, action, needed });
}

export function requireDatabase(principal: Principal, db: string): void {
  if (!mayTouch(principal, db)) throw new EngineError('DATABASE_FORBIDDEN', { token: principal.name, db });
}

/** Checks what the command's row says; `exec`'s batch is checked by batchAccess. */
export function commandAccess(
  principal: Principal,
  command: Command,
  directory: DatabaseDirectory,
  options: AccessOptions = { restoreRole: 'write' },
): void {
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
