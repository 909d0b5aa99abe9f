/** The first seq a follower handles: after its cursor, else where -from-seq, -from-time or the journal's end says. */
import { JournalError, readJournal } from '../journal/reader';
import { journalFiles } from '../journal/naming';
import { lastSeqOfJournal } from '../journal/tail';
import { readCursor } from './cursor';
import { lastDeliveredSeq } from './out-file';
import type { StartPoint } from './tail-options';

async function endOfJournal(logFile: string): Promise<number> {
  if ((await journalFiles(logFile)).length === 0) {
    throw new JournalError('missing', `no journal: neither ${logFile} nor rotated files beside it exist`);
  }
  return (await lastSeqOfJournal(logFile)) + 1;
}

/** The first entry written at or after `time`; the journal's end when there is none yet. */
async function firstAtOrAfter(logFile: string, time: number): Promise<number> {
  const { entries } = await readJournal(logFile);
  const found = entries.find((entry) => Date.parse(entry.ts) >= time);
  return found?.seq ?? (entries.at(-1)?.seq ?? 0) + 1;
}

/** `out`: the -out file, whose last line says where to go on (out-file.ts). */
export async function startSeq(
  logFile: string,
  start: StartPoint,
  cursor: string | null,
  out: string | null = null,
): Promise<{ next: number; fromCursor: boolean }> {
  const saved = out !== null ? lastDeliveredSeq(out) : cursor === null ? undefined : readCursor(cursor);
  if (saved !== undefined) return { next: saved + 1, fromCursor: true };
  if (start === 'end') return { next: await endOfJournal(logFile), fromCursor: false };
  if ('seq' in start) return { next: start.seq, fromCursor: false };
  return { next: await firstAtOrAfter(logFile, start.time), fromCursor: false };
}
