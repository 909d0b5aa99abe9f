/**
 * The journal read through its index (journal/index/): only the lines one
 * rebuild needs, those of a database and of the databases it was copied
 * from, instead of every entry of every database. What a restore's rebuild
 * process reads (src/services/databases/restore-child.ts); replay itself
 * goes through the whole journal.
 *
 * The index must hold a row for every entry within the journal's first kept
 * seq and `through` (the server settles it before it hands `through` over):
 * open() checks the count and answers null otherwise, and a line that is not
 * where its row says (a file removed meanwhile) throws IndexMismatchError;
 * either way the caller reads the whole journal instead.
 */
import { IndexedLines } from '../journal/index/indexed-lines';
import { IndexLookups } from '../journal/index/index-lookups';
import type { IndexedLine } from '../journal/index/index-store';
import { journalFirstSeq } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import type { EntryReader } from './point-in-time';
import { databasesNeeded } from './template-sources';

/** A line was not where the index says: the caller falls back to the whole journal. */
export class IndexMismatchError extends Error {}

/** The kinds whose `from` names a database another was copied from (template-sources.ts). */
const COPY_KINDS = ['copydb', 'resetdb'] as const;

export class IndexedJournal implements EntryReader {
  private readonly lines: IndexedLines;

  private constructor(
    private readonly lookups: IndexLookups,
    logFile: string,
    /** The journal's first kept seq: rows below it are of removed files. */
    readonly first: number,
    /** The last seq the index is known to hold, and that anything here reads. */
    readonly through: number,
  ) {
    this.lines = new IndexedLines(logFile);
  }

  /** The journal at `logFile` through seq `through`, by its index at `indexFile`; null when that index is missing or not whole. */
  static async open(logFile: string, indexFile: string, through: number): Promise<IndexedJournal | null> {
    const lookups = IndexLookups.open(indexFile);
    if (lookups === null) return null;
    const first = (await journalFirstSeq(logFile)) ?? through + 1;
    if (first <= through && lookups.count(first, through) !== through - first + 1) {
      lookups.close();
      return null;
    }
    return new IndexedJournal(lookups, logFile, first, through);
  }

  async entriesFor(db: string, fromSeq: number | undefined): Promise<{ needed: Set<string>; entries: JournalEntry[] }> {
    const from = Math.max(fromSeq ?? this.first, this.first);
    const copies = await this.read(this.lookups.rowsOfKinds(COPY_KINDS, from, this.through));
    const needed = databasesNeeded(copies, db);
    const rows = [...needed].flatMap((name) => this.lookups.rowsOf(name, from, this.through));
    return { needed, entries: await this.read(rows.sort((a, b) => a.seq - b.seq)) };
  }

  /** Every entry of `db` the journal keeps through `through`, oldest first. */
  entriesOf(db: string): Promise<JournalEntry[]> {
    return this.read(this.lookups.rowsOf(db, this.first, this.through));
  }

  /** The entries at these seqs (each kept through `through`; others are left out), oldest first. */
  entriesAt(seqs: readonly number[]): Promise<JournalEntry[]> {
    const wanted = [...new Set(seqs)].filter((seq) => seq >= this.first && seq <= this.through).sort((a, b) => a - b);
    return this.read(wanted.map((seq) => this.lookups.rowAt(seq)).filter((row) => row !== undefined));
  }

  /** The first seq kept through `through` whose entry was written after `time`, or null. */
  firstAfter(time: number): number | null {
    return this.lookups.firstAfter(time, this.first, this.through);
  }

  close(): void {
    this.lookups.close();
  }

  private async read(rows: readonly IndexedLine[]): Promise<JournalEntry[]> {
    const entries = await this.lines.read(rows);
    if (entries === null) throw new IndexMismatchError('a journal line is not where the index says');
    return entries;
  }
}
