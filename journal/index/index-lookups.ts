/**
 * The journal index opened by another process than the server's, to read
 * only: a restore's rebuild process (src/services/databases/restore-child.ts)
 * finds where the lines it needs are instead of reading the whole journal.
 * The server settles the index first (JournalIndex.settle), so every entry
 * up to the seq it hands over has its row. Never writes: the file stays the
 * server's; `query_only` makes sure of it.
 */
import Database from 'better-sqlite3';
import type { IndexedLine } from './index-store';

export class IndexLookups {
  private constructor(private readonly db: Database.Database) {}

  /** Opens the index at `file`; null when there is none (the caller reads the journal itself). */
  static open(file: string): IndexLookups | null {
    let db: Database.Database;
    try {
      db = new Database(file, { fileMustExist: true });
    } catch {
      return null;
    }
    db.pragma('query_only = ON');
    return new IndexLookups(db);
  }

  /** How many rows seqs `from`..`through` have: all of them (`through - from + 1`) when the index is whole there. */
  count(from: number, through: number): number {
    return this.db
      .prepare('SELECT count(*) FROM entries WHERE seq BETWEEN ? AND ?')
      .pluck()
      .get(from, through) as number;
  }

  /** The rows of `db` within `from`..`through`, oldest first (the (db, seq) index). */
  rowsOf(db: string, from: number, through: number): IndexedLine[] {
    return this.db
      .prepare('SELECT seq, file, offset FROM entries WHERE db = ? AND seq BETWEEN ? AND ? ORDER BY seq')
      .all(db, from, through) as IndexedLine[];
  }

  /** The rows of entries of these kinds within `from`..`through`, oldest first. */
  rowsOfKinds(kinds: readonly string[], from: number, through: number): IndexedLine[] {
    const marks = kinds.map(() => '?').join(', ');
    return this.db
      .prepare(`SELECT seq, file, offset FROM entries WHERE kind IN (${marks}) AND seq BETWEEN ? AND ? ORDER BY seq`)
      .all(...kinds, from, through) as IndexedLine[];
  }

  /** The row of entry `seq`, if the index has it. */
  rowAt(seq: number): IndexedLine | undefined {
    return this.db.prepare('SELECT seq, file, offset FROM entries WHERE seq = ?').get(seq) as IndexedLine | undefined;
  }

  /** The first seq within `from`..`through` whose entry was written after `time` (ms since the epoch). */
  firstAfter(time: number, from: number, through: number): number | null {
    return this.db
      .prepare('SELECT min(seq) FROM entries WHERE seq BETWEEN ? AND ? AND time > ?')
      .pluck()
      .get(from, through, time) as number | null;
  }

  close(): void {
    this.db.close();
  }
}
