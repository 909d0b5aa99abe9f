/**
 * A journal line whose checksum was verified but whose JSON is left for
 * later: a reader that holds a long journal in memory keeps the line's text
 * and the few fields that decide where the entry goes (seq, time, kind,
 * database), and decodes the rest just before the entry is used. Decoded one
 * at a time, the objects of an entry die young; decoded all at once and held,
 * they cost a replay of small entries more in garbage collection than the
 * decode itself.
 *
 * Only the kinds that are common and carry nothing another entry looks ahead
 * for (exec, begin, commit, rollback) are kept as lines; the rest are decoded
 * at once, as whoever reads the journal may need their other fields early.
 */
import { decodeVerifiedLine, type EntryKind, type JournalEntry } from './record';
import { decimalAt, holdsAt } from './line-bytes';

/** The kinds a reader may keep as lines. */
const LAZY_KINDS: ReadonlySet<string> = new Set<EntryKind>(['exec', 'begin', 'commit', 'rollback']);

/** A line's text could not be decoded after all (valid checksum, bad JSON or shape: a writer bug). */
export class EntryLineError extends Error {
  constructor(
    readonly entryLine: EntryLine,
    readonly reason: Error,
  ) {
    super(`${entryLine.file}:${entryLine.line}: cannot be decoded: ${reason.message}`);
    this.name = 'EntryLineError';
  }
}

/**
 * Small on purpose: a reader holds one per entry until the entry is applied,
 * and what it holds survives every young-generation collection meanwhile.
 * It keeps the line as the bytes it was read in (a slice of the read's
 * buffer, outside the JavaScript heap), not as a string: the time and the
 * text are cut from them when asked.
 */
export class EntryLine {
  constructor(
    readonly seq: number,
    /** Where the time is in `bytes` (ASCII, no escapes). */
    private readonly tsStart: number,
    private readonly tsEnd: number,
    readonly kind: EntryKind,
    readonly db: string | null,
    /** The buffer the line was read in, checksum verified, and where the line lies in it (newline excluded). */
    private readonly bytes: Buffer,
    private readonly start: number,
    private readonly end: number,
    /** Where the line was read, for an error. */
    readonly file: string,
    readonly line: number,
  ) {}

  /** The entry's ISO time. */
  get ts(): string {
    return this.bytes.toString('latin1', this.tsStart, this.tsEnd);
  }

  /** The line's text, without its newline. */
  get text(): string {
    return this.bytes.toString('utf8', this.start, this.end);
  }

  /** The line as the reader keeps every line it read: its entry (itself) and where it was read. */
  get entry(): EntryLine {
    return this;
  }

  /** Never set on the kinds kept as lines; here so that an EntryLine reads like an entry where these are asked. */
  get from(): undefined {
    return undefined;
  }

  get voids(): undefined {
    return undefined;
  }

  /** The whole entry; its seq, time, kind and database must be the ones read from the line's start. */
  decode(): JournalEntry {
    let entry: JournalEntry;
    try {
      entry = decodeVerifiedLine(this.text) as JournalEntry;
    } catch (error) {
      throw new EntryLineError(this, error as Error);
    }
    if (entry.seq !== this.seq || entry.ts !== this.ts || entry.kind !== this.kind || entry.db !== this.db) {
      throw new EntryLineError(this, new Error('the line does not begin as the encoder writes it'));
    }
    return entry;
  }
}

/** An entry as read: decoded, or a line to decode when used. */
export type ReadEntry = JournalEntry | EntryLine;

/** The entry itself, decoding a line kept for later. */
export function entryOf(read: ReadEntry): JournalEntry {
  return read instanceof EntryLine ? read.decode() : read;
}

const SEQ = Buffer.from('{"seq":');
const TS = Buffer.from(',"ts":"');
const KIND = Buffer.from('","kind":"');
const DB = Buffer.from('","db":');
const NULL_DB = Buffer.from('null,');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
/** The kinds kept as lines, as their bytes are followed by the db field. */
const LAZY_KIND_FIELDS: ReadonlyArray<[EntryKind, Buffer]> = [...LAZY_KINDS].map((kind) => [
  kind as EntryKind,
  Buffer.concat([Buffer.from(kind), DB]),
]);

/** Where the next `"` is at or after `from` and before `end`; -1 when none, or when a byte on the way is not plain ASCII or a backslash. */
function plainStringEnd(bytes: Buffer, from: number, end: number): number {
  for (let at = from; at < end; at++) {
    const byte = bytes[at] as number;
    if (byte === QUOTE) return at;
    if (byte === BACKSLASH || byte >= 0x80) return -1;
  }
  return -1;
}

/**
 * The first fields of an entry line as the encoder writes them (seq, ts,
 * kind, db, in that order; time and db plain ASCII strings without escapes,
 * db possibly null, a kind kept as a line), read from the line's bytes;
 * undefined for anything else, which the reader then decodes whole.
 */
export function sketchLine(
  bytes: Buffer,
  start: number,
  end: number,
  file: string,
  line: number,
): EntryLine | undefined {
  if (!holdsAt(bytes, start, SEQ)) return undefined;
  const seq = decimalAt(bytes, start + SEQ.length, end);
  if (seq === undefined || !holdsAt(bytes, seq.next, TS)) return undefined;
  const tsStart = seq.next + TS.length;
  const tsEnd = plainStringEnd(bytes, tsStart, end);
  if (tsEnd === -1 || !holdsAt(bytes, tsEnd, KIND)) return undefined;
  const kindStart = tsEnd + KIND.length;
  const field = LAZY_KIND_FIELDS.find(([, bytesOf]) => holdsAt(bytes, kindStart, bytesOf));
  if (field === undefined) return undefined;
  const [kind, kindAndDb] = field;
  const dbStart = kindStart + kindAndDb.length;
  let db: string | null;
  if (holdsAt(bytes, dbStart, NULL_DB)) db = null;
  else {
    if (bytes[dbStart] !== QUOTE) return undefined;
    const dbEnd = plainStringEnd(bytes, dbStart + 1, end);
    if (dbEnd === -1 || bytes[dbEnd + 1] !== COMMA) return undefined;
    db = bytes.toString('latin1', dbStart + 1, dbEnd);
  }
  return new EntryLine(seq.value, tsStart, tsEnd, kind, db, bytes, start, end, file, line);
}
