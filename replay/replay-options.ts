/** The replay tool's command line, Go-style like the server's. */
import path from 'node:path';
import { normalizeDatabaseName } from '../src/services/database-directory';

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

export class ReplayUsageError extends Error {}

export const REPLAY_USAGE = `Usage: npm run replay -- -log-file <journal> -out <dir> [-db <name>] [-until <seq|ISO time>] [-verify <file|dir>] [-force]
       [-snapshot-dir <dir> | -no-snapshots]

Rebuilds databases from a sqlscribe statement journal (the file -log-file names and its rotated
siblings, compressed or not) into <dir>, which must hold no database yet. It starts from the newest
snapshot at or before the target, when there is one, and applies the journal after it.

  -log-file <journal>   the active journal file
  -out <dir>            where the rebuilt databases go
  -db <name>            rebuild only this database
  -until <seq|time>     stop at this seq, or at this ISO time (point-in-time restore)
  -verify <file|dir>    compare the rebuild with live database files; exit 1 at the first difference
  -force                replay a journal written by another better-sqlite3, SQLite or time zone
  -snapshot-dir <dir>   where the server's snapshots are (default: snapshots beside the journal file)
  -no-snapshots         ignore snapshots: rebuild from the journal alone (it must start at seq 1)

Exit codes: 0 done (and equal, with -verify), 1 the rebuild differs from the live files, 2 the
command line or the journal is not usable, or the target is older than what is kept.
`;

const STRING_FLAGS = new Set(['log-file', 'out', 'db', 'until', 'verify', 'snapshot-dir']);
const BOOLEAN_FLAGS = new Set(['force', 'no-snapshots']);

function parseUntil(text: string): { seq: number } | { time: number } {
  if (/^\d+$/.test(text)) return { seq: Number(text) };
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new ReplayUsageError(`-until: expected a seq or an ISO time, got "${text}"`);
  return { time };
}

function readFlags(argv: readonly string[]): Map<string, string | true> {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const match = /^--?([a-z-]+)(?:=(.*))?$/.exec(argv[i] as string);
    if (!match) throw new ReplayUsageError(`unexpected argument "${argv[i]}"`);
    const [, name = '', inline] = match;
    if (name === 'h' || name === 'help') return new Map([['help', true]]);
    if (!STRING_FLAGS.has(name) && !BOOLEAN_FLAGS.has(name)) throw new ReplayUsageError(`unknown flag -${name}`);
    if (flags.has(name)) throw new ReplayUsageError(`-${name} given twice`);
    if (BOOLEAN_FLAGS.has(name)) flags.set(name, true);
    else if (inline !== undefined) flags.set(name, inline);
    else if (i + 1 < argv.length) flags.set(name, argv[++i] as string);
    else throw new ReplayUsageError(`-${name}: missing value`);
  }
  return flags;
}

export function parseReplayOptions(argv: readonly string[], cwd: string): ReplayOptions | 'help' {
  const flags = readFlags(argv);
  if (flags.has('help')) return 'help';
  const text = (name: string): string | null => {
    const value = flags.get(name);
    return typeof value === 'string' ? value : null;
  };
  const logFile = text('log-file');
  const out = text('out');
  if (logFile === null) throw new ReplayUsageError('-log-file is required');
  if (out === null) throw new ReplayUsageError('-out is required');
  const db = text('db');
  const until = text('until');
  const verify = text('verify');
  const snapshotDir = text('snapshot-dir');
  if (snapshotDir !== null && flags.has('no-snapshots')) throw new ReplayUsageError('-snapshot-dir and -no-snapshots cannot be used together');
  const resolvedLog = path.resolve(cwd, logFile);
  return Object.freeze({
    logFile: resolvedLog,
    out: path.resolve(cwd, out),
    db: db === null ? null : normalizeDatabaseName(db),
    until: until === null ? null : parseUntil(until),
    verify: verify === null ? null : path.resolve(cwd, verify),
    force: flags.get('force') === true,
    snapshotDir: flags.has('no-snapshots') ? null : path.resolve(cwd, snapshotDir ?? path.join(path.dirname(resolvedLog), 'snapshots')),
  });
}
