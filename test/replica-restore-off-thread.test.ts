/**
 * A read replica applies a `restoredb` entry off its server's thread: while
 * it rebuilds the restored state of a history built to take a few seconds,
 * a classmate's reads of another database on the replica and its /health
 * answer with a p99 under 100 ms, and the replica's resident memory stays
 * bounded; afterwards the replica's restored database equals the primary's.
 * Past the replica's own -restore-timeout the replica does not diverge: it
 * halts at the entry with [SQ6059] in /health, serves what it held, applies
 * nothing after it and cannot be promoted; started again, its crash recovery
 * applies the restore before it serves, and it catches up.
 * replay -verify of the replica's journal equals its databases afterwards.
 * The rebuild process's state job alone: through the index, without one and
 * with one lacking a row, it rebuilds what the in-process rebuild did, and
 * answers its codes when the journal cannot give the state or time runs out.
 * Needs nats-server (test/helpers/nats-server.ts); build first.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startNats } from './helpers/nats-server';
import { runReplay, type Reply, type TestServer } from './helpers/server';
import { journalSeqOf, ok, Stage } from './helpers/replication';
import type { ServerPlace } from './helpers/server-fleet';
import { waitFor } from './helpers/wait';
import Database from 'better-sqlite3';
import { EngineError } from '../src/errors';
import { indexFileOf } from '../journal/index/journal-index';
import { readJournal } from '../journal/reader';
import { withRestoredState } from '../replay/point-in-time';
import { compareDatabases } from '../replay/verify';
import { RestoreProcesses } from '../src/services/databases/restore-process';
import type { StateJob } from '../src/services/databases/restore-state';
import { ServerFleet } from './helpers/server-fleet';
import { scratchDir } from './helpers/scratch-dir';
import { classmate, p99, rssKb } from './helpers/classmate-watch';

t.setTimeout(300_000);

/** What a classmate may wait on the replica, at the 99th percentile, while it rebuilds a restore. */
const P99_MS = 100;
/** How long the student's history takes to replay, about. */
const HISTORY_MS = 3000;
/** Rows one heavy write counts (about 1 s on the development machine, under the 5 s statement timeout). */
const HEAVY_ROWS = 8_000_000;
/** The most the replica's resident memory may grow while it rebuilds. */
const RSS_GROWTH_MB = 120;
/** A heavy write on a loaded machine may take longer than the default 5 s statement timeout. */
const PRIMARY_FLAGS = ['-query-timeout', '30s'];
/** Another database's history beside the student's: 48 MB of SQL in the journal. */
const BULK_STATEMENTS = 24;
const BULK_STATEMENT_BYTES = 2 * 1024 * 1024;

const heavyWrite = (n: number): string =>
  `UPDATE t SET v = v + (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT count(*) FROM c) WHERE id = 1`;

async function rowsOf(server: TestServer, db: string, sql: string, minSeq = 0): Promise<unknown[][]> {
  const reply = await server.request('POST', '/exec', { body: { db, sql }, headers: { 'X-Min-Seq': String(minSeq) } });
  if (reply.status !== 200) throw new Error(`${db}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return reply.body.results[0].rows as unknown[][];
}

/** The classmate's database and the student's, with heavy writes until they took `ms` on the primary; the seq after the last write. */
async function history(primary: TestServer, ms: number, bulk: boolean): Promise<{ writes: number; seq: number }> {
  await ok(primary.post('/dbs', { db: 'classmate' }), 'create classmate');
  await ok(
    primary.exec(
      'classmate',
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO notes VALUES (1, 'a'), (2, 'b')",
    ),
    'classmate notes',
  );
  await ok(primary.post('/dbs', { db: 'student' }), 'create student');
  await ok(primary.exec('student', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0)'), 't');
  let spent = 0;
  let writes = 0;
  while (spent < ms && writes < 10) {
    const started = performance.now();
    await ok(primary.exec('student', heavyWrite(HEAVY_ROWS)), 'heavy write');
    spent += performance.now() - started;
    writes++;
  }
  // Another class's bulky history beside it: what a rebuild that reads the whole journal decodes in vain.
  if (bulk) await bulkHistory(primary);
  const last = await ok(primary.exec('student', 'INSERT INTO t VALUES (2, 42)'), 'last write');
  return { writes, seq: journalSeqOf(last) };
}

/** Another class's bulky history beside the student's: what a rebuild that reads the whole journal decodes in vain. */
async function bulkHistory(primary: TestServer): Promise<void> {
  await ok(primary.post('/dbs', { db: 'bulk' }), 'create bulk');
  await ok(primary.exec('bulk', 'CREATE TABLE b (id INTEGER PRIMARY KEY, v INT)'), 'b');
  const text = 'x'.repeat(BULK_STATEMENT_BYTES);
  for (let i = 0; i < BULK_STATEMENTS; i++)
    await ok(primary.exec('bulk', `INSERT INTO b VALUES (${i}, length('${text}'))`), 'bulk write');
}

interface Health {
  appliedSeq: number;
  halted?: { code: number; error: string };
}

async function healthOf(server: TestServer): Promise<Health> {
  const reply = await server.get('/health');
  return reply.body.replication as Health;
}

/** Until the replica's /health says it applied `seq`. */
function applied(replica: TestServer, seq: number, timeoutMs = 120_000): Promise<unknown> {
  return waitFor(async () => (await healthOf(replica)).appliedSeq >= seq, {
    timeoutMs,
    everyMs: 50,
    what: `the replica to apply seq ${seq}`,
  });
}

async function verify(t: Test, stage: Stage, where: ServerPlace, label: string): Promise<void> {
  const replayed = await runReplay(
    ['-log-file', where.journal, '-out', path.join(stage.root, `replayed-${label}`), '-verify', where.data],
    stage.root,
  );
  t.equal(replayed.code, 0, `replay of the ${label}'s journal equals its databases: ${replayed.stderr.slice(0, 600)}`);
}

t.test("a replica rebuilds a restore off its thread: a classmate's reads on it stay fast", async (t) => {
  const stage = new Stage(t);
  const nats = await startNats(t);
  const P = stage.place('primary');
  const R = stage.place('replica');
  const primary = await stage.primary(P, nats.url, 'p1', ['-max-body-bytes', '4MB', ...PRIMARY_FLAGS]);
  const replica = await stage.replica(R, nats.url, 'r1');
  const { writes, seq } = await history(primary, HISTORY_MS, true);
  await rowsOf(replica, 'student', 'SELECT 1', seq);
  await applied(replica, seq);

  const baseline = rssKb(replica.child.pid as number);
  const restore = (async () => {
    const reply = await ok(primary.post('/dbs/student/restore', { undo: 'last' }), 'undo on the primary');
    await applied(replica, reply.body.seq as number);
    return reply;
  })();
  const watch = await classmate(replica, restore);
  const restored = await restore;

  t.ok(watch.latencies.length >= 20, `the classmate was answered ${watch.latencies.length} times meanwhile`);
  t.same(watch.wrong, [], 'every answer the classmate got is correct');
  const worst = Math.max(...watch.latencies);
  t.ok(
    p99(watch.latencies) < P99_MS,
    `the classmate's p99 on the replica is ${p99(watch.latencies).toFixed(1)} ms (worst ${worst.toFixed(1)} ms), under ${P99_MS} ms`,
  );
  const growthMb = (watch.peakRssKb - baseline) / 1024;
  t.ok(growthMb < RSS_GROWTH_MB, `the replica's RSS grew ${growthMb.toFixed(1)} MB, under ${RSS_GROWTH_MB} MB`);

  const seqAfter = restored.body.seq as number;
  const expected = [[1, writes * HEAVY_ROWS]];
  t.same(await rowsOf(primary, 'student', 'SELECT id, v FROM t ORDER BY id'), expected, 'the primary restored');
  t.same(
    await rowsOf(replica, 'student', 'SELECT id, v FROM t ORDER BY id', seqAfter),
    expected,
    "the replica's restored database equals the primary's",
  );
  t.same(
    fs.existsSync(path.join(path.dirname(R.journal), 'restoring'))
      ? fs.readdirSync(path.join(path.dirname(R.journal), 'restoring'))
      : [],
    [],
    'no scratch directory is left on the replica',
  );

  await stage.fleet.stop(primary);
  await stage.fleet.stop(replica);
  await verify(t, stage, R, 'replica');
});

t.test(
  "past the replica's -restore-timeout it halts at the entry with [SQ6059], and applies it once started again",
  async (t) => {
    const stage = new Stage(t);
    const nats = await startNats(t);
    const P = stage.place('primary');
    const R = stage.place('replica');
    const bounded = ['-restore-timeout', '300ms', '-min-seq-wait', '500ms'];
    const primary = await stage.primary(P, nats.url, 'p1', PRIMARY_FLAGS);
    let replica = await stage.replica(R, nats.url, 'r1', bounded);
    const { writes, seq } = await history(primary, 1500, false);
    await applied(replica, seq);
    const before = await rowsOf(replica, 'student', 'SELECT id, v FROM t ORDER BY id');
    t.same(
      before,
      [
        [1, writes * HEAVY_ROWS],
        [2, 42],
      ],
      'the replica holds the history',
    );

    const restored = (await ok(primary.post('/dbs/student/restore', { undo: 'last' }), 'undo on the primary')).body
      .seq as number;
    const halted = await waitFor(async () => (await healthOf(replica)).halted, { timeoutMs: 60_000, what: 'a halt' });
    t.equal(halted.code, 6059, `/health says why: ${halted.error}`);
    t.match(halted.error, /student\.db/, 'naming the database');
    t.match(halted.error, /SQ6055/, 'and the bound it hit');
    t.ok((await healthOf(replica)).appliedSeq < restored, 'nothing at or past the restore is applied');
    t.match(replica.stderr(), /REPLICA HALTED/, 'it says so in its log');

    const later = journalSeqOf(
      await ok(primary.exec('classmate', "INSERT INTO notes VALUES (3, 'c')"), 'a later write'),
    );
    await waitFor(async () => ((await replica.get('/health')).body.replication.lag.seqBehind as number) > 0, {
      what: 'the lag to show',
    });
    t.same(await rowsOf(replica, 'student', 'SELECT id, v FROM t ORDER BY id'), before, 'it serves what it held');
    t.same(
      await rowsOf(replica, 'classmate', 'SELECT id FROM notes ORDER BY id'),
      [[1], [2]],
      'and applies nothing after the restore',
    );
    const behind = await replica.request('POST', '/exec', {
      body: { db: 'student', sql: 'SELECT 1' },
      headers: { 'X-Min-Seq': String(restored) },
    });
    t.equal(behind.body?.code, 7011, 'a read asking for the restore is told the replica is behind');
    const promote = await replica.post('/admin/promote');
    t.equal(promote.body?.code, 7013, 'and it cannot be promoted');

    await stage.fleet.stop(replica);
    // Started again, even with the same bound: crash recovery applies the restore before it serves, then it follows.
    replica = await stage.replica(R, nats.url, 'r1', bounded);
    await applied(replica, later);
    t.equal((await healthOf(replica)).halted, undefined, 'started again, it follows again');
    t.same(
      await rowsOf(replica, 'student', 'SELECT id, v FROM t ORDER BY id'),
      await rowsOf(primary, 'student', 'SELECT id, v FROM t ORDER BY id'),
      "its restored database equals the primary's",
    );
    t.same(
      await rowsOf(replica, 'classmate', 'SELECT id FROM notes ORDER BY id'),
      [[1], [2], [3]],
      'and the later write reached it',
    );
    await stage.fleet.stop(primary);
    await stage.fleet.stop(replica);
    await verify(t, stage, R, 'replica');
  },
);

t.test(
  "the state job: through the index, without it, or with a holey one, each restoredb entry's state is the in-process rebuild's",
  async (t) => {
    const dir = scratchDir(t);
    const where = { dir, data: path.join(dir, 'data'), journal: path.join(dir, 'journal', 'statements.jsonl') };
    const fleet = new ServerFleet(t);
    const server = await fleet.start(where, ['-log-max-size', '4K']);
    // A template, a copy with restores among its writes (one of them undone by the next), and a bystander.
    await ok(server.post('/dbs', { db: 'tpl' }), 'tpl');
    await ok(server.exec('tpl', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1)'), 't');
    await ok(server.post('/dbs', { db: 'other' }), 'other');
    await ok(server.exec('other', 'CREATE TABLE o (x INT)'), 'o');
    await ok(server.post('/dbs', { db: 'c1', from: 'tpl' }), 'c1');
    for (let i = 0; i < 6; i++) {
      await ok(server.exec('c1', `INSERT INTO t (v) VALUES (${10 + i})`), 'c1 write');
      await ok(server.exec('other', `INSERT INTO o VALUES (${i})`), 'other write');
      if (i === 2 || i === 3) await ok(server.post('/dbs/c1/restore', { undo: 'last' }), 'undo');
    }
    await fleet.stop(server);

    const entries = (await readJournal(where.journal)).entries;
    const restores = entries.filter((entry) => entry.kind === 'restoredb');
    t.equal(restores.length, 2, 'two restoredb entries to rebuild');
    const indexFile = indexFileOf(where.journal);
    const holey = path.join(dir, 'holey.index');
    fs.copyFileSync(indexFile, holey);
    const index = new Database(holey);
    index.prepare('DELETE FROM entries WHERE seq = ?').run(2);
    index.close();

    const processes = new RestoreProcesses({ timeoutMs: 60_000, memoryBytes: 64 * 1024 * 1024 }, (m) => t.comment(m));
    let run = 0;
    const job = (seq: number, lastSeq: number, index: string | null): StateJob => {
      const out = path.join(dir, 'out', String(run++));
      fs.mkdirSync(out, { recursive: true });
      return {
        kind: 'state',
        db: 'c1.db',
        seq,
        lastSeq,
        logFile: where.journal,
        snapshotDir: null,
        indexFile: index,
        out,
      };
    };
    for (const entry of restores) {
      const seq = entry.to as number;
      await withRestoredState({ logFile: where.journal, snapshotDir: null }, entry, async (expected) => {
        for (const [label, file] of [
          ['through the index', indexFile],
          ['without an index', null],
          ['with an index lacking a row', holey],
        ] as const) {
          const rebuilt = await processes.rebuildState(job(seq, entry.seq - 1, file));
          t.equal(
            compareDatabases(expected, rebuilt),
            null,
            `restoredb ${entry.seq} (to ${seq}) ${label}: the same state`,
          );
        }
      });
    }
    const tooOld = await processes
      .rebuildState(job(1, entries.at(-1)!.seq, indexFile))
      .catch((error: unknown) => error);
    t.ok(
      tooOld instanceof EngineError && tooOld.code === 2075,
      `before the database's creation: [SQ2075] (${String(tooOld)})`,
    );
    const hurried = new RestoreProcesses({ timeoutMs: 1, memoryBytes: 64 * 1024 * 1024 }, () => undefined);
    const timedOut = await hurried
      .rebuildState(job(restores[0]!.to as number, restores[0]!.seq - 1, indexFile))
      .catch((error: unknown) => error);
    t.ok(
      timedOut instanceof EngineError && timedOut.code === 6055,
      `past its time bound: [SQ6055] (${String(timedOut)})`,
    );
  },
);
