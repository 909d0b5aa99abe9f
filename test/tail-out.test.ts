/**
 * With -out the follower's output file is its own cursor: killed with
 * SIGKILL at random moments while a real server writes, rotates and gzips
 * its journal, and restarted each time, it leaves a file that holds every
 * failed entry exactly once, in seq order — no repeat, not even at a restart.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import { startFailingLoad, type FailingLoad } from './helpers/failing-load';
import { runTail, spawnNode, startServer, TAIL, type TestServer } from './helpers/server';
import type { ChildProcess } from 'node:child_process';
import { scratchDir } from './helpers/scratch-dir';

const CYCLES = 12;

t.setTimeout(120_000);
const dir = scratchDir(t);
const journal = path.join(dir, 'data', 'journal', 'statements.jsonl');
const out = path.join(dir, 'alerts.jsonl');

let load: FailingLoad | undefined;
let follower: ChildProcess | undefined;
// Registered after scratchDir's removal, so it runs first: the directory goes once the server has stopped.
t.teardown(async () => {
  follower?.kill('SIGKILL');
  await load?.server.stop();
});

const MIN_FAILED = 50;

/** Failed entries journaled so far, by the server's own counter. */
async function failedSoFar(server: TestServer): Promise<number> {
  const text = (await server.get('/metrics?format=prometheus')).text;
  let sum = 0;
  for (const match of text.matchAll(/^sqlscribe_journal_failed_total\{[^}]*\} (\d+)/gm)) sum += Number(match[1]);
  return sum;
}

/**
 * One run of the follower, killed after a random moment (sometimes before it
 * wrote anything); `slack` ms more on a loaded machine, where a process takes
 * longer to start.
 */
function runOnce(slack: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawnNode([TAIL, '-log-file', journal, '-out', out, '-from-seq', '1', '-failed', '-poll', '20ms'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    follower = child;
    const timer = setTimeout(() => child.kill('SIGKILL'), 100 + slack + Math.floor(Math.random() * 500));
    child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

t.test(
  'killed and restarted during a write load: the -out file holds every failed entry exactly once, in order',
  async (t) => {
    load = await startFailingLoad(dir);
    const sizes: number[] = [];
    // Each run that left the file as it was gives the next one more time: on a loaded machine the
    // follower may not even have started within the first kill's delay.
    let slack = 0;
    const killedRun = async (): Promise<void> => {
      await runOnce(slack);
      sizes.push(fs.existsSync(out) ? fs.statSync(out).size : 0);
      slack = sizes.at(-1) === sizes.at(-2) ? slack + 250 : 0;
    };
    for (let cycle = 0; cycle < CYCLES; cycle++) await killedRun();
    // A loaded machine writes fewer entries in the same time: more killed runs until the load has failed
    // often enough, and the file has grown across runs, to test anything (bounded), rather than counts
    // that depend on the machine's speed.
    const enough = async (): Promise<boolean> =>
      new Set(sizes).size >= 3 && (await failedSoFar(load!.server)) >= MIN_FAILED;
    for (let extra = 0; extra < 60 && !(await enough()); extra++) await killedRun();
    await load.stopWriting();
    const last = await runTail(['-log-file', journal, '-out', out, '-from-seq', '1', '-failed', '-once'], dir);
    t.equal(last.code, 0, last.stderr);

    const lines = fs.readFileSync(out, 'utf8').split('\n');
    t.equal(lines.pop(), '', 'the file ends with a whole line');
    const delivered = lines.map((line) => (JSON.parse(line) as JournalEntry).seq);
    const { entries } = await readJournal(journal);
    const expected = entries.filter((entry) => !entry.ok).map((entry) => entry.seq);
    t.ok(expected.length >= MIN_FAILED, `${expected.length} failed entries were written`);
    t.ok(new Set(sizes).size >= 3, `the file grew across the killed runs (${sizes.join(' ')} bytes)`);
    t.strictSame(delivered, expected, 'every failed entry exactly once, in seq order');
  },
);

t.test('a line cut by a crash is removed, and the follower goes on after the last whole one', async (t) => {
  const local = scratchDir(t);
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
  const seqs = fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as JournalEntry).seq);
  t.equal(seqs.length, 3, 'the torn line is gone and the new failure follows the last whole line');
  t.same(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'in seq order',
  );
});
