/**
 * One row per command: who may send it and whether it writes. The table is
 * total over the command names, so a command added to ./commands.ts without
 * its row does not compile: neither the token check (../access.ts) nor a
 * replica's refusal of writes (middleware/writes-on-primary.ts) can miss it.
 *
 * Who may:
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
 *   records, the tokens and the class view (GET /class) need `admin`. A
 *   `write` token may not create or drop even databases its patterns match:
 *   a student cannot drop the database the class works in, and a teacher's
 *   admin token makes them (POST /tokens for a class does);
 * - listing databases needs any token and shows only the matching ones;
 * - a database's history (GET /dbs/{db}/history: its journal entries, SQL
 *   included) is a read of that database: any token whose patterns match it,
 *   so a student reads their own database's history and no one else's;
 * - exercises: an admin writes them and reads the class's progress; every
 *   token lists them (without solution or check) and checks answers, which
 *   run on a scratch copy of the template whatever the token's databases:
 *   an exercise hands its template's contents out to whoever answers it.
 *
 * Whether it writes: anything that changes a database, the tokens, the
 * pilot records or the exercises, or appends to the journal, runs only where
 * the journal is written (a standalone server or the primary).
 */
import type { AccessRole } from '../access/principal';
import { isRefused } from '../engine/batch';
import type { Command, CommandOf, CommandType } from './commands';

/**
 * Whether a command writes, in a replica's refusal's words ("… must go to
 * the primary"): null when it only reads; a function when what the command
 * carries decides.
 */
export type WriteRule<T extends CommandType> = string | null | ((command: CommandOf<T>) => string | null);

export interface CommandRule<T extends CommandType> {
  /** The least role a token needs. */
  readonly role: AccessRole;
  /** The command names a database the token must be allowed to use. */
  readonly db: boolean;
  /** What the command is, in a role refusal's words ("… needs admin"). */
  readonly action: string;
  readonly writes: WriteRule<T>;
}

export type CommandRules = { readonly [T in CommandType]: CommandRule<T> };

export const COMMAND_RULES: CommandRules = {
  'list-databases': { role: 'read', db: false, action: 'listing databases', writes: null },
  'create-database': { role: 'admin', db: false, action: 'creating a database', writes: 'creating a database' },
  'copy-databases': { role: 'admin', db: false, action: 'copying a database', writes: 'copying databases' },
  'reset-database': {
    role: 'write',
    db: true,
    action: 'resetting a database to its template',
    writes: 'resetting a database',
  },
  // -restore-role admin raises the role (access.ts).
  'restore-database': { role: 'write', db: true, action: 'restoring a database', writes: 'restoring a database' },
  import: { role: 'write', db: true, action: 'importing into a database', writes: 'an import' },
  export: { role: 'read', db: true, action: 'exporting a database', writes: null },
  'list-tables': { role: 'read', db: true, action: 'reading tables', writes: null },
  'show-schema': { role: 'read', db: true, action: 'reading a schema', writes: null },
  'read-rows': { role: 'read', db: true, action: 'reading rows', writes: null },
  // A read token may send SQL; its batch says whether it writes (access.ts refuses a read token's writes). SQL that
  // could not be parsed writes nothing: the handler answers it.
  exec: {
    role: 'read',
    db: true,
    action: 'running SQL',
    writes: ({ batch }) => (isRefused(batch) || batch.readonly ? null : 'a batch that writes'),
  },
  'begin-session': { role: 'write', db: true, action: 'a transaction session', writes: 'a transaction session' },
  'end-session': { role: 'write', db: false, action: 'a transaction session', writes: 'a transaction session' },
  'create-pilot': { role: 'admin', db: false, action: 'pilot records', writes: 'recording a pilot' },
  'get-pilot': { role: 'admin', db: false, action: 'pilot records', writes: null },
  'list-pilots': { role: 'admin', db: false, action: 'pilot records', writes: null },
  'summarize-pilots': { role: 'admin', db: false, action: 'pilot records', writes: null },
  'create-tokens': { role: 'admin', db: false, action: 'managing tokens', writes: 'making tokens' },
  'list-tokens': { role: 'admin', db: false, action: 'managing tokens', writes: null },
  'revoke-token': { role: 'admin', db: false, action: 'managing tokens', writes: 'revoking a token' },
  // Who is stuck on what, with their statements: the teacher's view only.
  'class-activity': { role: 'admin', db: false, action: 'the class view', writes: null },
  history: { role: 'read', db: true, action: "reading a database's history", writes: null },
  // Exercises are handed out to every token; what a non-admin sees of one is narrowed by the service (no solution, no check).
  'list-exercises': { role: 'read', db: false, action: 'reading exercises', writes: null },
  'get-exercise': { role: 'read', db: false, action: 'reading exercises', writes: null },
  'exercise-tables': { role: 'read', db: false, action: 'reading exercises', writes: null },
  // An answer runs on a scratch copy of the template, never on a database of the token's: every token may check.
  // It changes no database, but its attempt goes into the journal, which only the primary writes.
  'check-exercise': { role: 'read', db: false, action: 'checking an answer', writes: 'checking an answer' },
  // One's own attempts: what a student's console marks as solved.
  'own-progress': { role: 'read', db: false, action: 'reading exercises', writes: null },
  'create-exercise': { role: 'admin', db: false, action: 'writing exercises', writes: 'writing an exercise' },
  'replace-exercise': { role: 'admin', db: false, action: 'writing exercises', writes: 'writing an exercise' },
  'delete-exercise': { role: 'admin', db: false, action: 'writing exercises', writes: 'deleting an exercise' },
  // Who is stuck on what: the teacher's view only.
  'exercise-progress': { role: 'admin', db: false, action: "the class's progress", writes: null },
  'exercise-evidence': { role: 'admin', db: false, action: "the class's progress", writes: null },
};

/** What the command writes, in a replica's refusal's words, or null when it only reads. */
export function writeOf(command: Command): string | null {
  const rule = COMMAND_RULES[command.type].writes as WriteRule<CommandType>;
  return typeof rule === 'function' ? rule(command) : rule;
}
