/** The end of the active journal file: its last seq, and the repair of a torn last line. */
import fs from 'node:fs';
import { journalFiles } from './naming';
import { readFileLines } from './reader';
import { decodeLine, isHeader, type JournalHeader } from './record';

/** How much of the end of a file is read first to find its last entries: most lines are far shorter than this. */
const TAIL_BYTES = 4 * 1024 * 1024;

/**
 * The end of a file, from before the start of its last complete line (a
 * torn one may follow it): a window that does not reach back that far is widened, since an import's entry
 * can be one line of tens of megabytes (cutting it as torn would lose it).
 */
function readTail(file: string): { text: string; start: number } | undefined {
  if (!fs.existsSync(file)) return undefined;
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  try {
    for (let window = TAIL_BYTES; ; window *= 4) {
      const start = Math.max(0, size - window);
      const buffer = Buffer.alloc(size - start);
      fs.readSync(fd, buffer, 0, buffer.length, start);
      // The last complete line must start inside the window: a line break before the one that ends it.
      const last = buffer.lastIndexOf(0x0a);
      if (start === 0 || (last > 0 && buffer.lastIndexOf(0x0a, last - 1) >= 0))
        return { text: buffer.toString('utf8'), start };
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Cuts a last line that has no newline: it was being written when the process
 * or the machine stopped, so it was never acknowledged (the client is answered
 * only after the whole line is written). Returns the bytes removed.
 */
export function repairTornTail(file: string): number {
  const tail = readTail(file);
  if (tail === undefined || tail.text.length === 0) return 0;
  const bytes = Buffer.from(tail.text, 'utf8');
  const size = fs.statSync(file).size;
  let keep = bytes.length;
  if (!tail.text.endsWith('\n')) keep = bytes.lastIndexOf(0x0a, keep - 1) + 1;
  // A last line that is complete but damaged (a power cut can leave one) goes too: appending after it would make it a corrupt middle line.
  const lastLineStart = keep === 0 ? 0 : bytes.lastIndexOf(0x0a, keep - 2) + 1;
  if (keep > 0 && !decodes(bytes.subarray(lastLineStart, keep - 1).toString('utf8'))) keep = lastLineStart;
  if (tail.start + keep === size) return 0;
  fs.truncateSync(file, tail.start + keep);
  return size - (tail.start + keep);
}

function decodes(text: string): boolean {
  try {
    decodeLine(text);
    return true;
  } catch {
    return false;
  }
}

/** The seq of the last entry of a file, or 0 when it holds none. */
export function lastSeqOfFile(file: string): number {
  const tail = readTail(file);
  if (tail === undefined) return 0;
  const lines = tail.text.split('\n').filter((line) => line.length > 0);
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const line = decodeLine(lines[i] as string);
      if (!isHeader(line)) return line.seq;
    } catch {
      // A damaged line here is the reader's to report; look further back.
    }
  }
  return 0;
}

/** How much of the start of a file is read to find its header line: headers are a few hundred bytes. */
const HEAD_BYTES = 64 * 1024;

/** The header on a file's first line, or undefined when the file has none. */
export function readHeader(file: string): JournalHeader | undefined {
  if (!fs.existsSync(file)) return undefined;
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const read = fs.readSync(fd, buffer, 0, HEAD_BYTES, 0);
    const end = buffer.subarray(0, read).indexOf(0x0a);
    if (end === -1) return undefined;
    const line = decodeLine(buffer.subarray(0, end).toString('utf8'));
    return isHeader(line) ? line : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The last seq in any file of the journal: the slow way, for when no active file says it. */
export async function lastSeqOfJournal(activeFile: string): Promise<number> {
  let last = 0;
  for (const file of await journalFiles(activeFile)) {
    if (!file.endsWith('.gz')) {
      last = Math.max(last, lastSeqOfFile(file));
      continue;
    }
    for await (const { text } of readFileLines(file)) {
      try {
        const line = decodeLine(text);
        if (!isHeader(line)) last = Math.max(last, line.seq);
      } catch {
        // The reader reports damaged lines; the last good seq is what counts here.
      }
    }
  }
  return last;
}
