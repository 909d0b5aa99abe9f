/**
 * Databases made from a template (POST /dbs with `from`) and reset to it
 * (POST /dbs/{db}/reset), through the write path like a create: the entries
 * are durable first, then each copy is written whole and renamed into place.
 *
 * A copy must be the template exactly as it stands at the copy's seq, since
 * replay makes it again by applying every earlier entry and no later one.
 * So the template's write lock is held from the append to the last copy: no
 * write to it can be journaled or committed in between. A session open on
 * the template holds that lock too, so a copy waits for it (up to
 * -lock-timeout, then 409 DATABASE_LOCKED) rather than copy around its
 * uncommitted writes. The copies' own locks are held as well, so that no write
 * reaches a copy before it exists (or, for a reset, while it is replaced);
 * every lock is taken in one order (by file), so two requests never wait
 * for each other.
 */
import { EngineError } from '../../errors';
import type { EngineHost } from '../../engine/protocol';
import { eventEntry } from '../../../journal/journal';
import { databaseLimitBytes, stampOf, type Principal, type TokenStamp } from '../../access/principal';
import type { CopyGate } from './copy-gate';
import type { DatabaseDirectory, DatabaseRef } from './database-directory';
import { acquireWriteLock } from '../writes/lock-errors';
import type { Release, WriteLocks } from '../writes/write-locks';
import type { JournaledEntry, WritePath } from '../writes/write-path';

/** Most databases one request may copy: a class, with room to spare. */
export const MAX_COPIES = 100;

export class DatabaseCopies {
  constructor(
    private readonly directory: DatabaseDirectory,
    private readonly engine: EngineHost,
    private readonly path: WritePath,
    private readonly locks: WriteLocks,
    private readonly lockTimeoutMs: number,
    private readonly gate: CopyGate,
    /** -max-database-mb: a copy larger than its maker's bound is refused before anything is journaled. */
    private readonly maxDatabaseMb: number = Infinity,
  ) {}

  /**
   * Creates every one of `names` as a copy of `from`, all or nothing: when
   * one name is taken nothing is created, and a copy that fails to be
   * written takes the others made by the request with it. A template larger
   * than what `by` may make a database is refused (DATABASE_TOO_LARGE), before
   * any entry: each copy would be a database past the bound at once.
   */
  async copy(names: readonly string[], from: string, by?: Principal): Promise<void> {
    if (names.length > MAX_COPIES) throw new EngineError('TOO_MANY_COPIES', { count: names.length, max: MAX_COPIES });
    const source = this.directory.resolve(from);
    const targets = names.map((name) => this.directory.refOf(name));
    if (new Set(names).size !== names.length)
      throw new EngineError('BAD_REQUEST', { detail: 'a database name appears twice' });
    await this.withLocks([source, ...targets], async () => {
      if (!this.directory.exists(source)) throw new EngineError('NO_SUCH_DATABASE', { db: source.name });
      for (const target of targets) {
        if (this.directory.occupied(target)) throw new EngineError('DATABASE_EXISTS', { db: target.name });
      }
      await this.checkSize(source, targets[0]?.name ?? source.name, by);
      const entries = targets.map((target): JournaledEntry => ({
        event: 'database',
        entry: eventEntry('copydb', target.name, null, { from: source.name, ...stampOf(by) }),
      }));
      const made: DatabaseRef[] = [];
      // Should even voiding a failed copy fail, the first copy is the database marked behind: the others are removed with it.
      await this.path.appendThenApply(targets[0]?.name ?? source.name, entries, {
        apply: async (lastSeq) => {
          // The entries' seqs are consecutive, in the order of `targets`.
          const firstSeq = lastSeq === null ? null : lastSeq - targets.length + 1;
          try {
            for (const [index, target] of targets.entries()) {
              await this.engine.copyDatabase(
                source.file,
                target.file,
                firstSeq === null ? undefined : firstSeq + index,
                source.name,
              );
              made.push(target);
            }
          } catch (error) {
            await this.removeAll(made);
            throw error;
          }
        },
        discard: async () => undefined,
      });
    });
  }

  /** Refuses a copy of `source` that would be larger than `by`'s bound; read under the template's lock. */
  private async checkSize(source: DatabaseRef, target: string, by: Principal | undefined): Promise<void> {
    if (this.maxDatabaseMb === Infinity) return;
    const limit = databaseLimitBytes(by, this.maxDatabaseMb) ?? Infinity;
    const [result] = await this.engine.exec({
      file: source.file,
      statements: [
        { sql: 'SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()', kind: 'select' },
      ],
      maxResultRows: 1,
    });
    const bytes = Number(result?.rows[0]?.[0] ?? 0);
    if (bytes > limit)
      throw new EngineError('DATABASE_TOO_LARGE', {
        db: `${target} (a copy of ${source.name}, ${Math.ceil(bytes / (1024 * 1024))} MiB)`,
        mb: limit / (1024 * 1024),
      });
  }

  /**
   * Returns `name` to its template's current state. A database not made from
   * a template is 409 NO_TEMPLATE; one whose template was dropped since is
   * 409 TEMPLATE_GONE. Returns the template's name.
   */
  async reset(name: unknown, by: TokenStamp = {}): Promise<string> {
    const target = this.directory.resolve(name);
    const template = (await this.engine.journalPosition(target.file)).template;
    if (template === undefined) throw new EngineError('NO_TEMPLATE', { db: target.name });
    const source = this.directory.refOf(template);
    await this.withLocks([source, target], async () => {
      if (!this.directory.exists(target)) throw new EngineError('NO_SUCH_DATABASE', { db: target.name });
      // Read again under the locks: the database may have been dropped and made again meanwhile.
      if ((await this.engine.journalPosition(target.file)).template !== template)
        throw new EngineError('TEMPLATE_GONE', { db: target.name, template });
      if (!this.directory.exists(source)) throw new EngineError('TEMPLATE_GONE', { db: target.name, template });
      const entry = eventEntry('resetdb', target.name, null, { from: source.name, ...by });
      await this.path.appendThenApply(target.name, [{ event: 'database', entry }], {
        apply: async (seq) => {
          await this.engine.copyDatabase(source.file, target.file, seq ?? undefined, source.name);
        },
        discard: async () => undefined,
        // The copy is renamed into place whole: its position says whether it landed.
        tookEffect: async (seq) => (await this.engine.journalPosition(target.file)).created === seq,
      });
    });
    return source.name;
  }

  /** Runs `work` outside snapshot rounds (copy-gate.ts), holding the write locks of every database named, taken in one order. */
  private withLocks(refs: readonly DatabaseRef[], work: () => Promise<void>): Promise<void> {
    return this.gate.copying(() => this.underLocks(refs, work));
  }

  private async underLocks(refs: readonly DatabaseRef[], work: () => Promise<void>): Promise<void> {
    const unique = [...new Map(refs.map((ref) => [ref.file, ref])).values()].sort((a, b) => (a.file < b.file ? -1 : 1));
    const releases: Release[] = [];
    try {
      for (const ref of unique) releases.push(await acquireWriteLock(this.locks, ref, 'batch', this.lockTimeoutMs));
      await work();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  private async removeAll(refs: readonly DatabaseRef[]): Promise<void> {
    for (const ref of refs) {
      await this.engine.closeDatabase(ref.file);
      this.directory.remove(ref);
    }
  }
}
