/** restore-database: a database given back an earlier state of its own (POST /dbs/{db}/restore). */
import { stampOf } from '../../access/principal';
import { EngineError } from '../../errors';
import type { DatabaseRestores, RestoreOutcome } from '../../services/databases/database-restores';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { Handlers } from '../command-bus';

/**
 * `listsSql`: whether a dry run may list the SQL it would undo. A server
 * without tokens serves journal contents only with -journal-feed
 * (options.ts, servesJournalContents); a dry run there would otherwise read
 * out what the closed history keeps back.
 */
export function restoreHandlers(
  directory: DatabaseDirectory,
  restores: DatabaseRestores,
  listsSql: boolean,
): Pick<Handlers, 'restore-database'> {
  return {
    // Who may restore is src/bus/access.ts's rule; the token is recorded in the entry, and an undo looks for its own last write.
    'restore-database': async ({ db, body }, call) => {
      if (directory.single)
        throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'restoring a database' });
      const outcome = await restores.restore(db, body, stampOf(call.principal), call.signal);
      return listsSql ? outcome : withoutSql(outcome);
    },
  };
}

/** A dry run's undone writes without their SQL (the rest of each entry stays). */
function withoutSql(outcome: RestoreOutcome): RestoreOutcome {
  if (!('dryRun' in outcome)) return outcome;
  const entries = outcome.undone.entries.map((entry) => ({ ...entry, sql: null }));
  return { ...outcome, undone: { ...outcome.undone, entries } };
}
