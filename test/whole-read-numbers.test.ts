/**
 * A bounded read in the server process is read whole with its integers as
 * numbers (readWhole in statement-runner.ts), and answers exactly what the
 * ordinary path answers: BOOL columns as true and false, blobs as base64,
 * REALs as they are, and an integer beyond 2^53 exact (the result is read
 * again with safe integers). The statement, cached for every reader, still
 * reads safe integers afterwards.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { boundedReads, readRequest } from './helpers/read-request';

const BIG = 9_007_199_254_740_993n; // 2^53 + 1: a number would round it

t.test('whole reads with numbers answer what the ordinary path answers', async (t) => {
  const file = path.join(t.testdir(), 'numbers.db');
  const setup = new Database(file);
  setup.pragma('journal_mode = WAL');
  setup.exec(`
    CREATE TABLE things (id INTEGER PRIMARY KEY, n INTEGER, r REAL, ok INTEGER CHECK (ok IN (0, 1)), b BLOB, t TEXT) STRICT;
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
      INSERT INTO things SELECT i, i * 7 - 1000, i / 4.0, i % 2, CASE WHEN i % 5 = 0 THEN x'00ff10' END, 'row ' || i FROM c;
    CREATE TABLE flags (id INTEGER PRIMARY KEY, on_off BOOL);
    INSERT INTO flags VALUES (1, 1), (2, 0), (3, NULL), (4, 1);
    CREATE TABLE huge (id INTEGER PRIMARY KEY, v INTEGER) STRICT;
    INSERT INTO huge VALUES (1, 5), (2, ${BIG}), (3, -${BIG}), (4, 9007199254740992);
  `);
  setup.close();
  const { engine, readHere } = boundedReads(t, file);
  const both = (sql: string, params?: unknown[]) => readHere(sql, params)?.[0];

  const things = both('SELECT * FROM things WHERE id > ? ORDER BY id LIMIT 100', [150]);
  t.same(things?.rows[0], [151, 57, 37.75, true, null, 'row 151']);
  t.same(things?.rows[4], [155, 85, 38.75, true, 'AP8Q', 'row 155'], 'a blob as base64');
  both('SELECT * FROM flags LIMIT 10');
  const huge = both('SELECT * FROM huge WHERE id >= 1 ORDER BY id LIMIT 10');
  t.same(
    huge?.rows.map((row) => row[1]),
    [5, BIG, -BIG, 9007199254740992n],
    'integers past 2^53 exact, as bigints',
  );
  // The cached statement reads safe integers again: the ordinary path through the same engine gets the exact value.
  const again = engine.exec(readRequest(file, 'SELECT * FROM huge WHERE id >= 1 ORDER BY id LIMIT 10', undefined, 10));
  t.same(
    again[0]?.rows.map((row) => row[1]),
    [5, BIG, -BIG, 9007199254740992n],
  );
});
