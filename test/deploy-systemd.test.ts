/**
 * deploy/systemd/sqlscribe.service: systemd accepts it (systemd-analyze
 * verify, with the binary it starts pointed at one that exists here), its
 * hardening scores as systemd's own audit wants it, and what it relies on
 * holds: the server started with the unit's own command line, as
 * `node dist/src/main.js` (never `npm start`), answers a request in flight
 * after SIGTERM and exits 0 well within TimeoutStopSec.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MAIN, SERVER_ENVIRONMENT, SERVER_NODE_FLAGS, startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { ROOT, UNIT, missingTool, timeSpanSeconds, unitSettings, writeAdminTokensFile } from './helpers/deploy-files';
import { sleep } from './helpers/wait';

t.setTimeout(120_000);

const text = fs.readFileSync(UNIT, 'utf8');
const settings = unitSettings(text);

/** The unit with /usr/bin/node and /opt/sqlscribe replaced by this checkout's node and directory. */
function renderUnit(dir: string): string {
  const file = path.join(dir, 'sqlscribe.service');
  fs.writeFileSync(file, text.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/sqlscribe', ROOT));
  return file;
}

t.test('systemd-analyze verify accepts the unit, without a warning', async (tt) => {
  const missing = missingTool('systemd-analyze', 'systemd');
  if (missing !== undefined) return void tt.fail(missing);
  const run = spawnSync('systemd-analyze', ['verify', renderUnit(scratchDir(tt))], { encoding: 'utf8' });
  tt.equal(run.status, 0, run.stderr);
  // verify exits 0 on an unknown key or a bad value too, and only says so on stderr.
  tt.equal(run.stderr.trim(), '', 'nothing to say about the unit');
});

t.test('systemd-analyze security rates the unit OK (exposure at most 4 of 10)', async (tt) => {
  const missing = missingTool('systemd-analyze', 'systemd');
  if (missing !== undefined) return void tt.fail(missing);
  const run = spawnSync(
    'systemd-analyze',
    ['security', '--offline=true', '--threshold=40', renderUnit(scratchDir(tt))],
    { encoding: 'utf8' },
  );
  tt.equal(run.status, 0, run.stdout.split('\n').slice(-3).join('\n') + run.stderr);
});

t.test('the unit runs node on dist/src/main.js as an unprivileged user, hardened', async (tt) => {
  const exec = settings.get('ExecStart') ?? '';
  tt.match(
    exec,
    /^\/usr\/bin\/node (--[a-z-]+=\S+ )*\/opt\/sqlscribe\/dist\/src\/main\.js /,
    'node itself, not npm: npm start does not pass SIGTERM on',
  );
  tt.match(
    exec,
    new RegExp(`^/usr/bin/node ${SERVER_NODE_FLAGS.join(' ')} `),
    "with the node flags the checkout's launcher (main.js) uses",
  );
  tt.ok(SERVER_NODE_FLAGS.length > 0, `main.js's #! line names node flags: ${SERVER_NODE_FLAGS.join(' ')}`);
  const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const assignments = Object.entries(SERVER_ENVIRONMENT).map(([name, value]) => `${name}=${value}`);
  tt.same(assignments, ['MALLOC_ARENA_MAX=2'], "main.js's #! line sets the environment it is measured with");
  tt.equal(
    packageJson.scripts['start'],
    `${assignments.join(' ')} node ${SERVER_NODE_FLAGS.join(' ')} dist/src/main.js`,
    'npm start launches with the same environment and flags',
  );
  tt.equal(settings.get('Environment'), assignments.join(' '), 'so does the unit');
  tt.equal(settings.get('User'), 'sqlscribe');
  tt.equal(settings.get('Group'), 'sqlscribe');
  tt.equal(settings.get('KillSignal'), 'SIGTERM');
  tt.equal(settings.get('Restart'), 'on-failure');
  const expected: Record<string, string> = {
    NoNewPrivileges: 'yes',
    ProtectSystem: 'strict',
    ProtectHome: 'yes',
    PrivateTmp: 'yes',
    PrivateDevices: 'yes',
    ProtectKernelTunables: 'yes',
    ProtectKernelModules: 'yes',
    ProtectControlGroups: 'yes',
    RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
    LockPersonality: 'yes',
    RestrictRealtime: 'yes',
    RestrictSUIDSGID: 'yes',
    SystemCallArchitectures: 'native',
    CapabilityBoundingSet: '',
    UMask: '0077',
  };
  for (const [key, value] of Object.entries(expected)) tt.equal(settings.get(key), value, key);
  // Every path the server writes (data, journal, snapshots) lies under the one writable directory.
  const writable = settings.get('ReadWritePaths');
  tt.equal(writable, `/var/lib/${settings.get('StateDirectory')}`);
  for (const [, flag, value] of exec.matchAll(/-(dir|log-file|snapshot-dir) (\S+)/g))
    tt.ok(value?.startsWith(`${writable}/`), `-${flag} ${value} is writable`);
});

t.test('TimeoutStopSec outlasts the longest request in flight (-import-timeout, 10m by default)', async (tt) => {
  const stopSeconds = timeSpanSeconds(settings.get('TimeoutStopSec') ?? '');
  const exec = settings.get('ExecStart') ?? '';
  const importTimeout = /-import-timeout (\S+)/.exec(exec)?.[1] ?? '10min';
  const requestTimeout = /-request-timeout (\S+)/.exec(exec)?.[1] ?? '30s';
  tt.ok(
    stopSeconds > timeSpanSeconds(importTimeout.replace(/m$/, 'min')),
    `${stopSeconds} s > -import-timeout ${importTimeout}`,
  );
  tt.ok(
    stopSeconds > timeSpanSeconds(requestTimeout.replace(/m$/, 'min')),
    `${stopSeconds} s > -request-timeout ${requestTimeout}`,
  );
});

t.test("the unit's command line: SIGTERM with a request in flight answers it and exits 0", async (tt) => {
  const scratch = scratchDir(tt);
  const state = path.join(scratch, 'var-lib-sqlscribe');
  const tokens = path.join(scratch, 'tokens.json');
  const secret = writeAdminTokensFile(tokens);
  const words = (settings.get('ExecStart') ?? '')
    .replaceAll('/opt/sqlscribe', ROOT)
    .replaceAll('/var/lib/sqlscribe', state)
    .replaceAll('/etc/sqlscribe/tokens.json', tokens)
    .split(/\s+/);
  const nodeFlags = words.slice(1).filter((word) => word.startsWith('--'));
  words.splice(1, nodeFlags.length);
  tt.equal(words[1], MAIN, 'the unit starts the file the test helper starts');
  // The helper listens on a free port: the unit's -addr is the one flag left out.
  const args = words.slice(2).filter((word, i, all) => word !== '-addr' && all[i - 1] !== '-addr');
  fs.mkdirSync(state, { mode: 0o700 }); // what StateDirectory= makes
  const server = await startServer(args, { cwd: ROOT, headers: { authorization: `Bearer ${secret}` } });
  tt.teardown(() => server.stop());
  tt.equal((await server.post('/dbs', { db: 'school' })).status, 201);
  // A request in flight when the signal comes, and far from the unit's 5 s query timeout on a
  // machine slowed down by other work: a first count of a third of the rows says how long the
  // engine takes here, and the signal comes a sixth of the way into the full count.
  const count = (rows: number): string =>
    `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows}) SELECT count(*) AS n FROM c`;
  const calibrating = Date.now();
  tt.equal((await server.exec('school', count(500_000))).status, 200);
  const thirdMs = Date.now() - calibrating;
  const slow = server.exec('school', count(1_500_000));
  await sleep(Math.max(20, thirdMs / 2));
  const signalled = Date.now();
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  const reply = await slow;
  tt.equal(reply.status, 200, `the request in flight is answered: ${reply.text.slice(0, 200)}`);
  tt.same(reply.body?.results?.[0]?.rows, [[1500000]]);
  tt.equal(await exited, 0, 'exit code 0');
  const seconds = (Date.now() - signalled) / 1000;
  tt.ok(
    seconds < timeSpanSeconds(settings.get('TimeoutStopSec') ?? ''),
    `stopped in ${seconds.toFixed(1)} s, within TimeoutStopSec`,
  );
  tt.ok(fs.existsSync(path.join(state, 'journal/statements.jsonl')), 'the journal is where the unit says');
  tt.ok(fs.existsSync(path.join(state, 'data/school.db')), 'the data too');
});
