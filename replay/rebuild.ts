/**
 * Brings databases in line with a run of journal entries. Each database
 * knows the seq of the last entry applied to it and the entry that created
 * it, so entries already applied are skipped: the same code rebuilds from
 * nothing (replay into an empty directory) and finishes what a crash cut
 * short (recovery at start-up).
 */
import fs from 'node:fs';
import type { Engine } from '../src/engine/engine';
import type { JournalPosition } from '../src/engine/protocol';
import { isTraceOnly, type JournalEntry } from '../journal/record';
import { entryOf, type ReadEntry } from '../journal/entry-line';
import { JournalApplier, ReplayError } from './apply-entries';
import { applyTogether, EntryBatch, isBatchable } from './entry-batch';
import { supersededSeqs } from './superseded-entries';
import { markRestored } from '../src/engine/files/database-copy';

/**
 * A rebuild's page cache per database, in KiB: SQLite's own default, not the
 * server's smaller one. A rebuild writes one database after another, each
 * at full speed, and holds few at once.
 */
export const REBUILD_PAGE_CACHE_KIB = 2000;

/**
 * Rebuilds the state a `restoredb` entry puts in place (point-in-time.ts)
 * into a scratch file, hands it to `put`, and removes it afterwards.
 */
export type Restorer = (entry: JournalEntry, put: (file: string) => void) => Promise<void>;

export interface RebuildOptions {
  /** The file of a database, by its name in the journal. */
  fileOf: (db: string) => string;
  /** Told every so often, for a progress bar. */
  onProgress?(done: number, total: number): void;
  /** Gives the event loop a turn every this many entries (a server answers /health meanwhile). */
  yieldEvery?: number;
  /**
   * Recovery's choice: an entry that cannot be applied (its database's disk
   * is full) stops only its own database, which is told here with the seq
   * it stopped at; the others go on. Without it, the first failure ends the
   * rebuild (replay's choice: a rebuild must be whole).
   */
  onDatabaseFailed?(db: string, seq: number, error: unknown): void;
  /** How a `restoredb` entry is applied; without it, such an entry fails (point-in-time.ts's restorerFor gives one). */
  restorer?: Restorer;
}

export interface RebuildResult {
  applied: number;
  skipped: number;
}

class Positions {
  private readonly known = new Map<string, JournalPosition | null>();

  constructor(
    private readonly engine: Engine,
    private readonly fileOf: (db: string) => string,
  ) {}

  get(db: string): JournalPosition | null {
    if (!this.known.has(db)) {
      const file = this.fileOf(db);
      this.known.set(db, fs.existsSync(file) ? this.engine.journalPosition(file) : null);
    }
    return this.known.get(db) ?? null;
  }

  set(db: string, position: JournalPosition | null): void {
    this.known.set(db, position);
  }
}

/** Whether the entry is already reflected in its database (or has nothing to do). */
function alreadyApplied(entry: JournalEntry, position: JournalPosition | null): boolean {
  if (entry.kind === 'createdb' || entry.kind === 'copydb' || entry.kind === 'resetdb')
    return position?.created === entry.seq;
  if (entry.kind === 'dropdb') return position === null || position.applied > entry.seq;
  // A restored file records the restore as its last applied entry, and keeps the creation of the state it was given.
  if (entry.kind === 'restoredb') return position !== null && position.applied >= entry.seq;
  return position !== null && entry.seq <= position.applied;
}

/** The position after applying the entry. */
function advance(entry: JournalEntry, position: JournalPosition | null): JournalPosition | null {
  if (entry.kind === 'createdb') return { applied: entry.seq, created: entry.seq };
  if (entry.kind === 'copydb' || entry.kind === 'resetdb')
    return { applied: entry.seq, created: entry.seq, template: entry.from as string };
  if (entry.kind === 'dropdb') return null;
  const base = position ?? { applied: 0, created: 0 };
  const commits =
    entry.kind === 'commit' || (entry.kind === 'exec' && entry.session === null && entry.ok && entry.readonly !== true);
  return commits ? { applied: entry.seq, created: base.created } : base;
}

/** A database made as a copy of another (POST /dbs with `from`, or a reset to its template). */
function isCopy(entry: JournalEntry): boolean {
  return entry.kind === 'copydb' || entry.kind === 'resetdb';
}

/** The seqs that `void` entries say were never applied live: replay leaves them out too. */
function voidedSeqs(entries: readonly ReadEntry[]): Set<number> {
  const voided = new Set<number>();
  for (const entry of entries) if (entry.kind === 'void') for (const seq of entry.voids ?? []) voided.add(seq);
  return voided;
}

/**
 * One run of rebuild: the entries it has gathered into a batch (entry-batch.ts)
 * and the databases it gave up on.
 */
class Rebuilder {
  private readonly applier: JournalApplier;
  private readonly positions: Positions;
  private readonly batch = new EntryBatch();
  private readonly failed = new Set<string>();
  readonly result: RebuildResult = { applied: 0, skipped: 0 };

  constructor(
    private readonly engine: Engine,
    private readonly options: RebuildOptions,
  ) {
    this.applier = new JournalApplier(engine, options.fileOf);
    this.positions = new Positions(engine, options.fileOf);
  }

  /** Applies one entry unless its database has it already or was given up on. */
  step(entry: JournalEntry, db: string): void {
    if (this.failed.has(db) || !this.wanted(entry, db)) {
      this.result.skipped++;
      return;
    }
    if (!this.batch.admits(entry)) this.flush();
    // Committing the batch may have given up on this very database.
    if (this.failed.has(db)) {
      this.result.skipped++;
      return;
    }
    try {
      this.apply(entry, db);
      this.result.applied++;
    } catch (error) {
      this.fail(entry, error);
    }
  }

  /** False when the database has the entry already (or its file cannot even be read: it is given up on). */
  private wanted(entry: JournalEntry, db: string): boolean {
    try {
      return !alreadyApplied(entry, this.positions.get(db));
    } catch (error) {
      this.fail(entry, error);
      return false;
    }
  }

  private apply(entry: JournalEntry, db: string): void {
    const position = this.positions.get(db);
    // A database the journal never created (the single database of -db) starts empty.
    if (position === null && entry.kind !== 'createdb' && entry.kind !== 'dropdb' && !isCopy(entry))
      this.engine.createDatabase(this.options.fileOf(db));
    if (isCopy(entry)) this.checkSource(entry);
    if (isBatchable(entry)) {
      this.applier.endSessionCutShort(entry);
      this.batch.add(entry);
    } else {
      this.applier.apply(entry);
    }
    this.positions.set(db, advance(entry, position));
  }

  /**
   * A copy is right only from its source as it stood at the copy's seq. A
   * source given up on, or one already past that seq (a file newer than the
   * copy: it cannot be taken back), would make a wrong copy: the copy fails instead.
   */
  private checkSource(entry: JournalEntry): void {
    const from = entry.from as string;
    if (this.failed.has(from)) throw new ReplayError(entry, `its source ${from} could not be brought up to this point`);
    const applied = this.positions.get(from)?.applied ?? 0;
    if (applied > entry.seq)
      throw new ReplayError(
        entry,
        `its source ${from} already holds entry ${applied}, later than the copy: it cannot be copied as it was at seq ${entry.seq}`,
      );
  }

  /** Commits the gathered entries; on failure, the entries from the one that failed on count as skipped. */
  flush(): void {
    const entries = this.batch.take();
    if (entries.length === 0) return;
    try {
      applyTogether(this.engine, this.applier, entries);
    } catch (error) {
      const at = error instanceof ReplayError ? error.entry : (entries[0] as JournalEntry);
      const lost = entries.filter((entry) => entry.seq >= at.seq).length;
      this.result.applied -= lost;
      this.result.skipped += lost;
      this.fail(at, error);
    }
  }

  /** Replay stops at the first failure; recovery gives up on that database only. */
  private fail(entry: JournalEntry, error: unknown): void {
    const db = entry.db as string;
    if (this.options.onDatabaseFailed === undefined) throw error;
    this.failed.add(db);
    this.applier.abandon(db);
    this.options.onDatabaseFailed(db, entry.seq, error);
  }

  /**
   * A restore: the database's state at the entry's target, rebuilt apart
   * (it may need entries this run skipped or never read), replaces its file.
   */
  async restore(entry: JournalEntry, db: string): Promise<void> {
    if (this.failed.has(db) || !this.wanted(entry, db)) {
      this.result.skipped++;
      return;
    }
    this.flush();
    this.applier.endSessionCutShort(entry);
    const file = this.options.fileOf(db);
    try {
      const restorer = this.options.restorer;
      if (restorer === undefined)
        throw new ReplayError(entry, 'a restore needs the journal it was made from to be rebuilt');
      await restorer(entry, (state) => {
        markRestored(state, entry.seq);
        this.engine.restoreDatabase(state, file);
      });
      this.positions.set(db, this.engine.journalPosition(file));
      this.result.applied++;
    } catch (error) {
      this.fail(entry, error);
    }
  }

  finish(): void {
    this.flush();
    this.applier.finish();
  }
}

/**
 * Applies the entries in seq order. Entries still undecoded (a journal read
 * lazily, entry-line.ts) are decoded one at a time as they are reached: what is
 * decoded is used at once and dies young.
 */
export async function rebuild(
  engine: Engine,
  entries: readonly ReadEntry[],
  options: RebuildOptions,
): Promise<RebuildResult> {
  const rebuilder = new Rebuilder(engine, options);
  const voided = voidedSeqs(entries);
  // Entries a later drop or reset wipes out: recovery could not always make them again (superseded-entries.ts).
  const superseded = supersededSeqs(entries);
  for (const [index, entry] of entries.entries()) {
    if (options.yieldEvery !== undefined && index % options.yieldEvery === options.yieldEvery - 1)
      await new Promise((resolve) => setImmediate(resolve));
    if (index % 1000 === 0) options.onProgress?.(index, entries.length);
    // A refused request names the database it asked for, which it never reached (and which may not exist).
    if (entry.db === null || entry.kind === 'void' || isTraceOnly(entry)) continue;
    if (voided.has(entry.seq) || superseded.has(entry.seq)) rebuilder.result.skipped++;
    else if (entry.kind === 'restoredb') await rebuilder.restore(entryOf(entry), entry.db);
    else rebuilder.step(entryOf(entry), entry.db);
  }
  rebuilder.finish();
  options.onProgress?.(entries.length, entries.length);
  return rebuilder.result;
}
