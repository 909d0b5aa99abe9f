/**
 * The engine's fast paths, in-process: write batches run as a
 * group give what they give one by one, bounded point reads are recognised
 * only in their exact shape, and the cached row count follows every change.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { Engine } from '../src/engine/engine';
import { classifyStatement } from '../src/engine/dialect/classify';
import { pointLookup } from '../src/engine/in-server/bounded-read';
import { newBatchContext } from '../src/engine/deterministic-functions';
import type { ExecRequest } from '../src/engine/protocol';

function request(file: string, ...sqls: string[]): ExecRequest {
  const statements = sqls.map((sql) => {
    const { kind, savepoint } = classifyStatement(sql);
    return savepoint === undefined ? { sql, kind } : { sql, kind, savepoint };
  });
  return { file, statements, maxResultRows: 100, context: newBatchContext() };
}

function setUp(t: Test, ...sqls: string[]): { engine: Engine; file: string } {
  const file = path.join(t.testdir(), 'g.db');
  const engine = new Engine();
  t.teardown(() => engine.close());
  engine.createDatabase(file);
  engine.exec(request(file, ...sqls));
  return { engine, file };
}

function count(engine: Engine, file: string, table = 't'): unknown {
  return engine.exec(request(file, `SELECT count(*) FROM ${table}`))[0]?.rows[0]?.[0];
}

t.test('a failed batch in a group undoes only itself', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
  const outcomes = engine.execHeldGroup([
    request(file, "INSERT INTO t VALUES (1, 'a')"),
    request(file, "INSERT INTO t VALUES (2, 'b')", "INSERT INTO t VALUES (1, 'again')"),
    request(file, "INSERT INTO t VALUES (3, 'c')"),
  ]);
  engine.commitHeld(10);
  t.same(
    outcomes.map((o) => 'results' in o),
    [true, false, true],
  );
  const failed = outcomes[1] as { error: { name: string; statement?: number } };
  t.equal(failed.error.name, 'CONSTRAINT_PRIMARY_KEY');
  t.equal(failed.error.statement, 1, 'the failing statement is counted within its own batch');
  t.same(engine.exec(request(file, 'SELECT id FROM t ORDER BY id'))[0]?.rows, [[1], [3]]);
  t.same(engine.journalPosition(file), { applied: 10, created: 0 });
});

t.test('a batch that ends the transaction is left out and the others run again', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INT PRIMARY KEY, v INT)', 'INSERT INTO t VALUES (1, 0)');
  const outcomes = engine.execHeldGroup([
    request(file, 'INSERT INTO t VALUES (2, abs(random()) % 1000)'),
    request(file, 'INSERT OR ROLLBACK INTO t VALUES (1, 0)'),
    request(file, 'INSERT INTO t VALUES (3, 3)'),
  ]);
  engine.commitHeld(5);
  t.same(
    outcomes.map((o) => 'results' in o),
    [true, false, true],
  );
  t.same(engine.exec(request(file, 'SELECT id FROM t ORDER BY id'))[0]?.rows, [[1], [2], [3]]);
});

t.test('a group stops after its first batch once the schema has deferred foreign keys', async (t) => {
  const { engine, file } = setUp(
    t,
    'CREATE TABLE p (id INT PRIMARY KEY)',
    'CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED)',
  );
  const outcomes = engine.execHeldGroup([
    request(file, 'INSERT INTO p VALUES (1)'),
    request(file, 'INSERT INTO c VALUES (1, 1)'),
  ]);
  t.equal(outcomes.length, 1, 'the second batch is sent back');
  engine.commitHeld(3);
});

t.test('groups give the same rows as batches run one by one', async (t) => {
  const a = setUp(t, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT, n INT)');
  const b = setUp(t, 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT, n INT)');
  const batches = (file: string): ExecRequest[] =>
    Array.from({ length: 20 }, (_, i) => ({
      ...request(
        file,
        `INSERT INTO t (v, n) VALUES ('x${i}', abs(random()) % 97)`,
        'UPDATE t SET n = n + 1 WHERE id % 3 = 0',
      ),
      context: { clockMs: 1000 + i, seed: `${i}`.padStart(16, '0') },
    }));
  a.engine.execHeldGroup(batches(a.file));
  a.engine.commitHeld(1);
  for (const one of batches(b.file)) {
    b.engine.execHeld(one);
    b.engine.commitHeld(1);
  }
  const rows = (engine: Engine, file: string): unknown =>
    engine.exec(request(file, 'SELECT * FROM t ORDER BY id'))[0]?.rows;
  t.same(rows(a.engine, a.file), rows(b.engine, b.file));
});

t.test('recognises bounded point reads by their exact shape only', async (t) => {
  t.same(pointLookup('SELECT * FROM items WHERE id = ?'), { table: 'items', column: 'id' });
  t.same(pointLookup('SELECT id, "name" FROM "items" WHERE "id" = -5'), { table: 'items', column: 'id' });
  for (const sql of [
    'SELECT * FROM t WHERE id = ? AND x = 1',
    'SELECT count(*) FROM t WHERE id = 1',
    'SELECT * FROM t, u WHERE id = 1',
    'SELECT * FROM t WHERE id = (SELECT 1)',
    'SELECT a + 1 FROM t WHERE id = 1',
    'SELECT * FROM main.t WHERE id = 1',
    'SELECT id AS x FROM t WHERE id = 1',
    'SELECT DISTINCT id FROM t WHERE id = 1',
    'SELECT * FROM t WHERE id = 1 COLLATE NOCASE',
  ]) {
    t.equal(pointLookup(sql), undefined, sql);
  }
});

t.test('runs a point read in-process only on the whole key of a STRICT table without generated columns', async (t) => {
  const { engine, file } = setUp(
    t,
    'CREATE TABLE t (id INT PRIMARY KEY, v TEXT, b BOOL)',
    'CREATE TABLE k (a INT, b INT, PRIMARY KEY (a, b))',
    'CREATE TABLE g (id INT PRIMARY KEY, v TEXT, w INT GENERATED ALWAYS AS (length(v)) VIRTUAL)',
    "INSERT INTO t VALUES (1, 'one', TRUE)",
  );
  const read = (sql: string): unknown => engine.execBoundedRead(request(file, sql))?.[0]?.rows;
  t.same(read('SELECT * FROM t WHERE id = 1'), [[1, 'one', true]]);
  // Not point reads; small enough that their plan bounds them (planned-read.ts), so they run here all the same.
  t.same(read('SELECT * FROM t WHERE v = 1'), [], 'not the key: bounded by its plan instead');
  t.same(read('SELECT * FROM k WHERE a = 1'), [], 'part of a composite key: bounded by its plan instead');
  t.equal(read('SELECT * FROM g WHERE id = 1'), undefined, 'generated columns: neither');
});

t.test('a read of a view is never a point read, whatever the view reads', async (t) => {
  const { engine, file } = setUp(
    t,
    'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)',
    'CREATE VIEW w AS SELECT id, v FROM t',
    "INSERT INTO t VALUES (1, 'one')",
  );
  t.same(pointLookup('SELECT * FROM w WHERE id = 1'), { table: 'w', column: 'id' }, 'the shape of a point read');
  t.same(
    engine.execBoundedRead(request(file, 'SELECT * FROM w WHERE id = 1'))?.[0]?.rows,
    [[1, 'one']],
    'run here only because its plan (the view expanded) bounds it',
  );
  t.same(
    engine.exec(request(file, 'SELECT * FROM w WHERE id = 1'))[0]?.rows,
    [[1, 'one']],
    'it runs on the ordinary path',
  );
  const page = engine.rows({ file, table: 'w', limit: 5, offset: 0, after: null });
  t.equal(page.total, 1);
  engine.exec(request(file, "INSERT INTO t VALUES (2, 'two')"));
  t.equal(
    engine.rows({ file, table: 'w', limit: 5, offset: 0, after: null }).total,
    2,
    "a view's count follows its table",
  );
  t.equal(page.next, null, 'a view gives no cursor');
});

t.test('the cached row count follows writes from this connection and from others', async (t) => {
  const { engine, file } = setUp(t, 'CREATE TABLE t (id INT PRIMARY KEY)', 'INSERT INTO t VALUES (1), (2)');
  const other = new Engine();
  t.teardown(() => other.close());
  const total = (): number => engine.rows({ file, table: 't', limit: 1, offset: 0, after: null }).total;
  t.equal(total(), 2);
  engine.exec(request(file, 'INSERT INTO t VALUES (3)'));
  t.equal(total(), 3, 'after a write on the same connection');
  other.exec(request(file, 'DELETE FROM t WHERE id = 1'));
  t.equal(total(), 2, 'after a write on another connection');
  engine.execHeld(request(file, 'INSERT INTO t VALUES (9)'));
  engine.rollbackHeld();
  t.equal(total(), 2, 'after a rolled-back write');
  t.equal(count(engine, file), 2);
});
