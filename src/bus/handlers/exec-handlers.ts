/**
 * exec: a batch of SQL, run as one transaction on one database, inside an
 * open session, or — for CREATE/DROP/SHOW DATABASE(S) — against the data
 * directory itself.
 */
import { EngineError } from '../../errors';
import type { ClassifiedStatement } from '../../engine/dialect/statement';
import type { CallContext, StatementResult } from '../../engine/protocol';
import { stampOf, type Principal } from '../../access/principal';
import { visibleDatabases } from '../access';
import type { BatchRunner } from '../../services/writes/batch-runner';
import { normalizeDatabaseName } from '../../database-names';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { DatabaseLifecycle } from '../../services/databases/database-lifecycle';
import type { SessionManager } from '../../sessions/session-manager';
import type { WritePath } from '../../services/writes/write-path';
import { errorFields, sqlOf } from '../../../journal/journal';
import { isRefused, toExecStatement, type ParsedStatement } from '../../engine/batch';
import type { CommandOf } from '../commands';
import type { Handlers } from '../command-bus';

export interface ExecHandlerDeps {
  readonly directory: DatabaseDirectory;
  readonly lifecycle: DatabaseLifecycle;
  readonly batches: BatchRunner;
  readonly sessions: SessionManager;
  readonly writePath: WritePath;
}

/**
 * Runs the batch the route parsed. By now the bus's middleware has checked
 * it against the token (batchAccess) and, on a replica, refused it if it
 * writes (the command rules).
 */
export function execHandlers(deps: ExecHandlerDeps): Pick<Handlers, 'exec'> {
  const { directory, batches, sessions } = deps;
  return {
    exec: async (command, call) => {
      const batch = command.batch;
      if (isRefused(batch)) {
        await journalRefused(deps, command, call, batch.refused);
        throw batch.refused;
      }
      const statements = batch.statements.map(toExecStatement);
      const options = { jsonRows: true, sources: command.sources, call };
      if (command.session !== undefined) {
        if (batch.level === 'database') throw new EngineError('SESSION_STATEMENT');
        const named = command.db === undefined || command.db === null || command.db === '';
        const { results, info } = await sessions.exec(
          command.session,
          named ? undefined : directory.resolve(command.db),
          statements,
          batch.readonly,
          options,
        );
        return { db: info.db, results, session: info };
      }
      if (batch.level === 'database')
        return { db: null, results: await runDatabaseLevel(deps, batch.statements, call) };
      const ref = directory.resolve(command.db);
      return { db: ref.name, results: await batches.run(ref, statements, batch.readonly, options) };
    },
  };
}

/**
 * A batch refused before it ran (a syntax error, a forbidden statement) is a
 * failed batch too: it is journaled, so that alerts keyed on its class fire.
 * It ran nowhere, so it names no session and replay skips it.
 */
async function journalRefused(
  { directory, writePath }: ExecHandlerDeps,
  command: CommandOf<'exec'>,
  call: CallContext,
  error: EngineError,
): Promise<void> {
  const statements = command.sources.map(({ sql, params }) => (params === undefined ? { sql } : { sql, params }));
  const db =
    typeof command.db === 'string' ? tryNormalize(command.db) : directory.single ? (directory.list()[0] ?? null) : null;
  await writePath.note('write', {
    db,
    session: null,
    kind: 'exec',
    sql: sqlOf(statements),
    statements,
    ok: false,
    ms: 0,
    ...errorFields(error),
    ...stampOf(call.principal),
  });
}

function tryNormalize(db: string): string | null {
  try {
    return normalizeDatabaseName(db);
  } catch {
    return null;
  }
}

/** Database-level statements run one by one against the data directory. */
async function runDatabaseLevel(
  deps: ExecHandlerDeps,
  statements: readonly ParsedStatement[],
  call: CallContext,
): Promise<StatementResult[]> {
  const results: StatementResult[] = [];
  for (const [index, { statement }] of statements.entries()) {
    try {
      results.push(await runDatabaseStatement(deps, statement, call.principal));
    } catch (error) {
      if (error instanceof EngineError) error.statement = index;
      throw error;
    }
  }
  return results;
}

async function runDatabaseStatement(
  { directory, lifecycle }: ExecHandlerDeps,
  statement: ClassifiedStatement,
  principal: Principal | undefined,
): Promise<StatementResult> {
  if (directory.single) {
    throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', {
      detail: statement.sql.split(/\s+/).slice(0, 2).join(' ').toUpperCase(),
    });
  }
  if (statement.kind === 'show-databases')
    return { columns: ['name'], rows: visibleDatabases(principal, directory.list()).map((name) => [name]) };
  const name = normalizeDatabaseName(statement.database);
  if (statement.kind === 'create-database')
    await lifecycle.create(name, statement.ifNotExists === true, statement.sql, stampOf(principal));
  else await lifecycle.drop(name, statement.ifExists === true, statement.sql, stampOf(principal));
  return { columns: [], rows: [], message: 'OK', changes: 0 };
}
