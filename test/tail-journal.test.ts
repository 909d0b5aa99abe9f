/**
 * The follower on a journal written by hand: a gzipped rotated file, a plain
 * one and the active file, so that every case is known in advance.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { encodeLine, type JournalEntry } from '../journal/record';
import { execEntry, writeJournalFile } from './helpers/journal-build';
import { runTail, spawnNode, TAIL } from './helpers/server';
import { eventually } from './helpers/wait';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tail-journal-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const journal = path.join(dir, 'statements.jsonl');

const voidEntry: JournalEntry = {
  seq: 12,
  ts: '2026-11-21T10:00:12.000Z',
  db: 'shop.db',
  session: null,
  kind: 'void',
  sql: null,
  ok: true,
  ms: 0,
  voids: [11],
};
const entries: JournalEntry[] = [
  execEntry(1, 'school.db'),
  execEntry(2, 'school.db', 3002),
  execEntry(3, 'shop.db', 3003),
  execEntry(4, 'school.db'),
  execEntry(5, 'shop.db', 9001),
  execEntry(6, 'school.db', 1001),
  execEntry(7, 'school.db', 3002),
  execEntry(8, 'shop.db'),
  execEntry(9, 'school.db'),
  execEntry(10, 'school.db', 9002),
  execEntry(11, 'shop.db'),
  voidEntry,
];
const torn = encodeLine(execEntry(13, 'school.db', 3002));
writeJournalFile(path.join(dir, 'statements.20261121-100004.1.jsonl.gz'), entries.slice(0, 4));
writeJournalFile(path.join(dir, 'statements.20261121-100008.1.jsonl'), entries.slice(4, 8));
// The active file ends with a line still being written.
writeJournalFile(journal, entries.slice(8), torn.slice(0, 40));

function seqs(stdout: string): number[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as JournalEntry).seq);
}

async function follow(...args: string[]): Promise<number[]> {
  const run = await runTail(['-log-file', journal, '-once', ...args], dir);
  if (run.code !== 0) throw new Error(`tail exited with ${run.code}: ${run.stderr}`);
  return seqs(run.stdout);
}

t.test('reads rotated files, gzipped and plain, then the active file, without the torn line', async (t) => {
  t.strictSame(await follow('-from-seq', '1'), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  t.strictSame(await follow('-from-seq', '6'), [6, 7, 8, 9, 10, 11, 12]);
  t.strictSame(await follow(), [], 'by default it starts at the current end');
  t.strictSame(await follow('-from-time', '2026-11-21T10:00:10Z'), [10, 11, 12]);
  const run = await runTail(['-log-file', journal, '-once', '-from-seq', '1'], dir);
  t.strictSame(JSON.parse(run.stdout.split('\n')[1] as string), entries[1], 'the entry as written, without crc');
});

t.test('filters: class, code, db, failed, kind', async (t) => {
  t.strictSame(await follow('-from-seq', '1', '-class', '3'), [2, 3, 7]);
  t.strictSame(await follow('-from-seq', '1', '-class', '1,9'), [5, 6, 10]);
  t.strictSame(await follow('-from-seq', '1', '-code', '3002'), [2, 7]);
  t.strictSame(await follow('-from-seq', '1', '-db', 'shop'), [3, 5, 8, 11, 12]);
  t.strictSame(await follow('-from-seq', '1', '-failed'), [2, 3, 5, 6, 7, 10]);
  t.strictSame(await follow('-from-seq', '1', '-failed', '-db', 'school.db', '-class', '9'), [10]);
  t.strictSame(await follow('-from-seq', '1', '-kind', 'void'), [12]);
  const text = await runTail(
    ['-log-file', journal, '-once', '-from-seq', '1', '-code', '9001', '-format', 'text'],
    dir,
  );
  t.equal(text.stdout, '2026-11-21T10:00:05.000Z #5 shop.db - 9001 [SQ9001] failed\n');
});

t.test('a cursor resumes after the last entry handled; the torn line counts once it is whole', async (t) => {
  const cursor = path.join(dir, 'torn.cursor');
  t.strictSame(await follow('-cursor', cursor, '-from-seq', '1', '-failed'), [2, 3, 5, 6, 7, 10]);
  t.strictSame(
    JSON.parse(fs.readFileSync(cursor, 'utf8')),
    { seq: 12 },
    'entries the filter passed over move the cursor too',
  );
  t.strictSame(
    await follow('-cursor', cursor, '-from-seq', '1', '-failed'),
    [],
    'nothing twice; -from-seq yields to the cursor',
  );
  fs.appendFileSync(journal, torn.slice(40));
  t.strictSame(await follow('-cursor', cursor, '-failed'), [13]);
  t.strictSame(await follow('-cursor', cursor, '-failed'), []);
});

t.test('-exec runs the command per entry with the JSON on stdin, retrying a failure', async (t) => {
  const out = path.join(dir, 'exec-out.jsonl');
  const flag = path.join(dir, 'failed-once');
  // The command fails the first time it sees seq 3, then takes every entry.
  const command = `if [ "$SQLSCRIBE_SEQ" = 3 ] && [ ! -f ${flag} ]; then touch ${flag}; exit 1; fi; cat >> ${out}`;
  const run = await runTail(
    ['-log-file', journal, '-once', '-from-seq', '1', '-class', '3', '-exec', command, '-backoff', '10ms'],
    dir,
  );
  t.equal(run.code, 0, run.stderr);
  t.match(run.stderr, /-exec exited with 1 for seq 3; retrying/);
  t.strictSame(seqs(fs.readFileSync(out, 'utf8')), [2, 3, 7, 13]);
  const gaveUp = await runTail(
    ['-log-file', journal, '-once', '-from-seq', '1', '-exec', 'exit 3', '-retries', '1', '-backoff', '10ms'],
    dir,
  );
  t.equal(gaveUp.code, 1, 'exit 1 once the retries are spent');
  t.match(gaveUp.stderr, /gave up on seq 1 after 2 tries/);
});

t.test('usage and an unusable journal exit 2', async (t) => {
  const missing = await runTail(['-log-file', path.join(dir, 'nothing', 'statements.jsonl'), '-once'], dir);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /no journal/);
  const usage = await runTail(['-log-file', journal, '-clas', '3'], dir);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /did you mean -class/);
});

/**
 * A receiver that answers 500 while `failing` is above zero (counting down), and to everything once it
 * has accepted `acceptUpTo` entries; else 200, recording what it accepted.
 */
function receiver() {
  const state = { failing: 0, acceptUpTo: Infinity, refused: 0, accepted: [] as number[], keys: [] as string[] };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (state.failing > 0 || state.accepted.length >= state.acceptUpTo) {
        if (state.failing > 0) state.failing--;
        state.refused++;
        res.statusCode = 500;
        return res.end('down');
      }
      state.accepted.push((JSON.parse(body) as JournalEntry).seq);
      state.keys.push(String(req.headers['idempotency-key']));
      res.end('ok');
    });
  });
  return { state, server };
}

t.test(
  'webhook: retried while the receiver fails; a follower killed meanwhile loses and repeats nothing',
  async (t) => {
    const { state, server } = receiver();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const cursor = path.join(dir, 'webhook.cursor');
    const args = [
      TAIL,
      '-log-file',
      journal,
      '-cursor',
      cursor,
      '-from-seq',
      '1',
      '-failed',
      '-webhook',
      url,
      '-backoff',
      '10ms',
      '-max-backoff',
      '40ms',
    ];

    // Seq 2 and 3 go through; then the receiver fails until the follower is killed. The receiver itself
    // stops accepting after two: a test that switched it once it saw two could be too late for the third.
    state.failing = 0;
    state.acceptUpTo = 2;
    const refusedBefore = state.refused;
    const first = spawnNode([...args, '-poll', '20ms'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    t.teardown(() => void first.kill('SIGKILL'));
    await eventually(() => state.refused >= refusedBefore + 3, 5000, 10);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('close', resolve));
    t.ok(state.refused >= refusedBefore + 3, 'the receiver refused several tries');
    const stuck = (JSON.parse(fs.readFileSync(cursor, 'utf8')) as { seq: number }).seq;
    const lastAccepted = state.accepted.at(-1) ?? 0;
    t.ok(stuck >= lastAccepted, 'the cursor counts what was accepted');
    t.notOk(
      [2, 3, 5, 6, 7, 10, 13].some((seq) => seq > lastAccepted && seq <= stuck),
      'the cursor never passed an entry that was not delivered',
    );

    // Restarted while the receiver still fails a few times more, then accepts.
    state.acceptUpTo = Infinity;
    state.failing = 3;
    const rest = await runTail(args.slice(1).concat('-once'), dir);
    t.equal(rest.code, 0, rest.stderr);
    t.match(rest.stderr, /answered 500/);
    t.strictSame(state.accepted, [2, 3, 5, 6, 7, 10, 13], 'every failed entry once, in order');
    t.strictSame(state.keys, state.accepted.map(String), 'each POST names its entry by seq in Idempotency-Key');
  },
);
