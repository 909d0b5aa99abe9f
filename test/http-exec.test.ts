/**
 * POST /exec over HTTP against the real server. Multi-DB mode unless a test says otherwise: one
 * shared server, one fresh database per test; tests that need other flags
 * start their own server in their own test directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { serverPerFile, startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { execOk } from './helpers/exec';
import { scratchDir } from './helpers/scratch-dir';

type Value = number | string | boolean | null;
interface Result {
  columns: string[];
  types?: (string | null)[];
  rows: Value[][];
  message?: string;
  changes?: number;
  truncated?: boolean;
}

// Each test starts servers of its own or uses the shared one; under a loaded machine a start can take seconds.
t.setTimeout(120_000);

const root = scratchDir(t);
let server!: TestServer;
let dbCount = 0;
serverPerFile(t, root, (started) => (server = started));

/** Starts a server with extra flags in its own test directory, stopped when `tt` ends. */
async function ownServer(tt: tap.Test, args: string[]): Promise<{ server: TestServer; dir: string }> {
  const dir = scratchDir(tt);
  const own = await startServer(args, { cwd: dir });
  tt.teardown(async () => {
    await own.stop();
  });
  return { server: own, dir };
}

/** Creates a fresh database on `on` (the shared server by default) and runs `setup` in it. */
async function freshDb(tt: tap.Test, setup = '', on: TestServer = server): Promise<string> {
  const name = `db${++dbCount}`;
  const created = await on.post('/dbs', { db: name });
  tt.equal(created.status, 201, `POST /dbs ${name}: ${created.text}`);
  if (setup !== '') await execOk<Result>(tt, on, name, setup);
  return name;
}

/** POST /exec that must succeed; returns its results. */
/** The rows of the last statement of `sql`. */
async function rowsOf(
  tt: tap.Test,
  db: string,
  sql: string,
  params?: unknown,
  on: TestServer = server,
): Promise<Value[][]> {
  const results = await execOk<Result>(tt, on, db, sql, params === undefined ? {} : { params });
  return results[results.length - 1]?.rows ?? [];
}

/** Asserts a catalog error body: status, ok false, the code, and error text starting with `[SQnnnn]`. */

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

// ── Statement kinds and result shapes ──────────────────────────────────────────

t.test('answers SELECT with columns and rows and no message', async (tt) => {
  const db = await freshDb(
    tt,
    "CREATE TABLE t (id INT PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b')",
  );
  const results = await execOk<Result>(tt, server, db, 'SELECT id, name FROM t ORDER BY id');
  tt.strictSame(results, [
    {
      columns: ['id', 'name'],
      types: ['INT', 'TEXT'],
      rows: [
        [1, 'a'],
        [2, 'b'],
      ],
    },
  ]);
  const reply = await server.exec(db, 'SELECT 1');
  tt.equal(reply.body?.db, `${db}.db`, 'the response names the database');
  tt.notOk('message' in (reply.body?.results?.[0] ?? {}), 'no message on a SELECT');
  const empty = await execOk<Result>(tt, server, db, 'SELECT id FROM t WHERE id > 5');
  tt.strictSame(empty, [{ columns: ['id'], types: ['INT'], rows: [] }], 'an empty result still names its columns');
});

t.test('gives each result column its declared type, null for an expression', async (tt) => {
  const db = await freshDb(
    tt,
    "CREATE TABLE m (id INT PRIMARY KEY, price FLOAT, ok BOOL, data BLOB, note TEXT); INSERT INTO m VALUES (1, 7.0, TRUE, X'0102', NULL)",
  );
  const [result] = await execOk<Result>(tt, server, db, 'SELECT id, price, ok, data, note, count(*) AS n FROM m');
  tt.strictSame(
    result?.types,
    ['INT', 'FLOAT', 'BOOL', 'BLOB', 'TEXT', null],
    'FLOAT 7.0 travels as 7: its type tells it apart',
  );
  tt.strictSame(result?.rows, [[1, 7, true, 'AQI=', null, 1]]);
  const [constant] = await execOk<Result>(tt, server, db, 'SELECT 1 AS one');
  tt.notOk(constant && 'types' in constant, 'a result of expressions only has no types');
});

t.test('reports INSERT, UPDATE and DELETE with their affected-row counts', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY, g TEXT, n INT)');
  const [insert] = await execOk<Result>(
    tt,
    server,
    db,
    "INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3), (4, 'b', 4), (5, 'c', 5)",
  );
  tt.strictSame(insert, { columns: [], rows: [], message: 'INSERT 5', changes: 5 });
  const [update] = await execOk<Result>(tt, server, db, "UPDATE t SET n = n * 10 WHERE g IN ('a', 'b') AND n > 1");
  tt.strictSame(update, { columns: [], rows: [], message: 'UPDATE 3', changes: 3 });
  const [none] = await execOk<Result>(tt, server, db, 'UPDATE t SET n = 0 WHERE id = 99');
  tt.strictSame(none, { columns: [], rows: [], message: 'UPDATE 0', changes: 0 });
  const [remove] = await execOk<Result>(tt, server, db, "DELETE FROM t WHERE n >= 30 OR g = 'c'");
  tt.strictSame(remove, { columns: [], rows: [], message: 'DELETE 3', changes: 3 });
  tt.strictSame(await rowsOf(tt, db, 'SELECT id, g, n FROM t ORDER BY id'), [
    [1, 'a', 1],
    [2, 'a', 20],
  ]);
  const [all] = await execOk<Result>(tt, server, db, 'DELETE FROM t');
  tt.equal(all?.message, 'DELETE 2');
});

t.test('updates and deletes many rows through subqueries in WHERE', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE n (id INT PRIMARY KEY, x INT, s TEXT);
    INSERT INTO n VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c'), (4, NULL, 'd'), (5, 5, NULL), (6, 2, 'e');
    CREATE TABLE m (v INT); INSERT INTO m VALUES (2), (3)`,
  );
  const [update] = await execOk<Result>(tt, server, db, "UPDATE n SET s = 'hit' WHERE x IN (SELECT v FROM m)");
  tt.equal(update?.message, 'UPDATE 3');
  tt.equal(update?.changes, 3);
  const [remove] = await execOk<Result>(
    tt,
    server,
    db,
    'DELETE FROM n WHERE x IS NULL OR NOT EXISTS (SELECT 1 FROM m WHERE m.v = n.x)',
  );
  tt.equal(remove?.message, 'DELETE 3');
  tt.strictSame(await rowsOf(tt, db, 'SELECT id, s FROM n ORDER BY id'), [
    [2, 'hit'],
    [3, 'hit'],
    [6, 'hit'],
  ]);
});

t.test('runs CREATE, ALTER and DROP of tables and indexes and answers OK', async (tt) => {
  const db = await freshDb(tt);
  const ok = { columns: [], rows: [], message: 'OK', changes: 0 };
  const statements = [
    'CREATE TABLE t (id INT PRIMARY KEY, name TEXT)',
    'ALTER TABLE t ADD COLUMN age INT',
    'ALTER TABLE t ADD COLUMN active BOOL',
    'ALTER TABLE t RENAME TO people',
    'ALTER TABLE people RENAME COLUMN name TO full_name',
    'CREATE INDEX people_age ON people (age)',
    'CREATE UNIQUE INDEX people_name ON people (full_name)',
    'DROP INDEX people_age',
  ];
  for (const sql of statements) tt.strictSame(await execOk<Result>(tt, server, db, sql), [ok], sql);
  const objects = await rowsOf(
    tt,
    db,
    "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  tt.strictSame(objects, [
    ['table', 'people'],
    ['index', 'people_name'],
  ]);
  const columns = await execOk<Result>(tt, server, db, 'SELECT * FROM people');
  tt.strictSame(columns[0]?.columns, ['id', 'full_name', 'age', 'active'], 'renamed and added columns');
  // The added columns are typed like CREATE TABLE's.
  isError(
    tt,
    await server.exec(db, "INSERT INTO people (id, age) VALUES (1, 'old')"),
    400,
    4001,
    'text into the added INT',
  );
  isError(
    tt,
    await server.exec(db, 'INSERT INTO people (id, active) VALUES (1, 7)'),
    400,
    4001,
    '7 into the added BOOL',
  );
  isError(
    tt,
    await server.exec(db, "INSERT INTO people (id, full_name) VALUES (1, 'x'), (2, 'x')"),
    400,
    3002,
    'the unique index holds',
  );
  tt.strictSame(await execOk<Result>(tt, server, db, 'DROP TABLE people'), [ok], 'DROP TABLE');
  tt.strictSame(await rowsOf(tt, db, "SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'"), []);
  isError(tt, await server.exec(db, 'SELECT * FROM people'), 400, 2003, 'the dropped table is gone');
});

t.test('builds a new index over the rows already in the table', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE t (id INT PRIMARY KEY, n INT, tag TEXT);
    INSERT INTO t VALUES (1, 30, 'x'), (2, 10, 'y'), (3, 20, 'x'), (4, NULL, 'z')`,
  );
  tt.equal((await execOk<Result>(tt, server, db, 'CREATE INDEX t_n ON t (n)'))[0]?.message, 'OK');
  // INDEXED BY forces the index: only a backfilled index finds the old rows.
  tt.strictSame(await rowsOf(tt, db, 'SELECT id FROM t INDEXED BY t_n WHERE n > 0 ORDER BY n'), [[2], [3], [1]]);
  tt.strictSame(await rowsOf(tt, db, 'INTEGRITY CHECK'), [['ok']], 'the index agrees with the table');

  const dup = await server.exec(db, 'CREATE UNIQUE INDEX t_tag ON t (tag)');
  isError(tt, dup, 400, 3002, 'a UNIQUE index over duplicates');
  tt.equal(dup.body?.sqliteCode, 'SQLITE_CONSTRAINT_UNIQUE');
  tt.equal(dup.body?.statement, 0);
  tt.strictSame(
    await rowsOf(tt, db, "SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name"),
    [['t_n']],
    'the failed index is not left behind',
  );

  tt.equal(
    (await execOk<Result>(tt, server, db, 'CREATE UNIQUE INDEX t_id_n ON t (n)'))[0]?.message,
    'OK',
    'a UNIQUE index over distinct values',
  );
  isError(
    tt,
    await server.exec(db, "INSERT INTO t VALUES (5, 30, 'w')"),
    400,
    3002,
    'the new unique index rejects a duplicate',
  );
});

t.test('rolls back to a savepoint and releases it within one request', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  const results = await execOk<Result>(
    tt,
    server,
    db,
    `
    SAVEPOINT outer_sp; INSERT INTO t VALUES (1);
    SAVEPOINT inner_sp; INSERT INTO t VALUES (2);
    ROLLBACK TO inner_sp; INSERT INTO t VALUES (3);
    RELEASE outer_sp; SELECT id FROM t ORDER BY id`,
  );
  tt.equal(results.length, 8);
  tt.strictSame(results[0], { columns: [], rows: [], message: 'OK', changes: 0 }, 'SAVEPOINT answers OK');
  tt.equal(results[4]?.message, 'OK', 'ROLLBACK TO answers OK');
  tt.equal(results[6]?.message, 'OK', 'RELEASE answers OK');
  tt.strictSame(results[7]?.rows, [[1], [3]], 'the rolled-back insert is gone inside the request');
  tt.strictSame(await rowsOf(tt, db, 'SELECT id FROM t ORDER BY id'), [[1], [3]], 'and the rest was committed');
  isError(tt, await server.exec(db, 'ROLLBACK TO nowhere'), 400, 5001, 'an unknown savepoint');
});

t.test('answers INTEGRITY CHECK with one ok row', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)');
  const [check] = await execOk<Result>(tt, server, db, 'INTEGRITY CHECK');
  tt.strictSame(check?.columns, ['result']);
  tt.strictSame(check?.rows, [['ok']]);
});

t.test('accepts WITH, aggregates, GROUP BY, HAVING, DISTINCT and UNION', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE sales (id INT PRIMARY KEY, region TEXT, amount INT);
    INSERT INTO sales VALUES (1, 'n', 10), (2, 'n', 20), (3, 's', 5), (4, 'e', 7), (5, 'e', 8), (6, 'e', 1)`,
  );
  tt.strictSame(
    await rowsOf(tt, db, 'WITH big AS (SELECT * FROM sales WHERE amount >= 7) SELECT id FROM big ORDER BY id'),
    [[1], [2], [4], [5]],
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT sum(x) FROM c',
    ),
    [[15]],
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT count(*), sum(amount), min(amount), max(amount), avg(amount), count(DISTINCT region) FROM sales',
    ),
    [[6, 51, 1, 20, 8.5, 3]],
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT region, sum(amount) AS total FROM sales GROUP BY region HAVING sum(amount) > 10 ORDER BY region',
    ),
    [
      ['e', 16],
      ['n', 30],
    ],
  );
  tt.strictSame(await rowsOf(tt, db, 'SELECT DISTINCT region FROM sales ORDER BY region'), [['e'], ['n'], ['s']]);
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT region FROM sales WHERE amount > 9 UNION SELECT region FROM sales WHERE amount < 6 ORDER BY 1',
    ),
    [['e'], ['n'], ['s']],
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT count(*) FROM (SELECT region FROM sales WHERE amount > 9 UNION ALL SELECT region FROM sales WHERE amount < 6)',
    ),
    [[4]],
  );
});

t.test('returns the rows of INSERT … RETURNING', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY, name TEXT, ok BOOL)');
  const [result] = await execOk<Result>(
    tt,
    server,
    db,
    "INSERT INTO t (id, name, ok) VALUES (1, 'a', TRUE), (2, 'b', FALSE) RETURNING id, name, ok",
  );
  tt.strictSame(result, {
    columns: ['id', 'name', 'ok'],
    types: ['INT', 'TEXT', 'BOOL'],
    rows: [
      [1, 'a', true],
      [2, 'b', false],
    ],
    message: 'INSERT 2',
    changes: 2,
  });
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM t'), [[2]]);
});

// ── WHERE, ORDER BY, LIMIT, OFFSET ─────────────────────────────────────────────

const WHERE_FIXTURE = `
  CREATE TABLE n (id INT PRIMARY KEY, x INT, s TEXT);
  INSERT INTO n VALUES (1, 1, 'apple'), (2, 2, 'banana'), (3, 3, 'cherry'), (4, NULL, 'date'), (5, 5, NULL), (6, 2, 'avocado');
  CREATE TABLE m (v INT); INSERT INTO m VALUES (2), (3);
  CREATE TABLE mn (v INT); INSERT INTO mn VALUES (2), (NULL)`;

/** Asserts which ids of table n each WHERE selects. */
async function expectIds(tt: tap.Test, db: string, cases: ReadonlyArray<[string, number[]]>): Promise<void> {
  for (const [where, ids] of cases) {
    const rows = await rowsOf(tt, db, `SELECT id FROM n WHERE ${where} ORDER BY id`);
    tt.strictSame(
      rows,
      ids.map((id) => [id]),
      `WHERE ${where}`,
    );
  }
}

t.test('filters with every comparison operator', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  await expectIds(tt, db, [
    ['x = 2', [2, 6]],
    ['x < 2', [1]],
    ['x > 2', [3, 5]],
    ['x <= 2', [1, 2, 6]],
    ['x >= 3', [3, 5]],
    ['x <> 2', [1, 3, 5]],
    ['x != 2', [1, 3, 5]],
    ["s = 'date'", [4]],
  ]);
});

t.test('filters with BETWEEN, IS NULL and LIKE', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  await expectIds(tt, db, [
    ['x BETWEEN 2 AND 3', [2, 3, 6]],
    ['x NOT BETWEEN 2 AND 3', [1, 5]],
    ['x IS NULL', [4]],
    ['x IS NOT NULL', [1, 2, 3, 5, 6]],
    ["s LIKE 'a%'", [1, 6]],
    ["s LIKE '_a%'", [2, 4]],
    ["s LIKE 'A%'", [1, 6]],
    ["s NOT LIKE 'a%'", [2, 3, 4]],
  ]);
});

t.test('filters with IN lists, IN and = subqueries and EXISTS', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  await expectIds(tt, db, [
    ['x IN (1, 5)', [1, 5]],
    ['x NOT IN (1, 5)', [2, 3, 6]],
    ['x IN (SELECT v FROM m)', [2, 3, 6]],
    ['x NOT IN (SELECT v FROM m)', [1, 5]],
    ['x = (SELECT max(v) FROM m)', [3]],
    ['x > (SELECT min(v) FROM m)', [3, 5]],
    ['EXISTS (SELECT 1 FROM m WHERE m.v = n.x)', [2, 3, 6]],
    ['NOT EXISTS (SELECT 1 FROM m WHERE m.v = n.x)', [1, 4, 5]],
    ['EXISTS (SELECT 1 FROM m WHERE v > 100)', []],
  ]);
});

t.test('combines conditions with AND, OR, NOT and parentheses', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  await expectIds(tt, db, [
    ["x > 1 AND s LIKE 'a%'", [6]],
    ["x = 1 OR s = 'date'", [1, 4]],
    ['NOT (x = 2)', [1, 3, 5]],
    ['(x = 1 OR x = 5) AND NOT (s IS NULL)', [1]],
    ['x = 1 OR (x = 5 AND s IS NULL)', [1, 5]],
    ['(x = 1 OR x = 5) AND s IS NULL', [5]],
    ["NOT (x = 2 OR s LIKE 'a%')", [3]],
  ]);
});

t.test('applies three-valued logic to NULL', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  await expectIds(tt, db, [
    ['x <> 1', [2, 3, 5, 6]],
    ['NOT (x = 1)', [2, 3, 5, 6]],
    ['x = NULL', []],
    ['x <> NULL', []],
    ['x IN (1, NULL)', [1]],
    ['x NOT IN (1, NULL)', []],
    ['x NOT IN (SELECT v FROM mn)', []],
    ['x > 1 OR x IS NULL', [2, 3, 4, 5, 6]],
    ["s <> 'apple'", [2, 3, 4, 6]],
  ]);
  tt.strictSame(await rowsOf(tt, db, 'SELECT NULL = NULL, NULL IS NULL, NULL AND 0, NULL OR 1, NULL AND 1'), [
    [null, 1, 0, 1, null],
  ]);
});

t.test('orders, limits and offsets a SELECT', async (tt) => {
  const db = await freshDb(tt, WHERE_FIXTURE);
  const ids = async (sql: string): Promise<Value[]> => (await rowsOf(tt, db, sql)).map((row) => row[0] ?? null);
  tt.strictSame(await ids('SELECT id FROM n ORDER BY x ASC, id'), [4, 1, 2, 6, 3, 5], 'ASC, NULL first');
  tt.strictSame(await ids('SELECT id FROM n ORDER BY x DESC, id'), [5, 3, 2, 6, 1, 4], 'DESC');
  tt.strictSame(await ids('SELECT id FROM n ORDER BY s DESC LIMIT 2'), [4, 3], 'DESC with LIMIT');
  tt.strictSame(await ids('SELECT id FROM n ORDER BY id LIMIT 2 OFFSET 3'), [4, 5], 'LIMIT with OFFSET');
  tt.strictSame(await ids('SELECT id FROM n ORDER BY id LIMIT 10 OFFSET 5'), [6], 'OFFSET near the end');
  tt.strictSame(await ids('SELECT id FROM n ORDER BY id DESC LIMIT 3'), [6, 5, 4]);
  tt.strictSame(await ids('SELECT id FROM n ORDER BY id LIMIT 0'), []);
});

// ── Joins ──────────────────────────────────────────────────────────────────────

const JOIN_FIXTURE = `
  CREATE TABLE authors (id INT PRIMARY KEY, name TEXT);
  INSERT INTO authors VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cid');
  CREATE TABLE books (id INT PRIMARY KEY, author_id INT, title TEXT);
  INSERT INTO books VALUES (10, 1, 'A1'), (11, 1, 'A2'), (12, 2, 'B1'), (13, 9, 'Orphan');
  CREATE TABLE reviews (book_id INT, stars INT);
  INSERT INTO reviews VALUES (10, 5), (12, 3), (12, 4);
  CREATE TABLE owners (owner_id INT PRIMARY KEY, owner TEXT);
  INSERT INTO owners VALUES (1, 'Olga'), (2, 'Omar');
  CREATE TABLE pets (pet TEXT, owner_id INT);
  INSERT INTO pets VALUES ('rex', 1), ('tom', 2), ('kit', 1), ('stray', NULL);
  CREATE TABLE staff (id INT PRIMARY KEY, name TEXT, boss INT);
  INSERT INTO staff VALUES (1, 'Eve', NULL), (2, 'Fay', 1), (3, 'Gil', 1), (4, 'Hal', 2);
  CREATE TABLE sizes (size TEXT); INSERT INTO sizes VALUES ('S'), ('L');`;

t.test('joins with INNER, LEFT, RIGHT and FULL OUTER JOIN', async (tt) => {
  const db = await freshDb(tt, JOIN_FIXTURE);
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a INNER JOIN books b ON a.id = b.author_id ORDER BY b.id',
    ),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
    ],
    'INNER',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT a.name, b.title FROM authors a JOIN books b ON a.id = b.author_id ORDER BY b.id'),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
    ],
    'plain JOIN is INNER',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a LEFT JOIN books b ON a.id = b.author_id ORDER BY a.id, b.id',
    ),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
      ['Cid', null],
    ],
    'LEFT',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a LEFT OUTER JOIN books b ON a.id = b.author_id WHERE b.id IS NULL',
    ),
    [['Cid', null]],
    'LEFT OUTER, unmatched rows',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a RIGHT JOIN books b ON a.id = b.author_id ORDER BY b.id',
    ),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
      [null, 'Orphan'],
    ],
    'RIGHT',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a FULL OUTER JOIN books b ON a.id = b.author_id ORDER BY coalesce(b.id, 100), a.id',
    ),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
      [null, 'Orphan'],
      ['Cid', null],
    ],
    'FULL OUTER',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      'SELECT a.name, b.title FROM authors a FULL JOIN books b ON a.id = b.author_id ORDER BY coalesce(b.id, 100), a.id',
    ),
    [
      ['Ann', 'A1'],
      ['Ann', 'A2'],
      ['Bob', 'B1'],
      [null, 'Orphan'],
      ['Cid', null],
    ],
    'FULL without OUTER',
  );
});

t.test('joins with CROSS JOIN, USING and NATURAL JOIN', async (tt) => {
  const db = await freshDb(tt, JOIN_FIXTURE);
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT a.name, s.size FROM authors a CROSS JOIN sizes s ORDER BY a.id, s.size'),
    [
      ['Ann', 'L'],
      ['Ann', 'S'],
      ['Bob', 'L'],
      ['Bob', 'S'],
      ['Cid', 'L'],
      ['Cid', 'S'],
    ],
    'CROSS',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT owner_id, owner, pet FROM owners JOIN pets USING (owner_id) ORDER BY pet'),
    [
      [1, 'Olga', 'kit'],
      [1, 'Olga', 'rex'],
      [2, 'Omar', 'tom'],
    ],
    'USING',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT owner, pet FROM pets LEFT JOIN owners USING (owner_id) ORDER BY pet'),
    [
      ['Olga', 'kit'],
      ['Olga', 'rex'],
      [null, 'stray'],
      ['Omar', 'tom'],
    ],
    'LEFT JOIN … USING',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT * FROM owners NATURAL JOIN pets ORDER BY pet'),
    [
      [1, 'Olga', 'kit'],
      [1, 'Olga', 'rex'],
      [2, 'Omar', 'tom'],
    ],
    'NATURAL',
  );
  const [natural] = await execOk<Result>(tt, server, db, 'SELECT * FROM owners NATURAL JOIN pets');
  tt.strictSame(natural?.columns, ['owner_id', 'owner', 'pet'], 'NATURAL shows the common column once');
});

t.test('joins several tables, aliases and a table with itself', async (tt) => {
  const db = await freshDb(tt, JOIN_FIXTURE);
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      `
      SELECT a.name AS author, b.title AS book, r.stars AS stars
      FROM authors AS a JOIN books AS b ON b.author_id = a.id JOIN reviews AS r ON r.book_id = b.id
      ORDER BY b.id, r.stars`,
    ),
    [
      ['Ann', 'A1', 5],
      ['Bob', 'B1', 3],
      ['Bob', 'B1', 4],
    ],
    'three tables',
  );
  const [aliased] = await execOk<Result>(
    tt,
    server,
    db,
    'SELECT a.name AS author, count(r.stars) AS n FROM authors a LEFT JOIN books b ON b.author_id = a.id LEFT JOIN reviews r ON r.book_id = b.id GROUP BY a.id ORDER BY a.id',
  );
  tt.strictSame(aliased?.columns, ['author', 'n'], 'aliases name the columns');
  tt.strictSame(aliased?.rows, [
    ['Ann', 1],
    ['Bob', 2],
    ['Cid', 0],
  ]);
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT e.name, m.name FROM staff e LEFT JOIN staff m ON e.boss = m.id ORDER BY e.id'),
    [
      ['Eve', null],
      ['Fay', 'Eve'],
      ['Gil', 'Eve'],
      ['Hal', 'Fay'],
    ],
    'self-join',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      "SELECT e.name, m.name FROM staff e, staff m WHERE e.boss = m.id AND m.name = 'Eve' ORDER BY e.id",
    ),
    [
      ['Fay', 'Eve'],
      ['Gil', 'Eve'],
    ],
    'comma join with a WHERE',
  );
});

t.test('applies a qualified WHERE after the join', async (tt) => {
  const db = await freshDb(tt, JOIN_FIXTURE);
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      "SELECT authors.name, books.title FROM authors LEFT JOIN books ON authors.id = books.author_id WHERE books.title = 'A1'",
    ),
    [['Ann', 'A1']],
    'WHERE on the right table filters the joined rows',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      "SELECT authors.name, books.title FROM authors LEFT JOIN books ON authors.id = books.author_id AND books.title = 'A1' ORDER BY authors.id",
    ),
    [
      ['Ann', 'A1'],
      ['Bob', null],
      ['Cid', null],
    ],
    'the same condition in ON keeps every left row',
  );
  tt.strictSame(
    await rowsOf(
      tt,
      db,
      "SELECT authors.name, books.title FROM authors JOIN books ON authors.id = books.author_id WHERE authors.name = 'Bob'",
    ),
    [['Bob', 'B1']],
    'WHERE on the left table',
  );
});

// ── Atomicity ──────────────────────────────────────────────────────────────────

t.test('rolls back the whole batch when its third statement fails', async (tt) => {
  const db = await freshDb(
    tt,
    "CREATE TABLE t (id INT PRIMARY KEY, name TEXT NOT NULL); INSERT INTO t VALUES (100, 'keep')",
  );
  const dup = await server.exec(
    db,
    "INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (2, 'b'); INSERT INTO t VALUES (1, 'again'); INSERT INTO t VALUES (3, 'c')",
  );
  isError(tt, dup, 400, 3003, 'duplicate primary key');
  tt.equal(dup.body?.statement, 2, 'names the failing statement, 0-based');
  tt.equal(dup.body?.sqliteCode, 'SQLITE_CONSTRAINT_PRIMARYKEY');
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT id FROM t ORDER BY id'),
    [[100]],
    'the first two inserts were rolled back',
  );

  const notNull = await server.exec(db, "UPDATE t SET name = 'changed'; DELETE FROM t; INSERT INTO t VALUES (5, NULL)");
  isError(tt, notNull, 400, 3001, 'NOT NULL');
  tt.equal(notNull.body?.statement, 2);
  tt.equal(notNull.body?.sqliteCode, 'SQLITE_CONSTRAINT_NOTNULL');
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT id, name FROM t'),
    [[100, 'keep']],
    'the update and delete were rolled back',
  );

  const ddl = await server.exec(db, 'CREATE TABLE u (a INT); INSERT INTO u VALUES (1); SELECT * FROM missing_table');
  isError(tt, ddl, 400, 2003, 'no such table');
  tt.equal(ddl.body?.statement, 2);
  tt.equal(ddl.body?.sqliteCode, 'SQLITE_ERROR');
  tt.strictSame(
    await rowsOf(tt, db, "SELECT name FROM sqlite_schema WHERE name = 'u'"),
    [],
    'the CREATE TABLE was rolled back',
  );

  const syntax = await server.exec(db, "INSERT INTO t VALUES (7, 'x'); SELECT 1; SELEC 2");
  isError(tt, syntax, 400, 1001, 'syntax error found before running');
  tt.equal(syntax.body?.statement, 2);
  tt.notOk('sqliteCode' in (syntax.body ?? {}), 'no sqliteCode when SQLite did not raise the error');
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM t'), [[1]]);
});

// ── Rejected statements ────────────────────────────────────────────────────────

async function expectRejected(tt: tap.Test, db: string, cases: readonly string[], code: number): Promise<void> {
  for (const sql of cases) isError(tt, await server.exec(db, sql), 400, code, sql);
}

t.test('rejects BEGIN, COMMIT and ROLLBACK with 1004', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  await expectRejected(
    tt,
    db,
    ['BEGIN', 'BEGIN TRANSACTION', 'BEGIN IMMEDIATE', 'COMMIT', 'END', 'ROLLBACK', 'ROLLBACK TRANSACTION'],
    1004,
  );
  const mid = await server.exec(db, 'INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2)');
  isError(tt, mid, 400, 1004, 'COMMIT inside a batch');
  tt.equal(mid.body?.statement, 1);
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM t'), [[0]], 'nothing of that batch ran');
});

t.test('rejects ATTACH, DETACH, VACUUM and the PRAGMAs that reach outside with 1003', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  await expectRejected(
    tt,
    db,
    [
      "ATTACH DATABASE 'other.db' AS other",
      "ATTACH 'other.db' AS other",
      'DETACH other',
      'DETACH DATABASE other',
      'VACUUM',
      "VACUUM INTO 'copy.db'",
      'pragma journal_mode',
      'PRAGMA database_list',
    ],
    1003,
  );
  // Introspection is answered (introspection.test.ts); a setting of the shared connection is refused for that.
  await expectRejected(tt, db, ['PRAGMA foreign_keys = OFF'], 1101);
  const leaked = filesUnder(root).filter((file) => /(other|copy)\.db$/.test(file));
  tt.strictSame(leaked, [], 'no file was created');
});

t.test('rejects REINDEX, ANALYZE and TEMP views and triggers with 1002', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  await expectRejected(
    tt,
    db,
    [
      'REINDEX',
      'REINDEX t',
      'ANALYZE',
      'CREATE TEMP VIEW v AS SELECT * FROM t',
      'CREATE TEMPORARY TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM t; END',
    ],
    1002,
  );
  tt.strictSame(await rowsOf(tt, db, "SELECT name FROM sqlite_schema WHERE type IN ('view', 'trigger')"), []);
});

t.test('rejects a misspelled statement with 1001 and empty SQL with 1005', async (tt) => {
  const db = await freshDb(tt);
  await expectRejected(tt, db, ['SELEC 1', 'SELECT FROM WHERE', "SELECT 'unterminated"], 1001);
  await expectRejected(tt, db, ['', '   ', ';', ' ; ; ', '-- only a comment', '/* only a comment */'], 1005);
  isError(tt, await server.post('/exec', { db }), 400, 1006, 'no sql at all');
});

t.test('refuses a statement hidden behind a comment that holds a semicolon', async (tt) => {
  const db = await freshDb(tt);
  const reply = await server.exec(db, "SELECT 1 /* ; */ ; ATTACH 'x.db' AS y");
  isError(tt, reply, 400, 1003, 'the ATTACH after the comment');
  tt.equal(reply.body?.statement, 1);
  const quoted = await server.exec(db, "SELECT ';' ; ATTACH 'x.db' AS y");
  isError(tt, quoted, 400, 1003, 'the ATTACH after a quoted semicolon');
  tt.strictSame(
    filesUnder(root).filter((file) => path.basename(file).startsWith('x.db')),
    [],
    'no x.db anywhere',
  );
});

t.test('refuses the table-valued PRAGMA functions that reach outside with 1003', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  await expectRejected(
    tt,
    db,
    [
      'SELECT * FROM pragma_database_list',
      'SELECT file FROM pragma_database_list()',
      'SELECT * FROM "pragma_database_list"',
      "SELECT * FROM pragma_table_list('t')",
      'SELECT (SELECT count(*) FROM pragma_database_list)',
    ],
    1003,
  );
});

// ── Database-level statements ──────────────────────────────────────────────────

t.test('creates, lists and drops databases with SQL', async (tt) => {
  const file = path.join(root, 'data', 'shop.db');
  const ok = { columns: [], rows: [], message: 'OK', changes: 0 };
  tt.strictSame(
    await execOk<Result>(tt, server, undefined, 'CREATE DATABASE shop'),
    [ok],
    'CREATE DATABASE needs no db',
  );
  tt.ok(fs.existsSync(file), 'the file exists');
  isError(tt, await server.exec(undefined, 'CREATE DATABASE shop'), 409, 2007, 'creating it again');
  tt.strictSame(
    await execOk<Result>(tt, server, undefined, 'CREATE DATABASE IF NOT EXISTS shop'),
    [ok],
    'IF NOT EXISTS',
  );
  const [shown] = await execOk<Result>(tt, server, undefined, 'SHOW DATABASES');
  tt.strictSame(shown?.columns, ['name']);
  tt.ok(
    shown?.rows.some((row) => row[0] === 'shop.db'),
    'SHOW DATABASES lists it',
  );
  tt.ok(shown?.rows.every((row) => row.length === 1 && typeof row[0] === 'string'));
  await execOk<Result>(tt, server, 'shop', 'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)');

  tt.strictSame(await execOk<Result>(tt, server, undefined, 'DROP DATABASE shop'), [ok], 'DROP DATABASE');
  tt.notOk(fs.existsSync(file), 'the file is gone');
  tt.strictSame(
    fs.readdirSync(path.join(root, 'data')).filter((name) => name.startsWith('shop.db')),
    [],
    'and its -wal and -shm',
  );
  isError(tt, await server.exec(undefined, 'DROP DATABASE shop'), 404, 2001, 'dropping a missing database');
  tt.strictSame(await execOk<Result>(tt, server, undefined, 'DROP DATABASE IF EXISTS shop'), [ok], 'IF EXISTS');
  const [after] = await execOk<Result>(tt, server, undefined, 'SHOW DATABASES');
  tt.notOk(
    after?.rows.some((row) => row[0] === 'shop.db'),
    'no longer listed',
  );
  isError(tt, await server.exec('shop', 'SELECT 1'), 404, 2001, 'no longer usable');
});

t.test('refuses database-level statements mixed with table statements', async (tt) => {
  const db = await freshDb(tt);
  isError(
    tt,
    await server.exec(db, 'CREATE DATABASE mixed; CREATE TABLE t (a INT)'),
    400,
    7002,
    'CREATE DATABASE with CREATE TABLE',
  );
  isError(tt, await server.exec(undefined, 'SHOW DATABASES; SELECT 1'), 400, 7002, 'SHOW DATABASES with SELECT');
  isError(tt, await server.exec(db, 'SELECT 1; DROP DATABASE IF EXISTS mixed'), 400, 7002, 'SELECT with DROP DATABASE');
  tt.notOk(fs.existsSync(path.join(root, 'data', 'mixed.db')), 'nothing was created');
});

t.test('refuses database-level statements in single-DB mode with 405', async (tt) => {
  const { server: single, dir } = await ownServer(tt, ['-db', 'only.db']);
  const results = await execOk<Result>(
    tt,
    single,
    undefined,
    'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1); SELECT id FROM t',
  );
  tt.strictSame(results[2]?.rows, [[1]], 'table statements need no db');
  for (const sql of [
    'CREATE DATABASE other',
    'CREATE DATABASE IF NOT EXISTS other',
    'DROP DATABASE only',
    'DROP DATABASE IF EXISTS other',
    'SHOW DATABASES',
  ]) {
    isError(tt, await single.exec(undefined, sql), 405, 7001, sql);
  }
  tt.notOk(fs.existsSync(path.join(dir, 'other.db')), 'no other database was created');
  tt.ok(fs.existsSync(path.join(dir, 'only.db')), 'the single database is still there');
  tt.strictSame(await rowsOf(tt, 'only', 'SELECT id FROM t', undefined, single), [[1]], 'with its rows');
});

t.test('needs db in multi-DB mode and refuses an unknown one', async (tt) => {
  isError(tt, await server.exec(undefined, 'SELECT 1'), 400, 7003, 'no db');
  isError(tt, await server.exec('', 'SELECT 1'), 400, 7003, 'empty db');
  isError(tt, await server.exec('nope', 'SELECT 1'), 404, 2001, 'unknown db');
  isError(tt, await server.exec('nope', 'CREATE TABLE t (a INT)'), 404, 2001, 'unknown db for a write');
  tt.notOk(fs.existsSync(path.join(root, 'data', 'nope.db')), 'the unknown database was not created');
  isError(tt, await server.exec('../escape', 'SELECT 1'), 400, 1011, 'a path as db name');
});

// ── Bound parameters ───────────────────────────────────────────────────────────

const PARAM_FIXTURE = 'CREATE TABLE p (id INT PRIMARY KEY, name TEXT, score FLOAT, n INT, ok BOOL)';

t.test('binds positional ? parameters from an array', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  const [insert] = await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name, score) VALUES (?, ?, ?)', {
    params: [1, "O'Brien; DROP TABLE p", 2.5],
  });
  tt.equal(insert?.message, 'INSERT 1');
  tt.strictSame(await rowsOf(tt, db, 'SELECT id, name, score FROM p WHERE id = ?', [1]), [
    [1, "O'Brien; DROP TABLE p", 2.5],
  ]);
  tt.strictSame(await rowsOf(tt, db, 'SELECT ?, ?', [null, 'x']), [[null, 'x']]);
});

t.test('binds :name, @name and $name parameters from an object', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES (:id, :name)', {
    params: { id: 1, name: 'colon' },
  });
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES (@id, @name)', {
    params: { id: 2, name: 'at' },
  });
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES ($id, $name)', {
    params: { id: 3, name: 'dollar' },
  });
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES (:id, :name)', {
    params: { ':id': 4, ':name': 'colon key' },
  });
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES (@id, @name)', {
    params: { '@id': 5, '@name': 'at key' },
  });
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES ($id, $name)', {
    params: { $id: 6, $name: 'dollar key' },
  });
  tt.strictSame(await rowsOf(tt, db, 'SELECT id, name FROM p ORDER BY id'), [
    [1, 'colon'],
    [2, 'at'],
    [3, 'dollar'],
    [4, 'colon key'],
    [5, 'at key'],
    [6, 'dollar key'],
  ]);
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT name FROM p WHERE id = :id OR id = :id + 1 ORDER BY id', { id: 2 }),
    [['at'], ['dollar']],
    'a name used twice',
  );
});

t.test('binds each statement of a statements batch', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  const reply = await server.post('/exec', {
    db,
    statements: [
      { sql: 'INSERT INTO p (id, name) VALUES (?, ?)', params: [1, 'a'] },
      { sql: 'INSERT INTO p (id, name) VALUES (:id, :name)', params: { id: 2, name: 'b' } },
      { sql: "INSERT INTO p (id, name) VALUES (3, 'c')" },
      { sql: 'SELECT id, name FROM p WHERE id >= ? ORDER BY id', params: [2] },
    ],
  });
  tt.equal(reply.status, 200, reply.text);
  tt.equal(reply.body?.results?.length, 4);
  tt.strictSame(reply.body?.results?.[3]?.rows, [
    [2, 'b'],
    [3, 'c'],
  ]);

  const failing = await server.post('/exec', {
    db,
    statements: [
      { sql: 'INSERT INTO p (id) VALUES (?)', params: [10] },
      { sql: 'INSERT INTO p (id, name) VALUES (?, ?)', params: [11] },
    ],
  });
  isError(tt, failing, 400, 1007, 'a batch statement missing a parameter');
  tt.equal(failing.body?.statement, 1);
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM p WHERE id >= 10'), [[0]], 'the batch was rolled back');
});

t.test('refuses missing and extra parameters with 1007', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  const cases: Array<[string, unknown, string]> = [
    ['SELECT ?, ?', [1], 'too few positional'],
    ['SELECT ?', [1, 2], 'too many positional'],
    ['SELECT 1', [1], 'positional for a statement without parameters'],
    ['SELECT :a, :b', { a: 1 }, 'a missing name'],
    ['SELECT :a', { a: 1, b: 2 }, 'an extra name'],
    ['SELECT 1', { a: 1 }, 'a name for a statement without parameters'],
    ['SELECT ?', [[1]], 'a non-scalar value'],
  ];
  for (const [sql, params, label] of cases) isError(tt, await server.exec(db, sql, { params }), 400, 1007, label);
  isError(
    tt,
    await server.exec(db, 'SELECT :a', { params: { a: 1, ':a': 2 } }),
    400,
    1007,
    'the same name with and without sigil',
  );
});

t.test('refuses parameters with a multi-statement sql with 1006', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  isError(tt, await server.exec(db, 'SELECT ?; SELECT ?', { params: [1, 2] }), 400, 1006, 'sql');
  isError(
    tt,
    await server.post('/exec', { db, statements: [{ sql: 'INSERT INTO p (id) VALUES (?); SELECT 1', params: [1] }] }),
    400,
    1006,
    'statements',
  );
  isError(tt, await server.exec(db, 'SELECT ?', { params: 5 }), 400, 1006, 'params that are neither array nor object');
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM p'), [[0]]);
});

t.test('binds true and false as 1 and 0 and JSON integers as integers', async (tt) => {
  const db = await freshDb(tt, PARAM_FIXTURE);
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, n, ok) VALUES (?, ?, ?), (?, ?, ?)', {
    params: [1, true, true, 2, false, false],
  });
  tt.strictSame(await rowsOf(tt, db, 'SELECT n, typeof(n), ok FROM p ORDER BY id'), [
    [1, 'integer', true],
    [0, 'integer', false],
  ]);
  tt.strictSame(
    await rowsOf(tt, db, "SELECT ? + 0, ? + 0, typeof(?), ? || ''", [true, false, true, true]),
    [[1, 0, 'integer', '1']],
    'the integers 1 and 0',
  );
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, name) VALUES (?, ?), (?, ?)', { params: [3, 5, 4, 2.5] });
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT name, typeof(name) FROM p WHERE id IN (3, 4) ORDER BY id'),
    [
      ['5', 'text'],
      ['2.5', 'text'],
    ],
    "5 is stored as '5', not '5.0'",
  );
  await execOk<Result>(tt, server, db, 'INSERT INTO p (id, n) VALUES (:id, :n)', { params: { id: 5, n: 7 } });
  tt.strictSame(await rowsOf(tt, db, 'SELECT n, typeof(n) FROM p WHERE id = 5'), [[7, 'integer']]);
});

// ── Types and values ───────────────────────────────────────────────────────────

t.test('reports type aliases under their canonical names', async (tt) => {
  const db = await freshDb(
    tt,
    `CREATE TABLE al (
    a INTEGER, b BIGINT, c SMALLINT, d INT,
    e REAL, f DOUBLE, g DOUBLE PRECISION, h NUMERIC, i DECIMAL, j FLOAT, k DECIMAL(10, 2),
    l VARCHAR(20), m CHAR(3), n CHARACTER VARYING(10), o STRING, p TEXT,
    q BOOLEAN, r BOOL, s integer, t varchar(5))`,
  );
  const reply = await server.get(`/schema?db=${db}&table=al`);
  tt.equal(reply.status, 200, reply.text);
  const types = Object.fromEntries(
    (reply.body?.table?.columns ?? []).map((c: { name: string; type: string }) => [c.name, c.type]),
  );
  tt.strictSame(types, {
    a: 'INT',
    b: 'INT',
    c: 'INT',
    d: 'INT',
    e: 'FLOAT',
    f: 'FLOAT',
    g: 'FLOAT',
    h: 'FLOAT',
    i: 'FLOAT',
    j: 'FLOAT',
    k: 'FLOAT',
    l: 'TEXT',
    m: 'TEXT',
    n: 'TEXT',
    o: 'TEXT',
    p: 'TEXT',
    q: 'BOOL',
    r: 'BOOL',
    s: 'INT',
    t: 'TEXT',
  });
});

t.test('refuses an unknown or missing column type with 4002', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  await expectRejected(
    tt,
    db,
    [
      'CREATE TABLE x (a GEOMETRY)',
      'CREATE TABLE x (a DATETIME(6))',
      'CREATE TABLE x (a JSON NOT NULL)',
      'CREATE TABLE x (a)',
      'CREATE TABLE x (id INT PRIMARY KEY, a NOT NULL)',
      'ALTER TABLE t ADD COLUMN b UUID',
      'ALTER TABLE t ADD COLUMN b',
    ],
    4002,
  );
  tt.strictSame(await rowsOf(tt, db, "SELECT name FROM sqlite_schema WHERE name = 'x'"), []);
});

t.test('enforces INT and FLOAT column types', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY, n INT, f FLOAT, s TEXT)');
  const abc = await server.exec(db, "INSERT INTO t (id, n) VALUES (1, 'abc')");
  isError(tt, abc, 400, 4001, "'abc' into INT");
  tt.match(abc.body?.error, /\bn\b/, 'the message names the column');
  isError(tt, await server.exec(db, 'INSERT INTO t (id, n) VALUES (2, 1.5)'), 400, 4001, '1.5 into INT');
  isError(tt, await server.exec(db, "INSERT INTO t (id, f) VALUES (3, 'abc')"), 400, 4001, "'abc' into FLOAT");
  isError(
    tt,
    await server.exec(db, "INSERT INTO t (id, n) VALUES (4, 1); UPDATE t SET n = 'x' WHERE id = 4"),
    400,
    4001,
    'an UPDATE to a wrong type',
  );
  await execOk<Result>(tt, server, db, "INSERT INTO t (id, n, f, s) VALUES (5, '12', 3, 'text')");
  const reply = await server.exec(db, 'SELECT n, typeof(n), f, typeof(f) FROM t WHERE id = 5');
  tt.strictSame(reply.body?.results?.[0]?.rows, [[12, 'integer', 3, 'real']], "'12' is stored as the integer 12");
  tt.match(reply.text, /\[12,"integer",3(\.0)?,"real"\]/, 'a JSON number, not a string');
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM t'), [[1]]);
});

t.test('refuses a wrong type in an INT PRIMARY KEY with 4001', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY, n INT)');
  const reply = await server.exec(db, "INSERT INTO t (id, n) VALUES ('abc', 1)");
  isError(tt, reply, 400, 4001, "'abc' into the INT PRIMARY KEY");
  tt.match(reply.body?.error, /\bid\b/, 'the message names the column');
});

t.test('accepts TRUE, FALSE, 1, 0 and NULL in BOOL and nothing else', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE b (id INT PRIMARY KEY, ok BOOL)');
  const [insert] = await execOk<Result>(
    tt,
    server,
    db,
    'INSERT INTO b VALUES (1, TRUE), (2, FALSE), (3, 1), (4, 0), (5, NULL)',
  );
  tt.equal(insert?.message, 'INSERT 5');
  tt.strictSame(await rowsOf(tt, db, 'SELECT id, ok FROM b ORDER BY id'), [
    [1, true],
    [2, false],
    [3, true],
    [4, false],
    [5, null],
  ]);
  for (const value of ['2', '-1', "'yes'", "'true'", '0.5']) {
    const reply = await server.exec(db, `INSERT INTO b VALUES (9, ${value})`);
    isError(tt, reply, 400, 4001, `${value} into BOOL`);
    tt.match(reply.body?.error, /\bok\b/, `${value}: the message names the column`);
  }
  isError(tt, await server.exec(db, 'UPDATE b SET ok = 2 WHERE id = 1'), 400, 4001, 'UPDATE to 2');
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM b'), [[5]]);
});

t.test('reads BOOL columns back as true and false, expressions as numbers', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE b (id INT PRIMARY KEY, ok BOOL);
    INSERT INTO b VALUES (1, TRUE), (2, FALSE);
    CREATE TABLE names (id INT PRIMARY KEY, name TEXT);
    INSERT INTO names VALUES (1, 'one'), (2, 'two')`,
  );
  tt.strictSame(await rowsOf(tt, db, 'SELECT ok FROM b ORDER BY id'), [[true], [false]], 'straight from the column');
  tt.strictSame(await rowsOf(tt, db, 'SELECT ok AS flag FROM b ORDER BY id'), [[true], [false]], 'through an alias');
  tt.strictSame(await rowsOf(tt, db, 'SELECT b.ok FROM b ORDER BY id'), [[true], [false]], 'qualified');
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT n.name, b.ok FROM names n JOIN b ON b.id = n.id ORDER BY n.id'),
    [
      ['one', true],
      ['two', false],
    ],
    'through a join',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT * FROM b ORDER BY id'),
    [
      [1, true],
      [2, false],
    ],
    'through *',
  );
  tt.strictSame(
    await rowsOf(tt, db, 'SELECT ok + 0, id FROM b ORDER BY id'),
    [
      [1, 1],
      [0, 2],
    ],
    'an expression is a number',
  );
  tt.strictSame(await rowsOf(tt, db, 'SELECT count(*) FROM b WHERE ok'), [[1]], 'usable as a condition');
  tt.strictSame(await rowsOf(tt, db, 'SELECT id FROM b WHERE ok = TRUE'), [[1]]);
});

t.test('writes 64-bit integers with all their digits', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE big (id INT PRIMARY KEY, v INT)');
  await execOk<Result>(
    tt,
    server,
    db,
    'INSERT INTO big VALUES (1, 9223372036854775807), (2, -9223372036854775808), (3, 9007199254740993)',
  );
  const reply = await server.exec(db, 'SELECT v FROM big ORDER BY id');
  tt.equal(reply.status, 200, reply.text);
  tt.match(
    reply.text,
    /\[\[9223372036854775807\],\[-9223372036854775808\],\[9007199254740993\]\]/,
    'exact digits in the JSON text',
  );
  const literal = await server.exec(db, 'SELECT 9223372036854775807, -9223372036854775808');
  tt.match(literal.text, /\[\[9223372036854775807,-9223372036854775808\]\]/);
  const small = await server.exec(db, 'SELECT 9007199254740991, -42');
  tt.strictSame(small.body?.results?.[0]?.rows, [[9007199254740991, -42]], 'safe integers are plain numbers');
});

t.test('writes FLOAT as a number, NULL as null and a BLOB as base64', async (tt) => {
  const db = await freshDb(
    tt,
    "CREATE TABLE f (id INT PRIMARY KEY, x FLOAT, s TEXT); INSERT INTO f VALUES (1, 2.5, NULL), (2, -0.125, 'text')",
  );
  tt.strictSame(await rowsOf(tt, db, 'SELECT x, s FROM f ORDER BY id'), [
    [2.5, null],
    [-0.125, 'text'],
  ]);
  tt.strictSame(await rowsOf(tt, db, "SELECT x'0102', x'', 1.0 / 4, NULL"), [['AQI=', '', 0.25, null]]);
});

// ── Limits ─────────────────────────────────────────────────────────────────────

t.test('cuts a result at -max-result-rows and says so', async (tt) => {
  const { server: limited } = await ownServer(tt, ['-dir', 'data', '-max-result-rows', '5']);
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY); CREATE TABLE r (id INT PRIMARY KEY)', limited);
  const values = Array.from({ length: 10 }, (_, i) => `(${i + 1})`).join(', ');
  await execOk<Result>(tt, limited, db, `INSERT INTO t VALUES ${values}`);
  const [select] = await execOk<Result>(tt, limited, db, 'SELECT id FROM t ORDER BY id');
  tt.strictSame(select, { columns: ['id'], types: ['INT'], rows: [[1], [2], [3], [4], [5]], truncated: true });
  const [exact] = await execOk<Result>(tt, limited, db, 'SELECT id FROM t WHERE id <= 5 ORDER BY id');
  tt.notOk('truncated' in (exact ?? {}), 'exactly the limit is not truncated');
  tt.equal(exact?.rows.length, 5);

  const [returning] = await execOk<Result>(tt, limited, db, 'INSERT INTO r SELECT id FROM t RETURNING id');
  tt.equal(returning?.rows.length, 5, 'RETURNING rows are cut too');
  tt.equal(returning?.truncated, true);
  tt.equal(returning?.message, 'INSERT 10', 'but every row was inserted');
  tt.equal(returning?.changes, 10);
  const [count] = await execOk<Result>(tt, limited, db, 'SELECT count(*) FROM r');
  tt.strictSame(count?.rows, [[10]]);
});

t.test('refuses more statements than -max-statements with 6001', async (tt) => {
  const { server: limited } = await ownServer(tt, ['-dir', 'data', '-max-statements', '3']);
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)', limited);
  isError(
    tt,
    await limited.exec(
      db,
      'INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (3); INSERT INTO t VALUES (4)',
    ),
    400,
    6001,
    'four statements',
  );
  const batch = await limited.post('/exec', {
    db,
    statements: [1, 2, 3, 4].map((id) => ({ sql: 'INSERT INTO t VALUES (?)', params: [id] })),
  });
  isError(tt, batch, 400, 6001, 'four statements in a batch');
  const [, , third] = await execOk<Result>(tt, limited, db, 'SELECT 1; SELECT 2; SELECT count(*) FROM t');
  tt.strictSame(third?.rows, [[0]], 'three statements pass, and nothing of the refused ones ran');
});
