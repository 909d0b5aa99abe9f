/**
 * Reads decided bounded from their query plan run in the server process
 * (Engine.execBoundedRead) and answer exactly what the ordinary path answers;
 * hostile or long reads are never decided bounded, and go to the engine
 * processes, where the timeout can stop them.
 */
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { Engine } from '../src/engine/engine';
import { newBatchContext } from '../src/engine/deterministic-functions';
import type { ExecRequest } from '../src/engine/protocol';
import { readRequest as request } from './helpers/read-request';
import { textFacts } from '../src/engine/in-server/planned-read';
import { chinookEngine } from './helpers/chinook';

/** A few statements of the Chinook lesson (test/chinook-lesson.test.ts has the whole list). */
const LESSON = [
  'SELECT * FROM Artist ORDER BY ArtistId LIMIT 10',
  'SELECT Name, Composer FROM Track WHERE AlbumId = 1 ORDER BY TrackId',
  "SELECT FirstName FROM Customer WHERE LastName LIKE '%son%' ORDER BY CustomerId",
  'SELECT DISTINCT BillingCity FROM Invoice',
  'SELECT COUNT(*) AS tracks, COUNT(Composer) AS with_composer, COUNT(DISTINCT Composer) AS composers FROM Track',
  'SELECT BillingCountry, COUNT(*) AS invoices, SUM(Total) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC, BillingCountry',
  'SELECT al.Title, ar.Name FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId ORDER BY al.AlbumId LIMIT 30',
  'SELECT FirstName, LastName FROM Customer WHERE CustomerId IN (SELECT CustomerId FROM Invoice WHERE Total > 20) ORDER BY CustomerId',
  'WITH per_customer AS (SELECT CustomerId, SUM(Total) AS spent FROM Invoice GROUP BY CustomerId) SELECT c.FirstName, c.LastName, p.spent FROM per_customer p JOIN Customer c USING (CustomerId) ORDER BY p.spent DESC, c.CustomerId LIMIT 5',
  "SELECT strftime('%Y', InvoiceDate) AS year, COUNT(*), ROUND(SUM(Total), 2) FROM Invoice GROUP BY year ORDER BY year",
  "SELECT UPPER(LastName) || ', ' || FirstName AS name, LENGTH(Email), SUBSTR(Phone, 1, 4) FROM Customer ORDER BY CustomerId LIMIT 15",
  'SELECT City FROM Customer UNION SELECT City FROM Employee ORDER BY City',
  'SELECT g.Name, ROUND(SUM(il.UnitPrice * il.Quantity), 2) AS revenue FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY revenue DESC, g.Name',
  'SELECT BillingCountry FROM Invoice EXCEPT SELECT Country FROM Employee ORDER BY 1',
];

/** Chinook on a file, with a second engine (another connection) to change it behind the first one's back. */
function withOtherConnection(t: Test): ReturnType<typeof chinookEngine> & { other: Engine } {
  const opened = chinookEngine(t);
  const other = new Engine();
  t.teardown(() => other.close());
  return { ...opened, other };
}

/** Grows `grow` past the planner's row budget (60,000 rows). */
const GROW_PAST_BUDGET =
  'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) INSERT INTO grow SELECT i FROM n';

t.test('lesson statements on Chinook are decided in-process and answer as the ordinary path', async (t) => {
  const { engine, file, other } = withOtherConnection(t);
  for (const sql of LESSON) {
    const here = engine.execBoundedRead(request(file, sql));
    t.ok(here !== undefined, `in-process: ${sql}`);
    t.same(here, other.exec(request(file, sql)), `same answer: ${sql}`);
    t.same(engine.execBoundedRead(request(file, sql)), here, 'and again, from the cached decision');
  }
});

t.test('an error is met in-process, as the ordinary path meets it', async (t) => {
  const { engine, file } = chinookEngine(t);
  const sql = 'SELECT abs(-9223372036854775807 - 1) FROM Artist';
  let here: unknown;
  let there: unknown;
  t.throws(() => {
    try {
      engine.execBoundedRead(request(file, sql));
    } catch (error) {
      here = error;
      throw error;
    }
  }, 'the read was decided bounded and ran');
  try {
    engine.exec(request(file, sql));
  } catch (error) {
    there = error;
  }
  t.same(here, there);
});

t.test('hostile or long reads are not decided in-process', async (t) => {
  const { engine, file } = chinookEngine(t);
  engine.exec(request(file, 'CREATE TABLE big (id INTEGER PRIMARY KEY, v TEXT)'));
  engine.exec(request(file, 'CREATE TABLE fat (id INTEGER PRIMARY KEY, v TEXT)'));
  const setup = new Database(file);
  setup.exec(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO big SELECT i, 'v' || i FROM n",
  );
  setup.exec(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO fat SELECT i, printf('%.*c', 1000000, 'x') FROM n",
  );
  setup.exec(
    'CREATE TABLE huge (id INTEGER PRIMARY KEY); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) INSERT INTO huge SELECT i FROM n',
  );
  setup.exec('CREATE VIEW crossed AS SELECT a.v, b.v AS w FROM big a, big b');
  setup.exec(
    "CREATE TABLE half (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO half VALUES (1, printf('%.*c', 200000, 'x')), (2, printf('%.*c', 200000, '%') || 'y')",
  );
  setup.exec('CREATE VIEW matching AS SELECT a.id, a.v LIKE b.v AS m FROM half a, half b WHERE b.id = 2');
  setup.close();
  for (const sql of [
    'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c',
    'SELECT count(*) FROM big a, big b',
    'SELECT count(*) FROM big a JOIN big b ON a.v = b.v',
    'SELECT length(randomblob(1000000000))',
    'SELECT length(zeroblob(1000000000))',
    "SELECT replace(replace(replace(v, 'v', v), 'v', v), 'v', v) FROM big",
    "SELECT printf('%.*c', 1000000000, 'x')",
    "SELECT count(*) FROM fat WHERE v LIKE '%x%x%x%x%y'",
    "SELECT count(*) FROM fat WHERE v LIKE '%y'",
    'SELECT count(*) FROM big WHERE v LIKE ?',
    'SELECT count(*) FROM crossed',
    'SELECT upper(v) FROM fat',
    'SELECT count(*) FROM huge',
    "SELECT * FROM json_each('[1, 2, 3]')",
    'SELECT row_number() OVER () FROM big',
    "WITH a AS (SELECT 'xxxxxxxx' AS s), b AS (SELECT s || s AS s FROM a), c AS (SELECT s || s AS s FROM b), d AS (SELECT s || s AS s FROM c), e AS (SELECT s || s AS s FROM d), f AS (SELECT s || s AS s FROM e), g AS (SELECT s || s AS s FROM f), h AS (SELECT s || s AS s FROM g), i AS (SELECT s || s AS s FROM h), j AS (SELECT s || s AS s FROM i) SELECT length(s) FROM j",
    'SELECT instr(a.v, b.v) FROM fat a, fat b',
    'SELECT group_concat(v) FROM fat',
    'SELECT Title, (SELECT COUNT(*) FROM big b WHERE b.v <> a.Title) FROM Album a',
    'SELECT count(*) FROM big AS "x USING INTEGER PRIMARY KEY (rowid=?)"',
    'SELECT no_such_column FROM big',
    'SELECT count(date(v)) FROM big',
    "SELECT m FROM matching WHERE id = 1 AND 'x' LIKE 'x'",
    `SELECT count(*) FROM (VALUES ${Array.from({ length: 150 }, (_, i) => `(${i})`).join(', ')}) a, (VALUES ${Array.from({ length: 150 }, (_, i) => `(${i})`).join(', ')}) b, (VALUES ${Array.from({ length: 150 }, (_, i) => `(${i})`).join(', ')}) c`,
    'SELECT count(*) FROM big AS Genre, big AS MediaType WHERE Genre.v <> MediaType.v',
    'SELECT (SELECT count(*) FROM big b WHERE b.v <> g.Name) FROM Genre g',
    'SELECT count(*) FROM (SELECT * FROM big) AS Genre, Genre g2 WHERE Genre.v <> g2.Name',
    'WITH Genre AS (SELECT * FROM big) SELECT count(*) FROM Genre, MediaType m WHERE Genre.v <> m.Name',
    'SELECT trim(a.v, b.v) FROM fat a, fat b WHERE a.id = 1 AND b.id = 2',
    'WITH a AS (SELECT 1 AS x) SELECT (SELECT x FROM a) + (SELECT x FROM a)',
  ]) {
    t.equal(engine.execBoundedRead(request(file, sql, sql.includes('?') ? ['%a%'] : undefined)), undefined, sql);
  }
  t.ok(engine.execBoundedRead(request(file, 'SELECT count(*) FROM big')), 'a scan of a table within the budget is');
  t.ok(engine.execBoundedRead(request(file, 'SELECT v FROM big WHERE id = 5 OR id = 7')), 'and a short list of keys');
  t.same(
    engine.execBoundedRead(request(file, 'SELECT v FROM big WHERE id = ? OR id = ?', [5, 7]))?.[0]?.rows,
    [['v5'], ['v7']],
    'with parameters by position',
  );
  t.same(
    engine.execBoundedRead(
      request(file, 'SELECT v FROM big WHERE id = :one OR id = :other', { one: 5, other: 7 } as never),
    )?.[0]?.rows,
    [['v5'], ['v7']],
    'and by name',
  );
  t.ok(
    engine.execBoundedRead(request(file, 'SELECT length(trim(v)) FROM fat WHERE id = 1')),
    'and trim() of one long value',
  );
  t.ok(
    engine.execBoundedRead(request(file, "SELECT date(v, '+1 day') FROM big WHERE id IN (1, 2, 3)")),
    'and a date function on a few rows',
  );
  engine.exec(request(file, 'CREATE VIEW small AS SELECT ArtistId, Name FROM Artist WHERE ArtistId < 10'));
  t.ok(
    engine.execBoundedRead(request(file, 'SELECT * FROM small ORDER BY Name')),
    'a view of a small read is expanded into the plan and bounded like it',
  );
  engine.exec(request(file, 'CREATE VIEW smaller AS SELECT * FROM small WHERE ArtistId < 5'));
  t.equal(
    engine.execBoundedRead(request(file, 'SELECT * FROM smaller ORDER BY Name')),
    undefined,
    'once a view reads a view, nothing is prepared here (a chain of views can multiply its code)',
  );
});

t.test('introspection is left to the engine processes, which answer it', async (t) => {
  const { engine, file } = chinookEngine(t);
  for (const sql of [
    "SELECT * FROM pragma_table_info('Album')",
    'SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p',
    "SELECT name FROM pragma_index_list('Track') WHERE seq = 0",
    'PRAGMA table_info(Album)',
    'PRAGMA quick_check',
    'EXPLAIN QUERY PLAN SELECT * FROM Genre WHERE GenreId = 1',
    'EXPLAIN SELECT * FROM Genre WHERE GenreId = 1',
  ]) {
    t.equal(engine.execBoundedRead(request(file, sql)), undefined, `${sql}: not here`);
    t.ok((engine.exec(request(file, sql))[0]?.rows.length ?? 0) > 0, `${sql}: answered there`);
  }
});

t.test('a database too big to gather its facts cheaply is never planned here', async (t) => {
  const { engine, file } = chinookEngine(t);
  t.ok(engine.execBoundedRead(request(file, 'SELECT count(*) FROM Genre')), 'small: planned');
  const other = new Database(file);
  other.exec('CREATE TABLE heavy (id INTEGER PRIMARY KEY, v BLOB); INSERT INTO heavy VALUES (1, zeroblob(34000000))');
  other.close();
  t.equal(engine.execBoundedRead(request(file, 'SELECT count(*) FROM Genre')), undefined, 'over 32 MB: to the engines');
});

t.test(
  'no read is planned here once the database has sqlite_stat4 (SQLite may plan again for the values bound)',
  async (t) => {
    const { engine, file } = chinookEngine(t);
    t.ok(engine.execBoundedRead(request(file, 'SELECT Name FROM Track WHERE AlbumId = ?', [1])), 'planned before');
    // The service refuses ANALYZE; an uploaded file may have run it.
    const other = new Database(file);
    other.exec('ANALYZE');
    other.close();
    t.equal(
      engine.execBoundedRead(request(file, 'SELECT Name FROM Track WHERE AlbumId = ?', [1])),
      undefined,
      'not after ANALYZE',
    );
  },
);

t.test('a decision follows changes to the data made by another connection', async (t) => {
  const { engine, file, other } = withOtherConnection(t);
  other.exec(request(file, 'CREATE TABLE grow (id INTEGER PRIMARY KEY)'));
  t.ok(engine.execBoundedRead(request(file, 'SELECT count(*) FROM grow')), 'empty: bounded');
  other.exec(request(file, GROW_PAST_BUDGET));
  t.equal(
    engine.execBoundedRead(request(file, 'SELECT count(*) FROM grow')),
    undefined,
    'over the budget once it grew',
  );
});

t.test(
  'a refusal is kept across data changes, decided again every 16th ask, and dropped with the schema',
  async (t) => {
    const { engine, file, other } = withOtherConnection(t);
    const count = (): unknown => engine.execBoundedRead(request(file, 'SELECT count(*) FROM grow'));
    other.exec(request(file, 'CREATE TABLE grow (id INTEGER PRIMARY KEY)'));
    other.exec(request(file, GROW_PAST_BUDGET));
    t.equal(count(), undefined, 'over the budget: refused');
    other.exec(request(file, 'DELETE FROM grow'));
    for (let ask = 1; ask < 16; ask++)
      t.equal(count(), undefined, `the refusal reused, ask ${ask} after the data moved`);
    t.ok(count(), 'decided again on the 16th: bounded, the table now empty');

    other.exec(request(file, GROW_PAST_BUDGET));
    t.equal(count(), undefined, 'a bounded decision is never kept across a change: refused at once');
    other.exec(request(file, 'DELETE FROM grow'));
    other.exec(request(file, 'CREATE TABLE unrelated (id INTEGER PRIMARY KEY)'));
    t.ok(count(), 'a schema change drops the refusal at once');
  },
);

t.test('the text check turns most non-candidates away before any EXPLAIN', async (t) => {
  t.equal(textFacts('WITH RECURSIVE c(n) AS (SELECT 1) SELECT * FROM c'), undefined);
  t.equal(textFacts('SELECT randomblob(5)'), undefined);
  t.equal(textFacts('SELECT * FROM t WHERE a LIKE b'), undefined);
  t.equal(textFacts("SELECT * FROM t WHERE a LIKE '%a%b%c%d%'"), undefined);
  t.match(textFacts("SELECT * FROM t WHERE a LIKE '%a%' OR b IN (1, 2)"), { lists: true, patterns: 1 });
});

t.test(
  'a bounded read is read whole when its plan keeps its rows within the limit, else row by row, cut alike',
  async (t) => {
    const { engine, file, other } = withOtherConnection(t);
    // better-sqlite3's statements share one prototype: count the row-by-row reads made while a read runs here.
    const scratch = new Database(':memory:');
    const statementPrototype = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as {
      iterate: (...a: unknown[]) => unknown;
    };
    scratch.close();
    const iterate = statementPrototype.iterate;
    let rowByRow = 0;
    statementPrototype.iterate = function (this: unknown, ...args: unknown[]) {
      rowByRow++;
      return iterate.apply(this, args);
    };
    t.teardown(() => {
      statementPrototype.iterate = iterate;
    });
    const cases: Array<{ limits: Partial<ExecRequest>; whole: boolean; truncated: boolean }> = [
      { limits: { maxResultRows: 10_000 }, whole: true, truncated: false },
      { limits: { maxResultRows: 10_000, maxResultBytes: 20_000 }, whole: true, truncated: true },
      { limits: { maxResultRows: 10_000, jsonRows: true }, whole: true, truncated: false },
      // Track has 3,503 rows: a limit of 10 is met row by row, which stops reading there.
      { limits: { maxResultRows: 10 }, whole: false, truncated: true },
      { limits: { maxResultRows: 10, jsonRows: true }, whole: false, truncated: true },
    ];
    for (const { limits, whole, truncated } of cases) {
      const ask = { ...request(file, 'SELECT * FROM Track'), ...limits };
      rowByRow = 0;
      const here = engine.execBoundedRead(ask);
      t.equal(rowByRow, whole ? 0 : 1, `${JSON.stringify(limits)}: read ${whole ? 'whole' : 'row by row'}`);
      t.equal(here?.[0]?.truncated === true, truncated, `${JSON.stringify(limits)}: truncated ${truncated}`);
      t.strictSame(here, other.exec(ask), `${JSON.stringify(limits)}: the answer of the ordinary path`);
    }
  },
);
