/**
 * Values as SQLite holds them, answered so that a client can tell them apart:
 * ±Infinity (which SQLite stores in a REAL) is the JSON number 9e999 or
 * -9e999 over /exec, /rows, a session and the CSV and SQL exports, never the
 * `null` of SQL NULL; NaN, which SQLite itself turns into NULL, is NULL. And
 * the exports copy a database as it is: a served file whose rows break its
 * own foreign keys exports as .sqlite like any other, and a foreign-key
 * error never ends in a colon with nothing after it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { execOk } from './helpers/exec';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type TestServer } from './helpers/server';
import { RawJson, stringifyJson } from '../src/json-text';

async function download(server: TestServer, pathAndQuery: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(server.url + pathAndQuery);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** The rows of the first result as the client's JSON parser reads them. */
function firstRows(text: string): unknown[][] {
  return (JSON.parse(text) as { results: Array<{ rows: unknown[][] }> }).results[0]?.rows ?? [];
}

t.test('the JSON writer: ±Infinity as ±9e999 beside bigints and spliced text, NaN as null', async (t) => {
  t.equal(stringifyJson([Infinity, -Infinity, null, NaN, 1.5]), '[9e999,-9e999,null,null,1.5]');
  t.equal(stringifyJson({ rows: [[2n ** 63n - 1n, -Infinity]] }), '{"rows":[[9223372036854775807,-9e999]]}');
  t.equal(
    stringifyJson({ a: new RawJson('[[null]]'), b: [Infinity], c: 'null' }),
    '{"a":[[null]],"b":[9e999],"c":"null"}',
  );
  t.equal(stringifyJson({ a: null, b: 'no infinity here' }), '{"a":null,"b":"no infinity here"}');
});

t.test('±Infinity is the JSON number ±9e999 and NULL stays null, on every read path', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'inf' })).status, 201);
  await execOk(
    t,
    server,
    'inf',
    'CREATE TABLE m (id INT PRIMARY KEY, x FLOAT, note TEXT); ' +
      "INSERT INTO m VALUES (1, 9e999, 'up'), (2, -9e999, 'down'), (3, NULL, 'none'), (4, 1.5, 'plain')",
  );

  t.test('an expression over /exec', async (tt) => {
    const reply = await server.exec('inf', 'SELECT 1e308 * 10 AS up, -1e308 * 10 AS down, NULL AS none');
    tt.equal(reply.status, 200, reply.text);
    tt.match(reply.text, /"rows":\[\[9e999,-9e999,null\]\]/, 'written as numbers beyond the double range');
    tt.strictSame(firstRows(reply.text), [[Infinity, -Infinity, null]], 'which JSON.parse reads as ±Infinity');
  });

  t.test('NaN is NULL in SQLite itself, and answered as such', async (tt) => {
    const reply = await server.exec('inf', 'SELECT 9e999 - 9e999 AS v, typeof(9e999 - 9e999) AS t');
    tt.strictSame(firstRows(reply.text), [[null, 'null']]);
  });

  t.test('table reads over /exec: a point read, a scan, an aggregate, many rows', async (tt) => {
    const point = await server.exec('inf', 'SELECT x FROM m WHERE id = 1');
    tt.strictSame(firstRows(point.text), [[Infinity]], 'point read');
    const scan = await server.exec('inf', 'SELECT id, x FROM m ORDER BY id');
    tt.strictSame(
      firstRows(scan.text),
      [
        [1, Infinity],
        [2, -Infinity],
        [3, null],
        [4, 1.5],
      ],
      'scan',
    );
    const aggregate = await server.exec('inf', 'SELECT max(x), min(x), count(x) FROM m');
    tt.strictSame(firstRows(aggregate.text), [[Infinity, -Infinity, 3]], 'aggregate');
    const many = await server.exec(
      'inf',
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9000) ' +
        'SELECT i, CASE WHEN i % 2 = 0 THEN 9e999 ELSE NULL END, -9e999 FROM n',
    );
    const rows = firstRows(many.text);
    tt.equal(rows.length, 9000, 'a result written in several chunks');
    tt.strictSame(rows[8999], [9000, Infinity, -Infinity]);
    tt.strictSame(rows[0], [1, null, -Infinity]);
  });

  t.test('GET /rows by offset and by cursor', async (tt) => {
    const page = await server.get('/rows?db=inf&table=m&limit=2');
    tt.equal(page.status, 200, page.text);
    tt.match(page.text, /\[1,9e999,"up"\],\[2,-9e999,"down"\]/);
    tt.strictSame(JSON.parse(page.text).rows, [
      [1, Infinity, 'up'],
      [2, -Infinity, 'down'],
    ]);
    const cursor = await server.get('/rows?db=inf&table=m&limit=1');
    const next = await server.get(`/rows?db=inf&table=m&limit=3&after=${String(cursor.body.next)}`);
    tt.strictSame(JSON.parse(next.text).rows, [
      [2, -Infinity, 'down'],
      [3, null, 'none'],
      [4, 1.5, 'plain'],
    ]);
  });

  t.test('in a transaction session', async (tt) => {
    const begun = await server.post('/tx/begin', { db: 'inf' });
    tt.equal(begun.status, 200, begun.text);
    const session = String(begun.body.session);
    const reply = await server.request('POST', `/exec?session=${session}`, {
      body: { sql: 'SELECT x, 1e308 * 10 FROM m WHERE id IN (2, 3) ORDER BY id' },
    });
    tt.equal(reply.status, 200, reply.text);
    tt.strictSame(firstRows(reply.text), [
      [-Infinity, Infinity],
      [null, Infinity],
    ]);
    tt.equal((await server.post(`/tx/rollback?session=${session}`)).status, 200);
  });

  t.test('the CSV export writes 9e999, which the CSV import reads back as Infinity', async (tt) => {
    const csv = await download(server, '/dbs/inf/export?format=csv&table=m');
    tt.equal(csv.status, 200);
    tt.equal(csv.bytes.toString('utf8'), 'id,x,note\r\n1,9e999,up\r\n2,-9e999,down\r\n3,,none\r\n4,1.5,plain\r\n');
    tt.equal((await server.post('/dbs', { db: 'back' })).status, 201);
    const imported = await server.request('POST', '/dbs/back/import?table=m', {
      rawBody: csv.bytes,
      headers: { 'content-type': 'text/csv' },
    });
    tt.equal(imported.status, 200, imported.text);
    const back = await server.exec('back', 'SELECT x, typeof(x) FROM m ORDER BY id');
    tt.strictSame(firstRows(back.text), [
      [Infinity, 'real'],
      [-Infinity, 'real'],
      [null, 'null'],
      [1.5, 'real'],
    ]);
  });

  t.test('the SQL and .sqlite exports keep ±Infinity', async (tt) => {
    const sql = await download(server, '/dbs/inf/export?format=sql');
    tt.match(sql.bytes.toString('utf8'), /\(1, 9e999, 'up'\),\n\(2, -9e999, 'down'\)/);
    const file = await download(server, '/dbs/inf/export?format=sqlite');
    const copy = path.join(dir, 'copy.sqlite');
    fs.writeFileSync(copy, file.bytes);
    const db = new Database(copy, { readonly: true });
    tt.teardown(() => db.close());
    tt.strictSame(db.prepare('SELECT x FROM m ORDER BY id').pluck().all(), [Infinity, -Infinity, null, 1.5]);
  });
});

/** A file made elsewhere, as a course hands it out: no STRICT, keys that point nowhere (SQLite enforces none unless asked). */
function writeBrokenKeysFile(file: string): void {
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  db.exec(`
    CREATE TABLE person (id integer PRIMARY KEY, name text, ssn integer);
    CREATE TABLE income (ssn integer PRIMARY KEY, annual_income integer);
    CREATE TABLE member (id text PRIMARY KEY, person_id integer, FOREIGN KEY (person_id) REFERENCES person(id));
    CREATE TABLE score (v REAL, checked INTEGER CHECK (checked IN (0, 1)));
    INSERT INTO person VALUES (1, 'Ana', 100), (2, 'Ben', 200);
    INSERT INTO income VALUES (100, 30000);
    INSERT INTO member VALUES ('a', 1), ('b', 99), ('c', 98);
    INSERT INTO score VALUES (9e999, 1), (-9e999, 0);
  `);
  // Rows a CHECK added later refuses: SQLite serves them, and so must an export.
  db.pragma('ignore_check_constraints = ON');
  db.exec('INSERT INTO score VALUES (1.0, 7)');
  db.close();
}

t.test('a served file whose rows break its own keys exports as .sqlite, rows as they are', async (t) => {
  const dir = scratchDir(t);
  const file = path.join(dir, 'mystery.db');
  writeBrokenKeysFile(file);
  const server = await startServer(['-db', file], { cwd: dir });
  t.teardown(() => server.stop());
  const exported = await download(server, '/dbs/mystery.db/export?format=sqlite');
  t.equal(exported.status, 200, exported.status === 200 ? 'exported' : exported.bytes.toString('utf8'));
  const copy = path.join(dir, 'copy.sqlite');
  fs.writeFileSync(copy, exported.bytes);
  const db = new Database(copy, { readonly: true });
  t.teardown(() => db.close());
  t.strictSame(
    db.prepare('SELECT id, person_id FROM member ORDER BY id').raw().all(),
    [
      ['a', 1],
      ['b', 99],
      ['c', 98],
    ],
    'the rows whose keys point nowhere are copied',
  );
  t.equal((db.pragma('foreign_key_check') as unknown[]).length, 2, 'and still break the keys, as in the file');
  t.strictSame(db.prepare('SELECT v, checked FROM score ORDER BY rowid').raw().all(), [
    [Infinity, 1],
    [-Infinity, 0],
    [1, 7],
  ]);
  const sql = await download(server, '/dbs/mystery.db/export?format=sql');
  t.equal(sql.status, 200);
});

t.test('a foreign-key error never ends in a colon with nothing after it', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'fk' })).status, 201);
  await execOk(
    t,
    server,
    'fk',
    'CREATE TABLE p (id INT PRIMARY KEY); ' +
      'CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)',
  );
  // A deferred key fails at COMMIT, where there is no statement to explain it by: SQLite's words alone.
  const reply = await server.exec('fk', 'INSERT INTO c VALUES (1, 7)');
  t.equal(reply.status, 400, reply.text);
  t.equal(reply.body.code, 3004);
  t.notMatch(String(reply.body.error), /:\s*$/, `no empty tail: ${String(reply.body.error)}`);
  t.match(String(reply.body.error), /^\[SQ3004\] FOREIGN KEY constraint failed/);
});
