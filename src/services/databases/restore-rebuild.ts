/**
 * What a restore's rebuild process does (restore-child.ts runs it, apart
 * from the server; restore-process.ts starts that process): find the target
 * and what it undoes (restore-targets.ts), then rebuild the database's state
 * there into the scratch directory the server made (replay/point-in-time.ts).
 *
 * With the journal index it reads only the lines it needs: the target
 * functions get the database's own entries and the few of the journal's other
 * entries that they look at (targetEntries), and the rebuild reads the
 * database's lines and its templates' (replay/indexed-journal.ts). Without
 * the index, or when it is not whole, the whole journal is read, as replay
 * does; either way here, never in the server's process.
 */
import fs from 'node:fs';
import { EngineError, type EngineErrorData } from '../../errors';
import { readJournal } from '../../../journal/reader';
import type { JournalEntry } from '../../../journal/record';
import { IndexedJournal, IndexMismatchError } from '../../../replay/indexed-journal';
import { rebuildDatabaseAt, type JournalSource } from '../../../replay/point-in-time';
import { TooOldError } from '../../../replay/restore-plan';
import { creationSeq, targetSeq, timeOf, undoneEntries, type RestoreAsk, type UndoneEntry } from './restore-targets';

export interface RestoreTarget {
  seq: number;
  time: string;
}

/** What the server hands the rebuild process: plain data (it crosses as JSON). */
export interface RestoreJob {
  /** The database's file name (`<name>.db`), as the journal names it. */
  readonly db: string;
  readonly ask: RestoreAsk;
  /** The last durable seq when the restore began: nothing after it is read. */
  readonly lastSeq: number;
  /** The server's clock at the start (a time target in the future is refused). */
  readonly now: number;
  /** The caller's token; null on a server without tokens (undo: the last write by anyone). */
  readonly tokenId: string | null;
  readonly logFile: string;
  readonly snapshotDir: string | null;
  /** The journal index, settled through `lastSeq`; null: -history-index=false. */
  readonly indexFile: string | null;
  /** An empty scratch directory the server made for the state (and removes). */
  readonly out: string;
}

/** The target, what it undoes, and the state there, rebuilt in `job.out`. */
export interface RestorePlanned {
  target: RestoreTarget;
  undone: { count: number; entries: UndoneEntry[] };
  file: string;
}

/** The environment variable the job crosses in (restore-child.ts reads it). */
export const JOB_VARIABLE = 'SQLSCRIBE_RESTORE_JOB';

/** The one message a rebuild process sends back. */
export type RestoreReply =
  | { kind: 'planned'; planned: RestorePlanned }
  /** A replica's `restoredb` state (restore-state.ts), rebuilt into this file. */
  | { kind: 'state'; file: string }
  /** An answer for the client: no such write to undo, a target before the database, older than what is kept... */
  | { kind: 'error'; error: EngineErrorData }
  /** Anything else that went wrong (its stack is on the process's stderr). */
  | { kind: 'failed'; message: string };

/** How often the rebuild lets the process's event loop run (it notices its parent gone). */
const YIELD_EVERY = 200;

export function planAndRebuild(job: RestoreJob): Promise<RestorePlanned> {
  return throughIndex(job, (indexed) => planWith(job, indexed));
}

/** What a rebuild reads the journal with, and where it writes: what a RestoreJob and a StateJob (restore-state.ts) both carry. */
export interface RebuildSource {
  readonly db: string;
  readonly lastSeq: number;
  readonly logFile: string;
  readonly snapshotDir: string | null;
  readonly indexFile: string | null;
  readonly out: string;
}

/**
 * `work` through the journal index when the job has one, else through the
 * whole journal; when a file moved under the index, `work` once more through
 * the whole journal, into an emptied `out`.
 */
export async function throughIndex<T>(
  job: RebuildSource,
  work: (indexed: IndexedJournal | null) => Promise<T>,
): Promise<T> {
  const indexed = job.indexFile === null ? null : await IndexedJournal.open(job.logFile, job.indexFile, job.lastSeq);
  try {
    return await work(indexed);
  } catch (error) {
    if (!(error instanceof IndexMismatchError)) throw error;
    // A file moved or went while it was read by its index: everything again from the journal itself.
    fs.rmSync(job.out, { recursive: true, force: true });
    fs.mkdirSync(job.out, { recursive: true });
    return await work(null);
  } finally {
    indexed?.close();
  }
}

/**
 * `job.db`'s file right after `seq`, rebuilt into `job.out`; null when the
 * database did not exist there; RESTORE_TOO_OLD when what the journal keeps
 * no longer reaches `seq`.
 */
export async function rebuildAt(
  job: RebuildSource,
  indexed: IndexedJournal | null,
  seq: number,
): Promise<string | null> {
  const source: JournalSource = {
    logFile: job.logFile,
    snapshotDir: job.snapshotDir,
    ...(indexed === null ? {} : { reader: indexed }),
  };
  try {
    return await rebuildDatabaseAt(source, job.db, { seq }, job.out, YIELD_EVERY);
  } catch (error) {
    if (error instanceof TooOldError)
      throw new EngineError(
        'RESTORE_TOO_OLD',
        { db: job.db, target: `seq ${seq}`, detail: error.message },
        { cause: error },
      );
    throw error;
  }
}

/** What restore-targets.ts reads: the journal's entries through lastSeq, or the part of them it looks at. */
interface TargetEntries {
  readonly entries: readonly JournalEntry[];
  /** The same list with the entry `seq` in it (timeOf reads it). */
  withEntryAt(seq: number): Promise<readonly JournalEntry[]>;
}

async function planWith(job: RestoreJob, indexed: IndexedJournal | null): Promise<RestorePlanned> {
  const view = indexed === null ? await wholeTargetEntries(job) : await targetEntries(indexed, job.db, job.ask);
  const seq = targetSeq(job.db, job.ask, view.entries, job.lastSeq, job.now, job.tokenId ?? undefined);
  const entries = await view.withEntryAt(seq);
  const target = {
    seq,
    time: timeOf(entries, seq, 'time' in job.ask ? new Date(job.ask.time).toISOString() : new Date(0).toISOString()),
  };
  const undone = undoneEntries(entries, job.db, seq);
  const file = await rebuildAt(job, indexed, seq);
  if (file === null)
    throw new EngineError('RESTORE_BEFORE_CREATION', {
      db: job.db,
      target: `seq ${seq}`,
      oldest: creationSeq(entries, job.db),
    });
  return { target, undone, file };
}

/** The whole journal through lastSeq, decoded (no index). */
async function wholeTargetEntries(job: RestoreJob): Promise<TargetEntries> {
  const entries = (await readJournal(job.logFile)).entries.filter((entry) => entry.seq <= job.lastSeq);
  return { entries, withEntryAt: async () => entries };
}

/**
 * The entries restore-targets.ts reads, through the index: `db`'s own (an
 * undo, the undone list and the creation look at no other), the journal's
 * first and last kept entries (the fallbacks of a time target and of the
 * creation seq), for a time target the first entry written after it and the
 * one before (where the walk of targetSeq stops: every entry before the
 * first one after the time was written at or before it), and then the entry
 * at the target (its time). Over this list each function answers what it
 * answers over the whole journal, since seqs have no gaps (IndexedJournal
 * checked that the index holds every one).
 */
async function targetEntries(indexed: IndexedJournal, db: string, ask: RestoreAsk): Promise<TargetEntries> {
  const own = await indexed.entriesOf(db);
  const around = [indexed.first, indexed.through];
  if ('time' in ask) {
    const after = indexed.firstAfter(ask.time);
    if (after !== null) around.push(after - 1, after);
  }
  const entries = merged(own, await indexed.entriesAt(around));
  return {
    entries,
    withEntryAt: async (seq) => merged(entries, await indexed.entriesAt([seq])),
  };
}

/** Two lists in seq order as one, each seq once. */
function merged(a: readonly JournalEntry[], b: readonly JournalEntry[]): JournalEntry[] {
  const bySeq = new Map<number, JournalEntry>();
  for (const entry of [...a, ...b]) bySeq.set(entry.seq, entry);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}
