/**
 * Start-up flags → one frozen {@link Config}.
 *
 * What the server's flags' values mean. Which flags there are and their
 * defaults are flag-table.ts's; scanning the command line is
 * command-line.ts's, shared with the replay tool. Each flag is interpreted
 * on its own (every check names it), then the combination is validated.
 * Later code takes only the resolved `Config`.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import {
  asksForHelp,
  asksForVersion,
  flagHelp,
  flagValue,
  scanFlags,
  versionLine,
  type RawFlags,
} from './command-line';
import { valueOrDefault, type ValueFlagName } from './flag-defaults';
import { LOG_LEVELS, SERVER_FLAGS, type LogLevel } from './flag-table';
import { version } from '../version';
import { readTokensFile, type FileToken } from './tokens-file';
import { MAX_DATABASE_MB, isDatabaseMb } from '../access/principal';
import {
  OptionsError,
  parseAddress,
  parseBoolean,
  parseDuration,
  parsePositiveInteger,
  parseSize,
  parseTrustedProxies,
  quote,
  type ProxyRange,
} from './options-values';

export { OptionsError, parseDuration, parseSize } from './options-values';

export type { LogLevel } from './flag-table';

/**
 * What the server runs with. Each field names the flag that sets it; what a
 * field holds when its flag is absent is written once, in SERVER_FLAGS
 * (flag-table.ts), from which the parser, `-h` and docs/flags.md all take it.
 */
export interface Config {
  /** -db gives single, else multi. */
  readonly mode: 'single' | 'multi';
  /** -db: absolute path of the single database (single mode), else null. */
  readonly dbFile: string | null;
  /** -dir: absolute, the data directory (multi mode), or `dirname(dbFile)` (single mode). */
  readonly dir: string;
  /** -addr: listen host; `:8080` means all interfaces, i.e. `0.0.0.0`. */
  readonly host: string;
  /** -addr: 0..65535; 0 = any free port. */
  readonly port: number;
  /** -token: turns on token authentication when not null. */
  readonly token: string | null;
  /** -tokens-file: its tokens, read and checked at start-up; null without the flag. */
  readonly fileTokens: readonly FileToken[] | null;
  /** -max-connections. */
  readonly maxConnections: number;
  /** -log-json. */
  readonly logJson: boolean;
  /** -trust-proxy: proxies whose Forwarded / X-Forwarded-For headers are believed about the client's address; empty: none. */
  readonly trustProxy: readonly ProxyRange[];
  /** -log-file: absolute path of the statement journal, or null when the server runs without one. */
  readonly logFile: string | null;
  /** -log-level. */
  readonly logLevel: LogLevel;
  /** -log-max-size, in bytes. */
  readonly logMaxSize: number;
  /** -log-fsync; always false without a journal, since there is nothing to sync. */
  readonly logFsync: boolean;
  /** -log-compress: gzip rotated journal files. */
  readonly logCompress: boolean;
  /** -snapshot-every: a snapshot round after this many journal entries, or this often; null: no snapshots. */
  readonly snapshotEvery: SnapshotEvery | null;
  /** -snapshot-dir: absolute, where snapshot rounds go; null without a journal. */
  readonly snapshotDir: string | null;
  /** -log-retain: rotated journal files a snapshot covers are removed when older than `ms`, or beyond the newest `files`; null: kept. */
  readonly logRetain: LogRetain | null;
  /** -query-timeout, in ms. */
  readonly queryTimeoutMs: number;
  /** -lock-timeout, in ms. */
  readonly lockTimeoutMs: number;
  /**
   * -restore-role: the least role that may restore a database (POST /dbs/{db}/restore):
   * `write` lets a student undo their own mistakes on their own databases,
   * `admin` keeps restores for the teacher.
   */
  readonly restoreRole: 'write' | 'admin';
  /** -restore-timeout: how long one restore's rebuild process may run before it is killed, in ms. */
  readonly restoreTimeoutMs: number;
  /** -restore-memory: the V8 heap of one restore's rebuild process, in bytes. */
  readonly restoreMemoryBytes: number;
  /** -session-timeout: idle time (ms) after which a transaction session is rolled back and closed. */
  readonly sessionTimeoutMs: number;
  /** -request-timeout: a whole request (an /exec batch, a session request), waiting for an engine included, in ms. */
  readonly requestTimeoutMs: number;
  /** -engines: engine processes for calls that run briefly. */
  readonly engines: number;
  /** -client-share: the most engine processes one client may hold at once, as a share of the pool. */
  readonly clientShare: number;
  /** -header-timeout: a client must send its request's headers within this (ms). */
  readonly headerTimeoutMs: number;
  /** -body-timeout: ...and the rest of the request (its body) within this after them (ms). */
  readonly bodyTimeoutMs: number;
  /** -idle-timeout: a kept-alive connection with no request is closed after this (ms). */
  readonly idleTimeoutMs: number;
  /** -max-body-bytes. */
  readonly maxBodyBytes: number;
  /** -max-result-rows. */
  readonly maxResultRows: number;
  /** -max-result-bytes: most bytes of rows one request may return, counted before serialization. */
  readonly maxResultBytes: number;
  /** -max-statements. */
  readonly maxStatements: number;
  /** -max-import-bytes: largest body POST /dbs/{db}/import takes (a script, a CSV or a .sqlite file). */
  readonly maxImportBytes: number;
  /** -import-timeout: the deadline (ms) of an import or export request, in place of -request-timeout. */
  readonly importTimeoutMs: number;
  /** -max-database-mb: the largest a database may grow through a token without maxDatabaseMb (MiB). */
  readonly maxDatabaseMb: number;
  /** -min-free-disk-mb: below this many free MiB on the data directory's disk, non-admin writes are refused; 0: never. */
  readonly minFreeDiskMb: number;
  /** -journal-feed: serve GET /journal on a server without -token (with a token, the token holder may always read it). */
  readonly journalFeed: boolean;
  /** -history-index: keep the journal index (`<journal>.index`) that GET /dbs/{db}/history reads; always false without a journal. */
  readonly historyIndex: boolean;
  /** -journal-heartbeat: a follower of GET /journal (event stream) gets a comment this often (ms) when nothing else is sent. */
  readonly journalHeartbeatMs: number;
  /** -journal-nats or -follow: where the journal is shipped (primary) or followed from (replica); null: the journal stays local. */
  readonly replication: ReplicationConfig | null;
}

/**
 * -journal-nats makes this server a primary that ships every chunk of its
 * journal to JetStream; -follow makes it a read-only replica of the stream.
 */
/** How to authenticate to NATS: a user and password, or a token. */
export type NatsAuth = { readonly user: string; readonly pass: string } | { readonly token: string };

/** Defaults, as for Config, are in SERVER_FLAGS. */
export interface ReplicationConfig {
  readonly role: 'primary' | 'replica';
  /** Client URLs of the JetStream servers, without credentials. */
  readonly servers: readonly string[];
  /** The credentials the URLs carried, if any. */
  readonly auth: NatsAuth | null;
  /** -journal-stream: the stream's name (its subject and lease bucket are named after it). */
  readonly stream: string;
  /** -journal-replicas: copies JetStream keeps of each message, when this server creates the stream. */
  readonly streamReplicas: number;
  /** -journal-timeout: how long (ms) a chunk may wait for JetStream's acknowledgement before the write fails. */
  readonly timeoutMs: number;
  /** -node: this server's name in the lease and in every chunk. */
  readonly node: string;
  /** -advertise: the URL clients reach this server at, which replicas name in their refusals; null: the listen address. */
  readonly advertise: string | null;
  /** -promote: a replica promotes itself once it has caught up at start. */
  readonly promote: boolean;
  /** -min-seq-wait: the longest (ms) a replica's read waits for X-Min-Seq to be applied. */
  readonly minSeqWaitMs: number;
}

export type SnapshotEvery = { readonly entries: number } | { readonly ms: number };
export type LogRetain = { readonly files: number } | { readonly ms: number };

/** Whether requests must carry a token: -token, -tokens-file or both. */
export function requiresTokens(config: Pick<Config, 'token' | 'fileTokens'>): boolean {
  return config.token !== null || config.fileTokens !== null;
}

/**
 * Whether the server serves what the journal holds — every statement's SQL
 * (GET /journal, /class, a database's history) and the exercises' solutions
 * and checks, which its entries carry — beyond what a token's rules allow.
 * With tokens, the tokens' rules decide (true here); without, whoever reaches
 * the port would read it all, so only with -journal-feed.
 */
export function servesJournalContents(config: Pick<Config, 'token' | 'fileTokens' | 'journalFeed'>): boolean {
  return requiresTokens(config) || config.journalFeed;
}

export type ParsedCommandLine =
  { kind: 'help'; usage: string } | { kind: 'version'; line: string } | { kind: 'config'; config: Config };

// setTimeout fires at once for delays above 2^31-1 ms, so a longer timeout would mean "none".
const MAX_DURATION_MS = 2 ** 31 - 1;

/** The help text printed by `-h`: every flag with its default. */
export function usage(): string {
  const lines = [
    'Usage: sqlscribe [flags]',
    '',
    'Serves SQLite databases over HTTP/JSON: one file (-db) or a directory of them (-dir).',
    'Flags are written -flag value or -flag=value; --flag works too. Use -flag=value when',
    'the value itself starts with a dash.',
    '',
    'Flags:',
  ];
  return [...lines, ...flagHelp(SERVER_FLAGS)].join('\n') + '\n';
}

/**
 * Parses the command line (without `node` and the script) against `cwd`.
 * @throws OptionsError with a one-line message naming the flag at fault.
 */
export function parseCommandLine(argv: readonly string[], cwd: string): ParsedCommandLine {
  if (asksForHelp(argv)) return { kind: 'help', usage: usage() };
  if (asksForVersion(argv)) return { kind: 'version', line: versionLine('sqlscribe', version) };
  return { kind: 'config', config: interpret(scanFlags(argv, SERVER_FLAGS, 'sqlscribe'), path.resolve(cwd)) };
}

// ── 2. Interpret: each flag on its own, every message naming it ──────────────

/** The flag's value through `convert`, or the table's default when it was not given. */
function read<N extends ValueFlagName<typeof SERVER_FLAGS>, T>(
  raw: RawFlags,
  name: N,
  convert: (text: string) => T,
): T | (typeof SERVER_FLAGS)[N]['fallback'] {
  return valueOrDefault(raw, SERVER_FLAGS, name, convert);
}

const nonEmpty = (text: string): string => {
  if (text === '') throw new OptionsError('expected a non-empty value');
  return text;
};

const durationMs = (text: string): number => {
  const ms = Math.round(parseDuration(text));
  if (ms < 1) throw new OptionsError(`expected a duration of at least 1ms, got ${quote(text)}`);
  if (ms > MAX_DURATION_MS) throw new OptionsError(`expected a duration of at most 596h, got ${quote(text)}`);
  return ms;
};

const positiveSize = (text: string): number => {
  const bytes = parseSize(text);
  if (bytes < 1) throw new OptionsError(`expected a size of at least 1 byte, got ${quote(text)}`);
  return bytes;
};

/** Less than this and Node itself cannot start a rebuild process. */
const MIN_RESTORE_MEMORY = 16 * 1024 * 1024;

const restoreMemory = (text: string): number => {
  const bytes = parseSize(text);
  if (bytes < MIN_RESTORE_MEMORY) throw new OptionsError(`expected a size of at least 16MB, got ${quote(text)}`);
  return bytes;
};

/** Engine processes for brief calls: a machine with more cores than this gains nothing from more. */
const databaseMb = (text: string): number => {
  const mb = parsePositiveInteger(text);
  if (!isDatabaseMb(mb)) throw new OptionsError(`expected at most ${MAX_DATABASE_MB} MiB, got ${quote(text)}`);
  return mb;
};

const freeDiskMb = (text: string): number => (text === '0' ? 0 : databaseMb(text));

const MAX_ENGINES = 64;

const engineCount = (text: string): number => {
  const count = parsePositiveInteger(text);
  if (count > MAX_ENGINES)
    throw new OptionsError(`expected at most ${MAX_ENGINES} engine processes, got ${quote(text)}`);
  return count;
};

/** A share: 0.5 or 50%, above 0 and at most 1. */
const fraction = (text: string): number => {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text);
  const share = m === null ? NaN : Number(m[1]) / (m[2] === '%' ? 100 : 1);
  if (!(share > 0 && share <= 1))
    throw new OptionsError(`expected a share above 0 and at most 1 (0.5 or 50%), got ${quote(text)}`);
  return share;
};

/** A bare integer counts (entries or files); anything else is a Go-style duration. */
function countOrDuration(text: string, minCount: number): { count: number } | { ms: number } {
  if (/^\d+$/.test(text)) {
    const count = Number(text);
    if (!Number.isSafeInteger(count) || count < minCount)
      throw new OptionsError(`expected a count of at least ${minCount} or a duration such as 10m, got ${quote(text)}`);
    return { count };
  }
  return { ms: durationMs(text) };
}

const snapshotEvery = (text: string): SnapshotEvery => {
  const every = countOrDuration(text, 1);
  return 'count' in every ? { entries: every.count } : every;
};

const logRetain = (text: string): LogRetain => {
  if (/^\d+$/.test(text)) return { files: (countOrDuration(text, 0) as { count: number }).count };
  // Retention can span weeks: no timer waits this long, so the 596h ceiling of timeouts does not apply.
  const ms = Math.round(parseDuration(text));
  if (ms < 1) throw new OptionsError(`expected a duration of at least 1ms or a count of files, got ${quote(text)}`);
  return { ms };
};

const logLevel = (text: string): LogLevel => {
  const level = LOG_LEVELS.find((l) => l === text);
  if (level === undefined) throw new OptionsError(`expected one of ${LOG_LEVELS.join(', ')}, got ${quote(text)}`);
  return level;
};

function interpret(raw: RawFlags, cwd: string): Config {
  const resolve = (text: string): string => path.resolve(cwd, nonEmpty(text));
  const address = read(raw, 'addr', parseAddress);
  const storage = resolveStorage(raw, resolve);
  const journal = resolveJournal(raw, resolve, storage);
  return Object.freeze({
    ...storage,
    host: address.host,
    port: address.port,
    token: read(raw, 'token', nonEmpty),
    fileTokens: read(raw, 'tokens-file', (text): readonly FileToken[] => Object.freeze(readTokensFile(resolve(text)))),
    maxConnections: read(raw, 'max-connections', parsePositiveInteger),
    logJson: read(raw, 'log-json', parseBoolean),
    trustProxy: read(raw, 'trust-proxy', parseTrustedProxies),
    ...journal,
    ...resolveSnapshots(raw, resolve, journal.logFile, journal.logLevel),
    queryTimeoutMs: read(raw, 'query-timeout', durationMs),
    lockTimeoutMs: read(raw, 'lock-timeout', durationMs),
    restoreRole: read(raw, 'restore-role', parseRestoreRole),
    restoreTimeoutMs: read(raw, 'restore-timeout', durationMs),
    restoreMemoryBytes: read(raw, 'restore-memory', restoreMemory),
    sessionTimeoutMs: read(raw, 'session-timeout', durationMs),
    requestTimeoutMs: read(raw, 'request-timeout', durationMs),
    engines: flagValue(raw, 'engines', engineCount, SERVER_FLAGS.engines.fallback(os.availableParallelism())),
    clientShare: read(raw, 'client-share', fraction),
    headerTimeoutMs: read(raw, 'header-timeout', durationMs),
    bodyTimeoutMs: read(raw, 'body-timeout', durationMs),
    idleTimeoutMs: read(raw, 'idle-timeout', durationMs),
    maxBodyBytes: read(raw, 'max-body-bytes', positiveSize),
    maxResultRows: read(raw, 'max-result-rows', parsePositiveInteger),
    maxResultBytes: read(raw, 'max-result-bytes', positiveSize),
    maxStatements: read(raw, 'max-statements', parsePositiveInteger),
    maxImportBytes: read(raw, 'max-import-bytes', positiveSize),
    importTimeoutMs: read(raw, 'import-timeout', durationMs),
    maxDatabaseMb: read(raw, 'max-database-mb', databaseMb),
    minFreeDiskMb: read(raw, 'min-free-disk-mb', freeDiskMb),
    journalFeed: read(raw, 'journal-feed', parseBoolean),
    journalHeartbeatMs: read(raw, 'journal-heartbeat', durationMs),
    historyIndex: journal.logFile !== null && read(raw, 'history-index', parseBoolean),
    replication: resolveReplication(raw, storage.dir, journal),
  });
}

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const streamName = (text: string): string => {
  if (!STREAM_NAME.test(text))
    throw new OptionsError(`expected 1 to 64 characters of A-Z, a-z, 0-9, _ and -, got ${quote(text)}`);
  return text;
};

/** The JetStream servers and, when a URL carried them, the credentials to connect with. */
interface NatsTarget {
  readonly servers: readonly string[];
  readonly auth: NatsAuth | null;
}

/** One server URL, its credentials taken out (the client takes them apart, and logs must not show them). */
function natsServer(server: string): { url: string; auth: NatsAuth | null } {
  const bad = (): OptionsError =>
    new OptionsError(
      `expected nats://host:port (or nats://user:password@host:port), got ${quote(server.replace(/\/\/[^@/]*@/, '//…@'))}`,
    );
  let parsed: URL;
  try {
    parsed = new URL(server.includes('://') ? server : `nats://${server}`);
  } catch {
    throw bad();
  }
  if (!['nats:', 'tls:'].includes(parsed.protocol) || parsed.hostname === '') throw bad();
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  const auth: NatsAuth | null = user === '' ? null : pass === '' ? { token: user } : { user, pass };
  return { url: `${parsed.protocol}//${parsed.host}`, auth };
}

/**
 * nats://host:port, several separated by commas (the nodes of a cluster); a
 * bare host:port gets nats://. nats://user:password@host:port or
 * nats://token@host:port authenticate; one set of credentials serves every node.
 */
const natsServers = (text: string): NatsTarget => {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new OptionsError('expected nats://host:port, several separated by commas');
  const servers = parts.map(natsServer);
  const auths = servers.flatMap(({ auth }) => (auth === null ? [] : [JSON.stringify(auth)]));
  if (new Set(auths).size > 1)
    throw new OptionsError('the URLs carry different credentials: give them once, on any one of them');
  return Object.freeze({
    servers: Object.freeze(servers.map(({ url }) => url)),
    auth: servers.find(({ auth }) => auth !== null)?.auth ?? null,
  });
};

const httpUrl = (text: string): string => {
  if (!/^https?:\/\/[^\s/]+/.test(text)) throw new OptionsError(`expected http://host:port, got ${quote(text)}`);
  return text.replace(/\/+$/, '');
};

const REPLICATION_FLAGS = ['journal-stream', 'journal-replicas', 'journal-timeout', 'node', 'advertise'] as const;

function resolveReplication(raw: RawFlags, dir: string, journal: JournalConfig): ReplicationConfig | null {
  if (raw.has('journal-nats') && raw.has('follow'))
    throw new OptionsError(
      '-journal-nats and -follow cannot be used together: a server ships its journal (primary) or follows one (replica)',
    );
  const role = raw.has('follow') ? 'replica' : raw.has('journal-nats') ? 'primary' : null;
  if (role === null) {
    for (const name of [...REPLICATION_FLAGS, 'promote', 'min-seq-wait']) {
      if (raw.has(name)) throw new OptionsError(`-${name}: needs -journal-nats (a primary) or -follow (a replica)`);
    }
    return null;
  }
  // Every entry goes to the stream: a journal that leaves writes out would make replicas that lack them.
  if (journal.logFile === null || journal.logLevel === 'none' || journal.logLevel === 'error') {
    throw new OptionsError(
      `-${role === 'replica' ? 'follow' : 'journal-nats'}: needs a journal that records every change (-log-level mod or all)`,
    );
  }
  if (role === 'primary') {
    for (const name of ['promote', 'min-seq-wait'])
      if (raw.has(name)) throw new OptionsError(`-${name}: only a replica (-follow) takes it`);
  }
  const target = flagValue<NatsTarget>(raw, role === 'replica' ? 'follow' : 'journal-nats', natsServers, {
    servers: [],
    auth: null,
  });
  return Object.freeze({
    role,
    servers: target.servers,
    auth: target.auth,
    stream: read(raw, 'journal-stream', streamName),
    streamReplicas: read(raw, 'journal-replicas', (text) => {
      const n = parsePositiveInteger(text);
      if (n > 5) throw new OptionsError(`expected 1 to 5 (JetStream keeps at most 5 copies), got ${quote(text)}`);
      return n;
    }),
    timeoutMs: read(raw, 'journal-timeout', durationMs),
    node: flagValue(raw, 'node', nonEmpty, SERVER_FLAGS.node.fallback(os.hostname(), dir)),
    advertise: read(raw, 'advertise', httpUrl),
    promote: read(raw, 'promote', parseBoolean),
    minSeqWaitMs: read(raw, 'min-seq-wait', durationMs),
  });
}

// ── 3. Validate the combination ───────────────────────────────────────────────

type Resolve = (text: string) => string;

function resolveStorage(raw: RawFlags, resolve: Resolve): Pick<Config, 'mode' | 'dbFile' | 'dir'> {
  if (raw.has('db') && raw.has('dir')) {
    throw new OptionsError('-db and -dir cannot be used together: -db serves one file, -dir a directory of databases');
  }
  const dbFile = read(raw, 'db', resolve);
  if (dbFile !== null) return { mode: 'single', dbFile, dir: path.dirname(dbFile) };
  return { mode: 'multi', dbFile: null, dir: flagValue(raw, 'dir', resolve, resolve(SERVER_FLAGS.dir.fallback)) };
}

type JournalConfig = Pick<Config, 'logFile' | 'logLevel' | 'logMaxSize' | 'logFsync' | 'logCompress'>;

/**
 * The journal is on unless asked off: an event-sourced service records its
 * events by default, in every mode, under the data directory (for -db, the
 * database file's directory). `-log-level none` without `-log-file` runs
 * with no journal at all.
 */
function resolveJournal(raw: RawFlags, resolve: Resolve, storage: Pick<Config, 'dir' | 'dbFile'>): JournalConfig {
  const { dir, dbFile } = storage;
  const level = read(raw, 'log-level', logLevel);
  const off = level === 'none' && !raw.has('log-file');
  const logFile = off ? null : flagValue(raw, 'log-file', resolve, SERVER_FLAGS['log-file'].fallback(dir));
  const logFsync = read(raw, 'log-fsync', parseBoolean);
  const logCompress = read(raw, 'log-compress', parseBoolean);
  if (logFile === null) {
    if (logCompress) throw new OptionsError('-log-compress: needs a journal; -log-level none turned it off');
    if (raw.has('log-max-size'))
      throw new OptionsError('-log-max-size: needs a journal; -log-level none turned it off');
    // Only an explicit -log-fsync asks for a journal: the default must not stop `-log-level none` from starting.
    if (raw.has('log-fsync') && logFsync)
      throw new OptionsError('-log-fsync: needs a journal; -log-level none turned it off');
  }
  if (logFile !== null && logFile === dbFile) {
    throw new OptionsError('-log-file: must not be the database file given to -db');
  }
  const logMaxSize = read(raw, 'log-max-size', positiveSize);
  // Without a journal there is nothing to sync, so the config says so.
  return { logFile, logLevel: level, logMaxSize, logFsync: logFile !== null && logFsync, logCompress };
}

type SnapshotConfig = Pick<Config, 'snapshotEvery' | 'snapshotDir' | 'logRetain'>;

function resolveSnapshots(raw: RawFlags, resolve: Resolve, logFile: string | null, level: LogLevel): SnapshotConfig {
  const every = read(raw, 'snapshot-every', snapshotEvery);
  const retain = read(raw, 'log-retain', logRetain);
  const dir = flagValue<string | null>(raw, 'snapshot-dir', resolve, null);
  // A snapshot is tagged with journal positions and completed by the journal: without one it restores nothing.
  const journaled = logFile !== null && (level === 'mod' || level === 'all');
  if (!journaled) {
    for (const name of ['snapshot-every', 'snapshot-dir', 'log-retain']) {
      if (raw.has(name))
        throw new OptionsError(
          `-${name}: needs a journal that records every change; run with the journal on (-log-level mod or all)`,
        );
    }
  }
  if (retain !== null && every === null) {
    throw new OptionsError('-log-retain: needs -snapshot-every: only journal files a snapshot covers are removed');
  }
  const snapshotDir = logFile === null ? null : (dir ?? SERVER_FLAGS['snapshot-dir'].fallback(logFile));
  return { snapshotEvery: every, snapshotDir, logRetain: retain };
}

function parseRestoreRole(text: string): 'write' | 'admin' {
  if (text === 'write' || text === 'admin') return text;
  throw new OptionsError(`-restore-role: expected write or admin, got ${quote(text)}`);
}
