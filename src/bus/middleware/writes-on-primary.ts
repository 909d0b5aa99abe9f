/**
 * On a replica (or a primary that was replaced) every command that changes
 * something is refused before it reaches a service, with the code and the
 * address of the primary. Whether a command writes is its row's `writes` in
 * ../command-rules.ts; /exec's parsed batch decides for it, so a batch that
 * only reads runs on a replica.
 */
import type { Middleware } from '../command-bus';
import { writeOf } from '../command-rules';
import type { ServerRoleState } from '../../services/server-role';

export function writesOnPrimary(role: ServerRoleState): Middleware {
  return (command, _call, next) => {
    const action = writeOf(command);
    if (action === null) return next();
    // Refused as a rejection, as every middleware answers: the bus awaits it.
    return Promise.resolve().then(() => {
      role.assertWritable(action);
      return next();
    });
  };
}
