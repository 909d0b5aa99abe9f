/**
 * A range of a table by its INTEGER PRIMARY KEY with a LIMIT (bounded-read.ts)
 * is read in the server process even when the table is over the planner's
 * budget, as its LIMIT bounds the rows it visits, and answers what the
 * ordinary path answers; shapes whose walk the LIMIT does not bound go on to
 * the planner or the engine processes.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { boundedReads, readRequest } from './helpers/read-request';

t.test('key ranges with a LIMIT over a table past the planner budget', async (t) => {
  const file = path.join(t.testdir(), 'big.db');
  const setup = new Database(file);
  setup.pragma('journal_mode = WAL');
  setup.exec(`
    CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, score REAL) STRICT;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
      INSERT INTO items SELECT i, 'item ' || i, i * 1.5 FROM n;
    CREATE TABLE loose (id INTEGER PRIMARY KEY, name TEXT);
    INSERT INTO loose SELECT id, name FROM items;
    CREATE TABLE wide (id INTEGER PRIMARY KEY, v TEXT) STRICT;
    INSERT INTO wide VALUES (1, printf('%.*c', 3000000, 'x')), (2, 'small');
    CREATE TABLE derived (id INTEGER PRIMARY KEY, v TEXT, w TEXT GENERATED ALWAYS AS (upper(v))) STRICT;
    CREATE INDEX items_name ON items (name);
    CREATE VIEW items_view AS SELECT * FROM items;
  `);
  setup.close();
  const { engine, readHere } = boundedReads(t, file);

  const accepted: Array<[string, unknown[]?]> = [
    ['SELECT * FROM items WHERE id > ? ORDER BY id LIMIT 1000', [5000]],
    ['SELECT * FROM items LIMIT 100'],
    ['SELECT name, score FROM items WHERE id >= 10 AND id < 20 LIMIT 5'],
    ['SELECT * FROM items ORDER BY id DESC LIMIT 10'],
    ['SELECT id FROM items WHERE id < -5 LIMIT 3'],
  ];
  for (const [sql, params] of accepted) readHere(sql, params);
  t.equal(
    engine.execBoundedRead(readRequest(file, accepted[0]![0], [5000], 10_000))?.[0]?.rows.length,
    1000,
    'a page of 1,000',
  );

  const refused: Array<[string, string]> = [
    ['SELECT * FROM items WHERE id > 5 AND score > 1e9 LIMIT 5', 'a term the key does not bound (scans to the end)'],
    ['SELECT * FROM items ORDER BY name LIMIT 5', 'ordered by another column'],
    ['SELECT * FROM items WHERE name > ? LIMIT 5', 'a range of another column'],
    ['SELECT * FROM items LIMIT 5 OFFSET 59000', 'an offset'],
    ['SELECT * FROM items LIMIT 60000', 'a LIMIT over the row budget'],
    ['SELECT * FROM loose WHERE id > 5 LIMIT 5', 'a table that is not STRICT'],
    ['SELECT * FROM wide LIMIT 2', 'rows too wide for the byte budget'],
    ['SELECT * FROM derived LIMIT 2', 'generated columns'],
    ['SELECT * FROM items_view LIMIT 5', 'a view'],
    ['SELECT * FROM items WHERE id > :low LIMIT 5', 'a named parameter'],
    ['SELECT * FROM items WHERE id > (SELECT 1) LIMIT 5', 'a subquery'],
  ];
  for (const [sql, why] of refused)
    t.equal(
      engine.execBoundedRead(readRequest(file, sql, sql.includes(':low') ? ({ low: 1 } as never) : undefined, 10_000)),
      undefined,
      `not read here: ${why}`,
    );
});
