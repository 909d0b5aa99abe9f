/**
 * The journal's line format: one JSON object a line, each
 * carrying a CRC-32 of its own text so that a torn or altered line is caught.
 *
 * A line is `JSON.stringify(line)` with `,"crc":"<8 hex>"` inserted before the
 * final `}`; the crc covers the JSON text without it. Keeping the crc last lets
 * decode verify the exact bytes that were written without re-serializing.
 */
import zlib from 'node:zlib';
import { holdsAt, lowerHexAt } from './line-bytes';
import type { SqlParams } from '../src/engine/protocol';

/** Bump when a line's meaning changes; readers refuse formats newer than theirs. */
export const JOURNAL_FORMAT = 1;

export type JournalLevel = 'none' | 'error' | 'mod' | 'all';

/** The first line of every journal file: what wrote it, so replay can warn on a mismatch. */
export interface JournalHeader {
  kind: 'header';
  format: number;
  service: 'sqlscribe';
  version: string;
  level: JournalLevel;
  betterSqlite3: string;
  sqlite: string;
  node: string;
  tz: string;
  /** ISO time the writer opened the file. */
  started: string;
  /**
   * The seq of the file's first entry. Files written before the field existed lack it, so readers
   * must do without; with it, a reader looking for a seq can skip whole files.
   */
  firstSeq?: number;
}

/**
 * The header fields that decide what an entry's SQL computes: the same entry
 * replayed under another better-sqlite3, SQLite or time zone may give other
 * values. A journal file never mixes them (the writer begins a new file when
 * they change), and replay compares them with its own.
 */
export const ENGINE_FIELDS = ['betterSqlite3', 'sqlite', 'tz'] as const;

/** The engine fields in which two headers differ; none when both ran on the same engine. */
export function engineDifferences(
  a: Pick<JournalHeader, (typeof ENGINE_FIELDS)[number]>,
  b: Pick<JournalHeader, (typeof ENGINE_FIELDS)[number]>,
): Array<(typeof ENGINE_FIELDS)[number]> {
  return ENGINE_FIELDS.filter((key) => a[key] !== b[key]);
}

/**
 * `void` marks earlier entries that were durable but could not be applied
 * (their database refused the commit, e.g. its disk was full): replay skips
 * the entries it names, as the live database never had them.
 *
 * `copydb` creates `db` as a copy of database `from` as it stands at this
 * entry (every earlier entry applied, no later one); `resetdb` replaces `db`
 * with such a copy of its template `from`.
 *
 * `restoredb` (POST /dbs/{db}/restore) replaces `db` with the state the
 * journal gives it right after entry `to`: replay rebuilds that state (itself
 * honouring earlier restores at or before `to`) and puts it in place.
 *
 * `refused` is a request the service refused for who sent it or what it tried
 * to reach (401, 403, or a statement refused as hostile, [SQ1003]): an audit
 * trace only, written at level `all`. It ran nowhere, so replay, recovery and
 * replicas pass over it (isTraceOnly).
 *
 * `attempt` is a student's answer to an exercise (POST /exercises/{id}/check):
 * the SQL as sent, whether it was `correct`, and the code and class when it
 * failed. It ran on a scratch copy that is thrown away, so it too is a trace
 * for replay, recovery and replicas; the progress of a class is read from
 * these entries.
 */
export type EntryKind =
  | 'exec'
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'createdb'
  | 'dropdb'
  | 'copydb'
  | 'resetdb'
  | 'restoredb'
  | 'void'
  | 'refused'
  | 'attempt';

/** Every kind, in the order the docs list them: the follower's -kind and the metrics name them. */
export const ENTRY_KINDS: readonly EntryKind[] = [
  'exec',
  'begin',
  'commit',
  'rollback',
  'createdb',
  'dropdb',
  'copydb',
  'resetdb',
  'restoredb',
  'void',
  'refused',
  'attempt',
];

/**
 * Entries that record something that never reached a database: nothing is
 * applied for them, even when they name one (a refused request names the
 * database it asked for, which may not exist).
 */
export function isTraceOnly(entry: Pick<JournalEntry, 'kind'>): boolean {
  return entry.kind === 'refused' || entry.kind === 'attempt';
}

export type RollbackReason = 'client' | 'expired' | 'timeout' | 'engine-lost' | 'aborted' | 'shutdown' | 'revoked';

export interface JournalStatement {
  sql: string;
  params?: SqlParams;
}

export interface JournalEntry {
  /** Strictly increasing across rotations and restarts. */
  seq: number;
  /** ISO time. */
  ts: string;
  db: string | null;
  session: string | null;
  kind: EntryKind;
  /** exec: the statements' SQL joined with ';\n' (for humans and grep); createdb/dropdb: the statement or null. */
  sql: string | null;
  /** exec: exactly what ran, with parameters. */
  statements?: JournalStatement[];
  /** exec: every statement only reads. */
  readonly?: boolean;
  ok: boolean;
  code?: number;
  class?: number;
  error?: string;
  statement?: number;
  changes?: number;
  ms: number;
  /** exec: the batch's clock, ms since epoch (replay fixes 'now' to it). */
  clock?: number;
  /** exec: the batch's random seed, 16 hex chars. */
  seed?: string;
  /** exec: 'off' when the batch ran with foreign key enforcement off (an import that turned it off, an uploaded file). */
  foreignKeys?: 'off';
  /** rollback: why the session ended. */
  reason?: RollbackReason;
  /** copydb, resetdb: the database copied (the template). */
  from?: string;
  /** restoredb: the seq whose state the database was given back (right after that entry). */
  to?: number;
  /** void: the seqs of the entries that were never applied. */
  voids?: number[];
  /** The token that ran it (its id and name, never its secret), on a server that requires tokens. Replay ignores them. */
  tokenId?: string;
  tokenName?: string;
  /** attempt: the exercise answered. */
  exercise?: string;
  /** attempt: whether the answer's result matched the solution's. */
  correct?: boolean;
  /** refused: the client's address, as the server saw it. */
  client?: string;
  /** refused: the request's method and path (`POST /exec`), without its query string. */
  request?: string;
  /**
   * The lease epoch of the primary that wrote it, when the journal is shipped
   * to JetStream: a fencing token, so that an entry of a primary that has
   * since been replaced is known for what it is. Replay ignores it.
   */
  epoch?: number;
}

export type JournalLine = JournalHeader | JournalEntry;

/** Why a line could not be decoded. */
export class JournalLineError extends Error {
  readonly reason: 'json' | 'checksum' | 'shape';
  constructor(reason: 'json' | 'checksum' | 'shape', message: string) {
    super(message);
    this.name = 'JournalLineError';
    this.reason = reason;
  }
}

export function isHeader(line: JournalLine): line is JournalHeader {
  return line.kind === 'header';
}

let crcTable: Uint32Array | undefined;

/** Table-driven CRC-32 (IEEE), for Node versions before zlib.crc32 (20.15); exported for its test. */
export function crc32Fallback(text: string): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = (crcTable[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const nativeCrc32 = (zlib as { crc32?: (data: string | Uint8Array, value?: number) => number }).crc32;

/** CRC-32 of the UTF-8 bytes of `text`, as 8 lowercase hex digits. */
export function crcOf(text: string): string {
  return crcValue(text).toString(16).padStart(8, '0');
}

/**
 * Field order of a line, so that equal lines encode to equal bytes whatever order their keys were
 * set in. The short fields come first and the long SQL last, for people reading the file.
 */
const FIELD_ORDER = [
  'seq',
  'ts',
  'kind',
  'format',
  'service',
  'version',
  'level',
  'betterSqlite3',
  'sqlite',
  'node',
  'tz',
  'started',
  'firstSeq',
  'db',
  'from',
  'session',
  'tokenId',
  'tokenName',
  'client',
  'request',
  'exercise',
  'correct',
  'epoch',
  'ok',
  'code',
  'class',
  'error',
  'statement',
  'changes',
  'ms',
  'readonly',
  'reason',
  'clock',
  'seed',
  'foreignKeys',
  'voids',
  'sql',
  'statements',
] as const;
const KNOWN_FIELDS = new Set<string>([...FIELD_ORDER, 'crc']);

function ordered(line: JournalLine): Record<string, unknown> {
  const source = line as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of FIELD_ORDER) if (source[key] !== undefined) out[key] = source[key];
  // Fields a later format adds survive a decode/encode round trip, after the known ones.
  for (const key of Object.keys(source)) if (!KNOWN_FIELDS.has(key)) out[key] = source[key];
  return out;
}

/** One journal line, checksummed, with its trailing newline. */
export function encodeLine(line: JournalLine): string {
  const json = JSON.stringify(ordered(line));
  return `${json.slice(0, -1)},"crc":"${crcOf(json)}"}\n`;
}

/** A line ends with `,"crc":"<8 hex>"}`: read at a fixed place, where a pattern would scan the whole line. */
const CRC_FIELD = ',"crc":"';
const CRC_SUFFIX_LENGTH = CRC_FIELD.length + 8 + 2;
/** 8 lowercase hex digits, tested without a regular expression: every line read has one. */
function isCrcHex(text: string): boolean {
  if (text.length !== 8) return false;
  for (let i = 0; i < 8; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** The crc a line's text ends with, and where its suffix starts; undefined when it ends otherwise. */
function writtenCrc(body: string): { crc: string; at: number } | undefined {
  const at = body.length - CRC_SUFFIX_LENGTH;
  if (at < 0 || !body.endsWith('"}') || !body.startsWith(CRC_FIELD, at)) return undefined;
  const crc = body.slice(at + CRC_FIELD.length, body.length - 2);
  return isCrcHex(crc) ? { crc, at } : undefined;
}

/** CRC-32 of the UTF-8 bytes of `text`, as a number. */
function crcValue(text: string): number {
  return typeof nativeCrc32 === 'function' ? nativeCrc32(text) : crc32Fallback(text);
}

/** Decodes and verifies one line (with or without its newline); the result has no crc field. */
export function decodeLine(text: string): JournalLine {
  return parseVerified(verifiedJson(text));
}

/**
 * Checks one line's checksum (with or without its newline) and nothing else,
 * for a reader that decodes the line later (entry-line.ts) with decodeVerifiedLine.
 */
export function verifyLine(text: string): void {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const written = writtenCrc(body);
  // The crc of the JSON it covers, taken in two parts rather than from a copy of the line with its '}'.
  if (
    written !== undefined &&
    typeof nativeCrc32 === 'function' &&
    nativeCrc32('}', nativeCrc32(body.slice(0, written.at))) === Number.parseInt(written.crc, 16)
  )
    return;
  verifiedJson(text); // says why the line is refused (or, without zlib.crc32, checks it the long way)
}

const CRC_FIELD_BYTES = Buffer.from(CRC_FIELD);
const CLOSE_BRACE = '}';

/**
 * verifyLine for a line still in the bytes it was read in (`end` excludes its
 * newline): the checksum is taken of the bytes themselves, with no string
 * made. A line that does not end as the encoder writes one, or whose sum does
 * not match, goes to verifyLine, which says why it is refused.
 */
export function verifyLineBytes(bytes: Buffer, start: number, end: number): void {
  const at = end - CRC_SUFFIX_LENGTH;
  if (
    at >= start &&
    typeof nativeCrc32 === 'function' &&
    bytes[end - 1] === 0x7d &&
    bytes[end - 2] === 0x22 &&
    holdsAt(bytes, at, CRC_FIELD_BYTES)
  ) {
    const written = lowerHexAt(bytes, at + CRC_FIELD.length, 8);
    if (written !== -1 && nativeCrc32(CLOSE_BRACE, nativeCrc32(bytes.subarray(start, at))) === written) return;
  }
  verifyLine(bytes.toString('utf8', start, end));
}

/** Decodes a line whose checksum verifyLine has checked already; its JSON and shape are still checked. */
export function decodeVerifiedLine(text: string): JournalLine {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return parseVerified(`${body.slice(0, body.length - CRC_SUFFIX_LENGTH)}}`);
}

/** The JSON a line's checksum covers, once the checksum is found to match it. */
function verifiedJson(text: string): string {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const written = writtenCrc(body);
  if (!written) {
    parseJson(body); // text that is not JSON at all is reported as such, rather than as a missing checksum
    throw new JournalLineError('checksum', 'the line has no checksum');
  }
  const json = `${body.slice(0, written.at)}}`;
  if (crcValue(json) !== Number.parseInt(written.crc, 16))
    throw new JournalLineError('checksum', `checksum ${written.crc} does not match the line (${crcOf(json)})`);
  return json;
}

function parseVerified(json: string): JournalLine {
  // With a matching crc the text is `{…}` as encodeLine wrote it, so it parses to an object.
  const value = parseJson(json) as Record<string, unknown>;
  validateLine(value);
  return value as unknown as JournalLine;
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch (err) {
    throw new JournalLineError('json', `the line is not JSON: ${(err as Error).message}`);
  }
}

type Check = (value: unknown) => boolean;

const isString: Check = (v) => typeof v === 'string';
const isStringOrNull: Check = (v) => v === null || typeof v === 'string';
const isBoolean: Check = (v) => typeof v === 'boolean';
const isInteger: Check = (v) => Number.isSafeInteger(v);
const isCount: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const isDuration: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
/** The last time found valid: the entries of a journal come many to a millisecond, so most are the one before. */
let lastTime = '';
const isTime: Check = (v) => {
  if (v === lastTime) return true;
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) return false;
  lastTime = v;
  return true;
};
/** 16 hex digits, checked without a regular expression: every exec line has one. */
const isSeed: Check = (v) => {
  if (typeof v !== 'string' || v.length !== 16) return false;
  for (let i = 0; i < 16; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
};
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v);
const isScalar: Check = (v) =>
  v === null || isString(v) || isBoolean(v) || (typeof v === 'number' && Number.isFinite(v));

const isParams: Check = (v) => {
  if (Array.isArray(v)) return v.every(isScalar);
  return typeof v === 'object' && v !== null && Object.values(v).every(isScalar);
};
const isStatements: Check = (v) =>
  Array.isArray(v) &&
  v.every((s: unknown) => {
    if (typeof s !== 'object' || s === null) return false;
    const { sql, params } = s as Record<string, unknown>;
    return isString(sql) && (params === undefined || isParams(params));
  });

const HEADER_FIELDS: Record<string, Check> = {
  format: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
  service: (v) => v === 'sqlscribe',
  version: isString,
  level: oneOf('none', 'error', 'mod', 'all'),
  betterSqlite3: isString,
  sqlite: isString,
  node: isString,
  tz: isString,
  started: isTime,
};

const OPTIONAL_HEADER_FIELDS: Record<string, Check> = {
  firstSeq: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
};

const ENTRY_FIELDS: Record<string, Check> = {
  seq: isCount,
  ts: isTime,
  db: isStringOrNull,
  session: isStringOrNull,
  sql: isStringOrNull,
  ok: isBoolean,
  ms: isDuration,
};

const OPTIONAL_ENTRY_FIELDS: Record<string, Check> = {
  statements: isStatements,
  readonly: isBoolean,
  code: isInteger,
  class: isInteger,
  error: isString,
  statement: isCount,
  changes: isCount,
  clock: (v) => typeof v === 'number' && Number.isFinite(v),
  seed: isSeed,
  foreignKeys: oneOf('off'),
  reason: oneOf('client', 'expired', 'timeout', 'engine-lost', 'aborted', 'shutdown', 'revoked'),
  voids: (v) => Array.isArray(v) && v.length > 0 && v.every(isCount),
  tokenId: isString,
  tokenName: isString,
  client: isString,
  request: isString,
  exercise: isString,
  correct: isBoolean,
  from: isString,
  to: isCount,
  epoch: isCount,
};

/** Fields a kind cannot do without: replay needs them. */
const REQUIRED_BY_KIND: Record<EntryKind, string[]> = {
  exec: ['sql', 'statements'],
  begin: ['session'],
  commit: ['session'],
  rollback: ['session', 'reason'],
  createdb: ['db'],
  dropdb: ['db'],
  copydb: ['db', 'from'],
  resetdb: ['db', 'from'],
  restoredb: ['db', 'to'],
  void: ['voids'],
  refused: ['code', 'client', 'request'],
  attempt: ['exercise', 'sql', 'correct'],
};

/** The checks as parallel arrays, made once per table: every line of a long journal goes through them. */
interface CheckList {
  readonly fields: readonly string[];
  readonly checks: readonly Check[];
}
const checkLists = new WeakMap<Record<string, Check>, CheckList>();

function listOf(checks: Record<string, Check>): CheckList {
  let list = checkLists.get(checks);
  if (list === undefined) {
    list = { fields: Object.keys(checks), checks: Object.values(checks) };
    checkLists.set(checks, list);
  }
  return list;
}

function requireFields(value: Record<string, unknown>, checks: Record<string, Check>, optional: boolean): void {
  const { fields, checks: tests } = listOf(checks);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string;
    // JSON has no undefined: a field is present exactly when it reads as something else.
    const found = value[field];
    if (found === undefined) {
      if (optional) continue;
      throw new JournalLineError('shape', `"${field}" is missing`);
    }
    if (!(tests[i] as Check)(found)) throw new JournalLineError('shape', `"${field}" has the wrong type or value`);
  }
}

/** Every entry field's check by name, and how many of them an entry must have. */
const ENTRY_CHECKS = new Map<string, Check>([
  ...Object.entries(ENTRY_FIELDS),
  ...Object.entries(OPTIONAL_ENTRY_FIELDS),
]);
const REQUIRED_ENTRY_FIELDS: ReadonlySet<string> = new Set(Object.keys(ENTRY_FIELDS));

/**
 * Whether the entry passes requireFields for both tables, found by walking the
 * fields it has rather than looking up each field it may have: a lookup by a
 * name that varies is slow, and most of the optional fields are absent. False
 * says only that some check fails; requireFields then says which.
 */
function entryFieldsPass(value: Record<string, unknown>): boolean {
  let required = 0;
  for (const field in value) {
    const check = ENTRY_CHECKS.get(field);
    if (check === undefined) continue;
    if (!check(value[field])) return false;
    if (REQUIRED_ENTRY_FIELDS.has(field)) required++;
  }
  return required === REQUIRED_ENTRY_FIELDS.size;
}

function requireNonNull(value: Record<string, unknown>, fields: readonly string[], why: string): void {
  for (const field of fields) {
    if (value[field] === undefined || value[field] === null)
      throw new JournalLineError('shape', `"${field}" is required ${why}`);
  }
}

function validateLine(value: Record<string, unknown>): void {
  const kind = value['kind'];
  if (kind === 'header') {
    requireFields(value, HEADER_FIELDS, false);
    return requireFields(value, OPTIONAL_HEADER_FIELDS, true);
  }
  if (typeof kind !== 'string' || !(kind in REQUIRED_BY_KIND)) {
    throw new JournalLineError('shape', `unknown kind ${JSON.stringify(kind)}`);
  }
  if (!entryFieldsPass(value)) {
    // The checks in their declared order, for the error they name first.
    requireFields(value, ENTRY_FIELDS, false);
    requireFields(value, OPTIONAL_ENTRY_FIELDS, true);
  }
  requireNonNull(value, REQUIRED_BY_KIND[kind as EntryKind], `in a ${kind} entry`);
  // A failed batch is logged with its error; a successful exec needs its clock and seed to replay.
  if (value['ok'] === false) requireNonNull(value, ['error'], 'when ok is false');
  else if (kind === 'exec') requireNonNull(value, ['clock', 'seed'], 'in a successful exec entry');
}
