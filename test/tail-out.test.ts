/**
 * With -out the follower's output file is its own cursor: killed with
 * SIGKILL at random moments while a real server writes, rotates and gzips
 * its journal, and restarted each time, it leaves a file that holds every
 * failed entry exactly once, in seq order — no repeat, not even at a restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import { runTail, spawnNode, startServer, TAIL, type TestServer } from './helpers/server';
import type { ChildProcess } from 'node:child_process';

const CYCLES = 12;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tail-out-'));
const journal = path.join(dir, 'data', 'journal', 'statements.jsonl');
const out = path.join(dir, 'alerts.jsonl');

let server: TestServer | undefined;
let follower: ChildProcess | undefined;
t.teardown(async () => {
  follower?.kill('SIGKILL');
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Inserts with keys that repeat, so that about half the batches fail with a constraint error. */
async function load(target: TestServer, stop: { done: boolean }, client: number): Promise<void> {
  for (let i = 0; !stop.done && i < 5000; i++) {
    await target.exec('a', `INSERT INTO t VALUES (${(i * 7 + client) % 400}, 'row ${i} of client ${client}')`);
  }
}

/** One run of the follower, killed after a random moment (sometimes before it wrote anything). */
function runOnce(): Promise<void> {
  return new Promise((resolve) => {
    const child = spawnNode([TAIL, '-log-file', journal, '-out', out, '-from-seq', '1', '-failed', '-poll', '20ms'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    follower = child;
    const timer = setTimeout(() => child.kill('SIGKILL'), 100 + Math.floor(Math.random() * 500));
    child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

t.test('killed and restarted during a write load: the -out file holds every failed entry exactly once, in order', async (t) => {
  server = await startServer(['-dir', path.join(dir, 'data'), '-log-max-size', '16K', '-log-compress'], { cwd: dir });
  t.equal((await server.exec('a', 'CREATE DATABASE a')).status, 200);
  t.equal((await server.exec('a', 'CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)')).status, 200);
  const stop = { done: false };
  const writers = [load(server, stop, 1), load(server, stop, 2)];
  const sizes: number[] = [];
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    await runOnce();
    sizes.push(fs.existsSync(out) ? fs.statSync(out).size : 0);
  }
  stop.done = true;
  await Promise.all(writers);
  const last = await runTail(['-log-file', journal, '-out', out, '-from-seq', '1', '-failed', '-once'], dir);
  t.equal(last.code, 0, last.stderr);

  const lines = fs.readFileSync(out, 'utf8').split('\n');
  t.equal(lines.pop(), '', 'the file ends with a whole line');
  const delivered = lines.map((line) => (JSON.parse(line) as JournalEntry).seq);
  const { entries } = await readJournal(journal);
  const expected = entries.filter((entry) => !entry.ok).map((entry) => entry.seq);
  t.ok(expected.length >= 50, `${expected.length} failed entries were written`);
  t.ok(new Set(sizes).size >= 3, `the file grew across the killed runs (${sizes.join(' ')} bytes)`);
  t.strictSame(delivered, expected, 'every failed entry exactly once, in seq order');
});

t.test('a line cut by a crash is removed, and the follower goes on after the last whole one', async (t) => {
  const local = t.testdir();
  const journalFile = path.join(local, 'journal', 'statements.jsonl');
  const own = await startServer(['-dir', path.join(local, 'data'), '-log-file', journalFile], { cwd: local });
  t.teardown(() => own.stop());
  await own.exec('b', 'CREATE DATABASE b');
  await own.exec('b', 'CREATE TABLE t (k INT PRIMARY KEY)');
  for (let i = 0; i < 3; i++) await own.exec('b', 'INSERT INTO t VALUES (1)');
  const file = path.join(local, 'out.jsonl');
  const first = await runTail(['-log-file', journalFile, '-out', file, '-from-seq', '1', '-failed', '-once'], local);
  t.equal(first.code, 0, first.stderr);
  const whole = fs.readFileSync(file, 'utf8');
  t.equal(whole.trim().split('\n').length, 2, 'two failed inserts');
  fs.appendFileSync(file, '{"seq":99,"kind":"ex');
  await own.exec('b', 'INSERT INTO t VALUES (1)');
  const second = await runTail(['-log-file', journalFile, '-out', file, '-from-seq', '1', '-failed', '-once'], local);
  t.equal(second.code, 0, second.stderr);
  const seqs = fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as JournalEntry).seq);
  t.equal(seqs.length, 3, 'the torn line is gone and the new failure follows the last whole line');
  t.same(seqs, [...seqs].sort((a, b) => a - b), 'in seq order');
});
