/**
 * A rebuild of one database (-db) that was copied from another needs that
 * other database too, as it stood at the copy: replay rebuilds the templates
 * beside it and removes them afterwards.
 */
import type { JournalEntry } from '../journal/record';

/** `db` and, through its copy and reset entries, the databases it was copied from, and theirs. */
export function databasesNeeded(
  entries: readonly (Pick<JournalEntry, 'db' | 'kind'> & { readonly from?: string | undefined })[],
  db: string,
): Set<string> {
  const needed = new Set([db]);
  const copies = entries.filter(
    (entry) => (entry.kind === 'copydb' || entry.kind === 'resetdb') && entry.from !== undefined,
  );
  for (let grown = true; grown;) {
    grown = false;
    for (const entry of copies) {
      if (!needed.has(entry.db as string) || needed.has(entry.from as string)) continue;
      needed.add(entry.from as string);
      grown = true;
    }
  }
  return needed;
}
