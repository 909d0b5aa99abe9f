/**
 * Creating and dropping databases (POST /dbs, CREATE/DROP DATABASE), through
 * the write path like every other change: the entry is durable first, then
 * the file appears or goes, each in one atomic step (a rename), so that a
 * crash leaves either the entry alone (recovery finishes it) or both. A
 * create or drop that fails after its entry is voided, so replay never builds
 * a database the live server did not have.
 */
import { EngineError } from '../../errors';
import type { EngineHost } from '../../engine/protocol';
import { eventEntry } from '../../../journal/journal';
import type { TokenStamp } from '../../access/principal';
import type { DatabaseDirectory, DatabaseRef } from './database-directory';
import { withWriteLock } from '../writes/lock-errors';
import type { WriteLocks } from '../writes/write-locks';
import type { WritePath } from '../writes/write-path';

export class DatabaseLifecycle {
  constructor(
    private readonly directory: DatabaseDirectory,
    private readonly engine: EngineHost,
    private readonly path: WritePath,
    private readonly locks: WriteLocks,
    private readonly lockTimeoutMs: number,
  ) {}

  /** Creates `name` (`by`: the token that asked, for the journal); an existing one is 409 unless `ifNotExists` (then nothing happens). */
  async create(name: string, ifNotExists: boolean, sql: string | null, by: TokenStamp = {}): Promise<void> {
    const ref = this.directory.refOf(name);
    await withWriteLock(this.locks, ref, this.lockTimeoutMs, async () => {
      if (this.directory.exists(ref)) {
        if (ifNotExists) return;
        throw new EngineError('DATABASE_EXISTS', { db: name });
      }
      // Something that is not a database file (a planted symlink) holds the name: never open through it.
      if (this.directory.occupied(ref)) throw new EngineError('DATABASE_EXISTS', { db: name });
      await this.path.appendThenApply(
        name,
        [{ event: 'database', entry: eventEntry('createdb', name, null, { sql, ...by }) }],
        {
          apply: async (seq) => {
            this.directory.ensureDirectory();
            await this.engine.createDatabase(ref.file, seq ?? undefined);
          },
          discard: async () => undefined,
          // The file is renamed into place whole, so its presence means the create is complete.
          tookEffect: async () => this.directory.exists(ref),
        },
      );
    });
  }

  /** Drops `name`; a missing one is 404 unless `ifExists`. */
  async drop(name: string, ifExists: boolean, sql: string | null, by: TokenStamp = {}): Promise<void> {
    const ref = this.directory.refOf(name);
    await withWriteLock(this.locks, ref, this.lockTimeoutMs, async () => {
      if (!this.directory.exists(ref)) {
        if (ifExists) return;
        throw new EngineError('NO_SUCH_DATABASE', { db: name });
      }
      await this.path.appendThenApply(
        name,
        [{ event: 'database', entry: eventEntry('dropdb', name, null, { sql, ...by }) }],
        {
          apply: async () => this.remove(ref),
          discard: async () => undefined,
          tookEffect: async () => !this.directory.exists(ref),
        },
      );
    });
  }

  private async remove(ref: DatabaseRef): Promise<void> {
    // Every handle is closed first: SQLite deletes a WAL file by name when its last handle closes.
    await this.engine.closeDatabase(ref.file);
    this.directory.remove(ref);
  }
}
