/**
 * Entries whose effect is wiped out later in the same run, which rebuild can
 * leave out: the entries of a database before it is dropped, reset or restored, unless
 * some copy reads the database in between.
 *
 * Recovery needs this, not only for speed: a copy that was applied live and
 * whose database was dropped since has no file left to show it was applied,
 * and its template may hold later entries by now, so it could not be made
 * again as it was. Left out, it needs not be: nothing it made survives.
 */
import { isTraceOnly, type JournalEntry } from '../journal/record';

/** What this looks at of an entry: enough for an entry still undecoded (entry-line.ts). */
type Placed = Pick<JournalEntry, 'seq' | 'db' | 'kind'> & { readonly from?: string | undefined };

/** The seqs of the entries that a later drop or reset of their database makes moot. */
export function supersededSeqs(entries: readonly Placed[]): Set<number> {
  const superseded = new Set<number>();
  /** Databases that are dropped or reset later, with no copy reading them before that. */
  const wipedLater = new Set<string>();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as Placed;
    if (entry.db === null || entry.kind === 'void' || isTraceOnly(entry)) continue;
    const moot = wipedLater.has(entry.db);
    if (moot) superseded.add(entry.seq);
    // A restore replaces the database with a state rebuilt apart, from the journal itself (point-in-time.ts).
    if (entry.kind === 'dropdb' || entry.kind === 'resetdb' || entry.kind === 'restoredb') wipedLater.add(entry.db);
    // A copy that is made reads its template as it stands here: the template's entries before it count.
    if (!moot && entry.from !== undefined) wipedLater.delete(entry.from);
  }
  return superseded;
}
