/**
 * The `base` of a snapshot round: the highest seq such that every journal
 * entry some copy lacks, and a restore needs, lies above it.
 *
 * The journal's last seq when the round starts is not enough on its own: an
 * entry is written before it is applied, so a copy can miss an entry just
 * written, and a transaction session open during the copy has its begin and
 * statements in the journal but not in the copy. Both lower the base to just
 * below the first entry a copy still needs. Entries that change nothing
 * (failed or read-only batches, sessions that rolled back) never hold it back.
 */
import type { JournalEntry } from '../../journal/record';

export interface BaseInput {
  /** The journal from the previous round's base + 1, as far as it is written after the copies were made. */
  readonly entries: readonly JournalEntry[];
  /** The journal's last seq when the round started. */
  readonly last: number;
  /** The previous round's base (0 for the first): entries up to it need nothing from this round. */
  readonly previousBase: number;
  /** Each copied database's seq, by name. */
  readonly copies: ReadonlyMap<string, number>;
}

interface SessionFate {
  begin: number | null;
  /** The seq of its commit; null while it is open; -1 when it changed nothing (rolled back, or cut short). */
  end: number | null;
}

const changes = (e: JournalEntry): boolean =>
  e.kind === 'createdb' || e.kind === 'dropdb' || (e.kind === 'exec' && e.ok && e.readonly !== true);

/** How each session ended, replaying the journal's own rules: one session at a time, cut short by a change from outside. */
function sessionFates(entries: readonly JournalEntry[]): Map<string, SessionFate> {
  const fates = new Map<string, SessionFate>();
  let open: { id: string; db: string | null } | null = null;
  const close = (end: number) => {
    const fate = open && fates.get(open.id);
    if (fate && fate.end === null) fate.end = end;
    open = null;
  };
  for (const e of entries) {
    if (e.session === null) {
      if (open !== null && e.db === open.db && changes(e)) close(-1);
      continue;
    }
    if (!fates.has(e.session)) fates.set(e.session, { begin: null, end: null });
    if (e.kind === 'begin') {
      close(-1);
      open = { id: e.session, db: e.db };
      (fates.get(e.session) as SessionFate).begin = e.seq;
    } else if (e.kind === 'commit') {
      if (open?.id === e.session) close(e.seq);
    } else if (e.kind === 'rollback') {
      if (open?.id === e.session) close(-1);
    }
  }
  return fates;
}

/** Whether a later dropdb of the same database makes the entry at `index` irrelevant. */
function droppedLater(entries: readonly JournalEntry[], index: number): boolean {
  const db = entries[index]?.db;
  for (let i = index + 1; i < entries.length; i++) if (entries[i]?.kind === 'dropdb' && entries[i]?.db === db) return true;
  return false;
}

/** The seq below which the round's copies need nothing from the journal. */
export function safeBase(input: BaseInput): number {
  const { entries, previousBase, copies } = input;
  const lastSeen = entries.at(-1)?.seq ?? previousBase;
  // An entry handed out but not yet written may be missing from the copies and from what was read.
  let base = Math.min(input.last, lastSeen);
  const fates = sessionFates(entries);
  entries.forEach((e, index) => {
    if (e.db === null || e.seq > base) return;
    const copied = copies.get(e.db);
    if (e.session !== null) {
      const fate = fates.get(e.session) as SessionFate;
      if (fate.end === -1) return;
      if (fate.end !== null && copied !== undefined && fate.end <= copied) return;
      if (copied === undefined && droppedLater(entries, index)) return;
      // The session's begin comes first in the journal; one begun before what was read cannot be placed, so nothing advances.
      base = Math.min(base, fate.begin === null ? previousBase : fate.begin - 1);
      return;
    }
    if (!changes(e)) return;
    if (copied !== undefined ? e.seq <= copied : droppedLater(entries, index) || e.kind === 'dropdb') return;
    base = Math.min(base, e.seq - 1);
  });
  return Math.max(base, previousBase);
}
