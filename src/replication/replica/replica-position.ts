/**
 * Where a replica stands in the stream, kept with its data: the consumer on
 * the NATS side is only a cache of it. Written after each message is applied
 * and before it is acked, atomically (a temporary file, synced, renamed over
 * the old one), so a crash leaves either the old position or the new one.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface FollowerPosition {
  /** The stream seq of the last message handled (applied, or skipped for good). */
  readonly streamSeq: number;
  /** The journal seq through which the databases are applied. */
  readonly journalSeq: number;
  /**
   * What the databases hold for certain: before an open session's begin, or
   * journalSeq. A restart feeds the local journal from here on again, so an
   * open session's entries are in the window once more.
   */
  readonly settledThrough: number;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** The stored position; null when there is none, or it cannot be read (the follower then starts over the stream, skipping what it has). */
export function readPosition(file: string, log: (message: string) => void): FollowerPosition | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const { streamSeq, journalSeq, settledThrough } = value;
    if (isCount(streamSeq) && isCount(journalSeq) && isCount(settledThrough))
      return { streamSeq, journalSeq, settledThrough };
  } catch {
    // Reported below, with the text that could not be read.
  }
  log(`replica position ${file} cannot be read (${JSON.stringify(text.slice(0, 80))}): starting over the stream`);
  return null;
}

export function writePosition(file: string, position: FollowerPosition): void {
  const temporary = `${file}.tmp`;
  const fd = fs.openSync(temporary, 'w');
  try {
    fs.writeSync(fd, `${JSON.stringify(position)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  syncDirectory(path.dirname(file));
}

/** Makes the rename itself durable; some file systems refuse to sync a directory, and then the rename is as durable as it gets. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Best effort.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
