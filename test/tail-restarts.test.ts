/**
 * A follower killed with SIGKILL and restarted again and again while a real
 * server writes, rotates (16K files) and gzips its journal: what it delivered,
 * run after run, must be exactly the failed entries of the journal, in seq
 * order. The only repeat allowed is the documented one: an entry delivered
 * just before a kill, before its cursor write, comes again first in the next run.
 */
import { type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import type { JournalEntry } from '../journal/record';
import { scratchDir } from './helpers/scratch-dir';
import { startFailingLoad, type FailingLoad } from './helpers/failing-load';
import { runTail, spawnNode, TAIL } from './helpers/server';
import { sleep } from './helpers/wait';

const CYCLES = 15;
const dir = scratchDir(t);
const journal = path.join(dir, 'data', 'journal', 'statements.jsonl');
const cursor = path.join(dir, 'follower.cursor');

let load: FailingLoad | undefined;
let follower: ChildProcess | undefined;
// Registered after scratchDir's removal, so it runs first: the directory goes once the server has stopped.
t.teardown(async () => {
  follower?.kill('SIGKILL');
  await load?.server.stop();
});

/** The seqs of the whole lines a run printed (a kill can cut its last line; that entry's cursor was not written). */
function wholeLines(stdout: string): number[] {
  const end = stdout.lastIndexOf('\n');
  return stdout
    .slice(0, end + 1)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as JournalEntry).seq);
}

function runOnce(): Promise<number[]> {
  return new Promise((resolve) => {
    const child = spawnNode(
      [TAIL, '-log-file', journal, '-cursor', cursor, '-from-seq', '1', '-failed', '-poll', '20ms'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    follower = child;
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // Killed after a varying number of lines, sometimes before its first one.
    const target = 1 + Math.floor(Math.random() * 6);
    const kill = (): void => void child.kill('SIGKILL');
    child.stdout!.on('data', () => {
      if (out.split('\n').length > target) kill();
    });
    const timer = setTimeout(kill, 1500);
    child.once('close', () => {
      clearTimeout(timer);
      resolve(wholeLines(out));
    });
  });
}

t.test('killed and restarted during a write load: every failed entry exactly once, in order', async (t) => {
  load = await startFailingLoad(dir);

  const runs: number[][] = [];
  for (let cycle = 0; cycle < CYCLES; cycle++) runs.push(await runOnce());
  await load.stopWriting();
  const last = await runTail(['-log-file', journal, '-cursor', cursor, '-failed', '-once'], dir);
  t.equal(last.code, 0, last.stderr);
  runs.push(wholeLines(last.stdout));

  const delivered: number[] = [];
  let repeats = 0;
  for (const run of runs) {
    if (run[0] !== undefined && run[0] === delivered.at(-1)) {
      repeats++;
      run.shift();
    }
    delivered.push(...run);
  }
  const contents = await readJournal(journal);
  const expected = contents.entries.filter((entry) => !entry.ok).map((entry) => entry.seq);
  const files = fs.readdirSync(path.dirname(journal));
  t.ok(
    files.filter((name) => name.endsWith('.jsonl.gz')).length >= 3,
    `the journal rotated and was compressed (${files.length} files)`,
  );
  t.ok(expected.length >= 50, `${expected.length} failed entries were written`);
  t.comment(`lines per run: ${runs.map((run) => run.length).join(' ')}`);
  t.ok(runs.filter((run) => run.length > 0).length >= 5, 'most runs delivered something before they were killed');
  t.equal(
    delivered.length,
    expected.length,
    `as many deliveries as failed entries (${repeats} repeat(s) at a restart, allowed)`,
  );
  t.strictSame(delivered, expected, 'the same seqs in the same order');
  t.ok(repeats <= CYCLES, 'at most one repeat per kill');
});
