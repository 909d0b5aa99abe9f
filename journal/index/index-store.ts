/**
 * The journal index's database: one row per journal entry, saying who and
 * what (db, time, token, kind, outcome) and where its line is (the file, by
 * the firstSeq its header gives, and the byte offset of the line in the
 * file's uncompressed text). The JSONL journal stays the source of truth: the
 * index holds no SQL, and can be deleted at any time (it is rebuilt).
 *
 * WAL with synchronous=NORMAL: a commit is not synced, since whatever a crash
 * takes from the index the next start reads again from the journal.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';

/** Bump when the rows' meaning changes: an index of another format is dropped and rebuilt. */
export const INDEX_FORMAT = 1;

export interface IndexRow {
  seq: number;
  db: string | null;
  /** ms since the epoch. */
  time: number;
  token: string | null;
  kind: string;
  ok: boolean;
  errorClass: number | null;
  code: number | null;
  /** The firstSeq of the journal file the line is in. */
  file: number;
  /** Byte offset of the line in the file's uncompressed text. */
  offset: number;
}

/** Where a row's line is. */
export interface IndexedLine {
  seq: number;
  file: number;
  offset: number;
}

/** One database's entries, newest first: seq below `before`, within `fromSeq`..`toSeq` and the time bounds. */
export interface IndexQuery {
  db: string;
  before: number;
  fromSeq: number;
  toSeq: number;
  fromTime: number | null;
  toTime: number | null;
  failed: boolean;
  token: string | null;
  limit: number;
}

/** A successful createdb or copydb: where a database's life begins (the partial index's condition, and its queries'). */
const CREATION = "kind IN ('createdb', 'copydb') AND ok = 1";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
  seq INTEGER PRIMARY KEY,
  db TEXT,
  time INTEGER NOT NULL,
  token TEXT,
  kind TEXT NOT NULL,
  ok INTEGER NOT NULL,
  class INTEGER,
  code INTEGER,
  file INTEGER NOT NULL,
  offset INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_db ON entries (db, seq);
CREATE INDEX IF NOT EXISTS entries_creations ON entries (db, seq) WHERE ${CREATION};
`;
// One full secondary index only: each more (by token, of failures) cost every write a B-tree insert, and
// the filters walk a database's entries newest first from (db, seq), stopping once the page is full.
// The partial index of creations takes a row only for a createdb or copydb, which are rare: where a
// database's latest life begins is one lookup, whatever the length of the life.

export class IndexStore {
  private readonly insertRow: Database.Statement;
  private readonly insertMany: (rows: readonly IndexRow[]) => void;
  private readonly latestCreationOf: Database.Statement;
  private readonly queries = new Map<string, Database.Statement>();

  private constructor(private readonly db: Database.Database) {
    this.insertRow = db.prepare(
      'INSERT OR REPLACE INTO entries (seq, db, time, token, kind, ok, class, code, file, offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.latestCreationOf = db
      .prepare(
        `SELECT seq FROM entries INDEXED BY entries_creations WHERE db = ? AND ${CREATION} ORDER BY seq DESC LIMIT 1`,
      )
      .pluck();
    this.insertMany = db.transaction((rows: readonly IndexRow[]) => {
      for (const r of rows)
        this.insertRow.run(r.seq, r.db, r.time, r.token, r.kind, r.ok ? 1 : 0, r.errorClass, r.code, r.file, r.offset);
    });
  }

  /**
   * Opens the index at `file`, or makes it. One that cannot be opened, is not
   * an index, or has another format is removed and made anew (`warn` says so):
   * it is only a cache of the journal.
   */
  static open(file: string, warn: (message: string) => void): IndexStore {
    // An index deleted without its write-ahead files: those would be replayed into the new one.
    if (!fs.existsSync(file)) removeIndexFiles(file);
    try {
      return IndexStore.openAs(file);
    } catch (err) {
      warn(`journal index ${file}: ${(err as Error).message}; rebuilding it from the journal`);
      removeIndexFiles(file);
      return IndexStore.openAs(file);
    }
  }

  private static openAs(file: string): IndexStore {
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get() as number | undefined;
      if (format === undefined) db.prepare("INSERT INTO meta (key, value) VALUES ('format', ?)").run(INDEX_FORMAT);
      else if (format !== INDEX_FORMAT) throw new Error(`written in index format ${format}, not ${INDEX_FORMAT}`);
      return new IndexStore(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** The last seq indexed; 0 when none. */
  lastSeq(): number {
    return (this.db.prepare('SELECT max(seq) FROM entries').pluck().get() as number | null) ?? 0;
  }

  insert(rows: readonly IndexRow[]): void {
    if (rows.length > 0) this.insertMany(rows);
  }

  /** Drops rows of seqs the journal no longer holds: below its first kept seq (retention), or above its last (a crash lost them). */
  keepWithin(firstSeq: number, lastSeq: number): number {
    return this.db.prepare('DELETE FROM entries WHERE seq < ? OR seq > ?').run(firstSeq, lastSeq).changes;
  }

  hasDatabase(db: string): boolean {
    return this.db.prepare('SELECT 1 FROM entries WHERE db = ? LIMIT 1').pluck().get(db) !== undefined;
  }

  /** The seq of the latest successful createdb or copydb of `db`; null when the index holds none. */
  latestCreation(db: string): number | null {
    return (this.latestCreationOf.get(db) as number | undefined) ?? null;
  }

  /** Walks the (db, seq) index downwards from `before`: the cost of a page follows the page, not the journal. */
  page(query: IndexQuery): IndexedLine[] {
    const where = ['db = @db', 'seq < @before', 'seq >= @fromSeq', 'seq <= @toSeq', "kind <> 'refused'"];
    if (query.failed) where.push('ok = 0');
    if (query.token !== null) where.push('token = @token COLLATE NOCASE');
    if (query.fromTime !== null) where.push('time >= @fromTime');
    if (query.toTime !== null) where.push('time <= @toTime');
    const sql = `SELECT seq, file, offset FROM entries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
    let statement = this.queries.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.queries.set(sql, statement);
    }
    const { db, before, fromSeq, toSeq, limit } = query;
    const params: Record<string, unknown> = { db, before, fromSeq, toSeq, limit };
    if (query.token !== null) params.token = query.token;
    if (query.fromTime !== null) params.fromTime = query.fromTime;
    if (query.toTime !== null) params.toTime = query.toTime;
    return statement.all(params) as IndexedLine[];
  }

  /** Every row in seq order (tests compare a rebuilt index with a kept one). */
  allRows(): IndexRow[] {
    const rows = this.db
      .prepare('SELECT seq, db, time, token, kind, ok, class, code, file, offset FROM entries ORDER BY seq')
      .all() as Array<Record<string, unknown>>;
    return rows.map((r) => ({
      seq: r.seq as number,
      db: r.db as string | null,
      time: r.time as number,
      token: r.token as string | null,
      kind: r.kind as string,
      ok: r.ok === 1,
      errorClass: r.class as number | null,
      code: r.code as number | null,
      file: r.file as number,
      offset: r.offset as number,
    }));
  }

  close(): void {
    this.db.close();
  }
}

/** The index and its write-ahead files. */
export function removeIndexFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
}
