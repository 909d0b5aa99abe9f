/** history: a database's journal entries, from the journal index. */
import { normalizeDatabaseName } from '../../database-names';
import { EngineError } from '../../errors';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { History } from '../../services/history';
import { requireRole } from '../access';
import type { Handlers } from '../command-bus';

export interface HistoryHandlerDeps {
  readonly directory: DatabaseDirectory;
  readonly history: History;
}

export function historyHandlers({ directory, history }: HistoryHandlerDeps): Pick<Handlers, 'history'> {
  return {
    history: async ({ db, request }, call) => {
      // Earlier lives of a name were other people's databases (last term's class): an admin's to read.
      if (request.lives === 'all' && call.principal !== undefined)
        requireRole(call.principal, 'admin', "reading a database's earlier lives (lives=all)");
      // A dropped database is no longer in the directory, but its history is still in the journal.
      const name = directory.single ? directory.resolve(db).name : normalizeDatabaseName(db);
      if (!directory.single && !directory.exists(directory.refOf(name)) && !(await history.known(name))) {
        throw new EngineError('NO_SUCH_DATABASE', { db: name });
      }
      return { db: name, ...(await history.page(name, request)) };
    },
  };
}
