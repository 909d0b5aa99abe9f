/** The index row of a journal entry: who and what, and where its line is. */
import type { JournalEntry } from '../record';
import type { IndexRow } from './index-store';

export function indexRowOf(entry: JournalEntry, file: number, offset: number): IndexRow {
  return {
    seq: entry.seq,
    db: entry.db ?? null,
    time: Date.parse(entry.ts),
    token: entry.tokenName ?? null,
    kind: entry.kind,
    ok: entry.ok,
    errorClass: entry.class ?? null,
    code: entry.code ?? null,
    file,
    offset,
  };
}
