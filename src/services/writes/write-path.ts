/**
 * The write-ahead rule, owned here and nowhere else:
 *
 * - an entry is durable in the journal before the work it describes is
 *   applied (a held transaction committed, a database file created or
 *   removed, a session committed);
 * - work is applied only once every one of its entries is durable; when an
 *   append fails, the prepared work is discarded and the client hears one
 *   code, JOURNAL_UNAVAILABLE, with nothing applied;
 * - seq order is apply order: callers hold the database's write lock from
 *   append to apply, and the journal hands out seqs in append order;
 * - when applying fails after the entries are durable (the database's disk is
 *   full), a `void` entry names them, so that replay and recovery skip what
 *   the live database never got. If even that entry cannot be written, the
 *   database is marked behind: its writes are refused until it has been
 *   brought in line with the journal.
 *
 * It also knows which entries are still on their way to being applied, which
 * is what the checkpoint's `appliedThrough` may say (settledThrough).
 */
import { EngineError } from '../../errors';
import { errorFields, type JournalEvent } from '../../../journal/journal';
import type { NewEntry } from '../../../journal/writer';

/** What the write path needs of the journal (Journal implements it; tests fake it). */
export interface JournalPort {
  records(event: JournalEvent, ok: boolean): boolean;
  append(event: JournalEvent, entry: NewEntry): { seq: number | null; written: Promise<void> };
  /** Appends entries that are written together or not at all; `seqs` are those of the ones the level records. */
  appendAll(items: readonly JournaledEntry[]): { seqs: number[]; written: Promise<void> };
  /** The last seq durably written. */
  readonly lastSeq: number;
}

export interface JournaledEntry {
  readonly event: JournalEvent;
  readonly entry: NewEntry;
}

/** Work prepared before its entries are appended, and the ways to finish it. */
export interface ApplyStep {
  /** Makes the work permanent; `lastSeq` is the largest seq of its entries (null when the level records none). */
  apply(lastSeq: number | null): Promise<void>;
  /** Undoes prepared work whose entries could not be written. */
  discard(): Promise<void>;
  /** Asked after apply failed: did it take effect anyway (a process that died right after its commit)? */
  tookEffect?(lastSeq: number): Promise<boolean>;
}

export interface WritePathOptions {
  /** Brings a database that lacks durable entries back in line with the journal. */
  repair(db: string): Promise<void>;
  /** Told of failures that reach no client (a note that could not be written, a repair). */
  log(message: string): void;
}

/** The journal failed under us: the client is told what became of its request. */
export function journalUnavailable(cause: unknown, outcome: string): EngineError {
  // The replicated stream refused the entries with its own answer (this primary was replaced): the client hears that one.
  const refusal = (cause as Error | undefined)?.cause;
  if (refusal instanceof EngineError) return refusal;
  const reason =
    (cause as NodeJS.ErrnoException | undefined)?.code ?? (cause instanceof Error ? cause.message : 'unknown error');
  return new EngineError('JOURNAL_UNAVAILABLE', { reason, outcome }, { retryAfter: 1, cause });
}

export function isJournalUnavailable(error: unknown): boolean {
  return error instanceof EngineError && error.errorName === 'JOURNAL_UNAVAILABLE';
}

export class WritePath {
  /** Seqs appended whose work is neither applied nor given up yet. */
  private readonly pinned = new Set<number>();
  /** Databases that lack durable entries (their void could not be written), with those entries' seqs. */
  private readonly behind = new Map<string, number[]>();

  constructor(
    private readonly journal: JournalPort,
    private readonly options: WritePathOptions,
  ) {}

  /**
   * Appends the entries of prepared work and applies it once they are all
   * durable. Throws JOURNAL_UNAVAILABLE (after `discard`) when an append
   * fails, or apply's own error (after voiding the entries) when applying fails.
   */
  async appendThenApply(db: string, entries: readonly JournaledEntry[], step: ApplyStep): Promise<void> {
    let seqs: { seqs: number[]; written: Promise<void> } = { seqs: [], written: Promise.resolve() };
    try {
      // Refused outright (an entry that cannot be encoded) as well as failed on the way: the prepared work is discarded
      // either way, or a held write group would keep its engine process, its client's share and its transaction.
      seqs = this.appendPinned(entries);
      await seqs.written;
    } catch (error) {
      this.unpin(seqs.seqs);
      await step
        .discard()
        .catch((discardError: unknown) =>
          this.options.log(`discarding work after a journal failure failed: ${String(discardError)}`),
        );
      throw journalUnavailable(error, 'nothing was applied');
    }
    const last = seqs.seqs.length === 0 ? null : Math.max(...seqs.seqs);
    try {
      await step.apply(last);
    } catch (error) {
      if (last !== null && (await this.tookEffect(step, last))) {
        this.unpin(seqs.seqs);
        return;
      }
      await this.voidEntries(db, seqs.seqs, error);
      throw error;
    }
    this.unpin(seqs.seqs);
  }

  /**
   * Appends an entry whose work is applied later (a session's begin: its
   * commit may need every entry from the begin on), and keeps its seq
   * unsettled until the returned release is called.
   */
  async appendHeld(event: JournalEvent, entry: NewEntry): Promise<() => void> {
    const seqs = this.appendPinned([{ event, entry }]);
    try {
      await seqs.written;
    } catch (error) {
      this.unpin(seqs.seqs);
      throw journalUnavailable(error, 'nothing was applied');
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.unpin(seqs.seqs);
    };
  }

  /**
   * Records an entry whose work changes nothing (a failed batch, a read, a
   * rollback), when the level records it. A journal failure here is logged,
   * not thrown: nothing depends on the entry, and reads must go on.
   */
  async note(event: JournalEvent, entry: NewEntry | (() => NewEntry), ok?: boolean): Promise<void> {
    if (typeof entry === 'function') {
      // Built only when the level records it: most reads are not journaled, and building the entry shows per request.
      if (!this.journal.records(event, ok === true)) return;
      entry = entry();
    }
    if (!this.journal.records(event, entry.ok)) return;
    try {
      await this.journal.append(event, entry).written;
    } catch (error) {
      this.options.log(
        `journal: could not record a ${entry.kind} entry on ${entry.db ?? 'the directory'}: ${String((error as Error)?.message ?? error)}`,
      );
    }
  }

  /**
   * Called at the start of every write turn on `db`, under its write lock: a
   * database that lacks durable entries is repaired first, or the write is
   * refused (reads go on).
   */
  async ready(db: string): Promise<void> {
    const missing = this.behind.get(db);
    if (missing === undefined) return;
    try {
      await this.options.repair(db);
    } catch (error) {
      this.options.log(`repairing ${db} from the journal failed: ${String((error as Error)?.message ?? error)}`);
      throw new EngineError('DATABASE_BEHIND', { db, reason: reasonOf(error) }, { retryAfter: 5, cause: error });
    }
    this.behind.delete(db);
    this.unpin(missing);
  }

  /**
   * Start-up could not bring `db` in line (its entry `seq` failed to apply):
   * its writes wait for a repair, and the checkpoint stays before `seq`.
   */
  markBehind(db: string, seq: number): void {
    this.pinned.add(seq);
    this.behind.set(db, [...(this.behind.get(db) ?? []), seq]);
  }

  /** Whether `db` lacks durable entries right now. */
  isBehind(db: string): boolean {
    return this.behind.has(db);
  }

  /** Every entry up to this seq is applied or needs nothing: what the checkpoint may record. */
  settledThrough(): number {
    let lowest = Infinity;
    for (const seq of this.pinned) if (seq < lowest) lowest = seq;
    return lowest === Infinity ? this.journal.lastSeq : Math.min(lowest - 1, this.journal.lastSeq);
  }

  /**
   * The entries of one piece of work are appended together: a journal write
   * that fails takes all of them or none, so the work is never half journaled.
   */
  /**
   * The entries of one piece of work are appended together: a journal write
   * that fails takes all of them or none, so the work is never half journaled.
   */
  private appendPinned(entries: readonly JournaledEntry[]): { seqs: number[]; written: Promise<void> } {
    const appended = this.journal.appendAll(entries);
    for (const seq of appended.seqs) this.pinned.add(seq);
    return appended;
  }

  private async tookEffect(step: ApplyStep, last: number): Promise<boolean> {
    if (step.tookEffect === undefined) return false;
    try {
      return await step.tookEffect(last);
    } catch {
      return false;
    }
  }

  /** Marks durable entries as never applied; when even that fails, the database is behind. */
  private async voidEntries(db: string, seqs: number[], cause: unknown): Promise<void> {
    if (seqs.length === 0) return;
    const error = cause instanceof EngineError ? cause : new EngineError('STORAGE_IO', {}, { cause });
    const entry: NewEntry = {
      db,
      session: null,
      kind: 'void',
      sql: null,
      ok: false,
      ms: 0,
      voids: seqs,
      ...errorFields(error),
    };
    try {
      await this.journal.append('write', entry).written;
      this.unpin(seqs);
    } catch (voidError) {
      this.options.log(
        `${db} lacks journal entries ${seqs.join(', ')} and they could not be voided (${String((voidError as Error)?.message ?? voidError)}): writes to it wait for a repair`,
      );
      this.behind.set(db, [...(this.behind.get(db) ?? []), ...seqs]);
    }
  }

  private unpin(seqs: readonly number[]): void {
    for (const seq of seqs) this.pinned.delete(seq);
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof EngineError) return error.message;
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}
