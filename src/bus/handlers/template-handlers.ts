/** copy-databases, reset-database: databases made from a template and returned to it. */
import { EngineError } from '../../errors';
import { normalizeDatabaseName } from '../../database-names';
import type { DatabaseCopies } from '../../services/database-copies';
import type { DatabaseDirectory } from '../../services/database-directory';
import type { Handlers } from '../command-bus';

export function templateHandlers(directory: DatabaseDirectory, copies: DatabaseCopies): Pick<Handlers, 'copy-databases' | 'reset-database'> {
  return {
    // Authorization (when tokens carry roles): copying a template is for admins.
    'copy-databases': async ({ names, from }) => {
      if (directory.single) throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'copying a database' });
      const dbs = names.map(normalizeDatabaseName);
      const source = normalizeDatabaseName(from);
      await copies.copy(dbs, source);
      return { dbs, from: source };
    },
    // Authorization (when tokens carry roles): a reset needs a token that may write to `db`.
    'reset-database': async ({ db }) => {
      if (directory.single) throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'resetting a database' });
      const template = await copies.reset(db);
      return { db: normalizeDatabaseName(db), template };
    },
  };
}
