/**
 * Refuses a command its token may not send (see ../access.ts), before any
 * handler runs, and narrows a database list to what the token may see.
 * /exec's batch is parsed before dispatch, so what it writes is checked
 * here too.
 */
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import { isRefused } from '../../engine/batch';
import { batchAccess, commandAccess, visibleList, type AccessOptions } from '../access';
import type { Middleware } from '../command-bus';
import type { DatabaseList } from '../commands';

export function authorize(directory: DatabaseDirectory, options?: AccessOptions): Middleware {
  return async function authorizeCommand(command, call, next) {
    const principal = call.principal;
    if (principal === undefined) return next();
    commandAccess(principal, command, directory, options);
    // SQL that could not be parsed is answered (and journaled) by the handler, once the token may run SQL at all.
    if (command.type === 'exec' && !isRefused(command.batch)) batchAccess(principal, command.batch);
    const result = await next();
    return command.type === 'list-databases' ? visibleList(principal, result as DatabaseList) : result;
  };
}
