/**
 * Replay's group (Engine.execHeldRun): write batches that all succeeded live,
 * run in one transaction without a savepoint each. It holds what it ran or,
 * on any failure, nothing at all; it stops where execHeldGroup stops; a
 * batch that changes the schema is seen by the next; and a batch handling
 * savepoints of its own leaves none open for the next. Then
 * the replay around it: entries of one statement shape with different
 * parameters, split once, each bind their own.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import type { JournalEntry } from '../journal/record';
import { rebuild } from '../replay/rebuild';
import { Engine } from '../src/engine/engine';
import { classifyStatement } from '../src/engine/dialect/classify';
import { splitStatements } from '../src/engine/dialect/split';
import type { ExecRequest } from '../src/engine/protocol';

function request(file: string, sql: string, seq: number): ExecRequest {
  const statements = splitStatements(sql).map((text) => {
    const { kind, savepoint } = classifyStatement(text);
    return savepoint === undefined ? { sql: text, kind } : { sql: text, kind, savepoint };
  });
  return {
    file,
    statements,
    maxResultRows: 0,
    context: { clockMs: 1_795_239_792_345 + seq, seed: seq.toString(16).padStart(16, '0') },
  };
}

function setUp(t: Test, ...sqls: string[]): { engine: Engine; file: string } {
  const file = path.join(t.testdir(), 'g.db');
  const engine = new Engine();
  t.teardown(() => engine.close());
  engine.createDatabase(file);
  for (const [index, sql] of sqls.entries()) engine.exec(request(file, sql, index));
  return { engine, file };
}

/** The committed rows, read on a connection of their own. */
function values(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT v FROM t ORDER BY id').pluck().all();
  } finally {
    db.close();
  }
}

/** The engine's own error when it holds no batch, or already holds one. */
const INTERNAL = { code: 9001 };

t.test('a group holds every batch it ran, and commits them with one position', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)');
  const ran = engine.execHeldRun([1, 2, 3].map((v) => request(file, `INSERT INTO t (v) VALUES (${v})`, v)));
  t.equal(ran, 3);
  t.same(values(file), [], 'nothing is visible before the commit');
  engine.commitHeld(3);
  t.same(values(file), [1, 2, 3]);
  t.equal(engine.journalPosition(file).applied, 3);
});

t.test('a failing batch fails the whole group: nothing is held, nothing kept, the error thrown', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT UNIQUE)');
  const requests = [
    request(file, 'INSERT INTO t (v) VALUES (1)', 1),
    request(file, 'INSERT INTO t (v) VALUES (2); INSERT INTO t (v) VALUES (1)', 2),
  ];
  t.throws(() => engine.execHeldRun(requests), { code: 3002, statement: 1 });
  t.throws(() => engine.commitHeld(2), INTERNAL, 'nothing is held');
  t.same(values(file), []);
  t.equal(engine.execHeldRun(requests.slice(0, 1)), 1, 'the engine takes the next group');
  engine.commitHeld(1);
  t.same(values(file), [1]);
});

t.test('a group stops after its first batch once the schema has deferred foreign keys', async (t) => {
  const { engine, file } = setUp(
    t,
    'CREATE TABLE p (id INT PRIMARY KEY)',
    'CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)',
  );
  t.equal(
    engine.execHeldRun([request(file, 'INSERT INTO p VALUES (1)', 1), request(file, 'INSERT INTO c VALUES (1, 1)', 2)]),
    1,
  );
  engine.commitHeld(1);
});

t.test('a batch that changes the schema is seen by the batches after it in the group', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE p (id INT PRIMARY KEY)');
  const ran = engine.execHeldRun([
    request(file, 'INSERT INTO p VALUES (1)', 1),
    request(file, 'CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)', 2),
    request(file, 'INSERT INTO c VALUES (1, 1)', 3),
  ]);
  t.equal(ran, 2, 'the deferred foreign key made just before stops the group, as in execHeldGroup');
  engine.commitHeld(2);
});

t.test('a batch that opens savepoints of its own leaves none open for the batches after it', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)');
  const batches = [
    request(file, 'SAVEPOINT a; INSERT INTO t (v) VALUES (1)', 1),
    request(file, 'SAVEPOINT a; INSERT INTO t (v) VALUES (2); ROLLBACK TO a; INSERT INTO t (v) VALUES (3)', 2),
    request(file, 'INSERT INTO t (v) VALUES (4)', 3),
  ];
  // Live, every batch starts with no savepoint open, so this one fails; it must fail after the others too.
  t.throws(() => engine.execHeldRun([...batches, request(file, 'RELEASE a', 4)]), { code: 5001 });
  t.equal(engine.execHeldRun(batches), 3);
  engine.commitHeld(3);
  t.same(values(file), [1, 3, 4]);
});

t.test('replayed entries of one statement shape each bind their own parameters and clock', async (t) => {
  const dir = t.testdir();
  const ts = '2026-11-21T05:43:12.345Z';
  const insert = 'INSERT INTO t (v, at) VALUES (?, CURRENT_TIMESTAMP)';
  const entries: JournalEntry[] = [
    { seq: 1, ts, db: 'p.db', session: null, kind: 'createdb', sql: null, ok: true, ms: 0 },
    {
      seq: 2,
      ts,
      db: 'p.db',
      session: null,
      kind: 'exec',
      sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, at TEXT)',
      statements: [{ sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, at TEXT)' }],
      ok: true,
      ms: 0,
      clock: 0,
      seed: '0000000000000002',
    },
  ];
  for (let seq = 3; seq <= 6; seq++) {
    entries.push({
      seq,
      ts,
      db: 'p.db',
      session: null,
      kind: 'exec',
      sql: insert,
      statements: [{ sql: insert, params: [`row ${seq}`] }],
      ok: true,
      ms: 0,
      clock: Date.UTC(2026, 0, seq),
      seed: '0000000000000003',
    });
  }
  const engine = new Engine({ syncCommits: false });
  try {
    t.same(await rebuild(engine, entries, { fileOf: (db) => path.join(dir, db) }), { applied: 6, skipped: 0 });
  } finally {
    engine.close();
  }
  const db = new Database(path.join(dir, 'p.db'), { readonly: true });
  t.teardown(() => db.close());
  t.same(
    db.prepare('SELECT v, at FROM t ORDER BY id').raw(true).all(),
    [3, 4, 5, 6].map((seq) => [`row ${seq}`, `2026-01-0${seq} 00:00:00`]),
  );
});
