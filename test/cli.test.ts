/**
 * The command line: usage, start-up errors, the embedded
 * default, single-DB mode, flag spellings and a clean stop on SIGTERM.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { runCli, runReplay, runTail, startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { sleep } from './helpers/wait';

// Every server is a child process with engine sub-processes: on a loaded machine a start and a
// stop can take seconds each, more than tap's default 30 s for the whole file.
t.setTimeout(120_000);

// ── helpers ──────────────────────────────────────────────────────────────────

/** Starts a server whose cwd is a fresh scratch directory, stopped when `t` ends. */
async function serve(t: Test, args: string[], cwd = scratchDir(t)): Promise<{ server: TestServer; cwd: string }> {
  const server = await startServer(args, { cwd });
  t.teardown(() => server.stop());
  return { server, cwd };
}

const same = (a: string, b: string): boolean => fs.realpathSync(a) === fs.realpathSync(b);

/** Runs the CLI and asserts a start-up error: exit 2, one line on stderr, nothing served. */
async function assertStartupError(t: Test, args: string[], mentions: RegExp): Promise<void> {
  const cwd = scratchDir(t);
  const what = args.join(' ');
  const { code, stdout, stderr } = await runCli(args, cwd);
  t.equal(code, 2, `${what}: exit code 2`);
  t.equal(stdout, '', `${what}: nothing on stdout`);
  t.match(stderr, /^[^\n]+\n?$/, `${what}: exactly one line on stderr`);
  t.match(stderr, mentions, `${what}: the message names the fault`);
  t.notOk(fs.existsSync(path.join(cwd, 'data')), `${what}: no data directory created`);
}

// ── usage ────────────────────────────────────────────────────────────────────

t.test('prints the usage with -h and exits 0', async (t) => {
  for (const flag of ['-h', '--help']) {
    const cwd = scratchDir(t);
    const { code, stdout, stderr } = await runCli([flag], cwd);
    t.equal(code, 0, `${flag}: exit code 0`);
    t.match(stdout, /usage/i, `${flag}: prints a usage`);
    for (const name of ['-db', '-dir', '-addr', '-token', '-max-connections', '-log-json', '-log-file', '-log-level']) {
      t.match(stdout, new RegExp(`^\\s*${name}\\b`, 'm'), `${flag}: lists ${name}`);
    }
    t.equal(stderr, '', `${flag}: nothing on stderr`);
    t.notOk(fs.existsSync(path.join(cwd, 'data')), `${flag}: starts nothing`);
  }
});

t.test('prints the version with -version or --version and exits 0, for the server, replay and tail', async (t) => {
  const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../package.json'), 'utf8')) as {
    version: string;
  };
  const tools = [
    ['sqlscribe', runCli],
    ['sqlscribe replay', runReplay],
    ['sqlscribe tail', runTail],
  ] as const;
  for (const [name, run] of tools) {
    for (const flag of ['-version', '--version']) {
      const cwd = scratchDir(t);
      // Other flags beside it are not read: the version alone is the answer.
      const { code, stdout, stderr } = await run(['-log-file', 'nowhere.jsonl', flag], cwd);
      t.equal(code, 0, `${name} ${flag}: exit code 0`);
      t.equal(stdout, `${name} ${version}\n`, `${name} ${flag}: one line, the name and the package's version`);
      t.equal(stderr, '', `${name} ${flag}: nothing on stderr`);
      t.same(fs.readdirSync(cwd), [], `${name} ${flag}: starts nothing, writes nothing`);
    }
  }
});

// ── start-up errors ──────────────────────────────────────────────────────────

t.test('exits 2 with one line on an unknown flag', async (t) => {
  await assertStartupError(t, ['-no-such-flag'], /no-such-flag/);
  await assertStartupError(t, ['--verbose'], /verbose/);
});

t.test('exits 2 with one line on a bad value', async (t) => {
  await assertStartupError(t, ['-max-connections', 'abc'], /max-connections/);
  await assertStartupError(t, ['-max-connections', '0'], /max-connections/);
  await assertStartupError(t, ['-max-body-bytes', 'lots'], /max-body-bytes/);
  await assertStartupError(t, ['-addr', 'nowhere'], /addr/);
});

t.test('exits 2 with one line when -db and -dir are both given', async (t) => {
  await assertStartupError(t, ['-db', 'a.db', '-dir', 'dbs'], /-db|-dir/);
});

t.test('exits 2 with one line on an unknown -log-level', async (t) => {
  await assertStartupError(t, ['-log-level', 'loud'], /log-level/);
});

t.test('exits 2 with one line when a flag misses its value', async (t) => {
  await assertStartupError(t, ['-max-connections'], /max-connections/);
});

// ── modes ────────────────────────────────────────────────────────────────────

t.test('serves the embedded default: multi-DB mode on <cwd>/data', async (t) => {
  // Only -addr (added by the harness): the data directory is still the embedded default.
  const { server, cwd } = await serve(t, []);
  const dataDir = path.join(cwd, 'data');
  t.ok(fs.statSync(dataDir).isDirectory(), '<cwd>/data is created');
  const health = await server.get('/health');
  t.equal(health.status, 200);
  t.equal(health.body.single, false, 'multi-DB mode');
  t.ok(same(health.body.dir, dataDir), 'health reports <cwd>/data');
  const dbs = await server.get('/dbs');
  t.equal(dbs.body.mode, 'multi-db');
  const created = await server.post('/dbs', { db: 'first' });
  t.equal(created.status, 201, 'databases can be created');
  t.ok(fs.existsSync(path.join(dataDir, 'first.db')), 'in <cwd>/data');
  t.same((await server.get('/dbs')).body.dbs, ['first.db'], 'and are listed');
});

t.test('creates the -db file when missing and serves it', async (t) => {
  const cwd = scratchDir(t);
  const file = path.join(cwd, 'sub', 'new.db');
  t.notOk(fs.existsSync(file), 'the file does not exist before');
  const first = await startServer(['-db', 'sub/new.db'], { cwd });
  t.teardown(() => first.stop());
  t.same((await first.get('/dbs')).body, { ok: true, mode: 'single-db', dbs: ['new.db'], single: 'new.db' });
  t.equal((await first.get('/tables')).status, 200, 'its tables can be listed without db');
  t.ok(fs.existsSync(file), 'the file is created');
  t.equal((await first.exec(undefined, 'CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT)')).status, 200);
  t.equal((await first.exec(undefined, "INSERT INTO pupils (id, name) VALUES (1, 'Ada')")).status, 200);
  t.equal(await first.stop(), 0, 'stops cleanly');

  const second = await startServer(['-db', 'sub/new.db'], { cwd });
  t.teardown(() => second.stop());
  const rows = await second.get('/rows?table=pupils');
  t.equal(rows.status, 200, 'the same file is served again');
  t.same(rows.body.rows, [[1, 'Ada']], 'with its data');
});

// ── flag spellings ───────────────────────────────────────────────────────────

/** Asserts that `-dir <dirName>` and `-token <token>` took effect, whatever their spelling. */
async function assertDirAndToken(
  t: Test,
  server: TestServer,
  cwd: string,
  dirName: string,
  token: string,
): Promise<void> {
  t.equal((await server.get('/health')).status, 401, 'the token is required');
  const health = await server.get('/health', { 'X-Service-Token': token });
  t.equal(health.status, 200, 'the token is accepted');
  t.ok(same(health.body.dir, path.join(cwd, dirName)), `the data directory is ${dirName}`);
  t.ok(fs.statSync(path.join(cwd, dirName)).isDirectory(), `${dirName} is created`);
}

t.test('accepts flags written -flag value', async (t) => {
  const { server, cwd } = await serve(t, ['-dir', 'single-dash', '-token', 'tok1', '-log-json']);
  await assertDirAndToken(t, server, cwd, 'single-dash', 'tok1');
  t.match(server.stdout(), /"path":"\/health"/, '-log-json is on');
});

t.test('accepts flags written --flag value', async (t) => {
  const { server, cwd } = await serve(t, ['--dir', 'double-dash', '--token', 'tok2', '--log-json']);
  await assertDirAndToken(t, server, cwd, 'double-dash', 'tok2');
  t.match(server.stdout(), /"path":"\/health"/, '--log-json is on');
});

t.test('accepts flags written -flag=value', async (t) => {
  const { server, cwd } = await serve(t, ['-dir=equals', '-token=tok3', '-log-json=true', '--max-connections=8']);
  await assertDirAndToken(t, server, cwd, 'equals', 'tok3');
  t.match(server.stdout(), /"path":"\/health"/, '-log-json=true is on');
});

t.test('leaves the request log off with -log-json=false', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-log-json=false']);
  t.equal((await server.get('/health')).status, 200);
  await sleep(200);
  t.equal(server.stdout(), '', 'nothing on stdout');
});

// ── stopping ─────────────────────────────────────────────────────────────────

t.test('stops with exit code 0 on SIGTERM', async (t) => {
  const cwd = scratchDir(t);
  const server = await startServer(['-dir', 'data'], { cwd });
  t.teardown(() => server.stop());
  // A served request leaves an idle keep-alive connection open: it must not hold the exit.
  t.equal((await server.post('/dbs', { db: 'kept' })).status, 201);
  const started = Date.now();
  const code = await server.stop();
  t.equal(code, 0, 'exit code 0');
  // Bounded, not instant: an engine process still starting up may take up to -query-timeout + 1s to end.
  t.ok(Date.now() - started < 10_000, 'exits without hanging');
  t.equal(server.child.signalCode, null, 'exited by itself, not killed by the signal');
});
