/**
 * Whether replay may run the entries it selected on the engine it has. An
 * entry's SQL can compute other values under another better-sqlite3, SQLite
 * or time zone, so the headers of the files that hold the selected entries
 * must name this engine; files whose entries replay does not apply (wholly
 * before the snapshot round it starts from, or after -until) do not matter.
 * After an upgrade the server takes a round at once, so restoring any point
 * after it never needs the old engine.
 */
import { engineDifferences, type JournalEntry, type JournalHeader } from '../journal/record';
import type { JournalContents } from '../journal/reader';

export interface EngineMismatch {
  readonly file: string;
  /** e.g. "sqlite 3.53.0 there, 3.54.1 here". */
  readonly detail: string;
}

/** Headers in journal order with the seqs each file holds; a file without firstSeq (an old format) holds anything. */
function fileRanges(
  headers: JournalContents['headers'],
): Array<{ file: string; header: JournalHeader; first: number; last: number }> {
  const known = headers
    .filter(({ header }) => header.firstSeq !== undefined)
    .sort((a, b) => (a.header.firstSeq as number) - (b.header.firstSeq as number));
  const ranges = known.map(({ file, header }, i) => ({
    file,
    header,
    first: header.firstSeq as number,
    last: (known[i + 1]?.header.firstSeq ?? Infinity) - 1,
  }));
  const unknown = headers
    .filter(({ header }) => header.firstSeq === undefined)
    .map(({ file, header }) => ({ file, header, first: -Infinity, last: Infinity }));
  return [...unknown, ...ranges];
}

export function engineMismatches(
  headers: JournalContents['headers'],
  entries: readonly Pick<JournalEntry, 'seq'>[],
  here: Pick<JournalHeader, 'betterSqlite3' | 'sqlite' | 'tz'>,
): EngineMismatch[] {
  const seqs = entries.map((entry) => entry.seq);
  const holdsAny = (first: number, last: number): boolean => seqs.some((seq) => seq >= first && seq <= last);
  const mismatches: EngineMismatch[] = [];
  for (const { file, header, first, last } of fileRanges(headers)) {
    const fields = engineDifferences(header, here);
    if (fields.length === 0 || !holdsAny(first, last)) continue;
    mismatches.push({ file, detail: fields.map((key) => `${key} ${header[key]} there, ${here[key]} here`).join('; ') });
  }
  return mismatches;
}
