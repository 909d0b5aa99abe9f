/**
 * POST /dbs/{db}/restore: a database given back the state the journal gives
 * it right after an earlier entry, so a mistake is undone without a restart.
 *
 * The target is found and the state rebuilt apart, in a process of its own
 * (restore-process.ts, restore-rebuild.ts) with replay's own code
 * (replay/point-in-time.ts: the newest snapshot round at or before the
 * target, then the journal's lines of the database and its templates, found
 * by the journal index), into a scratch directory beside the databases, at
 * most RESTORES_AT_ONCE at once (restore-slots.ts). Then it goes through the write
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
import type { JournalSource } from '../../../replay/point-in-time';
import type { TokenStamp } from '../../access/principal';
import type { CopyGate } from './copy-gate';
import type { DatabaseDirectory, DatabaseRef } from './database-directory';
import { withWriteLock } from '../writes/lock-errors';
import type { WriteLocks } from '../writes/write-locks';
import type { WritePath } from '../writes/write-path';
import { parseRestoreBody, type RestoreAsk, type UndoneEntry } from './restore-targets';
import type { RestoreProcesses } from './restore-process';
import type { RestoreTarget } from './restore-rebuild';
import type { RestoreSlots } from './restore-slots';

export type { RestoreTarget } from './restore-rebuild';

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
  /** The journal index (its file, and settling it for another process to read); null: -history-index=false. */
  readonly index: { readonly file: string; settle(): Promise<void> } | null;
  /** Where states are rebuilt (a scratch directory is made and removed in it). */
  readonly scratchDir: string;
  /** The processes that rebuild, under their bounds. */
  readonly rebuilds: RestoreProcesses;
  /** How many rebuild at once; the rest wait. */
  readonly slots: RestoreSlots;
  readonly clock: () => number;
}

export class DatabaseRestores {
  constructor(private readonly deps: RestoreDeps) {}

  /**
   * Restores `name` (or, with dryRun, says what a restore would undo); `by` is
   * the caller, recorded in the entry; `signal` the request's (a stop while it
   * waits for a slot ends the wait, a client gone ends the rebuild).
   */
  async restore(name: unknown, body: unknown, by: TokenStamp = {}, signal?: AbortSignal): Promise<RestoreOutcome> {
    const { directory, source } = this.deps;
    const ref = directory.resolve(name);
    const request = parseRestoreBody(ref.name, body);
    if (source === null)
      throw new EngineError('RESTORE_NEEDS_JOURNAL', { detail: 'without one (-log-level none or error)' });
    if (!directory.exists(ref)) throw new EngineError('NO_SUCH_DATABASE', { db: ref.name });
    return this.deps.slots.run(ref.name, signal, () => {
      if (request.dryRun) return this.plan(ref, source, request.ask, by, null, signal);
      return this.deps.gate.copying(() =>
        withWriteLock(this.deps.locks, ref, this.deps.lockTimeoutMs, async () => {
          if (!directory.exists(ref)) throw new EngineError('NO_SUCH_DATABASE', { db: ref.name });
          return this.plan(ref, source, request.ask, by, (file, seq) => this.swap(ref, file, seq, by), signal);
        }),
      );
    });
  }

  /** Stops every rebuild under way (the server stops). */
  close(): void {
    this.deps.rebuilds.close();
  }

  /**
   * Finds the target, rebuilds the database's state there (both in a rebuild
   * process) and, unless this is a dry run (`swap` null), puts it in place.
   * Under the write lock for a real restore: no write to the database falls
   * between the last seq read here and the swap.
   */
  private async plan(
    ref: DatabaseRef,
    source: JournalSource,
    ask: RestoreAsk,
    by: TokenStamp,
    swap: ((file: string, to: number) => Promise<number | null>) | null,
    signal: AbortSignal | undefined,
  ): Promise<RestoreOutcome> {
    const lastSeq = this.deps.journal.lastSeq;
    // Every entry through lastSeq gets its row in the index's file before the rebuild process reads it.
    await this.deps.index?.settle();
    return this.withScratch(async (out) => {
      const job = {
        db: ref.name,
        ask,
        lastSeq,
        now: this.deps.clock(),
        tokenId: by.tokenId ?? null,
        logFile: source.logFile,
        snapshotDir: source.snapshotDir,
        indexFile: this.deps.index?.file ?? null,
        out,
      };
      const { target, undone, file } = await this.deps.rebuilds.rebuild(job, signal);
      if (swap === null) return { db: ref.name, dryRun: true, target, undone };
      const restoredSeq = await swap(file, target.seq);
      return { db: ref.name, restored: target, undone: { count: undone.count }, seq: restoredSeq };
    });
  }

  /** A scratch directory for one rebuild, removed however it ends (the rebuild process is gone by then). */
  private async withScratch<T>(use: (dir: string) => Promise<T>): Promise<T> {
    fs.mkdirSync(this.deps.scratchDir, { recursive: true });
    const dir = fs.mkdtempSync(path.join(this.deps.scratchDir, 'restore-'));
    try {
      return await use(dir);
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
