/** Which journal entries a follower delivers: every given criterion must hold (a list matches any of its items). */
import type { EntryKind, JournalEntry } from '../journal/record';

export interface EntryFilter {
  readonly classes: readonly number[] | null;
  readonly codes: readonly number[] | null;
  /** As given: `school` matches the journal's `school.db` too. */
  readonly dbs: readonly string[] | null;
  readonly failed: boolean;
  readonly kinds: readonly EntryKind[] | null;
  /** Token names, as given: matched regardless of case, as the server keeps them unique. */
  readonly tokenNames: readonly string[] | null;
}

export const NO_FILTER: EntryFilter = {
  classes: null,
  codes: null,
  dbs: null,
  failed: false,
  kinds: null,
  tokenNames: null,
};

function dbMatches(names: readonly string[], db: string | null): boolean {
  if (db === null) return false;
  return names.some(
    (name) => name === db || `${name}.db` === db || name.toLowerCase() === db || `${name.toLowerCase()}.db` === db,
  );
}

function tokenMatches(names: readonly string[], tokenName: string | undefined): boolean {
  if (tokenName === undefined) return false;
  const wanted = tokenName.toLowerCase();
  return names.some((name) => name.toLowerCase() === wanted);
}

/** Entries without a code or class (successful ones, voids) never pass a -code or -class filter. */
export function matches(filter: EntryFilter, entry: JournalEntry): boolean {
  if (filter.failed && entry.ok) return false;
  if (filter.kinds !== null && !filter.kinds.includes(entry.kind)) return false;
  if (filter.dbs !== null && !dbMatches(filter.dbs, entry.db)) return false;
  if (filter.classes !== null && (entry.class === undefined || !filter.classes.includes(entry.class))) return false;
  if (filter.codes !== null && (entry.code === undefined || !filter.codes.includes(entry.code))) return false;
  if (filter.tokenNames !== null && !tokenMatches(filter.tokenNames, entry.tokenName)) return false;
  return true;
}
