/**
 * An EngineHost in front of the engine processes that runs bounded reads
 * (point reads, bounded-read.ts; reads bounded by their plan,
 * planned-read.ts; pages of /rows, bounded-row-page.ts) in this process, without the round trip to an engine
 * process; everything else goes on to the processes. Its own handles
 * are closed with theirs, so that a dropped database is closed everywhere.
 */
import fs from 'node:fs';
import { backupInto } from '../files/database-copy';
import { Engine } from '../engine';
import type {
  CallContext,
  EngineHost,
  EngineSession,
  ExecRequest,
  HeldGroup,
  JournalPosition,
  RowPage,
  RowsRequest,
  StatementResult,
} from '../protocol';
import type { TableSchema } from '../schema/schema';
import type { ExportRequest } from '../transfer/database-export';
import { toEngineError } from '../sqlite-errors';

/**
 * Handles this process keeps open for reads run here. A class works on one
 * copy per student, and a handle closed and opened again loses what the
 * planner learned of its database (planned-read.ts): a class of 25 to 30
 * must fit. Each handle holds SQLite's page cache of what it read (about a
 * megabyte for a lesson database).
 */
const LOCAL_OPEN_DATABASES = 48;

/**
 * A read run here: its answer, or undefined to send it to the engine processes. This process
 * never waits for a lock (that would stop every request), so a read that meets one held for a
 * moment by another process (a checkpoint, the last handle closing: SQLITE_BUSY) goes to an
 * engine process, which may wait; it changed nothing here. Other errors are the catalog errors
 * an engine process would send back.
 */
function readHere<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch (error) {
    const engineError = toEngineError(error);
    if (engineError.errorName === 'STORAGE_BUSY') return undefined;
    throw engineError;
  }
}

export class BoundedReadHost implements EngineHost {
  private readonly local = new Engine({ maxOpenDatabases: LOCAL_OPEN_DATABASES });

  constructor(private readonly processes: EngineHost) {}

  async exec(request: ExecRequest, context?: CallContext): Promise<StatementResult[]> {
    const results = readHere(() => this.local.execBoundedRead(request));
    return results ?? this.processes.exec(request, context);
  }

  execHeldGroup(requests: readonly ExecRequest[], context?: CallContext): Promise<HeldGroup> {
    return this.processes.execHeldGroup(requests, context);
  }

  journalPosition(file: string): Promise<JournalPosition> {
    return this.processes.journalPosition(file);
  }

  exportDatabase(file: string, request: ExportRequest, call?: CallContext): Promise<void> {
    return this.processes.exportDatabase(file, request, call);
  }

  uploadStatements(file: string, call?: CallContext): Promise<string[]> {
    return this.processes.uploadStatements(file, call);
  }

  tables(file: string): Promise<TableSchema[]> {
    return this.processes.tables(file);
  }

  schema(file: string, table: string): Promise<TableSchema | undefined> {
    return this.processes.schema(file, table);
  }

  async rows(request: RowsRequest, context?: CallContext): Promise<RowPage> {
    const page = readHere(() => this.local.rowsBounded(request));
    return page ?? this.processes.rows(request, context);
  }

  openSession(file: string): Promise<EngineSession> {
    return this.processes.openSession(file);
  }

  /**
   * Made here, not in an engine process: it is a few file operations with
   * nothing to time out, and it must not wait behind (or die with) a busy
   * process. Every process closes the name first, so none keeps a handle on
   * an older file of that name.
   */
  async createDatabase(file: string, createdSeq?: number): Promise<void> {
    await this.closeDatabase(file);
    try {
      this.local.createDatabase(file, createdSeq);
    } catch (error) {
      throw toEngineError(error);
    }
  }

  /**
   * Made here, like a new database: a few file operations. A new copy is
   * written whole and renamed into place (no handle can be open on a name that
   * does not exist yet); a reset writes into the database in place, as
   * readers may have it open (database-copy.ts).
   */
  async copyDatabase(source: string, target: string, seq: number | undefined, template: string): Promise<void> {
    try {
      if (fs.existsSync(target)) await backupInto(source, target, seq, template);
      else this.local.copyDatabase(source, target, seq, template);
    } catch (error) {
      throw toEngineError(error);
    }
  }

  closeDatabase(file: string): Promise<void> {
    this.local.closeDatabase(file);
    return this.processes.closeDatabase(file);
  }

  async close(): Promise<void> {
    this.local.close();
    await this.processes.close();
  }
}
