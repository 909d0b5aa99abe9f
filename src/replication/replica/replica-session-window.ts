/**
 * The session a replica has seen begin but not end. A session's begin, its
 * statements and its commit may come in different chunks, while each chunk
 * is applied by its own run of rebuild, which rolls back a session still open
 * at its end. So the open session's entries are kept here and fed to rebuild
 * again ahead of the next chunk, until the session commits or rolls back:
 * rebuild skips what a database already has, so only the session is redone.
 *
 * Only the session's own entries are kept, not every entry since its begin:
 * the others are applied to their databases already (one session is open at
 * a time, live and in replay), so the window stays the size of the session.
 */
import type { JournalEntry } from '../../../journal/record';
import { cutsSessionShort } from '../../../replay/apply-entries';

interface OpenSession {
  readonly id: string;
  readonly db: string;
  readonly entries: JournalEntry[];
}

export class SessionWindow {
  private open: OpenSession | null = null;

  /** Takes note of entries applied, in seq order: a session begins, grows, or ends. */
  observe(entries: readonly JournalEntry[]): void {
    for (const entry of entries) this.step(entry);
  }

  /** The entries to feed to rebuild again ahead of the next chunk (none when no session is open). */
  get entries(): readonly JournalEntry[] {
    return this.open?.entries ?? [];
  }

  /** The seq of the open session's begin; null when none is open. */
  get beginSeq(): number | null {
    return this.open?.entries[0]?.seq ?? null;
  }

  /**
   * Forgets the open session: a new primary took over (a fence), and the old
   * one's session can never end now; the databases have it rolled back already.
   */
  clear(): void {
    this.open = null;
  }

  private step(entry: JournalEntry): void {
    // As in JournalApplier.begin: one session at a time, so a begin ends any other.
    if (entry.kind === 'begin' && entry.session !== null && entry.db !== null) {
      this.open = { id: entry.session, db: entry.db, entries: [entry] };
      return;
    }
    const open = this.open;
    if (open === null) return;
    if (entry.session === open.id) {
      if (entry.kind === 'commit' || entry.kind === 'rollback') this.open = null;
      else open.entries.push(entry);
      return;
    }
    if (cutsSessionShort(entry, open.db)) this.open = null;
  }
}
