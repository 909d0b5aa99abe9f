/**
 * Bringing the journal index up to the journal: the entries after the last
 * one indexed, read from the files that may hold them (rotated and gzipped
 * ones included), each with its file and offset. From an empty index this is
 * the rebuild. Rows the journal no longer holds (retention removed their file,
 * or a crash took entries the index had) are dropped first.
 */
import { filesByFirstSeq, type JournalFileStart } from './index-files';
import { indexRowOf } from './index-row';
import type { IndexRow, IndexStore } from './index-store';
import { linesWithOffsets } from './offset-lines';
import { leadingSeq } from '../reader';
import { decodeLine, isHeader } from '../record';

/** Rows inserted per transaction while catching up. */
const BATCH_ROWS = 10_000;

export interface CatchUpResult {
  /** Rows added. */
  indexed: number;
  /** Rows dropped because the journal no longer holds their entries. */
  dropped: number;
}

/** Indexes every entry after the index's last seq, up to `through` (the journal's last durable seq when the listener was attached). */
export async function catchUp(
  store: IndexStore,
  activeFile: string,
  through: number,
  warn: (message: string) => void,
): Promise<CatchUpResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await catchUpOnce(store, activeFile, through, warn);
    } catch (err) {
      // A rotation or compression renamed a file while it was listed: list again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

async function catchUpOnce(
  store: IndexStore,
  activeFile: string,
  through: number,
  warn: (message: string) => void,
): Promise<CatchUpResult> {
  const files = await filesByFirstSeq(activeFile);
  const journalFirst = files[0]?.first ?? through + 1;
  const dropped = store.keepWithin(journalFirst, through);
  const from = Math.max(store.lastSeq() + 1, journalFirst);
  let indexed = 0;
  let batch: IndexRow[] = [];
  let expected = from;
  for (const [i, start] of files.entries()) {
    const next = files[i + 1]?.first ?? Infinity;
    if (next <= from || start.first > through) continue;
    for await (const lines of linesWithOffsets(start.file)) {
      for (const { offset, text } of lines) {
        const seq = leadingSeq(text);
        if (seq === undefined || seq < expected || seq > through) continue;
        const line = decodeLine(text);
        if (isHeader(line)) continue;
        if (line.seq !== expected)
          warn(`journal index: seq ${expected}–${line.seq - 1} were not found in ${fileName(start)}`);
        batch.push(indexRowOf(line, start.first, offset));
        expected = line.seq + 1;
        if (batch.length >= BATCH_ROWS) {
          store.insert(batch);
          indexed += batch.length;
          batch = [];
        }
      }
    }
  }
  store.insert(batch);
  indexed += batch.length;
  if (expected <= through) warn(`journal index: seq ${expected}–${through} were not found in the journal's files`);
  return { indexed, dropped };
}

function fileName(start: JournalFileStart): string {
  return start.file;
}
