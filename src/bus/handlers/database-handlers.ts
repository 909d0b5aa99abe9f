/** list-databases, create-database, list-tables, show-schema, read-rows: the directory and the engine's read side. */
import { EngineError } from '../../errors';
import type { EngineHost } from '../../engine/protocol';
import { normalizeDatabaseName } from '../../database-names';
import { stampOf } from '../../access/principal';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { DatabaseLifecycle } from '../../services/databases/database-lifecycle';
import type { Handlers } from '../command-bus';

export interface DatabaseHandlerDeps {
  readonly directory: DatabaseDirectory;
  readonly lifecycle: DatabaseLifecycle;
  readonly engine: EngineHost;
}

export type DatabaseHandlers = Pick<
  Handlers,
  'list-databases' | 'create-database' | 'list-tables' | 'show-schema' | 'read-rows'
>;

export function databaseHandlers({ directory, lifecycle, engine }: DatabaseHandlerDeps): DatabaseHandlers {
  return {
    'list-databases': () => {
      const dbs = directory.list();
      return directory.single ? { mode: 'single-db', dbs, single: dbs[0]! } : { mode: 'multi-db', dbs };
    },
    'create-database': async ({ db }, call) => {
      if (directory.single)
        throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'creating a database' });
      const name = normalizeDatabaseName(db);
      await lifecycle.create(name, false, null, stampOf(call.principal));
      return { db: name };
    },
    'list-tables': async ({ db }) => {
      const ref = directory.resolve(db);
      return { db: ref.name, tables: await engine.tables(ref.file) };
    },
    'show-schema': async ({ db, table }) => {
      const ref = directory.resolve(db);
      const schema = await engine.schema(ref.file, table);
      if (!schema) throw new EngineError('TABLE_NOT_FOUND', { table });
      return { db: ref.name, table: schema };
    },
    'read-rows': async ({ db, table, limit, offset, after }, call) => {
      const ref = directory.resolve(db);
      const page = await engine.rows({ file: ref.file, table, limit, offset, after }, call);
      return { db: ref.name, ...page };
    },
  };
}
