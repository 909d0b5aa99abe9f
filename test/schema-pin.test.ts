import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Engine } from '../src/engine/engine';
import { SchemaCache } from '../src/engine/schema/schema-cache';

t.test('a pin inside a pin leaves the outer one in place', (t) => {
  const db = new Database(':memory:');
  const cache = new SchemaCache(db);
  db.exec('BEGIN');
  cache.sync();
  cache.pinnedFor(() => {
    cache.pinnedFor(() => undefined);
    db.exec('CREATE TABLE moved (id INTEGER)');
    t.equal(cache.sync(), false, 'still pinned after the inner pin ended');
  });
  t.equal(cache.sync(), true, 'unpinned, the moved version is seen');
  db.exec('COMMIT');
  db.close();
  t.end();
});

t.test('a batch of row changes checks the schema once and still sees what the batch before it did', (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'pin.db');
  const engine = new Engine({ syncCommits: false });
  t.teardown(() => engine.close());
  engine.createDatabase(file, 1);
  const insert = (qty: number) => ({
    sql: 'INSERT INTO items (qty) VALUES (?)',
    kind: 'insert' as const,
    params: [qty],
  });
  const outcomes = engine.execHeldGroup([
    {
      file,
      statements: [{ sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER)', kind: 'create-table' }],
      maxResultRows: 10,
    },
    {
      file,
      statements: [insert(1), insert(2), { sql: 'SELECT sum(qty) AS total FROM items', kind: 'select' }],
      maxResultRows: 10,
    },
    { file, statements: [{ sql: 'ALTER TABLE items ADD COLUMN note TEXT', kind: 'alter-table' }], maxResultRows: 10 },
    {
      file,
      statements: [insert(3), insert(4), { sql: 'SELECT * FROM items ORDER BY id DESC LIMIT 1', kind: 'select' }],
      maxResultRows: 10,
    },
  ]);
  engine.commitHeld(2);
  const second = outcomes[1] as { results: Array<{ rows: unknown[][] }> };
  t.same(second.results[2]?.rows, [[3]]);
  const fourth = outcomes[3] as { results: Array<{ columns: string[]; rows: unknown[][] }> };
  t.same(
    fourth.results[2]?.columns,
    ['id', 'qty', 'note'],
    'the added column is seen by the pinned statements after it',
  );
  t.same(fourth.results[2]?.rows, [[4, 4, null]]);
  t.end();
});
