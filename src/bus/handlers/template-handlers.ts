/** copy-databases, reset-database: databases made from a template and returned to it. */
import { stampOf } from '../../access/principal';
import { EngineError } from '../../errors';
import { normalizeDatabaseName } from '../../database-names';
import type { DatabaseCopies } from '../../services/databases/database-copies';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { Handlers } from '../command-bus';

export function templateHandlers(
  directory: DatabaseDirectory,
  copies: DatabaseCopies,
): Pick<Handlers, 'copy-databases' | 'reset-database'> {
  return {
    // Who may copy or reset is src/bus/access.ts's rule; the token is recorded in the entries.
    'copy-databases': async ({ names, from }, call) => {
      if (directory.single)
        throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'copying a database' });
      const dbs = names.map(normalizeDatabaseName);
      const source = normalizeDatabaseName(from);
      await copies.copy(dbs, source, call.principal);
      return { dbs, from: source };
    },
    'reset-database': async ({ db }, call) => {
      if (directory.single)
        throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'resetting a database' });
      const template = await copies.reset(db, stampOf(call.principal));
      return { db: normalizeDatabaseName(db), template };
    },
  };
}
