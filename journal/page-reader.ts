/**
 * Reads a bounded page of a journal's entries after a given seq, for a feed
 * that serves them while the writer goes on: files are read one after another
 * in seq order and reading stops as soon as the page is full, so memory
 * follows the page, never the journal.
 *
 * The writer may rotate or compress a file between the listing and the read;
 * such a page is read again from the start (its entries are all durable, so
 * a second listing finds them under their new names).
 */
import { journalFiles } from './naming';
import { firstSeqOfFile, JournalError, leadingSeqOfLine, readFileLineChunks, type FileLine } from './reader';
import { decodeLine, isHeader, JournalLineError, type JournalEntry } from './record';

export interface PageRequest {
  /** Entries with a seq above this one (exclusive). */
  after: number;
  /** The last seq to read: the journal's last durable seq when the read began (later lines may still be cut back). */
  through: number;
  /** At most this many entries... */
  limit: number;
  /** ...and stop after the entry that brings their JSON to this many bytes. */
  maxBytes: number;
  /** Which entries the page keeps; the others are read and passed over. */
  accept(entry: JournalEntry): boolean;
}

export interface PageEntry {
  seq: number;
  /** The entry's JSON as in the file, without its crc field. */
  json: string;
  entry: JournalEntry;
}

export interface Page {
  entries: PageEntry[];
  /** Every seq up to this one was looked at: the `after` of the next page. */
  scannedThrough: number;
}

/** Reads of a page raced by a rotation or a compression before one is given up. */
const ATTEMPTS = 3;

export async function readPage(activeFile: string, request: PageRequest): Promise<Page> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readPageOnce(activeFile, request);
    } catch (err) {
      if (attempt >= ATTEMPTS || !movedAway(err)) throw err;
    }
  }
}

/** A file listed a moment ago is gone or its seqs do not follow: a rotation or compression ran meanwhile. */
function movedAway(err: unknown): boolean {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
  return err instanceof JournalError && (err.kind === 'gap' || err.kind === 'missing' || /ENOENT/.test(err.message));
}

/** The files that may hold seqs above `after`, in the order of their first seq. */
async function filesFrom(activeFile: string, after: number): Promise<string[]> {
  const starts: Array<{ file: string; start: number }> = [];
  for (const file of await journalFiles(activeFile)) {
    const start = await firstSeqOfFile(file);
    if (start !== undefined) starts.push({ file, start });
  }
  starts.sort((a, b) => a.start - b.start);
  // While a rotated file is compressed, its plain and gzipped copies both exist for a moment: one is enough.
  const distinct = starts.filter((s, i) => i === 0 || s.start !== (starts[i - 1] as { start: number }).start);
  return distinct.filter((s, i) => (distinct[i + 1]?.start ?? Infinity) > after + 1).map((s) => s.file);
}

interface Scan {
  readonly request: PageRequest;
  entries: PageEntry[];
  bytes: number;
  /** The last seq looked at. */
  last: number;
  done: boolean;
}

async function readPageOnce(activeFile: string, request: PageRequest): Promise<Page> {
  const scan: Scan = { request, entries: [], bytes: 0, last: request.after, done: request.after >= request.through };
  for (const file of scan.done ? [] : await filesFrom(activeFile, request.after)) {
    for await (const lines of readFileLineChunks(file)) {
      for (const line of lines) if (line.terminated && !scan.done) take(scan, line, file);
      if (scan.done) break;
    }
    if (scan.done) break;
  }
  if (!scan.done && scan.last < request.through) {
    throw new JournalError('gap', `seq ${scan.last + 1}–${request.through} were not found in the journal's files`);
  }
  return { entries: scan.entries, scannedThrough: scan.done ? scan.last : request.through };
}

/** One whole line: skipped cheaply when at or below what was seen, else decoded and checked. */
function take(scan: Scan, line: FileLine, file: string): void {
  const cheap = leadingSeqOfLine(line);
  if (cheap !== undefined && cheap <= scan.last) return;
  if (cheap !== undefined && cheap > scan.request.through) {
    scan.done = true;
    return;
  }
  const decoded = decode(line.text, file, line.line);
  if (isHeader(decoded)) return;
  if (decoded.seq <= scan.last) return;
  if (scan.last > scan.request.after && decoded.seq !== scan.last + 1) {
    throw new JournalError('gap', `seq ${scan.last + 1} is missing`, file, line.line);
  }
  scan.last = decoded.seq;
  if (scan.request.accept(decoded)) {
    const json = JSON.stringify(decoded);
    scan.entries.push({ seq: decoded.seq, json, entry: decoded });
    scan.bytes += json.length;
  }
  const full = scan.entries.length >= scan.request.limit || scan.bytes >= scan.request.maxBytes;
  if (full || scan.last >= scan.request.through) scan.done = true;
}

function decode(text: string, file: string, lineNumber: number): ReturnType<typeof decodeLine> {
  try {
    return decodeLine(text);
  } catch (err) {
    if (err instanceof JournalLineError)
      throw new JournalError('corrupt', `${err.reason} error: ${err.message}`, file, lineNumber);
    throw err;
  }
}
