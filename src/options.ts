/**
 * Start-up flags → one frozen {@link Config}.
 *
 * The server's flags and what their values mean; scanning the command line
 * is command-line.ts's, shared with the replay tool. Each flag is interpreted
 * on its own (every check names it), then the combination is validated.
 * Later code takes only the resolved `Config`.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { asksForHelp, asksForVersion, flagHelp, flagValue, scanFlags, versionLine, type FlagTable, type RawFlags } from './command-line';
import { version } from './version';
import { readTokensFile, type FileToken } from './access/tokens-file';
import {
  OptionsError, parseAddress, parseBoolean, parseDuration, parsePositiveInteger, parseSize, parseTrustedProxies, quote, type ProxyRange,
} from './options-values';

export { OptionsError, parseDuration, parseSize } from './options-values';

export type LogLevel = 'none' | 'error' | 'mod' | 'all';

export interface Config {
  readonly mode: 'single' | 'multi';
  /** Absolute path of the single database (single mode), else null. */
  readonly dbFile: string | null;
  /** Absolute: the data directory (multi mode), or `dirname(dbFile)` (single mode). @default `<cwd>/data` */
  readonly dir: string;
  /** Listen host; `:8080` means all interfaces, i.e. `0.0.0.0`. @default '127.0.0.1' */
  readonly host: string;
  /** 0..65535; 0 = any free port. @default 8080 */
  readonly port: number;
  /** Turns on token authentication when not null. @default null */
  readonly token: string | null;
  /** The tokens of -tokens-file, read and checked at start-up; null without the flag. @default null */
  readonly fileTokens: readonly FileToken[] | null;
  /** @default 64 */
  readonly maxConnections: number;
  /** @default false */
  readonly logJson: boolean;
  /** Proxies whose Forwarded / X-Forwarded-For headers are believed about the client's address; empty: none. @default [] */
  readonly trustProxy: readonly ProxyRange[];
  /** Absolute path of the statement journal, or null. */
  readonly logFile: string | null;
  /** @default 'mod' with a journal, else 'none' */
  readonly logLevel: LogLevel;
  /** Bytes. @default 10 MiB */
  readonly logMaxSize: number;
  /** @default false */
  readonly logFsync: boolean;
  /** Gzip rotated journal files. @default false */
  readonly logCompress: boolean;
  /** A snapshot round after this many journal entries, or this often; null: no snapshots. @default null */
  readonly snapshotEvery: SnapshotEvery | null;
  /** Absolute: where snapshot rounds go; null without a journal. @default `snapshots` beside the journal file */
  readonly snapshotDir: string | null;
  /** Rotated journal files a snapshot covers are removed when older than `ms`, or beyond the newest `files`. @default null: kept */
  readonly logRetain: LogRetain | null;
  /** @default 5000 */
  readonly queryTimeoutMs: number;
  /** @default 5000 */
  readonly lockTimeoutMs: number;
  /**
   * The least role that may restore a database (POST /dbs/{db}/restore):
   * `write` lets a student undo their own mistakes on their own databases,
   * `admin` keeps restores for the teacher. @default 'write'
   */
  readonly restoreRole: 'write' | 'admin';
  /**
   * Idle time after which a transaction session is rolled back and closed.
   * @default 300000
   */
  readonly sessionTimeoutMs: number;
  /** A whole request (an /exec batch, a session request), waiting for an engine included. @default 30000 */
  readonly requestTimeoutMs: number;
  /** The most engine processes one client may hold at once, as a share of the pool. @default 0.5 */
  readonly clientShare: number;
  /** A client must send its request's headers within this. @default 5000 */
  readonly headerTimeoutMs: number;
  /** ...and the rest of the request (its body) within this after them. @default 30000 */
  readonly bodyTimeoutMs: number;
  /** A kept-alive connection with no request is closed after this. @default 5000 */
  readonly idleTimeoutMs: number;
  /** @default 1 MiB */
  readonly maxBodyBytes: number;
  /** @default 10000 */
  readonly maxResultRows: number;
  /** Most bytes of rows one request may return, counted before serialization. @default 16 MiB */
  readonly maxResultBytes: number;
  /** @default 1000 */
  readonly maxStatements: number;
  /** Largest body POST /dbs/{db}/import takes (a script, a CSV or a .sqlite file). @default 64 MiB */
  readonly maxImportBytes: number;
  /** The deadline of an import or export request, in place of -request-timeout. @default 600000 */
  readonly importTimeoutMs: number;
  /** Serve GET /journal on a server without -token (with a token, the token holder may always read it). @default false */
  readonly journalFeed: boolean;
  /** Keep the journal index (`<journal>.index`) that GET /dbs/{db}/history reads. @default true with a journal */
  readonly historyIndex: boolean;
  /** A follower of GET /journal (event stream) gets a comment this often when nothing else is sent. @default 15000 */
  readonly journalHeartbeatMs: number;
  /** Where the journal is shipped (primary) or followed from (replica); null: the journal stays local. @default null */
  readonly replication: ReplicationConfig | null;
}

/**
 * -journal-nats makes this server a primary that ships every chunk of its
 * journal to JetStream; -follow makes it a read-only replica of the stream.
 */
/** How to authenticate to NATS: a user and password, or a token. */
export type NatsAuth = { readonly user: string; readonly pass: string } | { readonly token: string };

export interface ReplicationConfig {
  readonly role: 'primary' | 'replica';
  /** Client URLs of the JetStream servers, without credentials. */
  readonly servers: readonly string[];
  /** The credentials the URLs carried, if any. */
  readonly auth: NatsAuth | null;
  /** The stream's name (its subject and lease bucket are named after it). @default 'sqlscribe' */
  readonly stream: string;
  /** Copies JetStream keeps of each message, when this server creates the stream. @default 1 */
  readonly streamReplicas: number;
  /** How long a chunk may wait for JetStream's acknowledgement before the write fails. @default 5000 */
  readonly timeoutMs: number;
  /** This server's name in the lease and in every chunk. @default `<hostname>:<data directory>` */
  readonly node: string;
  /** The URL clients reach this server at, which replicas name in their refusals. @default the listen address */
  readonly advertise: string | null;
  /** Replica: promote itself once it has caught up at start. @default false */
  readonly promote: boolean;
  /** Replica: the longest a read waits for X-Min-Seq to be applied. @default 5000 */
  readonly minSeqWaitMs: number;
}

export type SnapshotEvery = { readonly entries: number } | { readonly ms: number };
export type LogRetain = { readonly files: number } | { readonly ms: number };

/** Whether requests must carry a token: -token, -tokens-file or both. */
export function requiresTokens(config: Pick<Config, 'token' | 'fileTokens'>): boolean {
  return config.token !== null || config.fileTokens !== null;
}

export type ParsedCommandLine = { kind: 'help'; usage: string } | { kind: 'version'; line: string } | { kind: 'config'; config: Config };

const FLAGS: FlagTable = {
  db: { arg: '<file>', help: 'single-DB mode: serve this database file' },
  dir: { arg: '<directory>', help: 'multi-DB mode: serve the databases in this directory', default: './data' },
  addr: { arg: '<host:port>', help: 'listen address; :port listens on all interfaces, [::1]:port for IPv6', default: '127.0.0.1:8080' },
  token: { arg: '<value>', help: 'require this token (X-Service-Token or Authorization: Bearer)', default: 'none: no authentication' },
  'tokens-file': { arg: '<path>', help: 'personal tokens with roles, as JSON holding SHA-256 hashes (see docs/flags.md); read at start-up', default: 'none' },
  'max-connections': { arg: '<N>', help: 'ceiling of simultaneous client connections', default: '64' },
  'trust-proxy': { arg: '<address|CIDR,...>', help: 'believe Forwarded / X-Forwarded-For only from these peers (e.g. 127.0.0.1, 10.0.0.0/8, ::1, loopback)', default: 'none: the peer address is the client' },
  'log-json': { arg: null, help: 'write one JSON line per request to standard output', default: 'false' },
  'log-file': { arg: '<path>', help: 'statement journal (JSONL, rotated by size); -log-level none without it runs with no journal', default: '<data directory>/journal/statements.jsonl' },
  'log-level': { arg: '<none|error|mod|all>', help: 'what the journal records', default: 'mod' },
  'log-max-size': { arg: '<size>', help: 'rotate the journal at this size (bytes, or 512K, 10M, 1G)', default: '10M' },
  'log-fsync': { arg: null, help: 'sync the journal to disk before answering (concurrent requests share one sync); =false trades power-cut safety for speed', default: 'true with a journal' },
  'log-compress': { arg: null, help: 'gzip rotated journal files', default: 'false' },
  'log-retain': { arg: '<duration|count>', help: 'remove rotated journal files a snapshot covers, once older than this (168h) or beyond this many files', default: 'keep all' },
  'snapshot-every': { arg: '<count|duration>', help: 'copy changed databases after this many journal entries (10000) or this often (10m)', default: 'never' },
  'snapshot-dir': { arg: '<directory>', help: 'where snapshots go', default: 'snapshots beside the journal file' },
  'journal-nats': { arg: '<nats://host:port,...>', help: 'primary: ship every journal chunk to this JetStream (a write is acknowledged once JetStream has it too)', default: 'none: the journal stays local' },
  'journal-stream': { arg: '<name>', help: 'the JetStream stream of -journal-nats or -follow', default: 'sqlscribe' },
  'journal-replicas': { arg: '<N>', help: 'copies JetStream keeps of each message when this server creates the stream (3 on a three-node cluster)', default: '1' },
  'journal-timeout': { arg: '<duration>', help: 'a write fails (SQ9009) when JetStream has not acknowledged its chunk within this', default: '5s' },
  follow: { arg: '<nats://host:port,...>', help: 'run as a read-only replica of the journal stream at this JetStream', default: 'none' },
  promote: { arg: null, help: 'replica: take over as primary once caught up (POST /admin/promote does it later)', default: 'false' },
  'min-seq-wait': { arg: '<duration>', help: 'replica: the longest a read with X-Min-Seq waits for that seq', default: '5s' },
  node: { arg: '<name>', help: 'this server\'s name in the primary lease and in every shipped chunk', default: '<hostname>:<data directory>' },
  advertise: { arg: '<http://host:port>', help: 'the address clients reach this server at; replicas name the primary\'s in their refusals', default: 'the listen address' },
  'query-timeout': { arg: '<duration>', help: 'stop a statement that runs longer (500ms, 5s, 1m30s)', default: '5s' },
  'lock-timeout': { arg: '<duration>', help: 'how long a write waits for a database held by a session', default: '5s' },
  'restore-role': { arg: '<write|admin>', help: 'the least token role that may restore a database (POST /dbs/{db}/restore)', default: 'write' },
  'session-timeout': { arg: '<duration>', help: 'idle time after which a transaction session is rolled back', default: '5m' },
  'request-timeout': { arg: '<duration>', help: 'stop a whole request (batch or session request, queueing included) that takes longer', default: '30s' },
  'client-share': { arg: '<fraction>', help: 'most of the engine processes one client (address) may hold at once (0.5 or 50%)', default: '0.5' },
  'header-timeout': { arg: '<duration>', help: 'a client must send its request headers within this (else 408)', default: '5s' },
  'body-timeout': { arg: '<duration>', help: 'and the request body within this after them (else 408)', default: '30s' },
  'idle-timeout': { arg: '<duration>', help: 'close a kept-alive connection idle this long', default: '5s' },
  'max-body-bytes': { arg: '<size>', help: 'largest accepted request body', default: '1M' },
  'max-result-bytes': { arg: '<size>', help: 'most bytes of rows one request returns; the rest is cut (truncated: true)', default: '16M' },
  'max-result-rows': { arg: '<N>', help: 'most rows one statement may return', default: '10000' },
  'max-statements': { arg: '<N>', help: 'most statements in one /exec batch', default: '1000' },
  'max-import-bytes': { arg: '<size>', help: 'largest body POST /dbs/{db}/import takes (.sql, .csv or .sqlite)', default: '64M' },
  'import-timeout': { arg: '<duration>', help: 'stop an import or export request that takes longer (instead of -request-timeout)', default: '10m' },
  'journal-feed': { arg: null, help: 'serve GET /journal without -token (to every client that reaches the server); with -token it needs the token', default: 'false' },
  'history-index': { arg: null, help: 'keep the journal index beside the journal (<journal>.index) that GET /dbs/{db}/history reads; =false: no index, no history', default: 'true with a journal' },
  'journal-heartbeat': { arg: '<duration>', help: 'comment sent to GET /journal event-stream followers this often, so that proxies keep them open', default: '15s' },
};
const LOG_LEVELS: readonly LogLevel[] = ['none', 'error', 'mod', 'all'];
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
  return [...lines, ...flagHelp(FLAGS)].join('\n') + '\n';
}

/**
 * Parses the command line (without `node` and the script) against `cwd`.
 * @throws OptionsError with a one-line message naming the flag at fault.
 */
export function parseCommandLine(argv: readonly string[], cwd: string): ParsedCommandLine {
  if (asksForHelp(argv)) return { kind: 'help', usage: usage() };
  if (asksForVersion(argv)) return { kind: 'version', line: versionLine('sqlscribe', version) };
  return { kind: 'config', config: interpret(scanFlags(argv, FLAGS, 'sqlscribe'), path.resolve(cwd)) };
}

// ── 2. Interpret: each flag on its own, every message naming it ──────────────

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

/** A share: 0.5 or 50%, above 0 and at most 1. */
const fraction = (text: string): number => {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text);
  const share = m === null ? NaN : Number(m[1]) / (m[2] === '%' ? 100 : 1);
  if (!(share > 0 && share <= 1)) throw new OptionsError(`expected a share above 0 and at most 1 (0.5 or 50%), got ${quote(text)}`);
  return share;
};

/** A bare integer counts (entries or files); anything else is a Go-style duration. */
function countOrDuration(text: string, minCount: number): { count: number } | { ms: number } {
  if (/^\d+$/.test(text)) {
    const count = Number(text);
    if (!Number.isSafeInteger(count) || count < minCount) throw new OptionsError(`expected a count of at least ${minCount} or a duration such as 10m, got ${quote(text)}`);
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
  if (level === undefined) throw new OptionsError(`expected one of none, error, mod, all, got ${quote(text)}`);
  return level;
};

function interpret(raw: RawFlags, cwd: string): Config {
  const resolve = (text: string): string => path.resolve(cwd, nonEmpty(text));
  const address = flagValue(raw, 'addr', parseAddress, { host: '127.0.0.1', port: 8080 });
  const storage = resolveStorage(raw, resolve, cwd);
  const journal = resolveJournal(raw, resolve, storage);
  return Object.freeze({
    ...storage,
    host: address.host,
    port: address.port,
    token: flagValue<string | null>(raw, 'token', nonEmpty, null),
    fileTokens: flagValue<readonly FileToken[] | null>(raw, 'tokens-file', (text) => Object.freeze(readTokensFile(resolve(text))), null),
    maxConnections: flagValue(raw, 'max-connections', parsePositiveInteger, 64),
    logJson: flagValue(raw, 'log-json', parseBoolean, false),
    trustProxy: flagValue<readonly ProxyRange[]>(raw, 'trust-proxy', parseTrustedProxies, []),
    ...journal,
    ...resolveSnapshots(raw, resolve, journal.logFile, journal.logLevel),
    queryTimeoutMs: flagValue(raw, 'query-timeout', durationMs, 5000),
    lockTimeoutMs: flagValue(raw, 'lock-timeout', durationMs, 5000),
    restoreRole: flagValue<'write' | 'admin'>(raw, 'restore-role', parseRestoreRole, 'write'),
    sessionTimeoutMs: flagValue(raw, 'session-timeout', durationMs, 300_000),
    requestTimeoutMs: flagValue(raw, 'request-timeout', durationMs, 30_000),
    clientShare: flagValue(raw, 'client-share', fraction, 0.5),
    headerTimeoutMs: flagValue(raw, 'header-timeout', durationMs, 5000),
    bodyTimeoutMs: flagValue(raw, 'body-timeout', durationMs, 30_000),
    idleTimeoutMs: flagValue(raw, 'idle-timeout', durationMs, 5000),
    maxBodyBytes: flagValue(raw, 'max-body-bytes', positiveSize, 1024 * 1024),
    maxResultRows: flagValue(raw, 'max-result-rows', parsePositiveInteger, 10_000),
    maxResultBytes: flagValue(raw, 'max-result-bytes', positiveSize, 16 * 1024 * 1024),
    maxStatements: flagValue(raw, 'max-statements', parsePositiveInteger, 1000),
    maxImportBytes: flagValue(raw, 'max-import-bytes', positiveSize, 64 * 1024 * 1024),
    importTimeoutMs: flagValue(raw, 'import-timeout', durationMs, 600_000),
    journalFeed: flagValue(raw, 'journal-feed', parseBoolean, false),
    journalHeartbeatMs: flagValue(raw, 'journal-heartbeat', durationMs, 15_000),
    historyIndex: journal.logFile !== null && flagValue(raw, 'history-index', parseBoolean, true),
    replication: resolveReplication(raw, storage.dir, journal),
  });
}

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const streamName = (text: string): string => {
  if (!STREAM_NAME.test(text)) throw new OptionsError(`expected 1 to 64 characters of A-Z, a-z, 0-9, _ and -, got ${quote(text)}`);
  return text;
};

/** The JetStream servers and, when a URL carried them, the credentials to connect with. */
interface NatsTarget {
  readonly servers: readonly string[];
  readonly auth: NatsAuth | null;
}

/** One server URL, its credentials taken out (the client takes them apart, and logs must not show them). */
function natsServer(server: string): { url: string; auth: NatsAuth | null } {
  const bad = (): OptionsError => new OptionsError(`expected nats://host:port (or nats://user:password@host:port), got ${quote(server.replace(/\/\/[^@/]*@/, '//…@'))}`);
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
  const parts = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (parts.length === 0) throw new OptionsError('expected nats://host:port, several separated by commas');
  const servers = parts.map(natsServer);
  const auths = servers.flatMap(({ auth }) => (auth === null ? [] : [JSON.stringify(auth)]));
  if (new Set(auths).size > 1) throw new OptionsError('the URLs carry different credentials: give them once, on any one of them');
  return Object.freeze({ servers: Object.freeze(servers.map(({ url }) => url)), auth: servers.find(({ auth }) => auth !== null)?.auth ?? null });
};

const httpUrl = (text: string): string => {
  if (!/^https?:\/\/[^\s/]+/.test(text)) throw new OptionsError(`expected http://host:port, got ${quote(text)}`);
  return text.replace(/\/+$/, '');
};

const REPLICATION_FLAGS = ['journal-stream', 'journal-replicas', 'journal-timeout', 'node', 'advertise'] as const;

function resolveReplication(raw: RawFlags, dir: string, journal: JournalConfig): ReplicationConfig | null {
  if (raw.has('journal-nats') && raw.has('follow')) throw new OptionsError('-journal-nats and -follow cannot be used together: a server ships its journal (primary) or follows one (replica)');
  const role = raw.has('follow') ? 'replica' : raw.has('journal-nats') ? 'primary' : null;
  if (role === null) {
    for (const name of [...REPLICATION_FLAGS, 'promote', 'min-seq-wait']) {
      if (raw.has(name)) throw new OptionsError(`-${name}: needs -journal-nats (a primary) or -follow (a replica)`);
    }
    return null;
  }
  // Every entry goes to the stream: a journal that leaves writes out would make replicas that lack them.
  if (journal.logFile === null || journal.logLevel === 'none' || journal.logLevel === 'error') {
    throw new OptionsError(`-${role === 'replica' ? 'follow' : 'journal-nats'}: needs a journal that records every change (-log-level mod or all)`);
  }
  if (role === 'primary') {
    for (const name of ['promote', 'min-seq-wait']) if (raw.has(name)) throw new OptionsError(`-${name}: only a replica (-follow) takes it`);
  }
  const target = flagValue<NatsTarget>(raw, role === 'replica' ? 'follow' : 'journal-nats', natsServers, { servers: [], auth: null });
  return Object.freeze({
    role,
    servers: target.servers,
    auth: target.auth,
    stream: flagValue(raw, 'journal-stream', streamName, 'sqlscribe'),
    streamReplicas: flagValue(raw, 'journal-replicas', (text) => {
      const n = parsePositiveInteger(text);
      if (n > 5) throw new OptionsError(`expected 1 to 5 (JetStream keeps at most 5 copies), got ${quote(text)}`);
      return n;
    }, 1),
    timeoutMs: flagValue(raw, 'journal-timeout', durationMs, 5000),
    node: flagValue(raw, 'node', nonEmpty, `${os.hostname()}:${dir}`),
    advertise: flagValue<string | null>(raw, 'advertise', httpUrl, null),
    promote: flagValue(raw, 'promote', parseBoolean, false),
    minSeqWaitMs: flagValue(raw, 'min-seq-wait', durationMs, 5000),
  });
}

// ── 3. Validate the combination ───────────────────────────────────────────────

type Resolve = (text: string) => string;

function resolveStorage(raw: RawFlags, resolve: Resolve, cwd: string): Pick<Config, 'mode' | 'dbFile' | 'dir'> {
  if (raw.has('db') && raw.has('dir')) {
    throw new OptionsError('-db and -dir cannot be used together: -db serves one file, -dir a directory of databases');
  }
  const dbFile = flagValue<string | null>(raw, 'db', resolve, null);
  if (dbFile !== null) return { mode: 'single', dbFile, dir: path.dirname(dbFile) };
  return { mode: 'multi', dbFile: null, dir: flagValue(raw, 'dir', resolve, path.join(cwd, 'data')) };
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
  const level = flagValue(raw, 'log-level', logLevel, 'mod');
  const off = level === 'none' && !raw.has('log-file');
  const logFile = off ? null : flagValue(raw, 'log-file', resolve, path.join(dir, 'journal', 'statements.jsonl'));
  const logFsync = flagValue(raw, 'log-fsync', parseBoolean, true);
  const logCompress = flagValue(raw, 'log-compress', parseBoolean, false);
  if (logFile === null) {
    if (logCompress) throw new OptionsError('-log-compress: needs a journal; -log-level none turned it off');
    if (raw.has('log-max-size')) throw new OptionsError('-log-max-size: needs a journal; -log-level none turned it off');
    // Only an explicit -log-fsync asks for a journal: the default must not stop `-log-level none` from starting.
    if (raw.has('log-fsync') && logFsync) throw new OptionsError('-log-fsync: needs a journal; -log-level none turned it off');
  }
  if (logFile !== null && logFile === dbFile) {
    throw new OptionsError('-log-file: must not be the database file given to -db');
  }
  const logMaxSize = flagValue(raw, 'log-max-size', positiveSize, 10 * 1024 * 1024);
  // Without a journal there is nothing to sync, so the config says so.
  return { logFile, logLevel: level, logMaxSize, logFsync: logFile !== null && logFsync, logCompress };
}

type SnapshotConfig = Pick<Config, 'snapshotEvery' | 'snapshotDir' | 'logRetain'>;

function resolveSnapshots(raw: RawFlags, resolve: Resolve, logFile: string | null, level: LogLevel): SnapshotConfig {
  const every = flagValue<SnapshotEvery | null>(raw, 'snapshot-every', snapshotEvery, null);
  const retain = flagValue<LogRetain | null>(raw, 'log-retain', logRetain, null);
  const dir = flagValue<string | null>(raw, 'snapshot-dir', resolve, null);
  // A snapshot is tagged with journal positions and completed by the journal: without one it restores nothing.
  const journaled = logFile !== null && (level === 'mod' || level === 'all');
  if (!journaled) {
    for (const name of ['snapshot-every', 'snapshot-dir', 'log-retain']) {
      if (raw.has(name)) throw new OptionsError(`-${name}: needs a journal that records every change; run with the journal on (-log-level mod or all)`);
    }
  }
  if (retain !== null && every === null) {
    throw new OptionsError('-log-retain: needs -snapshot-every: only journal files a snapshot covers are removed');
  }
  const snapshotDir = logFile === null ? null : dir ?? path.join(path.dirname(logFile), 'snapshots');
  return { snapshotEvery: every, snapshotDir, logRetain: retain };
}

function parseRestoreRole(text: string): 'write' | 'admin' {
  if (text === 'write' || text === 'admin') return text;
  throw new OptionsError(`-restore-role: expected write or admin, got ${quote(text)}`);
}
