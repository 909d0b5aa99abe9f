/** restore-database: a database given back an earlier state of its own (POST /dbs/{db}/restore). */
import { stampOf } from '../../access/principal';
import { EngineError } from '../../errors';
import type { DatabaseRestores } from '../../services/databases/database-restores';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { Handlers } from '../command-bus';

export function restoreHandlers(
  directory: DatabaseDirectory,
  restores: DatabaseRestores,
): Pick<Handlers, 'restore-database'> {
  return {
    // Who may restore is src/bus/access.ts's rule; the token is recorded in the entry, and an undo looks for its own last write.
    'restore-database': async ({ db, body }, call) => {
      if (directory.single)
        throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'restoring a database' });
      return restores.restore(db, body, stampOf(call.principal), call.signal);
    },
  };
}
