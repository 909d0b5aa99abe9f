/**
 * Journal lines by byte offset, in the file's uncompressed text: read in
 * order with the offset of each (to build the index), or read back at given
 * offsets (to serve it). A plain file is read at the offset directly; a
 * gzipped one has no random access, so it is inflated from its start up to
 * the last line wanted (bounded by -log-max-size, the size it was rotated at).
 */
import fs from 'node:fs';
import { openJournalText } from '../reader';

export interface OffsetLine {
  offset: number;
  text: string;
}

/** The whole lines of a file (a last line without its newline is left out: it is being written, or torn), a read chunk at a time. */
export async function* linesWithOffsets(file: string): AsyncGenerator<OffsetLine[]> {
  let carry: Buffer = Buffer.alloc(0);
  let base = 0; // the offset of carry's first byte
  for await (const chunk of openJournalText(file) as AsyncIterable<Buffer>) {
    const buffer = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const lines: OffsetLine[] = [];
    let start = 0;
    for (let end = buffer.indexOf(10, start); end !== -1; end = buffer.indexOf(10, start)) {
      lines.push({ offset: base + start, text: buffer.toString('utf8', start, end) });
      start = end + 1;
    }
    carry = buffer.subarray(start);
    base += start;
    if (lines.length > 0) yield lines;
  }
}

/** The lines that begin at `offsets`; an offset past the end, or inside a line without its newline, is left out. */
export async function linesAt(file: string, offsets: readonly number[]): Promise<Map<number, string>> {
  return file.endsWith('.gz') ? inflatedLinesAt(file, offsets) : plainLinesAt(file, offsets);
}

function plainLinesAt(file: string, offsets: readonly number[]): Map<number, string> {
  const found = new Map<number, string>();
  const fd = fs.openSync(file, 'r');
  try {
    for (const offset of offsets) {
      const text = lineAt(fd, offset);
      if (text !== undefined) found.set(offset, text);
    }
  } finally {
    fs.closeSync(fd);
  }
  return found;
}

/** Reads from `offset` until a newline: 4 KiB first (most lines), doubling for long ones (an import's). */
function lineAt(fd: number, offset: number): string | undefined {
  let size = 4096;
  for (;;) {
    const buffer = Buffer.alloc(size);
    const read = fs.readSync(fd, buffer, 0, size, offset);
    const end = buffer.subarray(0, read).indexOf(10);
    if (end !== -1) return buffer.toString('utf8', 0, end);
    if (read < size) return undefined;
    size *= 2;
  }
}

async function inflatedLinesAt(file: string, offsets: readonly number[]): Promise<Map<number, string>> {
  const wanted = new Set(offsets);
  const last = Math.max(...offsets);
  const found = new Map<number, string>();
  for await (const lines of linesWithOffsets(file)) {
    for (const line of lines) if (wanted.has(line.offset)) found.set(line.offset, line.text);
    if ((lines.at(-1)?.offset ?? 0) >= last) break;
  }
  return found;
}
