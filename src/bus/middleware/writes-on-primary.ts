/**
 * On a replica (or a primary that was replaced) every command that changes
 * something is refused before it reaches a service, with the code and the
 * address of the primary. /exec is decided in its handler, once the batch is
 * parsed: a batch that only reads runs on a replica.
 */
import type { CommandType } from '../commands';
import type { Middleware } from '../command-bus';
import type { ServerRoleState } from '../../services/server-role';

/** What each writing command is, in the refusal's words. */
const WRITES: Partial<Record<CommandType, string>> = {
  'create-database': 'creating a database',
  'copy-databases': 'copying databases',
  'reset-database': 'resetting a database',
  'restore-database': 'restoring a database',
  'begin-session': 'a transaction session',
  'end-session': 'a transaction session',
  import: 'an import',
  'create-pilot': 'recording a pilot',
  'create-tokens': 'making tokens',
  'revoke-token': 'revoking a token',
  'create-exercise': 'writing an exercise',
  'replace-exercise': 'writing an exercise',
  'delete-exercise': 'deleting an exercise',
  // A check changes no database, but its attempt goes into the journal, which only the primary writes.
  'check-exercise': 'checking an answer',
};

export function writesOnPrimary(role: ServerRoleState): Middleware {
  return (command, _call, next) => {
    const action = WRITES[command.type];
    if (action === undefined) return next();
    // Refused as a rejection, as every middleware answers: the bus awaits it.
    return Promise.resolve().then(() => {
      role.assertWritable(action);
      return next();
    });
  };
}
