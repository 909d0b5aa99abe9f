/**
 * Reads a whole journal: the active file and its rotated siblings, plain or
 * gzipped, verified line by line and ordered by seq.
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
import { JOURNAL_FORMAT, JournalLineError, decodeLine, isHeader, verifyLineBytes } from './record';
import type { JournalEntry, JournalHeader, JournalLine } from './record';
import { sketchLine, type ReadEntry } from './entry-line';
import { decimalAt, holdsAt } from './line-bytes';

export interface JournalContents {
  /** Every header, with the file it was read from, in the order of `files`. */
  headers: Array<{ file: string; header: JournalHeader }>;
  /** Sorted by seq; with `fromSeq`, only seq >= fromSeq. */
  entries: JournalEntry[];
  /** Tolerated damage (torn last lines, files without a header), one sentence each. */
  warnings: string[];
  /** The files read, ordered by the first seq each holds (files without entries last, by name). */
  files: string[];
  /** The lowest seq the journal holds, parts not read included; null when it holds no entry. */
  firstSeq: number | null;
}

/** What readJournalLazily gives: the entries of the common kinds as lines to decode when used (entry-line.ts). */
export type LazyJournalContents = Omit<JournalContents, 'entries'> & { entries: ReadEntry[] };

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

/**
 * One line of a journal file, as the bytes it was read in: its text is made
 * only when asked, so a reader that needs no more than a line's first fields
 * and its checksum (readJournalLazily, a bounded read skipping old lines)
 * makes no string of it.
 */
export class FileLine {
  private decoded: string | undefined;

  constructor(
    /** 1-based. */
    readonly line: number,
    /** The buffer the line lies in, and where (its newline excluded). */
    readonly bytes: Buffer,
    readonly start: number,
    readonly end: number,
    /** Nothing follows this line in the file. */
    readonly last: boolean,
    /** The line ended with a newline (only the last line can lack one). */
    readonly terminated: boolean,
  ) {}

  /** Without its newline. */
  get text(): string {
    this.decoded ??= this.bytes.toString('utf8', this.start, this.end);
    return this.decoded;
  }
}

/** Reads of 1 MiB rather than 64 KiB: a long replay took a turn of the stream machinery per 64 KiB. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** A journal file's text as a stream of bytes, gunzipped when it is `*.gz`. */
export function openJournalText(file: string): NodeJS.ReadableStream {
  const source = fs.createReadStream(file, { highWaterMark: READ_CHUNK_BYTES });
  if (!file.endsWith('.gz')) return source;
  // pipeline, not pipe: a read error on the source must reach the consumer of the gunzip stream.
  return pipeline(source, zlib.createGunzip(), () => undefined);
}

/**
 * The lines of one journal file, gunzipping `*.gz`. Splits on `\n` bytes (never
 * part of a multi-byte UTF-8 sequence, and JSON escapes it inside strings), and
 * holds each line back until the next byte shows whether it was the last.
 * Lines come a read chunk at a time: one turn of the async machinery per line
 * cost more than decoding the line in a long replay.
 */
export async function* readFileLineChunks(file: string): AsyncGenerator<FileLine[]> {
  // The start of a line that the last chunk cut: joined to its end in the next chunk with a newline.
  let pending: Buffer[] = [];
  // The line held back until the next shows it was not the last: its number (0: none yet) and where it lies.
  let heldLine = 0;
  let heldBytes = EMPTY;
  let heldStart = 0;
  let heldEnd = 0;
  const lines: FileLine[] = [];
  const take = (bytes: Buffer, start: number, end: number): void => {
    if (heldLine > 0) lines.push(new FileLine(heldLine, heldBytes, heldStart, heldEnd, false, true));
    heldLine++;
    heldBytes = bytes;
    heldStart = start;
    heldEnd = end;
  };
  for await (const chunk of openJournalText(file) as AsyncIterable<Buffer>) {
    const lastNewline = chunk.lastIndexOf(10);
    if (lastNewline === -1) {
      pending.push(chunk);
      continue;
    }
    let start = 0;
    if (pending.length > 0) {
      // Only the cut line is copied; the chunk's other lines stay where they were read.
      const first = chunk.indexOf(10);
      const joined = Buffer.concat([...pending, chunk.subarray(0, first)]);
      take(joined, 0, joined.length);
      start = first + 1;
    }
    while (start <= lastNewline) {
      const end = chunk.indexOf(10, start);
      take(chunk, start, end);
      start = end + 1;
    }
    pending = lastNewline + 1 < chunk.length ? [chunk.subarray(lastNewline + 1)] : [];
    if (lines.length > 0) yield lines.splice(0);
  }
  const tail = Buffer.concat(pending);
  if (heldLine > 0) lines.push(new FileLine(heldLine, heldBytes, heldStart, heldEnd, tail.length === 0, true));
  if (tail.length > 0) lines.push(new FileLine(heldLine + 1, tail, 0, tail.length, true, false));
  if (lines.length > 0) yield lines.splice(0);
}

const EMPTY: Buffer = Buffer.alloc(0);

/** readFileLineChunks a line at a time. */
export async function* readFileLines(file: string): AsyncGenerator<FileLine> {
  for await (const lines of readFileLineChunks(file)) yield* lines;
}

/** An entry and where it was read (an EntryLine is its own: it knows where it was read). */
interface Located {
  readonly entry: ReadEntry;
  readonly file: string;
  readonly line: number;
}

interface ReadState {
  headers: Array<{ file: string; header: JournalHeader }>;
  located: Located[];
  warnings: string[];
  /** The lowest seq of each file read, lines skipped below `fromSeq` included. */
  starts: Map<string, number>;
  /** Keep lines of the common kinds undecoded, their checksums checked (readJournalLazily). */
  lazy: boolean;
  /** The file whose start noteStart set last, and that start. */
  noted: { file: string; start: number };
}

function checkHeader(header: JournalHeader, file: string, line: number): void {
  if (header.format > JOURNAL_FORMAT) {
    throw new JournalError(
      'corrupt',
      `written in journal format ${header.format}; this reader knows format ${JOURNAL_FORMAT}`,
      file,
      line,
    );
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

const SEQ_PREFIX = '{"seq":';

/**
 * The seq an entry line begins with, read without decoding the line (the
 * encoder always writes seq first); undefined for headers and odd lines, which
 * then take the full decode.
 */
export function leadingSeq(text: string): number | undefined {
  if (!text.startsWith(SEQ_PREFIX)) return undefined;
  let seq = 0;
  let i = SEQ_PREFIX.length;
  for (; i < text.length && i < SEQ_PREFIX.length + 16; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) break;
    seq = seq * 10 + digit;
  }
  return i > SEQ_PREFIX.length && text[i] === ',' ? seq : undefined;
}

const SEQ_PREFIX_BYTES = Buffer.from(SEQ_PREFIX);

/** leadingSeq of a line still in its bytes, read without making its text. */
export function leadingSeqOfLine({ bytes, start, end }: FileLine): number | undefined {
  if (!holdsAt(bytes, start, SEQ_PREFIX_BYTES)) return undefined;
  const seq = decimalAt(bytes, start + SEQ_PREFIX_BYTES.length, end);
  return seq !== undefined && bytes[seq.next] === 0x2c ? seq.value : undefined;
}

function noteStart(state: ReadState, file: string, seq: number): void {
  // Seq rises line by line: most lines start above what their file holds already, known without a map lookup.
  if (file === state.noted.file && seq >= state.noted.start) return;
  const start = Math.min(state.starts.get(file) ?? Infinity, seq);
  state.starts.set(file, start);
  state.noted = { file, start };
}

/** Takes one line into the state; false when it was a tolerated torn last line. */
function takeLine(file: string, fileLine: FileLine, state: ReadState, fromSeq: number, first: boolean): boolean {
  // Lines below fromSeq are neither decoded nor checked: start-up cost follows the tail, not the journal's length.
  const cheap = fileLine.terminated ? leadingSeqOfLine(fileLine) : undefined;
  if (cheap !== undefined && cheap < fromSeq) {
    noteStart(state, file, cheap);
    return true;
  }
  if (state.lazy && !fileLine.last && takeLineLazily(file, fileLine, state, first)) return true;
  const decoded = decodeFileLine(file, fileLine, state.warnings);
  if (!decoded) return false;
  if (isHeader(decoded)) {
    checkHeader(decoded, file, fileLine.line);
    state.headers.push({ file, header: decoded });
  } else {
    if (first) state.warnings.push(`${file}: does not begin with a header`);
    noteStart(state, file, decoded.seq);
    state.located.push({ entry: decoded, file, line: fileLine.line });
  }
  return true;
}

/**
 * Keeps an entry line undecoded when it begins as the encoder writes the
 * common kinds (entry-line.ts); false when it does not, and it is decoded now.
 * Its checksum is checked now, so damage is still found before any entry is used.
 */
function takeLineLazily(file: string, fileLine: FileLine, state: ReadState, first: boolean): boolean {
  const { bytes, start, end } = fileLine;
  const sketch = sketchLine(bytes, start, end, file, fileLine.line);
  if (sketch === undefined) return false;
  try {
    verifyLineBytes(bytes, start, end);
  } catch (err) {
    if (!(err instanceof JournalLineError)) throw err;
    throw new JournalError('corrupt', `${err.reason} error: ${err.message}`, file, fileLine.line);
  }
  if (first) state.warnings.push(`${file}: does not begin with a header`);
  noteStart(state, file, sketch.seq);
  state.located.push(sketch);
  return true;
}

async function readOneFile(file: string, state: ReadState, fromSeq: number): Promise<void> {
  let first = true;
  try {
    for await (const lines of readFileLineChunks(file)) {
      for (const fileLine of lines) if (takeLine(file, fileLine, state, fromSeq, first)) first = false;
    }
  } catch (err) {
    if (err instanceof JournalError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new FileVanished(file, err as Error);
    // A truncated or damaged gzip stream, or an unreadable file.
    throw new JournalError('corrupt', `cannot be read: ${(err as Error).message}`, file);
  }
}

/** A file listed a moment ago is gone: retention (or compression's rename) removed it meanwhile. */
class FileVanished extends Error {
  constructor(
    readonly file: string,
    override readonly cause: Error,
  ) {
    super(cause.message);
  }
}

/** How often a read starts over because a file went while it was read. */
const READ_ATTEMPTS = 5;

/** The header a file begins with, if its first line is one; reads no further. */
export async function peekHeader(file: string): Promise<JournalHeader | undefined> {
  try {
    for await (const fileLine of readFileLines(file)) {
      if (!fileLine.terminated) return undefined;
      try {
        const line = decodeLine(fileLine.text);
        return isHeader(line) ? line : undefined;
      } catch {
        return undefined; // the full read reports it, if the file is read at all
      }
    }
  } catch (err) {
    throw new JournalError('corrupt', `cannot be read: ${(err as Error).message}`, file);
  }
  return undefined;
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
      throw new JournalError(
        'duplicate',
        `seq ${seq} appears twice (also at ${where(previous)})`,
        current.file,
        current.line,
      );
    }
    if (seq !== expected) {
      const missing = seq - 1 === expected ? `seq ${expected} is missing` : `seq ${expected}–${seq - 1} are missing`;
      throw new JournalError('gap', `${missing} (between ${where(previous)} and ${where(current)})`);
    }
  }
}

/** Files ordered by the lowest seq each holds, so that `files` reads in journal order. */
function orderFiles(files: readonly string[], starts: ReadonlyMap<string, number>): string[] {
  const key = (file: string) => starts.get(file) ?? Infinity;
  return [...files].sort((a, b) => key(a) - key(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A file whose header gives its first seq holds no seq at or above `fromSeq`
 * when some other file starts at or below `fromSeq` and above it: seq rises
 * from file to file, so its range ends where the next one begins.
 */
function coveredBelow(file: string, fromSeq: number, starts: ReadonlyMap<string, number>): boolean {
  const start = starts.get(file);
  if (start === undefined || start >= fromSeq) return false;
  for (const [other, otherStart] of starts)
    if (other !== file && otherStart > start && otherStart <= fromSeq) return true;
  return false;
}

/**
 * Reads the journal whose active file is `activeFile`, with its rotated
 * siblings. With `fromSeq`, entries below it are dropped before the duplicate
 * and gap checks, which then start at the first entry at or above it; files
 * whose header shows they end below it are not read, and lines below it are
 * not decoded. A journal may start above seq 1 (retention removed its oldest
 * files): `firstSeq` says where.
 */
export async function readJournal(activeFile: string, options: { fromSeq?: number } = {}): Promise<JournalContents> {
  return (await readJournalRetrying(activeFile, options, false)) as JournalContents;
}

/**
 * readJournal, with the entries of the common kinds kept as lines whose
 * checksum is checked but whose JSON is decoded only when used (entry-line.ts):
 * for a reader that goes through a long journal once, as replay does.
 */
export function readJournalLazily(
  activeFile: string,
  options: { fromSeq?: number } = {},
): Promise<LazyJournalContents> {
  return readJournalRetrying(activeFile, options, true);
}

async function readJournalRetrying(
  activeFile: string,
  options: { fromSeq?: number },
  lazy: boolean,
): Promise<LazyJournalContents> {
  // A server's retention may remove rotated files while they are read (they are then wholly covered
  // by a snapshot round), and compression renames a file it has finished: the read starts over with
  // the files as they are now.
  for (let attempt = 1; ; attempt++) {
    try {
      return await readJournalOnce(activeFile, options, lazy);
    } catch (error) {
      if (!(error instanceof FileVanished)) throw error;
      if (attempt >= READ_ATTEMPTS) throw new JournalError('corrupt', `cannot be read: ${error.message}`, error.file);
    }
  }
}

async function readJournalOnce(
  activeFile: string,
  options: { fromSeq?: number },
  lazy: boolean,
): Promise<LazyJournalContents> {
  const found = await journalFiles(activeFile);
  if (found.length === 0) {
    throw new JournalError('missing', `no journal: neither ${activeFile} nor rotated files beside it exist`);
  }
  const files = found.sort(); // a stable reading order, so warnings and headers come out the same each time
  const fromSeq = options.fromSeq ?? 0;
  const state: ReadState = {
    headers: [],
    located: [],
    warnings: [],
    starts: new Map(),
    lazy,
    noted: { file: '', start: Infinity },
  };
  const peeked = new Map<string, JournalHeader>();
  if (fromSeq > 1) {
    for (const file of files) {
      const header = await peekHeader(file);
      if (header === undefined) continue;
      peeked.set(file, header);
      if (header.firstSeq !== undefined) state.starts.set(file, header.firstSeq);
    }
  }
  // Files without a first seq in their header are read first: their starts bound the others' ranges.
  const known = new Set(state.starts.keys());
  for (const file of files) if (!known.has(file)) await readOneFile(file, state, fromSeq);
  for (const file of files) {
    if (!known.has(file)) continue;
    if (coveredBelow(file, fromSeq, state.starts))
      state.headers.push({ file, header: peeked.get(file) as JournalHeader });
    else await readOneFile(file, state, fromSeq);
  }

  const sorted = state.located.sort((a, b) => a.entry.seq - b.entry.seq);
  const kept = sorted.filter((l) => l.entry.seq >= fromSeq);
  const firstSeq = state.starts.size === 0 ? null : Math.min(...state.starts.values());
  checkStart(kept, fromSeq, firstSeq);
  checkSequence(kept);
  const ordered = orderFiles(files, state.starts);
  const rank = (file: string) => ordered.indexOf(file);
  return {
    headers: state.headers.sort((a, b) => rank(a.file) - rank(b.file)),
    entries: kept.map((l) => l.entry),
    warnings: state.warnings,
    files: ordered,
    firstSeq,
  };
}

/** The journal holds seqs below `fromSeq` and above it, so `fromSeq` itself must be there. */
function checkStart(kept: readonly Located[], fromSeq: number, firstSeq: number | null): void {
  const first = kept[0];
  if (first === undefined || firstSeq === null || fromSeq <= firstSeq || first.entry.seq <= fromSeq) return;
  const missing =
    first.entry.seq - 1 === fromSeq ? `seq ${fromSeq} is missing` : `seq ${fromSeq}–${first.entry.seq - 1} are missing`;
  throw new JournalError('gap', `${missing} (before ${where(first)})`);
}

/** The first seq a file holds, from its header or its first entry line; undefined when it holds none. */
export async function firstSeqOfFile(file: string): Promise<number | undefined> {
  const fromHeader = (await peekHeader(file))?.firstSeq;
  if (fromHeader !== undefined) return fromHeader;
  for await (const line of readFileLines(file)) {
    const seq = leadingSeqOfLine(line);
    if (seq !== undefined) return seq;
  }
  return undefined;
}

/** The first seq the journal holds, read from the start of each file only; undefined when it holds none. */
export async function journalFirstSeq(activeFile: string): Promise<number | undefined> {
  let first: number | undefined;
  for (const file of await journalFiles(activeFile)) {
    const seq = await firstSeqOfFile(file);
    if (seq !== undefined) first = Math.min(first ?? seq, seq);
  }
  return first;
}
