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
 * and what it holds survives every young-generation collection meanwhile
 * (the time is cut from the text when asked, not held as a string of its own).
 */
export class EntryLine {
  constructor(
    readonly seq: number,
    /** Where the time is in the text. */
    private readonly tsStart: number,
    private readonly tsEnd: number,
    readonly kind: EntryKind,
    readonly db: string | null,
    /** The line's text, checksum verified. */
    readonly text: string,
    /** Where the line was read, for an error. */
    readonly file: string,
    readonly line: number,
  ) {}

  /** The entry's ISO time. */
  get ts(): string {
    return this.text.slice(this.tsStart, this.tsEnd);
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

const SEQ = '{"seq":';
const TS = ',"ts":"';
const KIND = '","kind":"';
const DB = '","db":';

/**
 * The first fields of an entry line as the encoder writes them (seq, ts,
 * kind, db, in that order, db a string without escapes or null); undefined
 * for anything else, which the reader then decodes whole.
 */
export function sketchLine(text: string, file: string, line: number): EntryLine | undefined {
  if (!text.startsWith(SEQ)) return undefined;
  let i = SEQ.length;
  let seq = 0;
  for (; i < text.length && i < SEQ.length + 16; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) break;
    seq = seq * 10 + digit;
  }
  if (i === SEQ.length || !text.startsWith(TS, i)) return undefined;
  const tsStart = i + TS.length;
  const tsEnd = text.indexOf('"', tsStart);
  if (tsEnd === -1 || !text.startsWith(KIND, tsEnd)) return undefined;
  const kindStart = tsEnd + KIND.length;
  const kindEnd = text.indexOf('"', kindStart);
  if (kindEnd === -1) return undefined;
  const kind = text.slice(kindStart, kindEnd);
  if (!LAZY_KINDS.has(kind) || !text.startsWith(DB, kindEnd)) return undefined;
  const dbStart = kindEnd + DB.length;
  let db: string | null;
  if (text.startsWith('null,', dbStart)) db = null;
  else {
    if (text.charCodeAt(dbStart) !== 34) return undefined;
    const dbEnd = text.indexOf('"', dbStart + 1);
    if (dbEnd === -1 || text.charCodeAt(dbEnd + 1) !== 44) return undefined;
    db = text.slice(dbStart + 1, dbEnd);
    if (db.includes('\\')) return undefined;
  }
  // An ISO time has no escapes; anything else is decoded whole.
  for (let at = tsStart; at < tsEnd; at++) if (text.charCodeAt(at) === 92) return undefined;
  return new EntryLine(seq, tsStart, tsEnd, kind as EntryKind, db, text, file, line);
}
