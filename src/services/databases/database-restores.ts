/**
 * POST /dbs/{db}/restore: a database given back the state the journal gives
 * it right after an earlier entry, so a mistake is undone without a restart.
 *
 * The state is rebuilt apart, with replay's own code (replay/point-in-time.ts:
 * the newest snapshot round at or before the target, then the journal), into
 * a scratch directory beside the databases. Then it goes through the write
 * path like a reset (database-copies.ts): under the copy gate and the
 * database's write lock (a session open on it makes the restore wait up to
 * -lock-timeout, then 409 DATABASE_LOCKED), a `restoredb` entry is made
 * durable first, and only then is the state put in place, in place and in one
 * transaction (SQLite's online backup), so a reader sees the old contents or
 * the new and the server goes on serving every other database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../../errors';
import type { EngineHost } from '../../engine/protocol';
import { markRestored, restoreInto } from '../../engine/files/database-copy';
import { eventEntry } from '../../../journal/journal';
import { readJournal } from '../../../journal/reader';
import type { JournalEntry } from '../../../journal/record';
import { rebuildDatabaseAt, type JournalSource } from '../../../replay/point-in-time';
import { TooOldError } from '../../../replay/restore-plan';
import type { TokenStamp } from '../../access/principal';
import type { CopyGate } from './copy-gate';
import type { DatabaseDirectory, DatabaseRef } from './database-directory';
import { withWriteLock } from '../writes/lock-errors';
import type { WriteLocks } from '../writes/write-locks';
import type { WritePath } from '../writes/write-path';
import { creationSeq, parseRestoreBody, targetSeq, timeOf, undoneEntries, type UndoneEntry } from './restore-targets';

export interface RestoreTarget {
  seq: number;
  time: string;
}

export type RestoreOutcome =
  | { db: string; dryRun: true; target: RestoreTarget; undone: { count: number; entries: UndoneEntry[] } }
  | { db: string; restored: RestoreTarget; undone: { count: number }; seq: number | null };

export interface RestoreDeps {
  readonly directory: DatabaseDirectory;
  readonly engine: EngineHost;
  readonly path: WritePath;
  /** The last durable seq: a target beyond it is refused. */
  readonly journal: { readonly lastSeq: number };
  readonly locks: WriteLocks;
  readonly lockTimeoutMs: number;
  readonly gate: CopyGate;
  /** The journal and its snapshot rounds; null when the server keeps no journal of every change. */
  readonly source: JournalSource | null;
  /** Where states are rebuilt (a scratch directory is made and removed in it). */
  readonly scratchDir: string;
  readonly clock: () => number;
}

export class DatabaseRestores {
  constructor(private readonly deps: RestoreDeps) {}

  /** Restores `name` (or, with dryRun, says what a restore would undo); `by` is the caller, recorded in the entry. */
  async restore(name: unknown, body: unknown, by: TokenStamp = {}): Promise<RestoreOutcome> {
    const { directory, source } = this.deps;
    const ref = directory.resolve(name);
    const request = parseRestoreBody(ref.name, body);
    if (source === null)
      throw new EngineError('RESTORE_NEEDS_JOURNAL', { detail: 'without one (-log-level none or error)' });
    if (!directory.exists(ref)) throw new EngineError('NO_SUCH_DATABASE', { db: ref.name });
    if (request.dryRun) return this.plan(ref, source, request.ask, by, null);
    return this.deps.gate.copying(() =>
      withWriteLock(this.deps.locks, ref, this.deps.lockTimeoutMs, async () => {
        if (!directory.exists(ref)) throw new EngineError('NO_SUCH_DATABASE', { db: ref.name });
        return this.plan(ref, source, request.ask, by, (file, seq) => this.swap(ref, file, seq, by));
      }),
    );
  }

  /**
   * Finds the target, rebuilds the database's state there and, unless this
   * is a dry run (`swap` null), puts it in place. Under the write lock for a
   * real restore: no write to the database falls between the journal read
   * here and the swap.
   */
  private async plan(
    ref: DatabaseRef,
    source: JournalSource,
    ask: Parameters<typeof targetSeq>[1],
    by: TokenStamp,
    swap: ((file: string, to: number) => Promise<number | null>) | null,
  ): Promise<RestoreOutcome> {
    const lastSeq = this.deps.journal.lastSeq;
    const entries = (await readJournal(source.logFile)).entries.filter((entry) => entry.seq <= lastSeq);
    const seq = targetSeq(ref.name, ask, entries, lastSeq, this.deps.clock(), by.tokenId);
    const target = {
      seq,
      time: timeOf(entries, seq, 'time' in ask ? new Date(ask.time).toISOString() : new Date(0).toISOString()),
    };
    const undone = undoneEntries(entries, ref.name, seq);
    return this.withState(ref, source, seq, entries, async (file) => {
      if (swap === null) return { db: ref.name, dryRun: true, target, undone };
      const restoredSeq = await swap(file, seq);
      return { db: ref.name, restored: target, undone: { count: undone.count }, seq: restoredSeq };
    });
  }

  /** The database's state right after `seq`, rebuilt into a scratch directory for `use`, then removed. */
  private async withState<T>(
    ref: DatabaseRef,
    source: JournalSource,
    seq: number,
    entries: readonly JournalEntry[],
    use: (file: string) => Promise<T>,
  ): Promise<T> {
    fs.mkdirSync(this.deps.scratchDir, { recursive: true });
    const dir = fs.mkdtempSync(path.join(this.deps.scratchDir, 'restore-'));
    try {
      let file: string | null;
      try {
        file = await rebuildDatabaseAt(source, ref.name, { seq }, dir, 200);
      } catch (error) {
        if (error instanceof TooOldError)
          throw new EngineError(
            'RESTORE_TOO_OLD',
            { db: ref.name, target: `seq ${seq}`, detail: error.message },
            { cause: error },
          );
        throw error;
      }
      if (file === null)
        throw new EngineError('RESTORE_BEFORE_CREATION', {
          db: ref.name,
          target: `seq ${seq}`,
          oldest: creationSeq(entries, ref.name),
        });
      return await use(file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The `restoredb` entry, durable first; then the rebuilt state, marked with the entry's seq, replaces the database in place. */
  private async swap(ref: DatabaseRef, file: string, to: number, by: TokenStamp): Promise<number | null> {
    const entry = eventEntry('restoredb', ref.name, null, { to, ...by });
    let restored: number | null = null;
    await this.deps.path.appendThenApply(ref.name, [{ event: 'database', entry }], {
      apply: async (seq) => {
        restored = seq;
        if (seq !== null) markRestored(file, seq);
        await restoreInto(file, ref.file);
      },
      discard: async () => undefined,
      // The position lands with the contents (one backup transaction): it says whether the restore did.
      tookEffect: async (seq) => (await this.deps.engine.journalPosition(ref.file)).applied === seq,
    });
    return restored;
  }
}
