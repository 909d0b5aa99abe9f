/** The replay tool's command line: its flags, read by the same parser as the server's. */
import path from 'node:path';
import { asksForHelp, asksForVersion, flagHelp, flagValue, pathFrom, scanFlags } from '../src/config/command-line';
import { toggleFlag, typedFlag, unsetFlag, valueOrDefault } from '../src/config/flag-defaults';
import { normalizeDatabaseName } from '../src/database-names';
import { OptionsError, parseBoolean, quote } from '../src/config/options-values';

export interface ReplayOptions {
  readonly logFile: string;
  readonly out: string;
  /** Only this database (normalized name, e.g. school.db). */
  readonly db: string | null;
  /** Stop after this seq, or after entries written at or before this time. */
  readonly until: { seq: number } | { time: number } | null;
  readonly verify: string | null;
  readonly force: boolean;
  /** Where snapshot rounds are looked for; null with -no-snapshots (the journal alone, from seq 1). */
  readonly snapshotDir: string | null;
}

const snapshotsBeside = (journalFile: string): string => path.join(path.dirname(journalFile), 'snapshots');

/** The defaults here are what the parser takes and what -h shows (flag-defaults.ts). */
export const REPLAY_FLAGS = Object.freeze({
  'log-file': unsetFlag('<journal>', null, { help: 'the active journal file (required)' }),
  out: unsetFlag('<dir>', null, { help: 'where the rebuilt databases go; it must hold no database yet (required)' }),
  db: unsetFlag('<name>', 'every database', { help: 'rebuild only this database' }),
  until: unsetFlag('<seq|time>', 'the end of the journal', {
    help: 'stop at this seq, or at this ISO time (point-in-time restore)',
  }),
  verify: unsetFlag('<file|dir>', null, {
    help: 'compare the rebuild with live database files; exit 1 at the first difference',
  }),
  force: toggleFlag(false, { help: 'replay a journal written by another better-sqlite3, SQLite or time zone' }),
  /** Derived from -log-file. */
  'snapshot-dir': typedFlag(
    '<dir>',
    snapshotsBeside,
    { words: 'snapshots beside the journal file' },
    { help: "where the server's snapshots are" },
  ),
  'no-snapshots': toggleFlag(false, {
    help: 'ignore snapshots: rebuild from the journal alone (it must start at seq 1)',
  }),
});

export const REPLAY_USAGE = [
  'Usage: npm run replay -- -log-file <journal> -out <dir> [flags]',
  '',
  'Rebuilds databases from a sqlscribe statement journal (the file -log-file names and its rotated',
  'siblings, compressed or not) into <dir>. It starts from the newest snapshot at or before the',
  'target, when there is one, and applies the journal after it.',
  '',
  'Flags:',
  ...flagHelp(REPLAY_FLAGS),
  '',
  'Exit codes: 0 done (and equal, with -verify), 1 the rebuild differs from the live files, 2 the',
  'command line or the journal is not usable, or the target is older than what is kept.',
  '',
].join('\n');

function parseUntil(text: string): { seq: number } | { time: number } {
  if (/^\d+$/.test(text)) return { seq: Number(text) };
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new OptionsError(`expected a seq or an ISO time, got ${quote(text)}`);
  return { time };
}

/** @throws OptionsError (or the EngineError of a bad -db name) with a one-line message. */
export function parseReplayOptions(argv: readonly string[], cwd: string): ReplayOptions | 'help' | 'version' {
  if (asksForHelp(argv)) return 'help';
  if (asksForVersion(argv)) return 'version';
  const raw = scanFlags(argv, REPLAY_FLAGS, 'replay');
  const resolve = pathFrom(cwd);
  const logFile = flagValue<string | null>(raw, 'log-file', resolve, null);
  const out = flagValue<string | null>(raw, 'out', resolve, null);
  if (logFile === null) throw new OptionsError('-log-file is required');
  if (out === null) throw new OptionsError('-out is required');
  const noSnapshots = valueOrDefault(raw, REPLAY_FLAGS, 'no-snapshots', parseBoolean);
  const snapshotDir = flagValue<string | null>(raw, 'snapshot-dir', resolve, null);
  if (snapshotDir !== null && noSnapshots)
    throw new OptionsError('-snapshot-dir and -no-snapshots cannot be used together');
  return Object.freeze({
    logFile,
    out,
    db: valueOrDefault(raw, REPLAY_FLAGS, 'db', normalizeDatabaseName),
    until: valueOrDefault(raw, REPLAY_FLAGS, 'until', parseUntil),
    verify: valueOrDefault(raw, REPLAY_FLAGS, 'verify', resolve),
    force: valueOrDefault(raw, REPLAY_FLAGS, 'force', parseBoolean),
    snapshotDir: noSnapshots ? null : (snapshotDir ?? REPLAY_FLAGS['snapshot-dir'].fallback(logFile)),
  });
}
