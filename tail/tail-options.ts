/** The follower's command line, read by the same parser as the server's and the replay tool's. */
import { asksForHelp, flagHelp, pathFrom, scanFlags } from '../src/config/command-line';
import { durationFlag, oneOfFlag, toggleFlag, unsetFlag, valueOrDefault } from '../src/config/flag-defaults';
import { OptionsError, parseBoolean, parseDuration, parsePositiveInteger, quote } from '../src/config/options-values';
import { ENTRY_KINDS, type EntryKind } from '../journal/record';
import type { EntryFilter } from './filter';

/** Where a follower without a cursor file begins. */
export type StartPoint = { seq: number } | { time: number } | 'end';

export interface TailOptions {
  readonly logFile: string;
  readonly start: StartPoint;
  readonly cursor: string | null;
  readonly filter: EntryFilter;
  readonly format: 'json' | 'text';
  readonly exec: string | null;
  readonly webhook: string | null;
  /** A JSONL file the entries are appended to, which is also the follower's place (out-file.ts). */
  readonly out: string | null;
  /** Further tries after a failed delivery; null = forever. */
  readonly retries: number | null;
  /** The first wait after a failed delivery; it doubles up to maxBackoffMs. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  /** How long one -exec run or -webhook request may take before it counts as failed. */
  readonly timeoutMs: number;
  readonly once: boolean;
  readonly pollMs: number;
}

const KINDS = ENTRY_KINDS;

const FORMATS = ['json', 'text'] as const;

/** The defaults here are what the parser takes and what -h shows (flag-defaults.ts). */
export const TAIL_FLAGS = Object.freeze({
  'log-file': unsetFlag('<journal>', null, {
    help: 'the active journal file (required); rotated siblings, gzipped or not, are read too',
  }),
  'from-seq': unsetFlag('<n>', null, { help: 'start at this seq (only when the cursor file does not exist yet)' }),
  'from-time': unsetFlag('<ISO time>', null, {
    help: 'start at the first entry written at or after this time (only when the cursor file does not exist yet)',
  }),
  cursor: unsetFlag('<file>', 'none: start where -from-* says', {
    help: 'keep the last handled seq here, and resume after it on start',
  }),
  out: unsetFlag('<file>', null, {
    help: 'append each entry to this JSONL file, synced; the file is its own cursor, so each entry is in it exactly once across restarts',
  }),
  class: unsetFlag('<n[,n]>', null, {
    help: 'only failed entries of these error classes (the thousands digit of the code)',
  }),
  code: unsetFlag('<n[,n]>', null, { help: 'only failed entries with these error codes' }),
  db: unsetFlag('<name[,name]>', null, {
    help: 'only entries of these databases (school and school.db both match school.db)',
  }),
  failed: toggleFlag(false, { help: 'only entries with ok=false' }),
  kind: unsetFlag(`<${KINDS.join('|')}[,...]>`, null, { help: 'only entries of these kinds' }),
  'token-name': unsetFlag('<name[,name]>', null, {
    help: 'only entries caused by these tokens, by name (alumno-05 matches ALUMNO-05 too); a name, never a secret',
  }),
  format: oneOfFlag(FORMATS, 'json', {
    help: 'the entry as JSON (without crc; what -exec, -webhook and -out always get), or, on stdout only, a line "ts seq db token code error"',
  }),
  exec: unsetFlag('<command>', null, {
    help: 'run this shell command per entry, the entry JSON on its stdin; exit 0 = delivered',
  }),
  webhook: unsetFlag('<url>', null, { help: 'POST the entry JSON to this URL; a 2xx answer = delivered' }),
  retries: unsetFlag('<n>', 'retry forever', { help: 'give up (exit 1) after this many failed retries of one entry' }),
  backoff: durationFlag(200, { help: 'the first wait after a failed delivery; it doubles each time' }),
  'max-backoff': durationFlag(30_000, { help: 'the longest wait between retries' }),
  timeout: durationFlag(30_000, { help: 'one -exec run or -webhook request that takes longer has failed' }),
  once: toggleFlag(false, { help: 'read to the current end of the journal and exit' }),
  poll: durationFlag(200, { help: 'how often to look for new lines' }),
});

export const TAIL_USAGE = [
  'Usage: npm run tail -- -log-file <journal> [flags]',
  '',
  'Follows a sqlscribe statement journal across rotations (compressed rotated files included) and',
  'delivers each entry that passes the filters, in seq order: as JSON lines on stdout, or to',
  '-exec or -webhook. With -cursor it resumes after the last entry it handled, so a restart',
  'neither skips nor repeats entries (except the one whose delivery a crash interrupted).',
  '',
  'Flags:',
  ...flagHelp(TAIL_FLAGS),
  '',
  'Exit codes: 0 done (-once) or stopped, 1 a delivery failed more than -retries times, 2 the',
  'command line or the journal is not usable.',
  '',
].join('\n');

/** A comma-separated list, each item through `convert`. */
function listOf<T>(convert: (text: string) => T): (text: string) => T[] {
  return (text) => text.split(',').map((item) => convert(item.trim()));
}

function parseCount(text: string): number {
  if (!/^\d+$/.test(text)) throw new OptionsError(`expected a non-negative integer, got ${quote(text)}`);
  return Number(text);
}

function parseKind(text: string): EntryKind {
  if (!(KINDS as readonly string[]).includes(text))
    throw new OptionsError(`expected one of ${KINDS.join(', ')}, got ${quote(text)}`);
  return text as EntryKind;
}

function parseName(text: string): string {
  if (text === '') throw new OptionsError('expected a database name, got ""');
  return text;
}

function parseTokenName(text: string): string {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(text))
    throw new OptionsError(`expected a token name (1 to 64 of A-Z a-z 0-9 _ . -), got ${quote(text)}`);
  return text;
}

function parseTime(text: string): number {
  const time = Date.parse(text);
  if (Number.isNaN(time))
    throw new OptionsError(`expected an ISO time such as 2026-11-21T10:15:00Z, got ${quote(text)}`);
  return time;
}

function parseFormat(text: string): 'json' | 'text' {
  if (text !== 'json' && text !== 'text') throw new OptionsError(`expected json or text, got ${quote(text)}`);
  return text;
}

function parseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionsError(`expected an http:// or https:// URL, got ${quote(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OptionsError(`expected an http:// or https:// URL, got ${quote(text)}`);
  return text;
}

function parseCommand(text: string): string {
  if (text.trim() === '') throw new OptionsError('expected a command, got ""');
  return text;
}

function positiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new OptionsError(`expected a duration above zero, got ${quote(text)}`);
  return ms;
}

function readFilter(raw: ReturnType<typeof scanFlags>): EntryFilter {
  return {
    classes: valueOrDefault(raw, TAIL_FLAGS, 'class', listOf(parseCount)),
    codes: valueOrDefault(raw, TAIL_FLAGS, 'code', listOf(parseCount)),
    dbs: valueOrDefault(raw, TAIL_FLAGS, 'db', listOf(parseName)),
    failed: valueOrDefault(raw, TAIL_FLAGS, 'failed', parseBoolean),
    kinds: valueOrDefault(raw, TAIL_FLAGS, 'kind', listOf(parseKind)),
    tokenNames: valueOrDefault(raw, TAIL_FLAGS, 'token-name', listOf(parseTokenName)),
  };
}

function readStart(raw: ReturnType<typeof scanFlags>): StartPoint {
  const seq = valueOrDefault(raw, TAIL_FLAGS, 'from-seq', parsePositiveInteger);
  const time = valueOrDefault(raw, TAIL_FLAGS, 'from-time', parseTime);
  if (seq !== null && time !== null) throw new OptionsError('-from-seq and -from-time cannot be used together');
  if (seq !== null) return { seq };
  return time === null ? 'end' : { time };
}

/** @throws OptionsError with a one-line message naming the flag at fault. */
export function parseTailOptions(argv: readonly string[], cwd: string): TailOptions | 'help' {
  if (asksForHelp(argv)) return 'help';
  const raw = scanFlags(argv, TAIL_FLAGS, 'tail');
  const resolve = pathFrom(cwd);
  const logFile = valueOrDefault(raw, TAIL_FLAGS, 'log-file', resolve);
  if (logFile === null) throw new OptionsError('-log-file is required');
  const exec = valueOrDefault(raw, TAIL_FLAGS, 'exec', parseCommand);
  const webhook = valueOrDefault(raw, TAIL_FLAGS, 'webhook', parseUrl);
  if (exec !== null && webhook !== null)
    throw new OptionsError(
      '-exec and -webhook cannot be used together: run one follower (with its own -cursor) per target',
    );
  const out = valueOrDefault(raw, TAIL_FLAGS, 'out', resolve);
  if (out !== null && (exec !== null || webhook !== null))
    throw new OptionsError('-out cannot be used with -exec or -webhook: run one follower per target');
  if (out !== null && raw.has('cursor'))
    throw new OptionsError('-out keeps its own place (its last line): leave out -cursor');
  const format = valueOrDefault(raw, TAIL_FLAGS, 'format', parseFormat);
  // JSON is what every target gets, so saying so is no contradiction; text is only ever written to stdout.
  if (format === 'text' && out !== null)
    throw new OptionsError(
      '-format text applies to stdout only: -out always writes the entry JSON (leave out -format, or say -format json)',
    );
  if (format === 'text' && (exec !== null || webhook !== null))
    throw new OptionsError(
      '-format text applies to stdout only: -exec and -webhook always get the entry JSON (leave out -format, or say -format json)',
    );
  const backoffMs = valueOrDefault(raw, TAIL_FLAGS, 'backoff', positiveDuration);
  const maxBackoffMs = valueOrDefault(raw, TAIL_FLAGS, 'max-backoff', positiveDuration);
  if (maxBackoffMs < backoffMs) throw new OptionsError('-max-backoff must be at least -backoff');
  return Object.freeze({
    logFile,
    start: readStart(raw),
    cursor: valueOrDefault(raw, TAIL_FLAGS, 'cursor', resolve),
    filter: readFilter(raw),
    format,
    exec,
    webhook,
    out,
    retries: valueOrDefault(raw, TAIL_FLAGS, 'retries', parseCount),
    backoffMs,
    maxBackoffMs,
    timeoutMs: valueOrDefault(raw, TAIL_FLAGS, 'timeout', positiveDuration),
    once: valueOrDefault(raw, TAIL_FLAGS, 'once', parseBoolean),
    pollMs: valueOrDefault(raw, TAIL_FLAGS, 'poll', positiveDuration),
  });
}
