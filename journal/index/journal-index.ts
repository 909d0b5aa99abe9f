/**
 * The journal index as the server keeps it: `<journal>.index` beside the
 * active journal file (never among the databases), one row per entry
 * (index-store.ts). At open it catches up from the journal (a deleted index
 * is rebuilt whole; one a crash left behind gets the entries it lacks), and
 * from then on each durable chunk the writer reports is indexed, batched: the
 * listener only queues the chunk, and one transaction every FLUSH_MS (or
 * once FLUSH_ROWS are queued) inserts what was queued, off the write path:
 * a transaction per chunk cost the write path a third of its throughput
 * under 32 writers. A read first inserts what is still queued, so it sees
 * every entry acknowledged before it.
 *
 * Reading a row back is indexed-lines.ts. A row whose file is gone
 * (retention) is dropped with every row below the journal's first kept seq.
 */
import type { AppendedEntry, ChunkPosition, Journal } from '../journal';
import { catchUp } from './index-catch-up';
import { filesByFirstSeq } from './index-files';
import { indexRowOf } from './index-row';
import { IndexStore, type IndexQuery, type IndexRow } from './index-store';
import { IndexedLines } from './indexed-lines';
import type { JournalEntry } from '../record';
import { lineBytes } from '../writer';

/** Where the index of the journal whose active file is `activeFile` lives. */
export function indexFileOf(activeFile: string): string {
  return `${activeFile}.index`;
}

/** How long a chunk may wait in the queue before it is inserted, in ms. */
const FLUSH_MS = 50;
/** ...or how many entries: the queue's memory stays bounded under any load. */
const FLUSH_ROWS = 5000;

export class JournalIndex {
  /** Rows of durable chunks not inserted yet: only the rows are kept, so the entries themselves die young. */
  private queued: IndexRow[] = [];
  private flushScheduled = false;
  private caughtUp = false;
  private readonly lines: IndexedLines;
  private readonly unsubscribe: () => void;
  /** Settles when the index holds every entry written before it opened. */
  readonly ready: Promise<void>;

  private constructor(
    private readonly store: IndexStore,
    private readonly activeFile: string,
    journal: Journal,
    private readonly warn: (message: string) => void,
  ) {
    this.lines = new IndexedLines(activeFile);
    // Subscribed before reading the files: every entry above `through` reaches the listener, none at or below it.
    const through = journal.lastSeq;
    this.unsubscribe = journal.onAppended((entries, position) => {
      this.queueRows(entries, position);
      if (this.queued.length >= FLUSH_ROWS && this.caughtUp) this.flush();
      else this.scheduleFlush();
    });
    this.ready = catchUp(store, activeFile, through, warn)
      .then(
        () => undefined,
        (err: Error) =>
          warn(
            `journal index: catching up with the journal failed (${err.message}); history may lack entries until the next start`,
          ),
      )
      .finally(() => {
        this.caughtUp = true;
        this.flush();
      });
  }

  /** Opens (or makes) the index of `journal`, whose active file is `activeFile`, and starts catching up. */
  static open(activeFile: string, journal: Journal, warn: (message: string) => void): JournalIndex {
    return new JournalIndex(IndexStore.open(indexFileOf(activeFile), warn), activeFile, journal, warn);
  }

  private queueRows(entries: readonly AppendedEntry[], position: ChunkPosition): void {
    let offset = position.offset;
    for (const { entry, json } of entries) {
      this.queued.push(indexRowOf(entry, position.fileFirstSeq, offset));
      offset += lineBytes(json);
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.caughtUp) return;
    this.flushScheduled = true;
    setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  /** Inserts every queued chunk in one transaction. */
  private flush(): void {
    this.flushScheduled = false;
    if (!this.caughtUp || this.queued.length === 0) return;
    const rows = this.queued;
    this.queued = [];
    try {
      this.store.insert(rows);
    } catch (err) {
      this.warn(
        `journal index: ${rows.length} entries could not be indexed (${(err as Error).message}); the next start indexes them`,
      );
    }
  }

  /**
   * Once settled, the index's file holds a row for every entry durable
   * before the call: another process (a restore's rebuild) may read it then.
   */
  async settle(): Promise<void> {
    await this.ready;
    this.flush();
  }

  /** Whether any entry names `db`. */
  async hasDatabase(db: string): Promise<boolean> {
    await this.ready;
    this.flush();
    return this.store.hasDatabase(db);
  }

  /** The seq of the latest successful createdb or copydb of `db` (where its life began); null when none is indexed. */
  async latestCreation(db: string): Promise<number | null> {
    await this.ready;
    this.flush();
    return this.store.latestCreation(db);
  }

  /** A page of a database's entries, newest first, read back from the journal's files. */
  async page(query: IndexQuery): Promise<JournalEntry[]> {
    await this.ready;
    this.flush();
    for (let attempt = 1; ; attempt++) {
      const rows = this.store.page(query);
      const entries = await this.lines.read(rows);
      if (entries !== null) return entries;
      // A file is gone: retention removed it. Its rows go, and the page is asked again.
      const files = await filesByFirstSeq(this.activeFile);
      const first = files[0]?.first;
      const dropped = first === undefined ? 0 : this.store.keepWithin(first, Number.MAX_SAFE_INTEGER);
      if (dropped === 0 || attempt >= 3)
        throw new Error(`journal lines of seq ${rows.map((r) => r.seq).join(', ')} are not where the index says`);
    }
  }

  /** Rows in seq order (tests). */
  rows(): IndexRow[] {
    this.flush();
    return this.store.allRows();
  }

  /** Indexes what is queued and closes the index. */
  async close(): Promise<void> {
    this.unsubscribe();
    await this.ready;
    this.flush();
    this.store.close();
  }
}
