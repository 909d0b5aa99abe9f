/**
 * Reads a whole journal: the active file and its rotated siblings, plain or
 * gzipped, verified line by line and ordered by seq (decisions §6).
 *
 * Only the last line of a file may be damaged: a killed process can leave a
 * write half done, but nothing is written after it in that file (the writer
 * must truncate it or start a new file on restart). Damage anywhere else, or a
 * missing or repeated seq, means the journal cannot rebuild the databases
 * exactly, so reading stops with a JournalError.
 */
import fs from 'node:fs';
import { pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { journalFiles } from './naming';
import { JOURNAL_FORMAT, JournalLineError, decodeLine, isHeader } from './record';
import type { JournalEntry, JournalHeader, JournalLine } from './record';

export interface JournalContents {
  /** Every header, with the file it was read from, in the order of `files`. */
  headers: Array<{ file: string; header: JournalHeader }>;
  /** Sorted by seq; with `fromSeq`, only seq >= fromSeq. */
  entries: JournalEntry[];
  /** Tolerated damage (torn last lines, files without a header), one sentence each. */
  warnings: string[];
  /** The files read, ordered by the first seq each holds (files without entries last, by name). */
  files: string[];
}

export type JournalErrorKind = 'corrupt' | 'gap' | 'duplicate' | 'missing';

/** The journal cannot be read as a whole; `file` and `line` (1-based) say where, when one place is to blame. */
export class JournalError extends Error {
  readonly kind: JournalErrorKind;
  readonly file?: string;
  readonly line?: number;
  constructor(kind: JournalErrorKind, message: string, file?: string, line?: number) {
    super(file === undefined ? message : `${file}${line === undefined ? '' : `:${line}`}: ${message}`);
    this.name = 'JournalError';
    this.kind = kind;
    if (file !== undefined) this.file = file;
    if (line !== undefined) this.line = line;
  }
}

export interface FileLine {
  /** 1-based. */
  line: number;
  /** Without its newline. */
  text: string;
  /** Nothing follows this line in the file. */
  last: boolean;
  /** The line ended with a newline (only the last line can lack one). */
  terminated: boolean;
}

function openFile(file: string): NodeJS.ReadableStream {
  const source = fs.createReadStream(file);
  if (!file.endsWith('.gz')) return source;
  // pipeline, not pipe: a read error on the source must reach the consumer of the gunzip stream.
  return pipeline(source, zlib.createGunzip(), () => undefined);
}

/**
 * The lines of one journal file, gunzipping `*.gz`. Splits on `\n` bytes (never
 * part of a multi-byte UTF-8 sequence, and JSON escapes it inside strings), and
 * holds each line back until the next byte shows whether it was the last.
 */
export async function* readFileLines(file: string): AsyncGenerator<FileLine> {
  let pending: Buffer[] = [];
  let held: { line: number; text: string } | undefined;
  let count = 0;
  for await (const chunk of openFile(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, nl));
      if (held) yield { ...held, last: false, terminated: true };
      held = { line: ++count, text: Buffer.concat(pending).toString('utf8') };
      pending = [];
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  const tail = Buffer.concat(pending);
  if (held) yield { ...held, last: tail.length === 0, terminated: true };
  if (tail.length > 0) yield { line: ++count, text: tail.toString('utf8'), last: true, terminated: false };
}

interface Located {
  entry: JournalEntry;
  file: string;
  line: number;
}

interface ReadState {
  headers: Array<{ file: string; header: JournalHeader }>;
  located: Located[];
  warnings: string[];
}

function checkHeader(header: JournalHeader, file: string, line: number): void {
  if (header.format > JOURNAL_FORMAT) {
    throw new JournalError('corrupt', `written in journal format ${header.format}; this reader knows format ${JOURNAL_FORMAT}`, file, line);
  }
}

/** Decodes one line; undefined when it is a tolerated torn last line (and a warning was recorded). */
function decodeFileLine(file: string, fileLine: FileLine, warnings: string[]): JournalLine | undefined {
  const torn = (why: string) => {
    warnings.push(`${file}: line ${fileLine.line} is torn (${why}); ignored`);
    return undefined;
  };
  if (!fileLine.terminated) return torn('no trailing newline');
  try {
    return decodeLine(fileLine.text);
  } catch (err) {
    if (!(err instanceof JournalLineError)) throw err;
    // A valid checksum over a bad shape is not a torn write but a writer bug or a foreign format.
    if (fileLine.last && err.reason !== 'shape') return torn(err.message);
    throw new JournalError('corrupt', `${err.reason} error: ${err.message}`, file, fileLine.line);
  }
}

async function readOneFile(file: string, state: ReadState): Promise<void> {
  let first = true;
  try {
    for await (const fileLine of readFileLines(file)) {
      const decoded = decodeFileLine(file, fileLine, state.warnings);
      if (!decoded) continue;
      if (isHeader(decoded)) {
        checkHeader(decoded, file, fileLine.line);
        state.headers.push({ file, header: decoded });
      } else {
        if (first) state.warnings.push(`${file}: does not begin with a header`);
        state.located.push({ entry: decoded, file, line: fileLine.line });
      }
      first = false;
    }
  } catch (err) {
    if (err instanceof JournalError) throw err;
    // A truncated or damaged gzip stream, or an unreadable file.
    throw new JournalError('corrupt', `cannot be read: ${(err as Error).message}`, file);
  }
}

function where(located: Located): string {
  return `${located.file}:${located.line}`;
}

/** Seq must rise by exactly one from the first entry to the last. */
function checkSequence(located: readonly Located[]): void {
  for (let i = 1; i < located.length; i++) {
    const previous = located[i - 1] as Located;
    const current = located[i] as Located;
    const { seq } = current.entry;
    const expected = previous.entry.seq + 1;
    if (seq === previous.entry.seq) {
      throw new JournalError('duplicate', `seq ${seq} appears twice (also at ${where(previous)})`, current.file, current.line);
    }
    if (seq !== expected) {
      const missing = seq - 1 === expected ? `seq ${expected} is missing` : `seq ${expected}–${seq - 1} are missing`;
      throw new JournalError('gap', `${missing} (between ${where(previous)} and ${where(current)})`);
    }
  }
}

/** Files ordered by the lowest seq each holds, so that `files` reads in journal order. */
function orderFiles(files: readonly string[], located: readonly Located[]): string[] {
  const firstSeq = new Map<string, number>();
  for (const { file, entry } of located) firstSeq.set(file, Math.min(firstSeq.get(file) ?? Infinity, entry.seq));
  const key = (file: string) => firstSeq.get(file) ?? Infinity;
  return [...files].sort((a, b) => key(a) - key(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Reads the journal whose active file is `activeFile`, with its rotated
 * siblings. With `fromSeq`, entries below it are dropped before the duplicate
 * and gap checks, which then start at the first entry at or above it.
 */
export async function readJournal(activeFile: string, options: { fromSeq?: number } = {}): Promise<JournalContents> {
  const found = await journalFiles(activeFile);
  if (found.length === 0) {
    throw new JournalError('missing', `no journal: neither ${activeFile} nor rotated files beside it exist`);
  }
  const files = found.sort(); // a stable reading order, so warnings and headers come out the same each time
  const state: ReadState = { headers: [], located: [], warnings: [] };
  for (const file of files) await readOneFile(file, state);

  const { fromSeq } = options;
  const sorted = state.located.sort((a, b) => a.entry.seq - b.entry.seq);
  const kept = fromSeq === undefined ? sorted : sorted.filter((l) => l.entry.seq >= fromSeq);
  checkSequence(kept);
  const ordered = orderFiles(files, state.located);
  const rank = (file: string) => ordered.indexOf(file);
  return {
    headers: state.headers.sort((a, b) => rank(a.file) - rank(b.file)),
    entries: kept.map((l) => l.entry),
    warnings: state.warnings,
    files: ordered,
  };
}
