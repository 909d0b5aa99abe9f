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
import type { JournalEntry } from '../journal/record';
import { JournalApplier } from './apply-entries';

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
}

export interface RebuildResult {
  applied: number;
  skipped: number;
}

class Positions {
  private readonly known = new Map<string, JournalPosition | null>();

  constructor(private readonly engine: Engine, private readonly fileOf: (db: string) => string) {}

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
  if (entry.kind === 'createdb') return position?.created === entry.seq;
  if (entry.kind === 'dropdb') return position === null || position.applied > entry.seq;
  return position !== null && entry.seq <= position.applied;
}

/** The position after applying the entry. */
function advance(entry: JournalEntry, position: JournalPosition | null): JournalPosition | null {
  if (entry.kind === 'createdb') return { applied: entry.seq, created: entry.seq };
  if (entry.kind === 'dropdb') return null;
  const base = position ?? { applied: 0, created: 0 };
  const commits = entry.kind === 'commit' || (entry.kind === 'exec' && entry.session === null && entry.ok && entry.readonly !== true);
  return commits ? { ...base, applied: entry.seq } : base;
}

/** The seqs that `void` entries say were never applied live: replay leaves them out too. */
function voidedSeqs(entries: readonly JournalEntry[]): Set<number> {
  const voided = new Set<number>();
  for (const entry of entries) if (entry.kind === 'void') for (const seq of entry.voids ?? []) voided.add(seq);
  return voided;
}

/** Applies one entry unless its database has it already; false when it had. */
function applyEntry(engine: Engine, applier: JournalApplier, positions: Positions, db: string, entry: JournalEntry, options: RebuildOptions): boolean {
  const position = positions.get(db);
  if (alreadyApplied(entry, position)) return false;
  // A database the journal never created (the single database of -db) starts empty.
  if (position === null && entry.kind !== 'createdb' && entry.kind !== 'dropdb') engine.createDatabase(options.fileOf(db));
  applier.apply(entry);
  positions.set(db, advance(entry, position));
  return true;
}

export async function rebuild(engine: Engine, entries: readonly JournalEntry[], options: RebuildOptions): Promise<RebuildResult> {
  const applier = new JournalApplier(engine, options.fileOf);
  const positions = new Positions(engine, options.fileOf);
  const voided = voidedSeqs(entries);
  const failed = new Set<string>();
  const result: RebuildResult = { applied: 0, skipped: 0 };
  for (const [index, entry] of entries.entries()) {
    if (options.yieldEvery !== undefined && index % options.yieldEvery === options.yieldEvery - 1) await new Promise((resolve) => setImmediate(resolve));
    if (index % 1000 === 0) options.onProgress?.(index, entries.length);
    if (entry.db === null || entry.kind === 'void') continue;
    if (voided.has(entry.seq)) {
      result.skipped++;
      continue;
    }
    if (failed.has(entry.db)) {
      result.skipped++;
      continue;
    }
    try {
      if (applyEntry(engine, applier, positions, entry.db, entry, options)) result.applied++;
      else result.skipped++;
    } catch (error) {
      if (options.onDatabaseFailed === undefined) throw error;
      failed.add(entry.db);
      applier.abandon(entry.db);
      options.onDatabaseFailed(entry.db, entry.seq, error);
    }
  }
  applier.finish();
  options.onProgress?.(entries.length, entries.length);
  return result;
}
