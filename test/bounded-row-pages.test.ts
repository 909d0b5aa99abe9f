/**
 * Pages of /rows whose work is bounded are read in the server process
 * (Engine.rowsBounded) and equal the page an engine process reads
 * (Engine.rows), cursors included; pages that might walk or sort without a
 * bound (views, generated columns, deep offsets, wide rows, several-term or
 * nullable cursors, big files, sqlite_stat4) are left to the engines.
 */
import Database from 'better-sqlite3';
import t from 'tap';
import { Engine } from '../src/engine/engine';
import type { RowPage, RowsRequest } from '../src/engine/protocol';
import { chinookEngine } from './helpers/chinook';

function page(file: string, table: string, limit: number, offset = 0, after: string | null = null): RowsRequest {
  return { file, table, limit, offset, after };
}

t.test("bounded pages are read here and equal the engine's pages, walking by cursor to the end", async (t) => {
  const { engine, file } = chinookEngine(t);
  const reference = new Engine();
  t.teardown(() => reference.close());
  for (const table of ['Artist', 'Track', 'InvoiceLine', 'PlaylistTrack']) {
    const first = engine.rowsBounded(page(file, table, 100, 40));
    t.ok(first, `${table}: an offset page is read here`);
    t.strictSame(first, reference.rows(page(file, table, 100, 40)), `${table}: the same page as an engine reads`);
  }
  // PlaylistTrack's key has two terms: its cursor pages go to the engines; Track's has one.
  let after: string | null = null;
  let rows = 0;
  for (let i = 0; i < 100; i++) {
    const here = engine.rowsBounded(page(file, 'Track', 500, 0, after));
    t.ok(here, `cursor page ${i} read here`);
    if (here === undefined) break;
    t.strictSame(here, reference.rows(page(file, 'Track', 500, 0, after)), `cursor page ${i} as an engine reads it`);
    rows += (JSON.parse(here.rowsJson) as unknown[]).length;
    after = here.next;
    if (after === null) break;
  }
  t.equal(rows, 3503, 'the walk met every Track row once');
  const pairs = engine.rowsBounded(page(file, 'PlaylistTrack', 10));
  t.ok(pairs?.next, 'a two-term key gives a cursor');
  t.equal(
    engine.rowsBounded(page(file, 'PlaylistTrack', 10, 0, pairs?.next ?? null)),
    undefined,
    'whose pages go to the engines',
  );
});

t.test('pages that could walk or sort without a bound go to the engines', async (t) => {
  const { engine, file } = chinookEngine(
    t,
    `
    CREATE VIEW artist_names AS SELECT Name FROM Artist;
    CREATE TABLE made (id INTEGER PRIMARY KEY, v TEXT, twice TEXT GENERATED ALWAYS AS (v || v) VIRTUAL);
    INSERT INTO made (v) VALUES ('a'), ('b');
    CREATE TABLE wide (id INTEGER PRIMARY KEY, v BLOB);
    INSERT INTO wide (v) SELECT zeroblob(100000) FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3);
    CREATE TABLE loose (code TEXT PRIMARY KEY, v INT);
    INSERT INTO loose VALUES ('b', 2), ('a', 1), (NULL, 0);
    CREATE TABLE big (id INTEGER PRIMARY KEY);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) INSERT INTO big SELECT i FROM n;`,
  );
  t.ok(engine.rowsBounded(page(file, 'Artist', 10)), 'a plain table: here');
  t.equal(engine.rowsBounded(page(file, 'artist_names', 10)), undefined, 'a view runs its own SELECT');
  t.equal(engine.rowsBounded(page(file, 'made', 10)), undefined, 'generated columns run an expression per row');
  t.ok(engine.rowsBounded(page(file, 'wide', 1)), 'one wide row (2 visits × 100 kB)');
  t.equal(engine.rowsBounded(page(file, 'wide', 100)), undefined, 'but not 101 visits of a 100 kB row');
  t.ok(engine.rowsBounded(page(file, 'big', 100, 1000)), 'a page near the start of a big table');
  t.equal(engine.rowsBounded(page(file, 'big', 100, 55_000)), undefined, 'a deep offset walks over the row budget');
  const first = engine.rowsBounded(page(file, 'loose', 1));
  t.ok(first?.next, 'a key that may hold NULL pages here by offset');
  t.equal(engine.rowsBounded(page(file, 'loose', 1, 0, first?.next ?? null)), undefined, 'but not by cursor');
  t.equal(engine.rowsBounded(page(file, 'NoSuchTable', 10)), undefined, 'a missing table: the engines give the error');
});

t.test('a big file or sqlite_stat4 sends every page to the engines', async (t) => {
  const { engine, file } = chinookEngine(t);
  t.ok(engine.rowsBounded(page(file, 'Genre', 10)), 'small: here');
  const other = new Database(file);
  other.exec('ANALYZE');
  other.close();
  t.equal(engine.rowsBounded(page(file, 'Genre', 10)), undefined, 'not after ANALYZE');
  const { engine: second, file: secondFile } = chinookEngine(
    t,
    'CREATE TABLE heavy (id INTEGER PRIMARY KEY, v BLOB); INSERT INTO heavy VALUES (1, zeroblob(34000000));',
  );
  t.equal(second.rowsBounded(page(secondFile, 'Genre', 10)), undefined, 'over 32 MB');
});

t.test('a page read here follows rows another connection adds', async (t) => {
  const { engine, file } = chinookEngine(t);
  const before = engine.rowsBounded(page(file, 'Genre', 100));
  const other = new Database(file);
  other.exec("INSERT INTO Genre (Name) VALUES ('Chiptune')");
  other.close();
  const after = engine.rowsBounded(page(file, 'Genre', 100));
  t.equal(after?.total, (before?.total ?? 0) + 1, 'the count moved');
  t.match(after?.rowsJson, /Chiptune/, 'and the new row is on the page');
});

t.test('integers beyond 2^53, booleans, blobs and REAL keys come out of a page exactly', async (t) => {
  const { engine, file } = chinookEngine(
    t,
    `
    CREATE TABLE big_ints (id INT PRIMARY KEY, n INT, flag INT CHECK (flag IN (0, 1)), b BLOB) STRICT;
    INSERT INTO big_ints VALUES (1, 9007199254740993, 1, x'0102'), (2, 5, 0, NULL), (9223372036854775807, -9223372036854775807, 1, NULL);
    CREATE TABLE real_keys (k REAL PRIMARY KEY NOT NULL, v TEXT);
    INSERT INTO real_keys VALUES (1.0, 'one'), (2.5, 'two and a half'), (3.0, 'three');`,
  );
  const reference = new Engine();
  t.teardown(() => reference.close());
  const rows = (table: string, limit: number, after: string | null = null): [RowPage | undefined, RowPage] => [
    engine.rowsBounded(page(file, table, limit, 0, after)),
    reference.rows(page(file, table, limit, 0, after)),
  ];
  const [here, there] = rows('big_ints', 2);
  t.ok(here, 'read here');
  t.strictSame(here, there, 'the same page as an engine reads');
  t.match(here?.rowsJson, /9007199254740993/, 'an integer beyond 2^53 keeps its digits');
  const [last, lastThere] = rows('big_ints', 2, here?.next ?? null);
  t.strictSame(last, lastThere, 'the cursor page after it, the same');
  t.match(last?.rowsJson, /9223372036854775807,-9223372036854775807/, 'the largest key and the smallest value, exact');
  // A non-STRICT REAL key: its cursor must say REAL, whichever way the page was read.
  const [first, firstThere] = rows('real_keys', 1);
  t.strictSame(first, firstThere, "a REAL key's page and cursor, the same");
  const [second, secondThere] = rows('real_keys', 1, first?.next ?? null);
  t.strictSame(second, secondThere, "the page after a REAL key's cursor, the same");
  t.match(second?.rowsJson, /two and a half/);
});
