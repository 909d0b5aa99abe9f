/**
 * POST /dbs/{db}/import and GET /dbs/{db}/export against the real server:
 * the column types of teaching scripts, a leading BOM, export → import round
 * trips in all three formats, the imports that must be refused (each with its
 * code, nothing applied), and replay -verify over imported databases.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';

const SQL = { 'content-type': 'application/sql' };
const CSV = { 'content-type': 'text/csv' };
const SQLITE = { 'content-type': 'application/vnd.sqlite3' };

/** A database of every type, NULLs, empty strings, big integers, blobs, an index and foreign keys whose child table comes first. */
const SAMPLE = `
CREATE TABLE pupil (id INTEGER PRIMARY KEY, class_id INT REFERENCES class(id), name NVARCHAR(40) NOT NULL, born DATE, score NUMERIC(5,2),
  present BOOLEAN DEFAULT 1, photo BLOB, big INT8, note CLOB, joined TIMESTAMP DEFAULT '2026-01-01 08:00:00');
CREATE TABLE class (id INT PRIMARY KEY, title VARCHAR(20), room TINYINT);
INSERT INTO class VALUES (1, 'Matemáticas', 12), (2, '', NULL), (3, 'a "quoted", comma', 7);
INSERT INTO pupil (id, class_id, name, born, score, present, photo, big, note) VALUES
  (1, 1, 'Ana', '2012-03-04', 6.5, TRUE, X'00FF10', 9223372036854775807, 'line one
line two'),
  (2, 2, 'Ñandú O''Brien', NULL, 0.1, FALSE, NULL, -9223372036854775808, ''),
  (3, NULL, ' spaced ', '2011-12-31', NULL, NULL, X'', 0, NULL);
CREATE INDEX pupil_name ON pupil (name);
`;

function post(
  server: TestServer,
  pathAndQuery: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<Reply> {
  return server.request('POST', pathAndQuery, { rawBody: body, headers });
}

async function download(
  server: TestServer,
  pathAndQuery: string,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(server.url + pathAndQuery);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function createDb(server: TestServer, db: string): Promise<void> {
  const reply = await server.post('/dbs', { db });
  if (reply.status !== 201) throw new Error(reply.text);
}

/** Schema and every row of every table, as the API reports them. */
async function contents(server: TestServer, db: string): Promise<{ tables: unknown; rows: Record<string, unknown> }> {
  const tables = (await server.get(`/tables?db=${db}`)).body.tables as Array<{
    name: string;
    rootPage: number;
    indexes: Array<{ rootPage: number }>;
  }>;
  const rows: Record<string, unknown> = {};
  for (const table of tables)
    rows[table.name] = (await server.exec(db, `SELECT * FROM "${table.name}" ORDER BY rowid`)).body.results[0].rows;
  // Root pages depend on the order objects were made in, which a dump may change: not part of the comparison.
  const shapes = tables.map(({ rootPage: _r, indexes, ...rest }) => ({
    ...rest,
    indexes: indexes.map(({ rootPage: _i, ...index }) => index),
  }));
  return { tables: shapes, rows };
}

t.test('imports, exports and round trips on one server', async (t) => {
  const dir = scratchDir(t);
  const data = path.join(dir, 'data');
  const server = await startServer(['-dir', data, '-max-import-bytes', '200K'], { cwd: dir });
  t.teardown(() => server.stop());
  await createDb(server, 'sample');
  const loaded = await post(server, '/dbs/sample/import', SAMPLE, SQL);
  t.equal(loaded.status, 200, loaded.text);
  const original = await contents(server, 'sample');

  t.test('reports each alias under its type with the declared spelling', async (t) => {
    const aliases = [
      'NVARCHAR(160)',
      'NCHAR(5)',
      'NATIVE CHARACTER(70)',
      'CLOB',
      'TINYINT',
      'MEDIUMINT',
      'INT2',
      'INT8',
      'UNSIGNED BIG INT',
      'DATETIME',
      'DATE',
      'TIME',
      'TIMESTAMP',
      'NUMERIC(10,2)',
      'DECIMAL(8,3)',
      'BLOB',
    ];
    const expected = [
      'TEXT',
      'TEXT',
      'TEXT',
      'TEXT',
      'INT',
      'INT',
      'INT',
      'INT',
      'INT',
      'TEXT',
      'TEXT',
      'TEXT',
      'TEXT',
      'FLOAT',
      'FLOAT',
      'BLOB',
    ];
    await createDb(server, 'aliases');
    const script = `CREATE TABLE a (${aliases.map((type, i) => `c${i} ${type}`).join(', ')})`;
    t.equal((await post(server, '/dbs/aliases/import', script, SQL)).status, 200);
    const columns = (await server.get('/schema?db=aliases&table=a')).body.table.columns as Array<{
      type: string;
      declaredType?: string;
    }>;
    t.same(
      columns.map((c) => c.type),
      expected,
    );
    t.same(
      columns.map((c) => c.declaredType ?? c.type),
      aliases,
    );
    const sqlite = await server.exec(
      'aliases',
      "INSERT INTO a (c15, c9, c0) VALUES (X'CAFE', '2026-11-25 10:00:00', 'x') RETURNING typeof(c15), typeof(c9)",
    );
    t.same(sqlite.body.results[0].rows, [['blob', 'text']], 'BLOB holds blobs, DATETIME holds text');
  });

  t.test('ignores a leading BOM in an import and in /exec', async (t) => {
    await createDb(server, 'bom');
    const reply = await post(
      server,
      '/dbs/bom/import',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('CREATE TABLE x (a INT); INSERT INTO x VALUES (1)')]),
      SQL,
    );
    t.equal(reply.status, 200, reply.text);
    const exec = await server.exec('bom', '\uFEFFSELECT a FROM x');
    t.same(exec.body.results[0].rows, [[1]]);
  });

  t.test('streams progress lines, then the result, to a client that accepts NDJSON', async (t) => {
    await createDb(server, 'progress');
    const rows = Array.from({ length: 300 }, (_, i) => `INSERT INTO p VALUES (${i})`).join(';\n');
    const ndjson = { ...SQL, accept: 'application/x-ndjson' };
    const reply = await post(server, '/dbs/progress/import', `CREATE TABLE p (a INT);\n${rows}`, ndjson);
    t.equal(reply.status, 200);
    t.match(reply.headers.get('content-type'), /^application\/x-ndjson/);
    const lines = reply.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    t.same(lines[0], { progress: { statements: 0, of: 301 } });
    for (const line of lines.slice(1, -1)) t.match(line, { progress: { of: 301 } });
    t.match(lines[lines.length - 1], { ok: true, statements: 301, changes: 300 });
    const failed = await post(
      server,
      '/dbs/progress/import',
      'INSERT INTO p VALUES (1);\nINSERT INTO missing_table VALUES (1)',
      ndjson,
    );
    const last = JSON.parse(failed.text.trim().split('\n').pop() as string) as Record<string, unknown>;
    t.match(last, { ok: false, code: 2003, statement: 1 }, 'a failure is the last line, with its code and statement');
    t.match(
      await post(server, '/dbs/progress/import', 'x', { 'content-type': 'text/plain', accept: 'application/x-ndjson' }),
      { status: 415 },
      'a refused upload keeps its status',
    );
  });

  t.test('skips the BEGIN and COMMIT a dump wraps around itself, and refuses one elsewhere', async (t) => {
    await createDb(server, 'wrapped');
    const ok = await post(
      server,
      '/dbs/wrapped/import',
      'BEGIN TRANSACTION;\nCREATE TABLE w (a INT);\nINSERT INTO w VALUES (1);\nCOMMIT;',
      SQL,
    );
    t.match(ok.body, { ok: true, statements: 2 });
    const inner = await post(
      server,
      '/dbs/wrapped/import',
      'INSERT INTO w VALUES (2);\nCOMMIT;\nINSERT INTO w VALUES (3);',
      SQL,
    );
    t.match(inner.body, { code: 1055, statement: 1 });
    t.same((await server.exec('wrapped', 'SELECT a FROM w')).body.results[0].rows, [[1]]);
  });

  t.test('round trips through a .sql export, which better-sqlite3 also loads', async (t) => {
    const dump = await download(server, '/dbs/sample/export?format=sql');
    t.equal(dump.status, 200);
    t.match(dump.headers.get('content-disposition'), /attachment; filename="sample\.sql"/);
    t.notMatch(dump.bytes.toString(), /_sqlscribe|sqlite_/, 'no internal object is exported');
    const plain = new Database(':memory:');
    plain.exec(dump.bytes.toString());
    t.same(
      plain.prepare('SELECT id, name, quote(photo), big FROM pupil ORDER BY id').raw(true).safeIntegers(true).all(),
      [
        [1n, 'Ana', "X'00FF10'", 9223372036854775807n],
        [2n, "Ñandú O'Brien", 'NULL', -9223372036854775808n],
        [3n, ' spaced ', "X''", 0n],
      ],
    );
    plain.close();
    await createDb(server, 'from_sql');
    t.equal((await post(server, '/dbs/from_sql/import', dump.bytes, SQL)).status, 200);
    t.same(await contents(server, 'from_sql'), original);
  });

  t.test('round trips through a .sqlite export', async (t) => {
    const file = await download(server, '/dbs/sample/export?format=sqlite');
    t.equal(file.status, 200);
    t.equal(file.headers.get('content-type'), 'application/vnd.sqlite3');
    t.equal(file.bytes.subarray(0, 15).toString(), 'SQLite format 3');
    const copy = path.join(dir, 'copy.sqlite');
    fs.writeFileSync(copy, file.bytes);
    const names = new Database(copy, { readonly: true }).prepare('SELECT name FROM sqlite_schema').pluck().all();
    t.same(
      names.filter((name) => /^_sqlscribe/.test(name as string)),
      [],
      'no internal object is exported',
    );
    await createDb(server, 'from_sqlite');
    const reply = await post(server, '/dbs/from_sqlite/import', file.bytes, SQLITE);
    t.equal(reply.status, 200, reply.text);
    t.same(await contents(server, 'from_sqlite'), original);
  });

  t.test('round trips a table through CSV, into a new table and appended to an existing one', async (t) => {
    const csv = await download(server, '/dbs/sample/export?format=csv&table=class');
    t.equal(csv.status, 200);
    t.equal(csv.bytes.toString(), 'id,title,room\r\n1,Matemáticas,12\r\n2,"",\r\n3,"a ""quoted"", comma",7\r\n');
    await createDb(server, 'from_csv');
    const created = await post(
      server,
      '/dbs/from_csv/import?table=class&types=INT,VARCHAR(20),TINYINT',
      csv.bytes,
      CSV,
    );
    t.match(created.body, { ok: true, table: 'class', created: true, changes: 3 });
    const back = await download(server, '/dbs/from_csv/export?format=csv&table=class');
    t.equal(back.bytes.toString(), csv.bytes.toString(), 'the same CSV comes back');
    t.same(
      (await server.exec('from_csv', 'SELECT * FROM class ORDER BY rowid')).body.results[0].rows,
      original.rows.class,
    );
    const appended = await post(server, '/dbs/from_csv/import?table=class', 'room,id,title\r\n9,4,extra\r\n', CSV);
    t.match(appended.body, { ok: true, created: false, changes: 1 });
    const mismatch = await post(server, '/dbs/from_csv/import?table=class', 'id,name\r\n5,x\r\n', CSV);
    t.match(mismatch, { status: 400, body: { code: 2050 } });
  });

  t.test('infers INT, FLOAT and TEXT from the values, empty unquoted fields being NULL', async (t) => {
    await createDb(server, 'inferred');
    const reply = await post(server, '/dbs/inferred/import?table=m', 'n,x,s,e\n1,1.5,a,\n-2,3,007,\n,,,\n', CSV);
    t.equal(reply.status, 200, reply.text);
    const columns = (await server.get('/schema?db=inferred&table=m')).body.table.columns as Array<{ type: string }>;
    t.same(
      columns.map((c) => c.type),
      ['INT', 'FLOAT', 'TEXT', 'TEXT'],
    );
    t.same((await server.exec('inferred', 'SELECT * FROM m')).body.results[0].rows, [
      [1, 1.5, 'a', null],
      [-2, 3, '007', null],
      [null, null, null, null],
    ]);
  });

  t.test('refuses what it cannot import, each with its code, applying nothing', async (t) => {
    await createDb(server, 'refused');
    const failing =
      'CREATE TABLE r (a INT PRIMARY KEY);\nINSERT INTO r VALUES (1);\nINSERT INTO r VALUES (1);\nINSERT INTO r VALUES (2);';
    const duplicate = await post(server, '/dbs/refused/import', failing, SQL);
    t.match(
      duplicate,
      { status: 400, body: { ok: false, code: 3003, statement: 2 } },
      'the failing statement is named by its index',
    );
    t.equal((await server.get('/tables?db=refused')).body.tables.length, 0, 'nothing of the script was applied');

    const big = await post(server, '/dbs/refused/import', `-- ${'x'.repeat(210 * 1024)}\nSELECT 1`, SQL);
    t.match(big, { status: 413, body: { code: 6050 } });

    t.match(
      await post(
        server,
        '/dbs/refused/import',
        Buffer.from('this is not a database at all, just bytes '.repeat(200)),
        SQLITE,
      ),
      { status: 400, body: { code: 1052 } },
    );
    t.match(await post(server, '/dbs/refused/import', 'a;b', { 'content-type': 'text/plain' }), {
      status: 415,
      body: { code: 1051 },
    });
    t.match(
      await post(server, '/dbs/refused/import', 'a,b\n1,2\n', CSV),
      { status: 400, body: { code: 1008 } },
      'CSV needs ?table=',
    );
    t.match(await post(server, '/dbs/refused/import?table=q', 'a,b\n1,2,3\n', CSV), {
      status: 400,
      body: { code: 1050 },
    });
    t.match(await post(server, '/dbs/nowhere/import', 'SELECT 1', SQL), { status: 404, body: { code: 2001 } });
    t.match(await server.get('/dbs/sample/export?format=csv'), { status: 400, body: { code: 1008 } });
    t.match(await server.get('/dbs/sample/export?format=xml'), { status: 400, body: { code: 1008 } });

    const corrupt = path.join(dir, 'corrupt.sqlite');
    const db = new Database(corrupt);
    db.exec(
      'CREATE TABLE big (a TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO big SELECT hex(randomblob(400)) FROM n',
    );
    db.close();
    const bytes = fs.readFileSync(corrupt);
    bytes.fill(0x5a, 4096 * 2, 4096 * 6);
    t.match(
      await post(server, '/dbs/refused/import', bytes, SQLITE),
      { status: 400, body: { code: 1053 } },
      'a damaged file fails its integrity check',
    );

    const internal = path.join(dir, 'internal.sqlite');
    new Database(internal).exec('CREATE TABLE _sqlscribe_position (x INT)').close();
    const named = await post(server, '/dbs/refused/import', fs.readFileSync(internal), SQLITE);
    t.match(named, { status: 400, body: { code: 1054 } });
    t.match(named.body.error, /_sqlscribe_position/);

    t.equal((await server.get('/tables?db=refused')).body.tables.length, 0, 'still nothing applied');

    // Earlier a type outside ours was 400 [SQ4050]; it now gets the type SQLite's affinity gives it (docs/api.md).
    const unmappable = path.join(dir, 'unmappable.sqlite');
    new Database(unmappable).exec('CREATE TABLE shapes (id INT, outline GEOMETRY)').close();
    await server.post('/dbs', { db: 'shapes' });
    t.match(await post(server, '/dbs/shapes/import', fs.readFileSync(unmappable), SQLITE), { status: 200 });
    t.match((await server.get('/schema?db=shapes&table=shapes')).body.table.columns, [
      { name: 'id' },
      { name: 'outline', type: 'FLOAT', declaredType: 'GEOMETRY' },
    ]);
  });

  t.test('the server that ran every import and export is the same process, alive and answering', async (t) => {
    const pid = server.child.pid;
    t.equal((await server.get('/health')).status, 200);
    t.equal(server.child.exitCode, null, 'it never exited');
    t.equal(server.child.signalCode, null, 'nor was it killed');
    t.equal(server.child.pid, pid);
  });

  t.test('replay -verify rebuilds every imported database exactly', async (t) => {
    t.equal(await server.stop(), 0);
    const out = path.join(dir, 'replayed');
    const run = await runReplay(
      ['-log-file', path.join(data, 'journal', 'statements.jsonl'), '-out', out, '-verify', data],
      dir,
    );
    t.equal(run.code, 0, run.stderr);
    t.match(run.stderr, /equals the live databases/);
  });
});
