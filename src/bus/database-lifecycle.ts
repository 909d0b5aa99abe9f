/**
 * Creating and dropping databases (POST /dbs, CREATE/DROP DATABASE). Both are
 * journaled before they happen, so that replay and crash recovery know which
 * databases exist and which incarnation of a name a file is.
 */
import { EngineError } from '../errors';
import type { EngineHost } from '../engine/protocol';
import { eventEntry, type Journal } from '../../journal/journal';
import type { DatabaseDirectory } from './database-directory';
import { withWriteLock } from './lock-errors';
import type { WriteLocks } from './write-locks';

export class DatabaseLifecycle {
  constructor(
    private readonly directory: DatabaseDirectory,
    private readonly engine: EngineHost,
    private readonly journal: Journal,
    private readonly locks: WriteLocks,
    private readonly lockTimeoutMs: number,
  ) {}

  /** Creates `name`; an existing one is 409 unless `ifNotExists` (then nothing happens). */
  async create(name: string, ifNotExists: boolean, sql: string | null): Promise<void> {
    const ref = this.directory.refOf(name);
    await withWriteLock(this.locks, ref, this.lockTimeoutMs, async () => {
      if (this.directory.exists(ref)) {
        if (ifNotExists) return;
        throw new EngineError('DATABASE_EXISTS', { db: name });
      }
      // Something that is not a database file (a planted symlink) holds the name: never open through it.
      if (this.directory.occupied(ref)) throw new EngineError('DATABASE_EXISTS', { db: name });
      const { seq, written } = this.journal.append('database', eventEntry('createdb', name, null, { sql }));
      await written;
      this.directory.ensureDirectory();
      await this.engine.createDatabase(ref.file, seq ?? undefined);
    });
  }

  /** Drops `name`; a missing one is 404 unless `ifExists`. */
  async drop(name: string, ifExists: boolean, sql: string | null): Promise<void> {
    const ref = this.directory.refOf(name);
    await withWriteLock(this.locks, ref, this.lockTimeoutMs, async () => {
      if (!this.directory.exists(ref)) {
        if (ifExists) return;
        throw new EngineError('NO_SUCH_DATABASE', { db: name });
      }
      await this.journal.append('database', eventEntry('dropdb', name, null, { sql })).written;
      // Every handle is closed first: SQLite deletes a WAL file by name when its last handle closes.
      await this.engine.closeDatabase(ref.file);
      this.directory.remove(ref);
    });
  }
}
