/**
 * One database as the journal gives it right after a seq (or at a time),
 * rebuilt into a scratch directory: what a `restoredb` entry puts in place
 * (live by POST /dbs/{db}/restore, and again by replay, recovery and a
 * replica when they reach the entry). It starts from the newest snapshot
 * round at or before the target (restore-plan.ts), rebuilds the databases it
 * was copied from beside it (template-sources.ts), and honours earlier
 * restores on the way: each is rebuilt the same way, to its own, older,
 * target, so the recursion ends.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine } from '../src/engine/engine';
import { readJournal } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import { rebuild, REBUILD_PAGE_CACHE_KIB, type Restorer } from './rebuild';
import { copyRound, planRestore } from './restore-plan';
import { databasesNeeded } from './template-sources';
import { ReplayError } from './apply-entries';

/** Where the journal and its snapshot rounds are. */
export interface JournalSource {
  readonly logFile: string;
  /** null: the journal alone, which must then start at seq 1. */
  readonly snapshotDir: string | null;
  /** How the entries a rebuild needs are read; absent: the whole journal from the round on (wholeJournal). */
  readonly reader?: EntryReader;
}

/** The entries one rebuild needs. */
export interface EntryReader {
  /**
   * `db` and the databases it was copied from (template-sources.ts, over the
   * entries from `fromSeq` on; undefined: the journal's first), with their
   * entries from there, oldest first. Entries of other databases may be left out.
   */
  entriesFor(db: string, fromSeq: number | undefined): Promise<{ needed: Set<string>; entries: JournalEntry[] }>;
}

/** The reader of every replay: the whole journal, decoded, from `fromSeq` on. */
export function wholeJournal(logFile: string): EntryReader {
  return {
    entriesFor: async (db, fromSeq) => {
      const contents = await readJournal(logFile, fromSeq === undefined ? {} : { fromSeq });
      const needed = databasesNeeded(contents.entries, db);
      return { needed, entries: contents.entries.filter((entry) => needed.has(entry.db as string)) };
    },
  };
}

export type Target = { seq: number } | { time: number };

/**
 * Rebuilds `db` as it stood right after entry `until.seq` (or after the last
 * entry written at or before `until.time`) into `out`, a directory that holds
 * no database yet. Returns the rebuilt file, or null when the database did
 * not exist at that point. Throws TooOldError (restore-plan.ts) when what is
 * kept does not reach that far back.
 */
export async function rebuildDatabaseAt(
  source: JournalSource,
  db: string,
  until: Target,
  out: string,
  yieldEvery?: number,
): Promise<string | null> {
  const { round } = await planRestore({ logFile: source.logFile, snapshotDir: source.snapshotDir, until });
  const reader = source.reader ?? wholeJournal(source.logFile);
  const read = await reader.entriesFor(db, round === undefined ? undefined : round.base + 1);
  const needed = read.needed;
  const entries = read.entries.filter((entry) =>
    'seq' in until ? entry.seq <= until.seq : Date.parse(entry.ts) <= until.time,
  );
  fs.mkdirSync(out, { recursive: true });
  if (round !== undefined) for (const name of needed) copyRound(round, source.snapshotDir as string, out, name);
  const engine = new Engine({ syncCommits: false, maxOpenDatabases: 16, pageCacheKiB: REBUILD_PAGE_CACHE_KIB });
  try {
    await rebuild(engine, entries, {
      fileOf: (name) => path.join(out, name),
      restorer: restorerFor(source),
      ...(yieldEvery === undefined ? {} : { yieldEvery }),
    });
  } finally {
    engine.close();
  }
  for (const helper of needed) {
    if (helper === db) continue;
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(path.join(out, helper + suffix), { force: true });
  }
  const file = path.join(out, db);
  return fs.existsSync(file) ? file : null;
}

/** What rebuild calls on a `restoredb` entry: the state it puts in place, rebuilt from `source`. */
export function restorerFor(source: JournalSource, scratchParent?: string): Restorer {
  return (entry, put) => withRestoredState(source, entry, put, scratchParent);
}

/**
 * The state a `restoredb` entry puts in place, rebuilt into a scratch
 * directory that `use` may read; the directory is removed afterwards.
 */
export async function withRestoredState<T>(
  source: JournalSource,
  entry: JournalEntry,
  use: (file: string) => T | Promise<T>,
  scratchParent?: string,
): Promise<T> {
  const dir = fs.mkdtempSync(path.join(scratchParent ?? os.tmpdir(), 'sqlscribe-restore-'));
  try {
    const file = await rebuildDatabaseAt(source, entry.db as string, { seq: entry.to as number }, dir);
    if (file === null) throw new ReplayError(entry, `${entry.db} did not exist at seq ${entry.to}`);
    return await use(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
