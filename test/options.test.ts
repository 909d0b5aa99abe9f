import t from 'tap';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OptionsError, parseCommandLine, parseDuration, parseSize, usage, type Config } from '../src/config/options';

const CWD = path.resolve('/srv/app');
const MiB = 1024 * 1024;

function config(...argv: string[]): Config {
  const parsed = parseCommandLine(argv, CWD);
  if (parsed.kind !== 'config') throw new Error(`expected a config for ${argv.join(' ')}`);
  return parsed.config;
}

/** Asserts an OptionsError whose one-line message matches `pattern`. */
function rejects(tt: tap.Test, argv: string[], pattern: RegExp): void {
  tt.throws(() => parseCommandLine(argv, CWD), OptionsError, argv.join(' '));
  try {
    parseCommandLine(argv, CWD);
  } catch (err) {
    tt.match((err as Error).message, pattern, argv.join(' '));
    tt.notMatch((err as Error).message, /\n/, 'one line');
  }
}

t.test('returns the embedded defaults when no flag is given', async (t) => {
  t.same(config(), {
    mode: 'multi',
    dbFile: null,
    dir: path.join(CWD, 'data'),
    host: '127.0.0.1',
    port: 8080,
    token: null,
    fileTokens: null,
    maxConnections: 64,
    logJson: false,
    trustProxy: [],
    logFile: path.join(CWD, 'data', 'journal', 'statements.jsonl'),
    logLevel: 'mod',
    logMaxSize: 10 * MiB,
    logFsync: true,
    logCompress: false,
    snapshotEvery: null,
    snapshotDir: path.join(CWD, 'data', 'journal', 'snapshots'),
    logRetain: null,
    queryTimeoutMs: 5000,
    lockTimeoutMs: 5000,
    restoreRole: 'write',
    restoreTimeoutMs: 60_000,
    restoreMemoryBytes: 256 * 1024 * 1024,
    sessionTimeoutMs: 300_000,
    requestTimeoutMs: 30_000,
    engines: Math.max(2, os.availableParallelism() + 1),
    clientShare: 0.5,
    headerTimeoutMs: 5000,
    bodyTimeoutMs: 30_000,
    idleTimeoutMs: 5000,
    maxBodyBytes: MiB,
    maxResultRows: 10_000,
    maxResultBytes: 16 * MiB,
    maxStatements: 1000,
    maxImportBytes: 64 * MiB,
    importTimeoutMs: 600_000,
    maxDatabaseMb: 100,
    minFreeDiskMb: 256,
    journalFeed: false,
    journalHeartbeatMs: 15_000,
    historyIndex: true,
    replication: null,
  });
});

t.test('freezes the returned config', async (t) => {
  t.ok(Object.isFrozen(config('-db', 'a.db')));
});

t.test('serves one file in single-DB mode with -db', async (t) => {
  const c = config('-db', 'shop.db');
  t.match(c, {
    mode: 'single',
    dbFile: path.join(CWD, 'shop.db'),
    dir: CWD,
    logFile: path.join(CWD, 'journal', 'statements.jsonl'),
    logLevel: 'mod',
  });
  t.equal(config('-db', '/var/lib/x/one.db').dir, path.resolve('/var/lib/x'), 'absolute path kept');
});

t.test('serves a directory in multi-DB mode with -dir', async (t) => {
  t.match(config('-dir', 'dbs'), {
    mode: 'multi',
    dbFile: null,
    dir: path.join(CWD, 'dbs'),
    logFile: path.join(CWD, 'dbs', 'journal', 'statements.jsonl'),
  });
  t.equal(config('-dir', '../other').dir, path.resolve(CWD, '../other'), 'relative to cwd');
});

t.test('accepts -flag value, -flag=value, --flag value and --flag=value', async (t) => {
  for (const argv of [['-dir', 'd'], ['-dir=d'], ['--dir', 'd'], ['--dir=d']]) {
    t.equal(config(...argv).dir, path.join(CWD, 'd'), argv.join(' '));
  }
  t.equal(config('-token=a=b').token, 'a=b', 'only the first = splits');
  t.equal(config('-token=-starts-with-dash').token, '-starts-with-dash');
  t.equal(config('-token', '-not-a-flag').token, '-not-a-flag', 'an unknown dash word is a value');
});

t.test('rejects -db together with -dir', async (t) => {
  rejects(t, ['-db', 'a.db', '-dir', 'd'], /-db.*-dir/);
  rejects(t, ['--dir=d', '--db=a.db'], /-db.*-dir/);
});

t.test('parses -addr as host:port, :port and [ipv6]:port', async (t) => {
  t.match(config('-addr', 'localhost:3000'), { host: 'localhost', port: 3000 });
  t.match(config('-addr', ':8080'), { host: '0.0.0.0', port: 8080 });
  t.match(config('-addr', '[::1]:9000'), { host: '::1', port: 9000 });
  t.match(config('-addr', '0.0.0.0:0'), { host: '0.0.0.0', port: 0 }, 'port 0 = any free port');
});

t.test('rejects malformed addresses naming -addr', async (t) => {
  for (const bad of ['8080', 'localhost', 'host:', 'host:http', 'host:65536', '::1:8080', '[]:80', 'a b:80', '']) {
    rejects(t, ['-addr', bad], /^-addr: /);
  }
});

t.test('sets the token and rejects an empty one', async (t) => {
  t.equal(config('-token', 's3cret').token, 's3cret');
  rejects(t, ['-token='], /^-token: /);
  rejects(t, ['-token', ''], /^-token: /);
});

t.test('parses the integer limits', async (t) => {
  t.match(config('-max-connections', '8', '-max-result-rows', '50', '-max-statements', '007'), {
    maxConnections: 8,
    maxResultRows: 50,
    maxStatements: 7,
  });
});

t.test('parses the import limits', async (t) => {
  t.match(config('-max-import-bytes', '2M', '-import-timeout', '90s'), {
    maxImportBytes: 2 * 1024 * 1024,
    importTimeoutMs: 90_000,
  });
  rejects(t, ['-max-import-bytes', '0'], /^-max-import-bytes: /);
});

t.test("parses a restore's bounds; a heap too small for Node to start is refused", async (t) => {
  t.match(config('-restore-timeout', '90s', '-restore-memory', '64M'), {
    restoreTimeoutMs: 90_000,
    restoreMemoryBytes: 64 * 1024 * 1024,
  });
  rejects(t, ['-restore-memory', '8M'], /^-restore-memory: expected a size of at least 16MB, got "8M"$/);
  rejects(t, ['-restore-timeout', '0'], /^-restore-timeout: /);
});

t.test('parses the database size bound and the disk headroom', async (t) => {
  t.match(config('-max-database-mb', '2048', '-min-free-disk-mb', '0'), { maxDatabaseMb: 2048, minFreeDiskMb: 0 });
  rejects(t, ['-max-database-mb', '0'], /^-max-database-mb: expected a positive integer/);
  rejects(t, ['-max-database-mb', '2000000'], /^-max-database-mb: expected at most 1048576 MiB/);
  rejects(t, ['-min-free-disk-mb', '-1'], /^-min-free-disk-mb: /);
});

t.test('rejects non-integer, negative and zero limits naming the flag', async (t) => {
  rejects(t, ['-max-connections', 'abc'], /^-max-connections: expected a positive integer, got "abc"$/);
  for (const flag of ['-max-connections', '-max-result-rows', '-max-statements']) {
    for (const bad of ['0', '-3', '1.5', '1e3', '+4', ' 4', '99999999999999999999']) {
      rejects(t, [`${flag}=${bad}`], new RegExp(`^${flag}: expected a positive integer`));
    }
  }
});

t.test('parses boolean flags bare or with =true|false', async (t) => {
  t.equal(config('-log-json').logJson, true);
  t.equal(config('--log-json').logJson, true);
  t.equal(config('-log-json=true').logJson, true);
  t.equal(config('-log-json=false').logJson, false);
  t.equal(config('-log-json=1').logJson, true, 'Go strconv.ParseBool words');
  t.equal(config('-log-fsync').logFsync, true);
  t.equal(config('-db', 'a.db', '-log-json', '-token', 'x').token, 'x', 'bare boolean does not eat the next flag');
});

t.test('rejects bad boolean values and a separate boolean value', async (t) => {
  rejects(t, ['-log-json=yes'], /^-log-json: expected true or false/);
  rejects(t, ['-log-json', 'false'], /-log-json=false/);
});

t.test('defaults the journal level to mod when -log-file is given', async (t) => {
  t.match(config('-db', 'a.db', '-log-file', 'j/s.jsonl'), {
    logFile: path.join(CWD, 'j', 's.jsonl'),
    logLevel: 'mod',
  });
  t.match(config('-log-file', '/tmp/s.jsonl'), {
    mode: 'multi',
    dir: path.join(CWD, 'data'),
    logFile: path.resolve('/tmp/s.jsonl'),
  });
  for (const level of ['none', 'error', 'mod', 'all']) {
    t.equal(config('-dir', 'd', '-log-file', 'j', '-log-level', level).logLevel, level);
  }
  t.match(
    config('-log-level', 'all'),
    { logFile: path.join(CWD, 'data', 'journal', 'statements.jsonl'), logLevel: 'all' },
    '-log-level alone keeps the embedded journal',
  );
});

t.test('journals in every mode unless -log-level none; rejects an unknown level', async (t) => {
  t.equal(config('-db', '/srv/x/a.db').logFile, '/srv/x/journal/statements.jsonl', '-db: beside the database file');
  t.equal(
    config('-dir', 'd', '-log-level', 'error').logFile,
    path.join(CWD, 'd', 'journal', 'statements.jsonl'),
    '-dir: under the data directory',
  );
  t.equal(config().logFile, path.join(CWD, 'data', 'journal', 'statements.jsonl'), 'neither: under ./data');
  t.match(
    config('-dir', 'd', '-log-level', 'none'),
    { logLevel: 'none', logFile: null, logFsync: false },
    'none without -log-file: no journal at all',
  );
  t.match(
    config('-dir', 'd', '-log-level', 'none', '-log-file', 'j'),
    { logLevel: 'none', logFile: path.join(CWD, 'j') },
    'none with -log-file: the file is kept, nothing written',
  );
  rejects(t, ['-log-level', 'debug'], /^-log-level: expected one of none, error, mod, all/);
  rejects(t, ['-log-level', 'MOD'], /^-log-level: /);
});

t.test('rejects journal tuning without a journal, and a journal on the database file', async (t) => {
  rejects(t, ['-db', 'a.db', '-log-level', 'none', '-log-max-size', '1M'], /^-log-max-size: .*-log-level none/);
  rejects(t, ['-db', 'a.db', '-log-level', 'none', '-log-fsync'], /^-log-fsync: .*-log-level none/);
  rejects(t, ['-db', 'a.db', '-log-level', 'none', '-log-compress'], /^-log-compress: .*-log-level none/);
  t.equal(config('-db', 'a.db', '-log-level', 'none', '-log-fsync=false').logFsync, false);
  rejects(t, ['-db', 'a.db', '-log-file', './a.db'], /^-log-file: /);
});

t.test('syncs the journal by default, and -log-fsync=false opts out', async (t) => {
  t.equal(config('-dir', 'd', '-log-file', 'j').logFsync, true, 'on by default with a journal');
  t.equal(config('-dir', 'd', '-log-file', 'j', '-log-fsync=false').logFsync, false);
  t.equal(config('-log-fsync=false').logFsync, false, 'the embedded journal can opt out too');
  t.equal(config('-dir', 'd').logFsync, true, 'the default journal of -dir syncs too');
  t.equal(
    config('-dir', 'd', '-log-level', 'none').logFsync,
    false,
    'no journal: nothing to sync, and the default does not refuse to start',
  );
  t.equal(config('-dir', 'd', '-log-file', 'j', '-log-level', 'none').logFsync, true);
});

t.test('parses -log-max-size and -max-body-bytes as sizes', async (t) => {
  t.match(config('-log-file', 'j', '-log-max-size', '512K', '-max-body-bytes', '2MiB'), {
    logMaxSize: 512 * 1024,
    maxBodyBytes: 2 * MiB,
  });
  rejects(t, ['-max-body-bytes', '0'], /^-max-body-bytes: /);
  rejects(t, ['-log-max-size=10X'], /^-log-max-size: /);
});

t.test('parses -query-timeout and -lock-timeout as durations in ms', async (t) => {
  t.match(config('-query-timeout', '1m30s', '-lock-timeout=250ms'), { queryTimeoutMs: 90_000, lockTimeoutMs: 250 });
  t.match(config('-session-timeout', '2s'), { sessionTimeoutMs: 2000 });
  t.match(config('-request-timeout', '1m'), { requestTimeoutMs: 60_000 });
  rejects(t, ['-request-timeout', '0'], /^-request-timeout: /);
  t.match(config('-header-timeout', '2s', '-body-timeout=1m', '-idle-timeout', '500ms'), {
    headerTimeoutMs: 2000,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: 500,
  });
  rejects(t, ['-header-timeout', '0'], /^-header-timeout: /);
  t.equal(config('-query-timeout', '1.5s').queryTimeoutMs, 1500);
  for (const bad of ['0', '0s', '5', 'abc', '-1s', '100us', '1000h']) {
    rejects(t, ['-query-timeout', bad], /^-query-timeout: /);
    rejects(t, [`-lock-timeout=${bad}`], /^-lock-timeout: /);
  }
});

t.test('parses -trust-proxy as addresses and networks, IPv4 and IPv6', async (t) => {
  t.same(config('-trust-proxy', '127.0.0.1,10.0.0.0/8, ::1,fd00::/8').trustProxy, [
    { address: '127.0.0.1', prefix: 32, family: 'ipv4' },
    { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
    { address: '::1', prefix: 128, family: 'ipv6' },
    { address: 'fd00::', prefix: 8, family: 'ipv6' },
  ]);
  t.same(config('-trust-proxy=loopback').trustProxy, [
    { address: '127.0.0.0', prefix: 8, family: 'ipv4' },
    { address: '::1', prefix: 128, family: 'ipv6' },
  ]);
  for (const bad of ['', 'proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/8', '10.0.0.0/x', '127.0.0.1,']) {
    t.throws(() => config('-trust-proxy', bad), /-trust-proxy/, JSON.stringify(bad));
  }
});

t.test('parses -client-share as a fraction or a percentage of the engines', async (t) => {
  t.equal(config('-client-share', '0.25').clientShare, 0.25);
  t.equal(config('-client-share=75%').clientShare, 0.75);
  t.equal(config('-client-share', '1').clientShare, 1);
  for (const bad of ['0', '0%', '1.5', '150%', 'half', '-0.5', ''])
    rejects(t, [`-client-share=${bad}`], /^-client-share: expected a share above 0 and at most 1/);
});

t.test('-engines defaults to one engine process per core and one more, and takes 1 to 64', async (t) => {
  t.equal(config().engines, Math.max(2, os.availableParallelism() + 1));
  t.equal(config('-engines', '1').engines, 1);
  t.equal(config('-engines=64').engines, 64);
  rejects(t, ['-engines=65'], /^-engines: expected at most 64 engine processes, got "65"/);
  for (const bad of ['0', '-1', '1.5', 'many', '']) rejects(t, [`-engines=${bad}`], /^-engines: /);
});

t.test('rejects an unknown flag, suggesting the nearest one', async (t) => {
  rejects(t, ['-lgo-json'], /^unknown flag -lgo-json \(did you mean -log-json\?\)$/);
  rejects(t, ['--max-conections=3'], /^unknown flag --max-conections \(did you mean -max-connections\?\)$/);
  rejects(t, ['-dbb', 'x'], /did you mean -db\?/);
  rejects(t, ['-verbose'], /^unknown flag -verbose(?!.*did you mean)/);
  rejects(t, ['-x'], /^unknown flag -x(?!.*did you mean)/);
  rejects(t, ['-constructor'], /^unknown flag -constructor/);
});

t.test('rejects positional arguments', async (t) => {
  rejects(t, ['data.db'], /unexpected argument "data.db"/);
  rejects(t, ['-db', 'a.db', 'extra'], /unexpected argument "extra"/);
  rejects(t, ['-'], /unexpected argument "-"/);
  rejects(t, ['--', 'x'], /unexpected argument "x"/);
  t.equal(config('-db', 'a.db', '--').mode, 'single', 'a bare -- at the end is fine');
});

t.test('rejects a flag missing its value', async (t) => {
  rejects(t, ['-db'], /^-db: missing value/);
  rejects(t, ['-dir', '-addr', ':80'], /^-dir: missing value/);
  rejects(t, ['-token', '--log-json'], /^-token: missing value/);
});

t.test('rejects a repeated flag', async (t) => {
  rejects(t, ['-db', 'a.db', '-db', 'b.db'], /^-db: given more than once/);
  rejects(t, ['-log-json', '--log-json=false'], /^-log-json: given more than once/);
});

t.test('returns the usage for -h, -help and --help', async (t) => {
  for (const argv of [['-h'], ['-help'], ['--help'], ['-db', 'a.db', '-h'], ['-nonsense', '--help']]) {
    t.same(parseCommandLine(argv, CWD), { kind: 'help', usage: usage() }, argv.join(' '));
  }
});

t.test('returns the version line for -version and --version; -h wins over it', async (t) => {
  const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as {
    version: string;
  };
  for (const argv of [['-version'], ['--version'], ['-db', 'a.db', '-version'], ['-nonsense', '--version']]) {
    t.same(parseCommandLine(argv, CWD), { kind: 'version', line: `sqlscribe ${version}\n` }, argv.join(' '));
  }
  t.same(
    parseCommandLine(['-version', '-h'], CWD),
    { kind: 'help', usage: usage() },
    'help lists -version, so it wins',
  );
  t.match(usage(), /^\s+-version\n\s+print the version and exit$/m, 'the usage lists -version');
  rejects(t, ['-verison'], /did you mean -version\?/);
});

t.test('lists every flag with its default in the usage', async (t) => {
  const text = usage();
  const flags = [
    'db',
    'dir',
    'addr',
    'token',
    'max-connections',
    'log-json',
    'log-file',
    'log-level',
    'log-max-size',
    'log-fsync',
    'log-compress',
    'query-timeout',
    'lock-timeout',
    'session-timeout',
    'request-timeout',
    'engines',
    'client-share',
    'header-timeout',
    'body-timeout',
    'idle-timeout',
    'max-body-bytes',
    'max-result-rows',
    'max-statements',
    'h',
  ];
  for (const flag of flags) t.match(text, new RegExp(`^  -${flag}\\b`, 'm'), flag);
  for (const def of [
    '127.0.0.1:8080',
    '(default 64)',
    '(default 5s)',
    '(default 10M)',
    '(default 1M)',
    '(default 10000)',
    '(default 1000)',
    'statements.jsonl',
  ])
    t.ok(text.includes(def), def);
});

t.test('converts Go durations to milliseconds', async (t) => {
  const cases: [string, number][] = [
    ['500ms', 500],
    ['5s', 5000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['1h2m3s4ms', 3_723_004],
    ['.5s', 500],
    ['1.1s', 1100],
    ['250us', 0.25],
    ['1500000ns', 1.5],
    ['0', 0],
  ];
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, text);
});

t.test('rejects malformed durations', async (t) => {
  for (const bad of [
    '',
    '5',
    '1.5',
    's',
    '5 s',
    '5sec',
    '-5s',
    '+5s',
    '1d',
    '5S',
    '1m30',
    'ms5',
    `${'9'.repeat(400)}h`,
  ]) {
    t.throws(() => parseDuration(bad), OptionsError, JSON.stringify(bad));
  }
});

t.test('converts sizes with binary units to bytes', async (t) => {
  const cases: [string, number][] = [
    ['1048576', MiB],
    ['512K', 524_288],
    ['512k', 524_288],
    ['10M', 10 * MiB],
    ['1G', 1024 * MiB],
    ['1KB', 1024],
    ['1kib', 1024],
    ['3MB', 3 * MiB],
    ['3MiB', 3 * MiB],
    ['2gb', 2048 * MiB],
    ['2GiB', 2048 * MiB],
    ['100b', 100],
    ['1.5M', 1.5 * MiB],
    ['0', 0],
  ];
  for (const [text, bytes] of cases) t.equal(parseSize(text), bytes, text);
});

t.test('rejects malformed sizes', async (t) => {
  for (const bad of ['', 'M', '-1', '1T', '10 M', '1e6', '10MBs', '0x10', '.5M', '99999999999G']) {
    t.throws(() => parseSize(bad), OptionsError, JSON.stringify(bad));
  }
});

t.test('parses -snapshot-every as a count of entries or a duration', async (t) => {
  t.same(config('-snapshot-every', '10000').snapshotEvery, { entries: 10_000 });
  t.same(config('-snapshot-every', '10m').snapshotEvery, { ms: 600_000 });
  t.same(config('-snapshot-every=1h30m').snapshotEvery, { ms: 5_400_000 });
  t.equal(config().snapshotEvery, null, 'off by default');
});

t.test('puts snapshots beside the journal unless -snapshot-dir says where', async (t) => {
  t.equal(config('-dir', 'd', '-log-file', 'j/s.jsonl').snapshotDir, path.join(CWD, 'j', 'snapshots'));
  t.equal(config('-snapshot-dir', 'snaps', '-snapshot-every', '5').snapshotDir, path.join(CWD, 'snaps'));
  t.equal(
    config('-dir', 'd').snapshotDir,
    path.join(CWD, 'd', 'journal', 'snapshots'),
    'the default journal has them beside it too',
  );
  t.equal(config('-dir', 'd', '-log-level', 'none').snapshotDir, null, 'no journal, no snapshots');
});

t.test('parses -log-retain as a duration or a count of rotated files', async (t) => {
  t.same(
    config('-snapshot-every', '100', '-log-retain', '168h').logRetain,
    { ms: 168 * 3_600_000 },
    'longer than any timer may wait',
  );
  t.same(config('-snapshot-every', '100', '-log-retain', '3').logRetain, { files: 3 });
  t.same(config('-snapshot-every', '100', '-log-retain', '0').logRetain, { files: 0 }, 'keep no covered file');
  t.equal(config().logRetain, null, 'keeps everything by default');
});

t.test('rejects bad snapshot and retention values naming the flag', async (t) => {
  rejects(t, ['-snapshot-every', '0'], /^-snapshot-every: expected a count of at least 1 or a duration/);
  rejects(t, ['-snapshot-every', '7d'], /^-snapshot-every: expected a duration/);
  rejects(t, ['-snapshot-every', '-5'], /-snapshot-every/);
  rejects(t, ['-snapshot-every', '10', '-log-retain', '1w'], /^-log-retain: expected a duration/);
  rejects(t, ['-snapshot-every', '10', '-snapshot-dir='], /^-snapshot-dir: expected a non-empty value/);
});

t.test('rejects snapshots and retention without a journal, and retention without snapshots', async (t) => {
  rejects(t, ['-dir', 'd', '-log-level', 'none', '-snapshot-every', '10'], /^-snapshot-every: needs a journal/);
  rejects(
    t,
    ['-log-file', 'j.jsonl', '-log-level', 'error', '-snapshot-every', '10'],
    /^-snapshot-every: needs a journal that records every change/,
  );
  rejects(t, ['-dir', 'd', '-log-level', 'none', '-snapshot-dir', 's'], /^-snapshot-dir: needs a journal/);
  rejects(t, ['-log-retain', '3'], /^-log-retain: needs -snapshot-every/);
});
