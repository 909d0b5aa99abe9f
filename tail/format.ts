/** How an entry is written on stdout. */
import type { JournalEntry } from '../journal/record';

/** The entry as the journal holds it, without its crc (decoding dropped it). */
export function entryJson(entry: JournalEntry): string {
  return JSON.stringify(entry);
}

/**
 * One readable line: time, seq, database, the token's name (who sent it; `-` on a server without
 * tokens), then the code and error of a failure or the kind of a success. Every column is one word,
 * so `awk` can pick them out.
 */
export function entryText(entry: JournalEntry): string {
  const outcome = entry.ok ? `${entry.kind} ok` : `${entry.code ?? '-'} ${entry.error ?? ''}`.trimEnd();
  return `${entry.ts} #${entry.seq} ${entry.db ?? '-'} ${entry.tokenName ?? '-'} ${outcome.replace(/\s*\n\s*/g, ' ')}`;
}
