/**
 * The one command-line parser of every sqlscribe tool (the server and the
 * replay tool), Go-style: `-flag value`, `-flag=value`, `--flag` works too;
 * a boolean flag is bare or `-flag=true|false`. A missing value is reported
 * rather than swallowing the next flag as the value, and a typo is answered
 * with the closest flag. Each tool keeps only its table of flags and what
 * their values mean.
 */
import path from 'node:path';
import { editDistance, OptionsError, quote } from './options-values';

export interface FlagSpec {
  /** What the value looks like, e.g. `<path>`; null for a boolean flag, which takes no separate value. */
  readonly arg: string | null;
  readonly help: string;
  readonly default?: string;
}

export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** Each flag given, with the text of its value (`true` for a bare boolean). */
export type RawFlags = ReadonlyMap<string, string>;

const HELP_ARGS = new Set(['-h', '--h', '-help', '--help']);
const VERSION_ARGS = new Set(['-version', '--version']);

/** `-h` or `-help` anywhere before a `--`. */
export function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return argv.slice(0, end === -1 ? argv.length : end).some((arg) => HELP_ARGS.has(arg));
}

/** `-version` or `--version` anywhere before a `--`, and no `-h`: help, which lists -version, wins when both are given. */
export function asksForVersion(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return !asksForHelp(argv) && argv.slice(0, end === -1 ? argv.length : end).some((arg) => VERSION_ARGS.has(arg));
}

/** What `-version` prints: the tool's name and the package version, one line. */
export function versionLine(tool: string, version: string): string {
  return `${tool} ${version}\n`;
}

/** The help lines of a table: each flag, its value, what it does and its default. */
export function flagHelp(flags: FlagTable): string[] {
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(flags)) {
    lines.push(`  -${name}${spec.arg === null ? '' : ` ${spec.arg}`}`);
    lines.push(`        ${spec.help}${spec.default === undefined ? '' : ` (default ${spec.default})`}`);
  }
  lines.push('  -h, -help', '        print this help and exit');
  lines.push('  -version', '        print the version and exit');
  return lines;
}

/**
 * argv → the raw text of each flag, checked against `flags`.
 * `tool` names the program in the message for a stray argument.
 * @throws OptionsError with a one-line message naming the flag at fault.
 */
export function scanFlags(argv: readonly string[], flags: FlagTable, tool: string): RawFlags {
  const raw = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      const extra = argv[i + 1];
      if (extra !== undefined) throw positional(flags, tool, extra);
      break;
    }
    const m = /^(--?)([^-=][^=]*)(?:=([\s\S]*))?$/.exec(arg);
    if (m === null) throw positional(flags, tool, arg, argv[i - 1]);
    const [, dashes = '-', name = '', inline] = m;
    const spec = lookup(flags, dashes, name);
    if (raw.has(name)) throw new OptionsError(`-${name}: given more than once`);
    if (inline !== undefined || spec.arg === null) {
      raw.set(name, inline ?? 'true');
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined || isKnownFlag(flags, next)) {
      throw new OptionsError(`-${name}: missing value (usage: -${name} ${spec.arg})`);
    }
    raw.set(name, next);
    i++;
  }
  return raw;
}

/** A converter for path values: resolved against `cwd`; an empty path is refused rather than read as `cwd`. */
export function pathFrom(cwd: string): (text: string) => string {
  return (text) => {
    if (text === '') throw new OptionsError('expected a path, got ""');
    return path.resolve(cwd, text);
  };
}

/** The flag's value through `convert`, or `fallback` when it was not given; a conversion error names the flag. */
export function flagValue<T>(raw: RawFlags, name: string, convert: (text: string) => T, fallback: T): T {
  const text = raw.get(name);
  if (text === undefined) return fallback;
  try {
    return convert(text);
  } catch (err) {
    // Every converter throws an OptionsError saying what it expected; add whose value it was.
    throw new OptionsError(`-${name}: ${(err as Error).message}`);
  }
}

function positional(flags: FlagTable, tool: string, arg: string, previous?: string): OptionsError {
  // `-log-json false` is a classic slip: boolean flags take their value only after '='.
  const bool = previous === undefined ? undefined : /^--?([^=]+)$/.exec(previous)?.[1];
  if (bool !== undefined && has(flags, bool) && flags[bool]?.arg === null) {
    return new OptionsError(
      `unexpected argument ${quote(arg)}: write -${bool}=${arg} (a boolean flag takes no separate value)`,
    );
  }
  return new OptionsError(`unexpected argument ${quote(arg)}: ${tool} takes only flags (see -h)`);
}

function has(flags: FlagTable, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(flags, name);
}

function lookup(flags: FlagTable, dashes: string, name: string): FlagSpec {
  const spec = has(flags, name) ? flags[name] : undefined;
  if (spec !== undefined) return spec;
  const guess = suggest(flags, name);
  const hint = guess === null ? ' (see -h for the list)' : ` (did you mean -${guess}?)`;
  throw new OptionsError(`unknown flag ${dashes}${name}${hint}`);
}

/** The closest known flag within edit distance 2, if the typo is not most of the name. */
function suggest(flags: FlagTable, name: string): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const candidate of [...Object.keys(flags), 'help', 'version']) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance && distance < name.length) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function isKnownFlag(flags: FlagTable, arg: string): boolean {
  const m = /^--?([^=]+)/.exec(arg);
  return m !== null && (has(flags, m[1] as string) || HELP_ARGS.has(arg));
}
