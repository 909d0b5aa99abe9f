/**
 * One sqlscribe per data directory and per journal. A second server on the
 * same directory, or on the same journal from another directory, exits 2 with
 * one line naming the first one's pid. A server on other files starts. What a
 * SIGKILLed server leaves behind never stops the next start, and the lock
 * files are neither databases nor journal files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import t, { type Test } from 'tap';
import { isJournalFile } from '../journal/naming';
import { DIRECTORY_LOCK, journalLockFile, takeLock } from '../src/startup/instance-lock';
import { runCli, runReplay, startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

const BUILT_LOCK = path.resolve(__dirname, '../dist/src/startup/instance-lock.js');

t.setTimeout(120_000);

async function start(tt: Test, args: string[], cwd: string): Promise<TestServer> {
  const server = await startServer(args, { cwd });
  tt.teardown(async () => {
    await server.stop();
  });
  return server;
}

/** A second server with `args` must exit 2 at once, with one line that names `holder`'s pid. */
async function refused(tt: Test, args: string[], cwd: string, holder: TestServer, what: RegExp): Promise<void> {
  const run = await runCli(['-addr', '127.0.0.1:0', ...args], cwd);
  tt.equal(run.code, 2, `exit code 2 (stderr: ${run.stderr})`);
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  tt.equal(lines.length, 1, 'one line on stderr');
  tt.match(lines[0], what, 'names what is in use');
  tt.match(
    lines[0],
    new RegExp(`in use by another sqlscribe \\(pid ${holder.child.pid}\\)$`),
    "names the holder's pid",
  );
}

async function kill(server: TestServer): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

t.test('a second server on the same data directory exits 2 naming the first', async (tt) => {
  const dir = scratchDir(tt);
  const first = await start(tt, ['-dir', 'data', '-log-file', 'journal/a.jsonl'], dir);
  await refused(
    tt,
    ['-dir', 'data', '-log-file', 'journal/b.jsonl'],
    dir,
    first,
    /^sqlscribe: data directory .*data is in use/,
  );
  tt.equal((await first.get('/health')).status, 200, 'the first one still serves');
});

t.test('a second server on the same journal, from another directory, exits 2 naming the first', async (tt) => {
  const dir = scratchDir(tt);
  const journal = path.join(dir, 'shared', 'statements.jsonl');
  const first = await start(tt, ['-dir', 'one', '-log-file', journal], dir);
  await refused(
    tt,
    ['-dir', 'two', '-log-file', journal],
    dir,
    first,
    /^sqlscribe: journal .*statements\.jsonl is in use/,
  );
  tt.notOk(fs.existsSync(path.join(dir, 'two', 'journal')), 'the refused server wrote nothing');
});

t.test('single-DB: a second server in the directory of the -db file exits 2', async (tt) => {
  const dir = scratchDir(tt);
  // The service's own databases live beside the -db file, so the directory is what is shared.
  const first = await start(tt, ['-db', 'one.db'], dir);
  await refused(tt, ['-db', 'two.db'], dir, first, /^sqlscribe: directory .* \(of -db .*two\.db\) is in use/);
  await refused(tt, ['-dir', '.'], dir, first, /^sqlscribe: data directory .* is in use/);
});

t.test('servers on different directories and journals both start', async (tt) => {
  const dir = scratchDir(tt);
  const a = await start(tt, ['-dir', 'a', '-log-file', 'a.jsonl'], dir);
  const b = await start(tt, ['-dir', 'b', '-log-file', 'b.jsonl'], dir);
  tt.equal((await a.post('/dbs', { db: 'x' })).status, 201, 'a serves');
  tt.equal((await b.post('/dbs', { db: 'x' })).status, 201, 'b serves');
  await refused(tt, ['-dir', 'b', '-log-file', 'c.jsonl'], dir, b, /^sqlscribe: data directory .*b is in use/);
});

t.test('after the holder is SIGKILLed, a new server on the same files starts', async (tt) => {
  const dir = scratchDir(tt);
  const args = ['-dir', 'data', '-log-file', 'journal/statements.jsonl'];
  const first = await startServer(args, { cwd: dir });
  tt.equal((await first.post('/dbs', { db: 'school' })).status, 201, 'create school');
  await kill(first);
  // What the crash left: the lock files and the pid file that names a dead process.
  tt.ok(fs.existsSync(path.join(dir, 'data', '.sqlscribe.lock.pid')), 'the pid file outlived its process');
  const second = await start(tt, args, dir);
  tt.same((await second.get('/dbs')).body?.dbs, ['school.db'], 'serves, and lists only the database');
  await refused(tt, args, dir, second, /^sqlscribe: data directory .*data is in use/);
});

t.test('a clean stop releases the lock; lock files are neither databases nor journal files', async (tt) => {
  const dir = scratchDir(tt);
  const args = ['-dir', 'data', '-log-file', path.join('data', 'statements.jsonl')];
  const first = await startServer(args, { cwd: dir });
  tt.equal((await first.post('/dbs', { db: 'school' })).status, 201, 'create school');
  tt.equal(await first.stop(), 0, 'SIGTERM: exit 0');
  tt.notOk(fs.existsSync(path.join(dir, 'data', '.sqlscribe.lock.pid')), 'no pid file after a clean stop');
  const second = await start(tt, args, dir);
  tt.same((await second.get('/dbs')).body?.dbs, ['school.db'], '/dbs lists no lock file');
  tt.same(
    (await second.exec(undefined, 'SHOW DATABASES')).body?.results?.[0]?.rows,
    [['school.db']],
    'SHOW DATABASES neither',
  );
  await refused(tt, args, dir, second, /^sqlscribe: data directory .*data is in use/);
  tt.equal(await second.stop(), 0, 'SIGTERM: exit 0');
  // Replay reads every journal file beside the active one, and -verify every .db of the directory.
  const replayed = await runReplay(
    ['-log-file', path.join(dir, args[3] as string), '-out', path.join(dir, 'out'), '-verify', path.join(dir, 'data')],
    dir,
  );
  tt.equal(replayed.code, 0, `replay -verify exits 0 (${replayed.stderr})`);
});

/** Runs `node -e script` and gives its stdout once it exits. */
function node(script: string, ...args: string[]): { done: Promise<string>; stop(): void } {
  const child = spawn(process.execPath, ['-e', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return {
    done: new Promise((resolve) => child.once('exit', () => resolve(out.trim()))),
    stop: () => void child.kill('SIGKILL'),
  };
}

/** Another process tries the lock: 'taken' or the refusal's message. */
const TRY_LOCK = `
const { takeLock } = require(process.argv[1]);
try { takeLock(process.argv[2], 'the test directory').release(); console.log('taken'); }
catch (error) { console.log(error.message); }`;

t.test('child processes neither inherit the lock nor can break it', async (tt) => {
  const file = path.join(scratchDir(tt), DIRECTORY_LOCK);
  const lock = takeLock(file, 'the test directory');
  // A child that opens and closes the lock file: POSIX locks are per process, so ours stays.
  await node(`require('fs').closeSync(require('fs').openSync(process.argv[1], 'r+'))`, file).done;
  tt.equal(
    await node(TRY_LOCK, BUILT_LOCK, file).done,
    `the test directory is in use by another sqlscribe (pid ${process.pid})`,
    'still held after a child touched the file',
  );
  // A child started while the lock is held, still alive after the holder releases it.
  const child = node('setTimeout(() => {}, 60_000)');
  lock.release();
  tt.equal(await node(TRY_LOCK, BUILT_LOCK, file).done, 'taken', 'a child of the holder does not hold it');
  child.stop();
  await child.done;
});

t.test('lock files are not journal files', async (tt) => {
  const journal = path.join(scratchDir(tt), 'statements.jsonl');
  tt.notOk(isJournalFile(journal, journalLockFile(journal)), 'the lock file');
  tt.notOk(isJournalFile(journal, `${journalLockFile(journal)}.pid`), 'its pid file');
});
