/**
 * What a teacher sees of the class: for each database, when it was last
 * used and the last errors its students hit (who, which code, which
 * statement). Kept in memory, bounded, and fed by the journal itself: each
 * durable chunk updates it, and the journal's tail seeds it once, on the
 * first look, so that a restart does not forget the lesson. Costs nothing
 * on a request's path but a few field copies per durable entry.
 */
import type { Journal } from '../../journal/journal';
import { readPage } from '../../journal/page-reader';
import type { JournalEntry } from '../../journal/record';
import { splitStatements } from '../engine/dialect/split';
import type { Refusal, RefusalListener } from './refusals';

/** Errors kept per database: enough to see who is stuck on what, few enough to hold a whole school. */
export const RECENT_ERRORS = 20;
/** How far back in the journal the first look reads. */
export const SEED_ENTRIES = 20_000;
/** Refused requests kept for the whole class: a student probing a classmate's database shows among the last ones. */
export const RECENT_REFUSALS = 50;

/** A refused request as the class view shows it: who, from where, what it asked for, and the code. */
export interface RecentRefusal {
  ts: string;
  /** The token's id: a name reused by a later token (a class prefix, next term) is told apart by it. */
  tokenId: string | null;
  tokenName: string | null;
  client: string;
  db: string | null;
  code: number;
  error: string;
  request: string;
}

export interface RecentError {
  seq: number;
  ts: string;
  /** The code's class: its first digit (1 request, 2 catalog, 3 constraint…). */
  class: number;
  code: number;
  error: string;
  /** The token's id: a name reused by a later token (a class prefix, next term) is told apart by it. */
  tokenId: string | null;
  tokenName: string | null;
  /** The statement that failed, as the student wrote it; null when the entry names none. */
  statement: string | null;
}

export interface DatabaseActivity {
  db: string;
  /** The ts of its last journal entry, null when the journal holds none in the window read. */
  lastActivity: string | null;
  /** Journal entries seen for it since the window read at the first look. */
  entries: number;
  recentErrors: RecentError[];
}

/**
 * The statement that failed, as the student wrote it: the journal keeps the
 * request's SQL as sent and the failing statement's index among the
 * statements it splits into (the one splitter, so the index matches).
 */
function failedStatement(entry: JournalEntry): string | null {
  const sources = entry.statements?.map((source) => source.sql) ?? (entry.sql === null ? [] : [entry.sql]);
  const index = entry.statement ?? 0;
  // Split only up to the failing statement: an import's entry may hold thousands before it, or after.
  let seen = 0;
  let first: string | undefined;
  for (const sql of sources) {
    const parts = statementsOf(sql);
    first ??= parts[0];
    if (index < seen + parts.length) return (parts[index - seen] as string).trim();
    seen += parts.length;
  }
  return first?.trim() ?? null;
}

/** The statements of one source; one that cannot be split (an unterminated literal) is one statement. */
function statementsOf(sql: string): string[] {
  try {
    const parts = splitStatements(sql);
    return parts.length === 0 ? [sql] : parts;
  } catch {
    return [sql];
  }
}

function recentErrorOf(entry: JournalEntry): RecentError {
  const code = entry.code ?? 0;
  return {
    seq: entry.seq,
    ts: entry.ts,
    class: entry.class ?? Math.floor(code / 1000),
    code,
    error: entry.error ?? '',
    tokenId: entry.tokenId ?? null,
    tokenName: entry.tokenName ?? null,
    statement: failedStatement(entry),
  };
}

function recentRefusalOf(
  refusal: Pick<Refusal, 'ts' | 'tokenId' | 'tokenName' | 'client' | 'db' | 'code' | 'error' | 'request'>,
): RecentRefusal {
  return {
    ts: refusal.ts,
    tokenId: refusal.tokenId,
    tokenName: refusal.tokenName,
    client: refusal.client,
    db: refusal.db,
    code: refusal.code,
    error: refusal.error,
    request: refusal.request,
  };
}

/** A journal's `refused` entry, as the seeding reads it back. */
function refusalOfEntry(entry: JournalEntry): RecentRefusal {
  return recentRefusalOf({
    ts: entry.ts,
    tokenId: entry.tokenId ?? null,
    tokenName: entry.tokenName ?? null,
    client: entry.client ?? '',
    db: entry.db,
    code: entry.code ?? 0,
    error: entry.error ?? '',
    request: entry.request ?? '',
  });
}

export class ClassActivity implements RefusalListener {
  private readonly byDb = new Map<string, DatabaseActivity>();
  /**
   * Refused requests, oldest first. They come straight from the HTTP edge (refusals.ts), at every
   * level, as the journal keeps them only at `all`; the seeding adds those the journal's tail holds.
   */
  private refused: RecentRefusal[] = [];
  /** Entries up to this seq came (or will come) from the tail read; later ones from the listener. */
  private readonly subscribedAt: number;
  private seeding: Promise<void> | undefined;
  /** Databases reset or dropped after the subscription and before the seeding: their older errors no longer count. */
  private readonly restartedLive = new Set<string>();
  private seeded = false;

  constructor(
    private readonly journal: Journal,
    private readonly activeFile: string | null,
  ) {
    this.subscribedAt = journal.lastSeq;
    journal.onAppended((appended) => {
      for (const { entry } of appended) this.note(entry);
    });
  }

  /** Every database's activity, seeded from the journal's tail the first time. */
  async activity(): Promise<ReadonlyMap<string, DatabaseActivity>> {
    this.seeding ??= this.seed();
    await this.seeding;
    return this.byDb;
  }

  /** The refused requests, newest first (after the same seeding as activity()). */
  async refusals(): Promise<readonly RecentRefusal[]> {
    this.seeding ??= this.seed();
    await this.seeding;
    return [...this.refused].reverse();
  }

  noteRefusal(refusal: Refusal): void {
    this.refused.push(recentRefusalOf(refusal));
    if (this.refused.length > RECENT_REFUSALS) this.refused.splice(0, this.refused.length - RECENT_REFUSALS);
  }

  /** Takes one durable entry into the summaries. */
  note(entry: JournalEntry): void {
    // Refusals came through noteRefusal already, and are no activity of the database they asked for.
    if (entry.kind === 'refused' || entry.db === null) return;
    const born = entry.ok && (entry.kind === 'createdb' || entry.kind === 'copydb');
    const restarts =
      born || (entry.ok && (entry.kind === 'dropdb' || entry.kind === 'resetdb' || entry.kind === 'restoredb'));
    if (restarts && !this.seeded && entry.seq > this.subscribedAt) this.restartedLive.add(entry.db);
    // A drop ends the database's life, a creation begins another: nothing of an earlier life is this one's.
    if ((entry.kind === 'dropdb' && entry.ok) || born) this.byDb.delete(entry.db);
    if (entry.kind === 'dropdb' && entry.ok) return;
    const summary = this.summaryOf(entry.db);
    summary.entries++;
    if (summary.lastActivity === null || entry.ts > summary.lastActivity) summary.lastActivity = entry.ts;
    // A reset starts the student again: their old errors are no longer what they are stuck on.
    if (entry.kind === 'resetdb' && entry.ok) summary.recentErrors = [];
    if (entry.ok) return;
    const errors = summary.recentErrors;
    const at = errors.findIndex((known) => known.seq > entry.seq);
    errors.splice(at === -1 ? errors.length : at, 0, recentErrorOf(entry));
    if (errors.length > RECENT_ERRORS) errors.splice(0, errors.length - RECENT_ERRORS);
  }

  private summaryOf(db: string): DatabaseActivity {
    let summary = this.byDb.get(db);
    if (summary === undefined) {
      summary = { db, lastActivity: null, entries: 0, recentErrors: [] };
      this.byDb.set(db, summary);
    }
    return summary;
  }

  /** Reads the last SEED_ENTRIES entries up to the subscription; a journal that cannot be read leaves the live summaries only. */
  private async seed(): Promise<void> {
    if (this.activeFile === null || !this.journal.enabled) {
      this.seeded = true;
      return;
    }
    const through = this.subscribedAt;
    let after = Math.max(0, through - SEED_ENTRIES);
    const older: JournalEntry[] = [];
    try {
      while (after < through) {
        const page = await readPage(this.activeFile, {
          after,
          through,
          limit: 1000,
          maxBytes: 4 * 1024 * 1024,
          accept: () => true,
        });
        for (const { entry } of page.entries) older.push(entry);
        if (page.scannedThrough <= after) break;
        after = page.scannedThrough;
      }
    } catch {
      this.seeded = true;
      return;
    }
    const live = new Map(this.byDb);
    this.byDb.clear();
    // The tail's refusals are older than every one noted since the subscription.
    this.refused = [...older.filter((entry) => entry.kind === 'refused').map(refusalOfEntry), ...this.refused].slice(
      -RECENT_REFUSALS,
    );
    for (const entry of older) if (!this.restartedLive.has(entry.db ?? '')) this.note(entry);
    this.restartedLive.clear();
    this.seeded = true;
    for (const [db, summary] of live) this.mergeLive(db, summary);
  }

  /** The listener's entries are all newer than the tail's. */
  private mergeLive(db: string, live: DatabaseActivity): void {
    const summary = this.summaryOf(db);
    summary.entries += live.entries;
    if (live.lastActivity !== null) summary.lastActivity = live.lastActivity;
    summary.recentErrors = [...summary.recentErrors, ...live.recentErrors].slice(-RECENT_ERRORS);
  }
}
