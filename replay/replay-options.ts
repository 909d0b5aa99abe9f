/** The replay tool's command line, Go-style like the server's (decisions §1). */
import path from 'node:path';
import { normalizeDatabaseName } from '../src/bus/database-directory';

export interface ReplayOptions {
  readonly logFile: string;
  readonly out: string;
  /** Only this database (normalized name, e.g. school.db). */
  readonly db: string | null;
  /** Stop after this seq, or after entries written at or before this time. */
  readonly until: { seq: number } | { time: number } | null;
  readonly verify: string | null;
  readonly force: boolean;
}

export class ReplayUsageError extends Error {}

export const REPLAY_USAGE = `Usage: npm run replay -- -log-file <journal> -out <dir> [-db <name>] [-until <seq|ISO time>] [-verify <file|dir>] [-force]

Rebuilds databases from a sqlscribe statement journal (the file -log-file names and its rotated
siblings, compressed or not) into <dir>, which must hold no database yet.

  -log-file <journal>   the active journal file
  -out <dir>            where the rebuilt databases go
  -db <name>            rebuild only this database
  -until <seq|time>     stop at this seq, or at this ISO time (point-in-time restore)
  -verify <file|dir>    compare the rebuild with live database files; exit 1 at the first difference
  -force                replay a journal written by another better-sqlite3, SQLite or time zone

Exit codes: 0 done (and equal, with -verify), 1 the rebuild differs from the live files, 2 the
command line or the journal is not usable.
`;

const STRING_FLAGS = new Set(['log-file', 'out', 'db', 'until', 'verify']);

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
    if (!STRING_FLAGS.has(name) && name !== 'force') throw new ReplayUsageError(`unknown flag -${name}`);
    if (flags.has(name)) throw new ReplayUsageError(`-${name} given twice`);
    if (name === 'force') flags.set(name, true);
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
  return Object.freeze({
    logFile: path.resolve(cwd, logFile),
    out: path.resolve(cwd, out),
    db: db === null ? null : normalizeDatabaseName(db),
    until: until === null ? null : parseUntil(until),
    verify: verify === null ? null : path.resolve(cwd, verify),
    force: flags.get('force') === true,
  });
}
