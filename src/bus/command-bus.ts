/**
 * The command bus: the one way from the HTTP layer to the databases. It
 * validates what the engine must not see unvalidated (names, SQL classes,
 * modes), runs database-level statements itself, and hands table work to the
 * engine host, through the journal.
 */
import { EngineError } from '../errors';
import type { ClassifiedStatement } from '../engine/dialect/statement';
import type { CallContext, EngineHost, ExecStatement, StatementResult } from '../engine/protocol';
import type { Config } from '../options';
import { SessionManager } from '../sessions/session-manager';
import { errorFields, sqlOf, type Journal } from '../../journal/journal';
import { parseBatch, type Batch, type ParsedStatement } from './batch';
import { BatchRunner } from '../services/batch-runner';
import type { Command, CommandOf, CommandResults, ExecOutcome } from './commands';
import { DatabaseDirectory, normalizeDatabaseName } from '../services/database-directory';
import { DatabaseLifecycle } from '../services/database-lifecycle';
import { WriteLocks } from '../services/write-locks';
import { WritePath } from '../services/write-path';
import { PilotService } from '../pilots/pilot-service';
import { PilotStore } from '../pilots/pilot-store';

export interface CommandBusOptions {
  /** Brings one database back in line with the journal (it lacks durable entries that could not be voided). */
  repair(db: string): Promise<void>;
  /** Told of failures that reach no client. */
  log(message: string): void;
}

export class CommandBus {
  readonly directory: DatabaseDirectory;
  readonly sessions: SessionManager;
  /** The one owner of "durable before applied" (write-path.ts). */
  readonly writePath: WritePath;
  private readonly locks = new WriteLocks();
  private readonly batches: BatchRunner;
  private readonly lifecycle: DatabaseLifecycle;
  private readonly pilots: PilotService;

  constructor(
    private readonly config: Config,
    private readonly engine: EngineHost,
    journal: Journal,
    options: CommandBusOptions,
  ) {
    this.directory = new DatabaseDirectory(config);
    this.writePath = new WritePath(journal, options);
    const { lockTimeoutMs, maxResultRows, maxResultBytes } = config;
    this.batches = new BatchRunner(engine, journal, this.writePath, this.locks, { lockTimeoutMs, maxResultRows, maxResultBytes });
    this.lifecycle = new DatabaseLifecycle(this.directory, engine, this.writePath, this.locks, lockTimeoutMs);
    this.sessions = new SessionManager(engine, this.locks, this.writePath, { idleTimeoutMs: config.sessionTimeoutMs, lockTimeoutMs, maxResultRows, maxResultBytes });
    this.pilots = new PilotService(new PilotStore(this.directory, this.batches, this.lifecycle));
  }

  /** `call`: the request's deadline and client (CallContext), for the engine work the command needs. */
  dispatch<T extends Command['type']>(command: CommandOf<T>, call?: CallContext): Promise<CommandResults[T]>;
  async dispatch(command: Command, call: CallContext = {}): Promise<CommandResults[Command['type']]> {
    switch (command.type) {
      case 'list-databases': return this.listDatabases();
      case 'create-database': return this.createDatabase(command.db);
      case 'list-tables': return this.listTables(command);
      case 'show-schema': return this.showSchema(command);
      case 'read-rows': return this.readRows(command, call);
      case 'exec': return command.session === undefined ? this.exec(command, call) : this.execInSession(command, command.session, call);
      case 'begin-session': return this.sessions.begin(this.directory.resolve(command.db));
      case 'end-session': return this.endSession(command);
      case 'create-pilot': return this.pilots.create(command.record);
      case 'get-pilot': return this.pilots.get(command.id);
      case 'list-pilots': return this.pilots.list(command.filter, command.limit, command.offset);
      case 'summarize-pilots': return this.pilots.summary(command.groupBy);
    }
  }

  private listDatabases(): CommandResults['list-databases'] {
    const dbs = this.directory.list();
    if (this.directory.single) return { mode: 'single-db', dbs, single: dbs[0]! };
    return { mode: 'multi-db', dbs };
  }

  private async createDatabase(db: unknown): Promise<CommandResults['create-database']> {
    if (this.directory.single) throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: 'creating a database' });
    const name = normalizeDatabaseName(db);
    await this.lifecycle.create(name, false, null);
    return { db: name };
  }

  private async listTables(command: CommandOf<'list-tables'>): Promise<CommandResults['list-tables']> {
    const ref = this.directory.resolve(command.db);
    return { db: ref.name, tables: await this.engine.tables(ref.file) };
  }

  private async showSchema(command: CommandOf<'show-schema'>): Promise<CommandResults['show-schema']> {
    const ref = this.directory.resolve(command.db);
    const table = await this.engine.schema(ref.file, command.table);
    if (!table) throw new EngineError('TABLE_NOT_FOUND', { table: command.table });
    return { db: ref.name, table };
  }

  private async readRows(command: CommandOf<'read-rows'>, call: CallContext): Promise<CommandResults['read-rows']> {
    const ref = this.directory.resolve(command.db);
    const page = await this.engine.rows({ file: ref.file, table: command.table, limit: command.limit, offset: command.offset }, call);
    return { db: ref.name, ...page };
  }

  private async exec(command: CommandOf<'exec'>, call: CallContext): Promise<ExecOutcome> {
    const batch = await this.parse(command);
    if (batch.level === 'database') return { db: null, results: await this.execDatabaseLevel(batch.statements) };
    const ref = this.directory.resolve(command.db);
    const results = await this.batches.run(ref, batch.statements.map(toExecStatement), batch.readonly, { jsonRows: true, sources: command.sources, call });
    return { db: ref.name, results };
  }

  private async execInSession(command: CommandOf<'exec'>, session: string, call: CallContext): Promise<ExecOutcome> {
    const batch = await this.parse(command);
    if (batch.level === 'database') throw new EngineError('SESSION_STATEMENT');
    const ref = command.db === undefined || command.db === null || command.db === '' ? undefined : this.directory.resolve(command.db);
    const { results, info } = await this.sessions.exec(session, ref, batch.statements.map(toExecStatement), batch.readonly, { jsonRows: true, sources: command.sources, call });
    return { db: info.db, results, session: info };
  }

  /**
   * A batch refused before it ran (a syntax error, a forbidden statement) is
   * a failed batch too: it is journaled, so that alerts keyed on its class
   * fire. It ran nowhere, so it names no session and replay skips it.
   */
  private async parse(command: CommandOf<'exec'>): Promise<Batch> {
    try {
      return parseBatch(command.sources, this.config.maxStatements);
    } catch (error) {
      if (error instanceof EngineError) {
        const statements = command.sources.map(({ sql, params }) => (params === undefined ? { sql } : { sql, params }));
        const db = typeof command.db === 'string' ? tryNormalize(command.db) : this.directory.single ? this.directory.list()[0] ?? null : null;
        await this.writePath.note('write', { db, session: null, kind: 'exec', sql: sqlOf(statements), statements, ok: false, ms: 0, ...errorFields(error) });
      }
      throw error;
    }
  }

  private async endSession(command: CommandOf<'end-session'>): Promise<CommandResults['end-session']> {
    const ref = await this.sessions.end(command.session, command.commit);
    return { db: ref.name, message: command.commit ? 'COMMIT' : 'ROLLBACK' };
  }

  /** Database-level statements run one by one against the data directory. */
  private async execDatabaseLevel(statements: readonly ParsedStatement[]): Promise<StatementResult[]> {
    const results: StatementResult[] = [];
    for (const [index, { statement }] of statements.entries()) {
      try {
        results.push(await this.runDatabaseStatement(statement));
      } catch (error) {
        if (error instanceof EngineError) error.statement = index;
        throw error;
      }
    }
    return results;
  }

  private async runDatabaseStatement(statement: ClassifiedStatement): Promise<StatementResult> {
    if (this.directory.single) {
      throw new EngineError('DATABASE_STATEMENT_IN_SINGLE_MODE', { detail: statement.sql.split(/\s+/).slice(0, 2).join(' ').toUpperCase() });
    }
    if (statement.kind === 'show-databases') {
      return { columns: ['name'], rows: this.directory.list().map((name) => [name]) };
    }
    const name = normalizeDatabaseName(statement.database);
    if (statement.kind === 'create-database') await this.lifecycle.create(name, statement.ifNotExists === true, statement.sql);
    else await this.lifecycle.drop(name, statement.ifExists === true, statement.sql);
    return { columns: [], rows: [], message: 'OK', changes: 0 };
  }

  async close(): Promise<void> {
    await this.sessions.shutdown();
    await this.engine.close();
  }
}

function tryNormalize(db: string): string | null {
  try {
    return normalizeDatabaseName(db);
  } catch {
    return null;
  }
}

function toExecStatement({ statement, params }: ParsedStatement): ExecStatement {
  return {
    sql: statement.sql,
    kind: statement.kind,
    ...(params === undefined ? {} : { params }),
    ...(statement.savepoint === undefined ? {} : { savepoint: statement.savepoint }),
  };
}
