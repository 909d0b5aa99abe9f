/**
 * Replay applies the plain writes of a database in batches (replay/entry-batch.ts):
 * many entries to a transaction, the applied seq recorded once per commit,
 * and the same result as one transaction per entry, failures included.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { JournalEntry } from '../journal/record';
import { ReplayError } from '../replay/apply-entries';
import { MAX_BATCH_ENTRIES } from '../replay/entry-batch';
import { rebuild, type RebuildOptions } from '../replay/rebuild';
import { Engine } from '../src/engine/engine';

const TS = '2026-11-21T05:43:12.345Z';
const DB = 'shop.db';

/** Counts commits and the seqs they record, which is what batching saves. */
class CountingEngine extends Engine {
  readonly commits: number[] = [];

  override commitHeld(seq: number): void {
    this.commits.push(seq);
    super.commitHeld(seq);
  }
}

function createdb(seq: number): JournalEntry {
  return { seq, ts: TS, db: DB, session: null, kind: 'createdb', sql: null, ok: true, ms: 0 };
}

function exec(seq: number, sql: string, extra: Partial<JournalEntry> = {}): JournalEntry {
  return {
    seq,
    ts: TS,
    db: DB,
    session: null,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    ok: true,
    ms: 0,
    clock: 1_795_239_792_345 + seq,
    seed: seq.toString(16).padStart(16, '0'),
    ...extra,
  };
}

/** Fails with the code a UNIQUE violation has, as a batch that failed live is journaled. */
function failedLive(seq: number, ...sqls: string[]): JournalEntry {
  return exec(seq, sqls.join(';\n'), {
    statements: sqls.map((sql) => ({ sql })),
    ok: false,
    code: 3002,
    error: 'UNIQUE constraint failed',
  });
}

function session(seq: number, kind: 'begin' | 'commit', id: string): JournalEntry {
  return { seq, ts: TS, db: DB, session: id, kind, sql: null, ok: true, ms: 0 };
}

/** createdb, a table with a UNIQUE column, then one INSERT per seq from 3 to `last`, of the value seq. */
function inserts(last: number): JournalEntry[] {
  const entries = [createdb(1), exec(2, 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER UNIQUE, r REAL)')];
  for (let seq = 3; seq <= last; seq++) entries.push(exec(seq, `INSERT INTO t (v, r) VALUES (${seq}, random())`));
  return entries;
}

async function replay(
  dir: string,
  entries: JournalEntry[],
  options: Partial<RebuildOptions> = {},
): Promise<{ engine: CountingEngine; applied: number; skipped: number }> {
  const engine = new CountingEngine();
  try {
    const result = await rebuild(engine, entries, { fileOf: (db) => path.join(dir, db), ...options });
    return { engine, ...result };
  } finally {
    engine.close();
  }
}

function read(dir: string): { values: number[]; randoms: bigint[]; applied: number } {
  const db = new Database(path.join(dir, DB), { readonly: true });
  try {
    const values = db.prepare('SELECT v FROM t ORDER BY id').pluck().all() as number[];
    const randoms = db.prepare('SELECT r FROM t ORDER BY id').pluck().safeIntegers(true).all() as bigint[];
    const applied = db.prepare(`SELECT value FROM _sqlscribe_meta WHERE key = 'applied'`).pluck().get() as number;
    return { values, randoms, applied };
  } finally {
    db.close();
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

t.test('2,500 inserts commit a few times, not once per entry, and record the last seq', async (t) => {
  const dir = t.testdir();
  const { engine, applied } = await replay(dir, inserts(2_502));
  t.equal(applied, 2_502);
  t.ok(
    engine.commits.length <= Math.ceil(2_501 / MAX_BATCH_ENTRIES),
    `${engine.commits.length} commits for 2,501 writes`,
  );
  t.equal(engine.commits.at(-1), 2_502, 'the last commit records the last entry');
  const rows = read(dir);
  t.same(rows.values, range(3, 2_502));
  t.equal(rows.applied, 2_502);
});

t.test('the same values as one transaction per entry: each entry keeps its clock and seed', async (t) => {
  const batched = t.testdir();
  await replay(batched, inserts(40));
  const single = path.join(batched, 'single');
  // An empty session after every insert ends the batch each time: one transaction per entry.
  fs.mkdirSync(single);
  const alone: JournalEntry[] = [];
  let seq = 0;
  for (const entry of inserts(40)) {
    alone.push({ ...entry, seq: ++seq });
    if (entry.kind === 'exec') {
      alone.push(session(++seq, 'begin', `s${seq}`), session(++seq, 'commit', `s${seq - 1}`));
    }
  }
  await replay(single, alone);
  t.same(read(single).randoms, read(batched).randoms);
});

t.test(
  'a batch that failed live, in the middle of a transaction batch, changes nothing and the entries after it apply',
  async (t) => {
    const dir = t.testdir();
    const entries = inserts(200);
    // It would insert 9999 and then fail on the duplicate 100: live it was rolled back whole.
    entries.push(failedLive(201, 'INSERT INTO t (v) VALUES (9999)', 'INSERT INTO t (v) VALUES (100)'));
    for (let seq = 202; seq <= 400; seq++) entries.push(exec(seq, `INSERT INTO t (v) VALUES (${seq})`));
    const { engine } = await replay(dir, entries);
    t.equal(engine.commits.length, 1, 'one transaction for the whole run');
    const rows = read(dir);
    t.notOk(rows.values.includes(9999));
    t.same(rows.values, [...range(3, 200), ...range(202, 400)]);
    t.equal(rows.applied, 400);
  },
);

t.test(
  'sessions between batches: the batch before commits first, the session applies, the writes after batch again',
  async (t) => {
    const dir = t.testdir();
    const entries = inserts(100);
    entries.push(session(101, 'begin', 'a'), exec(102, 'INSERT INTO t (v) VALUES (102)', { session: 'a' }));
    entries.push({ ...failedLive(103, 'INSERT INTO t (v) VALUES (5)'), session: 'a' }, session(104, 'commit', 'a'));
    for (let seq = 105; seq <= 200; seq++) entries.push(exec(seq, `INSERT INTO t (v) VALUES (${seq})`));
    const { engine } = await replay(dir, entries);
    t.same(engine.commits, [100, 200], 'one commit before the session, one after');
    t.same(read(dir).values, [...range(3, 100), 102, ...range(105, 200)]);
  },
);

t.test(
  'an entry that succeeded live but fails on replay: named, and the entries before it in its batch stay applied',
  async (t) => {
    const entries = inserts(500);
    entries.push(exec(501, 'INSERT INTO t (v) VALUES (7)'));
    for (let seq = 502; seq <= 600; seq++) entries.push(exec(seq, `INSERT INTO t (v) VALUES (${seq})`));

    const stopped = t.testdir();
    const error = await replay(stopped, entries).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    t.ok(error instanceof ReplayError, 'replay stops with a ReplayError');
    t.equal((error as ReplayError).entry.seq, 501);

    const recovered = path.join(stopped, 'recovered');
    fs.mkdirSync(recovered);
    const failures: Array<{ db: string; seq: number }> = [];
    const result = await replay(recovered, entries, { onDatabaseFailed: (db, seq) => failures.push({ db, seq }) });
    t.same(failures, [{ db: DB, seq: 501 }], 'recovery gives up on the database at that entry');
    t.equal(result.applied, 500);
    t.equal(result.skipped, 100);
    const rows = read(recovered);
    t.same(rows.values, range(3, 500));
    t.equal(rows.applied, 500, 'the position says what is applied, so recovery starts again at 501');
  },
);
