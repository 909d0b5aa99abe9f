/**
 * A database's history: its journal entries newest first, a page at a time,
 * from the journal index (never a scan of the journal). Pages follow a seq
 * cursor, so writes that land meanwhile (above the first page) neither shift
 * nor repeat what the next page holds. A page holds the database's current
 * life only (from its latest creation) unless every life is asked for.
 */
import type { JournalIndex } from '../../journal/index/journal-index';
import { EngineError } from '../errors';
import { historyEntryOf, type HistoryEntry } from './history-entry';

/** A bound of `since` or `until`: a seq, or a time in ms since the epoch. */
export type HistoryBound = { readonly seq: number } | { readonly timeMs: number };

export interface HistoryRequest {
  readonly limit: number;
  /** Entries below this seq (exclusive); null: from the newest. */
  readonly before: number | null;
  readonly failed: boolean;
  readonly token: string | null;
  readonly since: HistoryBound | null;
  readonly until: HistoryBound | null;
  /**
   * 'current': the entries since the latest creation (createdb or copydb) of
   * the name, the database that bears it now, or the last that did; 'all':
   * every earlier life too (a name dropped and made again).
   */
  readonly lives: HistoryLives;
}

export type HistoryLives = 'current' | 'all';

export interface HistoryPage {
  entries: HistoryEntry[];
  /** The `before` of the next page; null when this one reached the end. */
  next: number | null;
}

export class History {
  /** `index` null: no journal, or -history-index=false (`why` says which). */
  constructor(
    private readonly index: JournalIndex | null,
    private readonly why: string,
  ) {}

  private indexOrRefuse(): JournalIndex {
    if (this.index === null) throw new EngineError('NO_HISTORY', { detail: this.why });
    return this.index;
  }

  /** Whether the journal holds any entry of `db` (a dropped database keeps its history). */
  async known(db: string): Promise<boolean> {
    return this.indexOrRefuse().hasDatabase(db);
  }

  async page(db: string, request: HistoryRequest): Promise<HistoryPage> {
    const index = this.indexOrRefuse();
    const { since, until } = request;
    // A name reused (dropped, then made again: a class prefix next term) is another database: its
    // history begins at its latest creation, so last term's SQL never reaches this term's student.
    const born = request.lives === 'all' ? null : await index.latestCreation(db);
    const fromSeq = Math.max(since !== null && 'seq' in since ? since.seq : 0, born ?? 0);
    // One more than asked: whether another page follows is known without a second query.
    const entries = await index.page({
      db,
      before: request.before ?? Number.MAX_SAFE_INTEGER,
      fromSeq,
      toSeq: until !== null && 'seq' in until ? until.seq : Number.MAX_SAFE_INTEGER,
      fromTime: since !== null && 'timeMs' in since ? since.timeMs : null,
      toTime: until !== null && 'timeMs' in until ? until.timeMs : null,
      failed: request.failed,
      token: request.token,
      limit: request.limit + 1,
    });
    const page = entries.slice(0, request.limit);
    const next = entries.length > request.limit ? (page.at(-1)?.seq ?? null) : null;
    return { entries: page.map(historyEntryOf), next };
  }
}
