/**
 * The kill-and-restart run of the fault-kill-rotation test files: SIGKILL at
 * random moments, half of them right after a journal rotation (a tiny
 * -log-max-size rotates every few entries), over cycles of start, write,
 * kill. The cycles are split over two files so that tap runs both halves at
 * once instead of one long file at the end of the suite. After every start:
 *   - the start succeeded and the journal reads whole: seq unique and gapless;
 *   - every insert and every database acknowledged so far is there;
 *   - no database exists that no client asked for.
 * At the end the server stops cleanly and replay -verify equals the live
 * files.
 *
 * As a script an operator can read: start the server with -log-max-size 1K;
 * write from a few clients; kill -9 it, half the time the moment a rotated
 * file appears; start it again; repeat; then replay -verify.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { readJournal } from '../../journal/reader';
import { attempt, runReplay, startServer, type TestServer } from './server';
import { scratchDir } from './scratch-dir';
import { sleep } from './wait';

const INSERT_CLIENTS = 3;

interface Ledger {
  acked: Set<string>;
  dbsSent: Set<string>;
  dbsAcked: Set<string>;
  unexpected: string[];
}

async function insertLoop(server: TestServer, ledger: Ledger, cycle: number, client: number): Promise<void> {
  for (let n = 0; ; n++) {
    const key = `k${cycle}-c${client}-${n}`;
    const reply = await attempt(() =>
      server.exec('load', 'INSERT INTO t (k, r) VALUES (?, random())', { params: [key] }),
    );
    if (reply === undefined) return;
    if (reply.status === 200) ledger.acked.add(key);
    else ledger.unexpected.push(`${key}: ${reply.status} ${reply.text.slice(0, 200)}`);
  }
}

async function createLoop(server: TestServer, ledger: Ledger, cycle: number): Promise<void> {
  for (let n = 0; ; n++) {
    const db = `c${cycle}-${n}`;
    ledger.dbsSent.add(`${db}.db`);
    const reply = await attempt(() => server.post('/dbs', { db }));
    if (reply === undefined) return;
    if (reply.status === 201) ledger.dbsAcked.add(`${db}.db`);
    else ledger.unexpected.push(`create ${db}: ${reply.status} ${reply.text.slice(0, 200)}`);
  }
}

function journalFileCount(dir: string): number {
  return fs.readdirSync(dir).filter((name) => name.startsWith('statements')).length;
}

/**
 * Kills the server after `delayMs`, or as soon as a rotated file appears when
 * `onRotation` (then `delayMs` only bounds the wait); says whether a rotation
 * came first.
 */
async function killSoon(
  server: TestServer,
  journalDir: string,
  delayMs: number,
  onRotation: boolean,
): Promise<boolean> {
  const before = journalFileCount(journalDir);
  const deadline = Date.now() + delayMs;
  let rotated = false;
  while (Date.now() < deadline) {
    rotated = journalFileCount(journalDir) > before;
    if (onRotation && rotated) break;
    await sleep(onRotation ? 1 : 10);
  }
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
  return rotated;
}

/** `cycles` kill-and-restart cycles on one data directory and journal, then a clean stop and replay -verify. */
export async function killRotationCycles(t: Test, cycles: number): Promise<void> {
  const dir = scratchDir(t);
  const data = path.join(dir, 'data');
  const journalDir = path.join(dir, 'journal');
  const journal = path.join(journalDir, 'statements.jsonl');
  const args = ['-dir', data, '-log-file', journal, '-log-max-size', '1K'];
  const ledger: Ledger = { acked: new Set(), dbsSent: new Set(), dbsAcked: new Set(), unexpected: [] };
  let server = await startServer(args, { cwd: dir });
  t.teardown(() => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });
  t.equal((await server.post('/dbs', { db: 'load' })).status, 201);
  t.equal((await server.exec('load', 'CREATE TABLE t (k TEXT PRIMARY KEY, r INT)')).status, 200);

  const problems: string[] = [];
  let killedOnRotation = 0;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const onRotation = cycle % 2 === 1;
    // A rotation comes every few entries; the bound is for a machine slowed down by other work.
    const delay = onRotation ? 10_000 : 20 + Math.floor(Math.random() * 230);
    const clients = [
      ...Array.from({ length: INSERT_CLIENTS }, (_, c) => insertLoop(server, ledger, cycle, c)),
      createLoop(server, ledger, cycle),
    ];
    if ((await killSoon(server, journalDir, delay, onRotation)) && onRotation) killedOnRotation++;
    await Promise.all(clients);
    try {
      server = await startServer(args, { cwd: dir });
    } catch (error) {
      problems.push(`cycle ${cycle}: the server did not start: ${(error as Error).message}`);
      break;
    }
    try {
      await readJournal(journal);
    } catch (error) {
      problems.push(`cycle ${cycle}: the journal does not read whole: ${(error as Error).message}`);
    }
    const rows = await server.exec('load', 'SELECT k FROM t');
    const keys = new Set((rows.body?.results?.[0]?.rows ?? []).map((row: string[]) => row[0]));
    const lost = [...ledger.acked].filter((key) => !keys.has(key));
    if (lost.length > 0) problems.push(`cycle ${cycle}: acknowledged inserts missing: ${lost.slice(0, 5).join(', ')}`);
    const dbs = new Set<string>((await server.get('/dbs')).body?.dbs ?? []);
    const lostDbs = [...ledger.dbsAcked].filter((db) => !dbs.has(db));
    if (lostDbs.length > 0) problems.push(`cycle ${cycle}: acknowledged databases missing: ${lostDbs.join(', ')}`);
    const invented = [...dbs].filter((db) => db !== 'load.db' && !ledger.dbsSent.has(db));
    if (invented.length > 0) problems.push(`cycle ${cycle}: databases nobody asked for: ${invented.join(', ')}`);
  }
  t.same(
    problems,
    [],
    `every start succeeded, every acknowledged write survived (${ledger.acked.size} inserts, ${ledger.dbsAcked.size} databases acknowledged)`,
  );
  t.same(ledger.unexpected, [], 'every answer was a success or a lost connection');
  t.equal(killedOnRotation, Math.floor(cycles / 2), 'every other cycle was killed the moment a rotated file appeared');
  const rotated = fs.readdirSync(journalDir).filter((name) => /^statements\.\d{8}-\d{6}\.\d+\.jsonl/.test(name));
  t.ok(rotated.length >= cycles / 2, `the journal rotated throughout (${rotated.length} rotated files)`);
  t.equal(await server.stop(), 0);

  const contents = await readJournal(journal);
  const seqs = contents.entries.map((entry) => entry.seq);
  t.same(
    seqs,
    seqs.map((_, i) => i + 1),
    'seq runs 1, 2, 3… with no gap and no repeat',
  );
  const replay = await runReplay(['-log-file', journal, '-out', path.join(dir, 'replayed'), '-verify', data], dir);
  t.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr.slice(-2000)}`);
  const replayed = new Set(fs.readdirSync(path.join(dir, 'replayed')).filter((name) => name.endsWith('.db')));
  const live = new Set(fs.readdirSync(data).filter((name) => name.endsWith('.db')));
  t.same([...replayed].sort(), [...live].sort(), 'replay builds exactly the databases the live server has');
}
