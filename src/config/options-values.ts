/**
 * Parsers for the values of start-up flags: durations, sizes, integers,
 * booleans and listen addresses. Each throws an {@link OptionsError} whose
 * message says what was expected and quotes what was given; `options.ts`
 * prefixes it with the flag's name. Durations and sizes also have their
 * inverse, so that a default kept as a number is shown the way a user would
 * write it (`5s`, `10M`).
 */
import { isIP } from 'node:net';

/** A bad command line: the message is one line, printed on stderr before exit 2. */
export class OptionsError extends Error {
  override name = 'OptionsError';
}

/** Quotes a user-supplied value the same way in every message. */
export function quote(text: string): string {
  return JSON.stringify(text);
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
// 'ms' must be tried before 'm' and 's' (alternation is ordered).
const DURATION_TERM = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Parses a duration the way Go's `time.ParseDuration` does (without a sign):
 * `500ms`, `5s`, `2m`, `1h`, `1m30s`, `1.5s`, and the bare `0`.
 * @returns milliseconds, possibly fractional for `ns`/`us` terms.
 */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const bad = (): OptionsError =>
    new OptionsError(
      `expected a duration with a unit (ns, us, ms, s, m, h) such as 500ms, 5s or 1m30s, got ${quote(text)}`,
    );
  if (text === '') throw bad();
  let rest = text;
  let total = 0;
  while (rest !== '') {
    const m = DURATION_TERM.exec(rest);
    if (m === null) throw bad();
    total += Number(m[1]) * (DURATION_UNITS_MS[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  if (!Number.isFinite(total)) throw bad();
  // Round away floating-point noise (1.1 * 1000 = 1100.0000000000002) at nanosecond precision.
  return Math.round(total * 1e6) / 1e6;
}

const DURATION_PARTS: ReadonlyArray<readonly [string, number]> = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/**
 * Milliseconds as parseDuration reads them back: `5s`, `10m`, `1m30s`; zero
 * parts are left out. Whole milliseconds only (a default is never finer).
 */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a whole number of milliseconds: ${ms}`);
  if (ms === 0) return '0';
  let rest = ms;
  let text = '';
  for (const [unit, size] of DURATION_PARTS) {
    const whole = Math.floor(rest / size);
    if (whole > 0) text += `${whole}${unit}`;
    rest -= whole * size;
  }
  return text;
}

const SIZE_MULTIPLIERS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};
const SIZE = /^(\d+(?:\.\d+)?)([a-z]*)$/i;

/**
 * Parses a size in bytes: `1048576`, `512K`, `10M`, `1G`, also `KB`/`KiB`,
 * `MB`/`MiB`, `GB`/`GiB` (all binary multiples), case-insensitive. A fraction
 * (`1.5M`) is allowed and rounded down to whole bytes.
 */
export function parseSize(text: string): number {
  const m = SIZE.exec(text);
  const multiplier = m === null ? undefined : SIZE_MULTIPLIERS[(m[2] as string).toLowerCase()];
  if (m === null || multiplier === undefined) {
    throw new OptionsError(`expected a size in bytes, or with a unit K, M or G (e.g. 512K, 10M), got ${quote(text)}`);
  }
  const bytes = Math.floor(Number(m[1]) * multiplier);
  if (!Number.isSafeInteger(bytes)) throw new OptionsError(`size too large, got ${quote(text)}`);
  return bytes;
}

const SIZE_UNITS: ReadonlyArray<readonly [string, number]> = [
  ['G', 1024 ** 3],
  ['M', 1024 ** 2],
  ['K', 1024],
];

/** Bytes as parseSize reads them back: the largest unit that divides them (`10M`, `512K`), else plain bytes. */
export function formatSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`not a whole number of bytes: ${bytes}`);
  const unit = SIZE_UNITS.find(([, size]) => bytes > 0 && bytes % size === 0);
  return unit === undefined ? String(bytes) : `${bytes / unit[1]}${unit[0]}`;
}

/** Parses a decimal integer >= 1 (no sign, no exponent, no fraction). */
export function parsePositiveInteger(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new OptionsError(`expected a positive integer, got ${quote(text)}`);
  }
  return n;
}

const TRUE_WORDS = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Parses a boolean the way Go's `strconv.ParseBool` does (`true`, `false`, `1`, `0`, `t`, `f`, …). */
export function parseBoolean(text: string): boolean {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  throw new OptionsError(`expected true or false, got ${quote(text)}`);
}

/** A listen address: the host as `net.Server#listen` wants it (IPv6 without brackets). */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

const ADDRESS = /^(?:\[([^\][]+)\]|([^:[\]]*)):(\d{1,5})$/;

/**
 * Parses `host:port`, `:port` (all interfaces, i.e. `0.0.0.0`) or `[ipv6]:port`.
 * The port is 0..65535; 0 asks the system for any free port.
 */
export function parseAddress(text: string): ListenAddress {
  const m = ADDRESS.exec(text);
  if (m === null) {
    const hint = /^[^[].*:.*:/.test(text) ? ' (write an IPv6 host in brackets, e.g. [::1]:8080)' : '';
    throw new OptionsError(`expected host:port, :port or [ipv6]:port, got ${quote(text)}${hint}`);
  }
  const host = m[1] ?? m[2]!; // group 2 matches '' for ':port'
  if (/[\s/]/.test(host)) throw new OptionsError(`invalid host in ${quote(text)}`);
  const port = Number(m[3]);
  if (port > 65535) throw new OptionsError(`port must be 0..65535, got ${quote(text)}`);
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** A listen address as parseAddress reads it back (an IPv6 host in brackets). */
export function formatAddress(address: ListenAddress): string {
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions (`lgo` → `log` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** One entry of -trust-proxy: an address, or a network in CIDR form. */
export interface ProxyRange {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** What `loopback` stands for in -trust-proxy: a proxy on this machine. */
const LOOPBACK: readonly ProxyRange[] = [
  { address: '127.0.0.0', prefix: 8, family: 'ipv4' },
  { address: '::1', prefix: 128, family: 'ipv6' },
];

/**
 * Parses `-trust-proxy`: addresses and CIDR networks, IPv4 or IPv6, separated
 * by commas (`127.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`), and `loopback`.
 */
export function parseTrustedProxies(text: string): readonly ProxyRange[] {
  const ranges: ProxyRange[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    if (item === 'loopback') {
      ranges.push(...LOOPBACK);
      continue;
    }
    const [address = '', prefixText, extra] = item.split('/');
    const version = isIP(address);
    const width = version === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? width : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (version === 0 || extra !== undefined || !(prefix >= 0 && prefix <= width)) {
      throw new OptionsError(
        `expected addresses or networks such as 127.0.0.1, 10.0.0.0/8, ::1 or loopback, separated by commas, got ${quote(item)}`,
      );
    }
    ranges.push({ address, prefix, family: version === 6 ? 'ipv6' : 'ipv4' });
  }
  return Object.freeze(ranges);
}
