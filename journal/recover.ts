/**
 * What the writer does at open before it appends: finish or undo what a crash
 * left (an interrupted rotation or compression, a torn last line), and find the
 * last seq. Only the ends of the active file are read, so the cost of open does
 * not grow with the journal; the checkpoint is never trusted for the last seq.
 */
import path from 'node:path';
import { settleCompression } from './compression';
import type { JournalFileSystem } from './file-system';
import type { JournalHeader } from './record';
import { settleInterruptedRotation } from './rotation';
import { lastSeqOfFile, lastSeqOfJournal, readHeader, repairTornTail } from './tail';

export interface Recovered {
  /** The last seq in the journal. */
  lastSeq: number;
  /** The active file's size, every line whole; undefined when there is no active file. */
  activeSize: number | undefined;
  /** Rotated files a crash left uncompressed. */
  plain: string[];
  /** The active file's header, when it has one. */
  activeHeader: JournalHeader | undefined;
}

export async function recoverJournal(
  fs: JournalFileSystem,
  file: string,
  warn: (message: string) => void,
): Promise<Recovered> {
  await fs.mkdir(path.dirname(file));
  const settled = await settleInterruptedRotation(fs, file);
  if (settled !== undefined) warn(settled);
  const compression = await settleCompression(fs, file);
  compression.notes.forEach(warn);
  const activeSize = await repairedSize(fs, file, warn);
  const lastSeq = activeSize === undefined ? await lastSeqOfJournal(file) : await lastSeqOfActive(file);
  const activeHeader = activeSize === undefined ? undefined : readHeader(file);
  return { lastSeq, activeSize, plain: compression.plain, activeHeader };
}

/** The active file's size after repairing its tail; undefined when there is none (an empty one held nothing, so it goes). */
async function repairedSize(
  fs: JournalFileSystem,
  file: string,
  warn: (message: string) => void,
): Promise<number | undefined> {
  if ((await fs.size(file)) === undefined) return undefined;
  const repaired = repairTornTail(file);
  if (repaired > 0) warn(`journal ${file}: removed a torn last line (${repaired} bytes, never acknowledged)`);
  const size = await fs.size(file);
  if (size !== 0) return size;
  await fs.unlink(file);
  return undefined;
}

/** The last entry of the active file, else its header's firstSeq - 1. */
async function lastSeqOfActive(file: string): Promise<number> {
  const last = lastSeqOfFile(file);
  if (last > 0) return last;
  const firstSeq = readHeader(file)?.firstSeq;
  // A file from before headers said firstSeq, holding no entry: only the rotated files know.
  return firstSeq === undefined ? lastSeqOfJournal(file) : firstSeq - 1;
}
