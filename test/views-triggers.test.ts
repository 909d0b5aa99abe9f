/**
 * Views and triggers against the real server: made and dropped through /exec,
 * shown by /tables and /schema, read by /rows; triggers fire as they do in
 * better-sqlite3 directly and obey the column types as direct statements do;
 * TEMP ones are refused; and the journal replays them exactly (replay -verify).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { execOk } from './helpers/exec';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const DB = 'school';
const UNSUPPORTED = 1002;
const ROWS_NO_KEY = 1021;
const TABLE_NOT_FOUND = 2002;
const TYPE_MISMATCH = 4001;

/** The schema, in sqlscribe's dialect; better-sqlite3 takes the same text (FLOAT and BOOL are type names it accepts). */
const SCHEMA = [
  'CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT NOT NULL, active BOOL, score FLOAT)',
  'CREATE TABLE audit (id INTEGER PRIMARY KEY, pupil INT, what TEXT, old_score FLOAT, new_score FLOAT)',
  'CREATE TABLE totals (k TEXT PRIMARY KEY, n INT)',
  "INSERT INTO totals VALUES ('pupils', 0)",
  "CREATE TRIGGER pupils_ins AFTER INSERT ON pupils BEGIN INSERT INTO audit (pupil, what, new_score) VALUES (new.id, 'insert', new.score); UPDATE totals SET n = n + 1 WHERE k = 'pupils'; END",
  "CREATE TRIGGER pupils_upd AFTER UPDATE OF score ON pupils WHEN new.score <> old.score BEGIN INSERT INTO audit (pupil, what, old_score, new_score) VALUES (new.id, 'update', old.score, new.score); END",
  "CREATE TRIGGER pupils_del BEFORE DELETE ON pupils BEGIN INSERT INTO audit (pupil, what, old_score) VALUES (old.id, 'delete', old.score); UPDATE totals SET n = n - 1 WHERE k = 'pupils'; END",
  'CREATE VIEW active_pupils AS SELECT id, name, active, score * 2 AS doubled FROM pupils WHERE active',
  'CREATE TRIGGER active_ins INSTEAD OF INSERT ON active_pupils BEGIN INSERT INTO pupils (id, name, active, score) VALUES (new.id, new.name, 1, new.doubled / 2); END',
];

/** Writes that fire every trigger above, one statement per request. */
const WRITES = [
  "INSERT INTO pupils VALUES (1, 'Ana', TRUE, 6.5), (2, 'Beto', FALSE, 4.0), (3, 'Caro', TRUE, 5.0), (5, 'Eli', TRUE, 3.5)",
  'UPDATE pupils SET score = score + 0.5 WHERE id IN (1, 2)',
  'UPDATE pupils SET score = score WHERE id = 3',
  'DELETE FROM pupils WHERE id = 2',
  "INSERT INTO active_pupils (id, name, doubled) VALUES (4, 'Dani', 11.0)",
];

const TABLES = ['pupils', 'audit', 'totals'];

function readAll(db: Database.Database): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) out[table] = db.prepare(`SELECT * FROM ${table} ORDER BY 1`).raw(true).all();
  out.active_pupils = db.prepare('SELECT * FROM active_pupils ORDER BY id').raw(true).all();
  return out;
}

interface Setup {
  dir: string;
  server: TestServer;
  file: string;
}

async function setUp(tt: Test): Promise<Setup> {
  const dir = scratchDir(tt, { data: {} });
  const server = await startServer(
    ['-dir', path.join(dir, 'data'), '-log-file', path.join(dir, 'journal', 'statements.jsonl')],
    { cwd: dir },
  );
  tt.teardown(() => server.stop());
  await execOk(tt, server, DB, `CREATE DATABASE ${DB}`);
  return { dir, server, file: path.join(dir, 'data', `${DB}.db`) };
}

t.test('triggers fire on insert, update and delete as in better-sqlite3 directly', async (tt) => {
  const { server, file } = await setUp(tt);
  const direct = new Database(':memory:');
  tt.teardown(() => direct.close());
  await execOk(tt, server, DB, SCHEMA.join(';\n'));
  direct.exec(SCHEMA.join(';\n'));
  for (const sql of WRITES) {
    const results = await execOk(tt, server, DB, sql);
    const changes = direct.prepare(sql).run().changes;
    tt.equal(results[0]?.changes, changes, `${sql.slice(0, 40)}: the same changes count`);
  }
  const live = new Database(file, { readonly: true });
  tt.teardown(() => live.close());
  const served = readAll(live);
  tt.strictSame(served, readAll(direct), 'every table and the view hold the same rows');
  tt.equal(
    served.audit?.length,
    8,
    'five inserts (one through the view), two updates that changed a score, one delete',
  );
  tt.strictSame(served.totals, [['pupils', 4]]);
});

t.test("a trigger's statements obey the column types like direct statements", async (tt) => {
  const { server } = await setUp(tt);
  await execOk(
    tt,
    server,
    DB,
    'CREATE TABLE t (id INT PRIMARY KEY, b BOOL, f FLOAT, i INT); CREATE TABLE src (v TEXT)',
  );
  await execOk(
    tt,
    server,
    DB,
    "CREATE TRIGGER to_bool AFTER INSERT ON src WHEN new.v = 'bool' BEGIN INSERT INTO t (id, b) VALUES (1, 2); END",
  );
  await execOk(
    tt,
    server,
    DB,
    "CREATE TRIGGER to_float AFTER INSERT ON src WHEN new.v = 'float' BEGIN INSERT INTO t (id, f) VALUES (2, 'abc'); END",
  );
  await execOk(
    tt,
    server,
    DB,
    "CREATE TRIGGER to_int AFTER INSERT ON src WHEN new.v = 'int' BEGIN INSERT INTO t (id, i, b) VALUES (3, '12', TRUE); END",
  );
  const direct = async (sql: string): Promise<Reply> => server.exec(DB, sql);
  const [directBool, directFloat] = [
    await direct('INSERT INTO t (id, b) VALUES (1, 2)'),
    await direct("INSERT INTO t (id, f) VALUES (2, 'abc')"),
  ];
  isError(tt, directBool, 400, TYPE_MISMATCH, 'direct: 2 into BOOL');
  isError(tt, directFloat, 400, TYPE_MISMATCH, 'direct: text into FLOAT');
  isError(tt, await direct("INSERT INTO src VALUES ('bool')"), 400, TYPE_MISMATCH, 'trigger: 2 into BOOL');
  isError(tt, await direct("INSERT INTO src VALUES ('float')"), 400, TYPE_MISMATCH, 'trigger: text into FLOAT');
  await execOk(tt, server, DB, "INSERT INTO src VALUES ('int')");
  const rows = await execOk(tt, server, DB, 'SELECT id, b, i FROM t; SELECT count(*) FROM src');
  tt.strictSame(rows[0]?.rows, [[3, true, 12]], "'12' becomes 12 as SQL converts literals; BOOL reads back as true");
  tt.strictSame(rows[1]?.rows, [[1]], 'the refused writes left nothing behind');
});

t.test('/tables, /schema and /rows show views and triggers', async (tt) => {
  const { server } = await setUp(tt);
  await execOk(tt, server, DB, SCHEMA.join(';\n'));
  await execOk(tt, server, DB, WRITES.join(';\n'));

  const tables = await server.get(`/tables?db=${DB}`);
  tt.equal(tables.status, 200);
  const listed = (tables.body?.tables ?? []) as Array<{
    name: string;
    kind: string;
    triggers: Array<{ name: string }>;
    primaryKey: string;
    columns: unknown[];
  }>;
  tt.strictSame(
    listed.map((r) => [r.name, r.kind]),
    [
      ['active_pupils', 'view'],
      ['audit', 'table'],
      ['pupils', 'table'],
      ['totals', 'table'],
    ],
  );
  const pupils = listed.find((r) => r.name === 'pupils');
  tt.strictSame(
    pupils?.triggers.map((tr) => tr.name),
    ['pupils_del', 'pupils_ins', 'pupils_upd'],
    'a table lists its triggers',
  );
  tt.equal(pupils?.primaryKey, 'id', 'a table keeps its record');

  const schema = await server.get(`/schema?db=${DB}&table=ACTIVE_PUPILS`);
  tt.equal(schema.status, 200, schema.text);
  const view = schema.body?.table;
  tt.equal(view?.kind, 'view');
  tt.equal(view?.sql, SCHEMA[7], "the view's SQL as written");
  tt.strictSame(
    view?.columns.map((c: { name: string; type: string | null }) => [c.name, c.type]),
    [
      ['id', 'INT'],
      ['name', 'TEXT'],
      ['active', 'BOOL'],
      ['doubled', null],
    ],
  );
  tt.strictSame(
    view?.triggers,
    [{ name: 'active_ins', sql: SCHEMA[8] }],
    'an INSTEAD OF trigger is listed with its view',
  );

  const page = await server.get(`/rows?db=${DB}&table=active_pupils&limit=2&offset=1`);
  tt.equal(page.status, 200, page.text);
  tt.match(page.body, {
    table: 'active_pupils',
    total: 4,
    limit: 2,
    offset: 1,
    columns: ['id', 'name', 'active', 'doubled'],
  });
  tt.strictSame(
    page.body?.rows,
    [
      [3, 'Caro', true, 10],
      [4, 'Dani', true, 11],
    ],
    "the view's rows at the offset, BOOL as JSON booleans",
  );
  tt.notOk('next' in (page.body ?? {}), 'a view gives no next cursor even when more rows follow');
  isError(
    tt,
    await server.get(`/rows?db=${DB}&table=active_pupils&after=eyJ2IjoxfQ`),
    400,
    ROWS_NO_KEY,
    'a cursor on a view',
  );

  await execOk(
    tt,
    server,
    DB,
    'DROP TRIGGER pupils_upd; DROP TRIGGER IF EXISTS pupils_upd; DROP VIEW active_pupils; DROP VIEW IF EXISTS active_pupils',
  );
  isError(
    tt,
    await server.get(`/schema?db=${DB}&table=active_pupils`),
    404,
    TABLE_NOT_FOUND,
    '/schema of a dropped view',
  );
  isError(tt, await server.get(`/rows?db=${DB}&table=active_pupils`), 404, TABLE_NOT_FOUND, '/rows of a dropped view');
  const after = await server.get(`/schema?db=${DB}&table=pupils`);
  tt.strictSame(
    after.body?.table?.triggers.map((tr: { name: string }) => tr.name),
    ['pupils_del', 'pupils_ins'],
    'the dropped trigger is gone from its table',
  );
});

t.test('the schema caches notice views and triggers made and dropped', async (tt) => {
  const { server } = await setUp(tt);
  await execOk(
    tt,
    server,
    DB,
    "CREATE TABLE t (id INT PRIMARY KEY, a TEXT, b BOOL); INSERT INTO t VALUES (1, 'x', TRUE), (2, 'y', FALSE)",
  );
  await execOk(tt, server, DB, 'CREATE VIEW v AS SELECT id, a FROM t');
  tt.strictSame((await execOk(tt, server, DB, 'SELECT * FROM v WHERE id = 1'))[0], {
    columns: ['id', 'a'],
    types: ['INT', 'TEXT'],
    rows: [[1, 'x']],
  });
  tt.strictSame(
    (await server.get(`/schema?db=${DB}&table=v`)).body?.table?.columns.map((c: { name: string }) => c.name),
    ['id', 'a'],
  );
  tt.strictSame((await server.get(`/rows?db=${DB}&table=v`)).body?.columns, ['id', 'a']);

  await execOk(tt, server, DB, 'DROP VIEW v; CREATE VIEW v AS SELECT id, b FROM t WHERE NOT b');
  tt.strictSame(
    (await execOk(tt, server, DB, 'SELECT * FROM v WHERE id = 1'))[0],
    { columns: ['id', 'b'], types: ['INT', 'BOOL'], rows: [] },
    'a point read of a view runs its WHERE',
  );
  tt.strictSame((await execOk(tt, server, DB, 'SELECT * FROM v WHERE id = 2'))[0], {
    columns: ['id', 'b'],
    types: ['INT', 'BOOL'],
    rows: [[2, false]],
  });
  tt.strictSame(
    (await server.get(`/schema?db=${DB}&table=v`)).body?.table?.columns.map((c: { name: string; type: string }) => [
      c.name,
      c.type,
    ]),
    [
      ['id', 'INT'],
      ['b', 'BOOL'],
    ],
  );
  tt.match((await server.get(`/rows?db=${DB}&table=v`)).body, { total: 1, columns: ['id', 'b'], rows: [[2, false]] });

  await execOk(
    tt,
    server,
    DB,
    'CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET a = upper(a) WHERE id = new.id; END',
  );
  tt.strictSame(
    (await server.get(`/schema?db=${DB}&table=t`)).body?.table?.triggers.map((tr: { name: string }) => tr.name),
    ['tr'],
  );
  await execOk(tt, server, DB, "INSERT INTO t VALUES (3, 'z', FALSE)");
  tt.match((await server.get(`/rows?db=${DB}&table=v`)).body, {
    total: 2,
    rows: [
      [2, false],
      [3, false],
    ],
  });
  tt.strictSame((await execOk(tt, server, DB, 'SELECT a FROM t WHERE id = 3'))[0]?.rows, [['Z']], 'the trigger fired');
  await execOk(tt, server, DB, 'DROP TRIGGER tr');
  tt.strictSame((await server.get(`/schema?db=${DB}&table=t`)).body?.table?.triggers, []);
  await execOk(tt, server, DB, "INSERT INTO t VALUES (4, 'w', TRUE)");
  tt.strictSame(
    (await execOk(tt, server, DB, 'SELECT a FROM t WHERE id = 4'))[0]?.rows,
    [['w']],
    'a dropped trigger no longer fires',
  );
});

t.test('refuses TEMP views and triggers as it refuses TEMP tables', async (tt) => {
  const { server } = await setUp(tt);
  await execOk(tt, server, DB, 'CREATE TABLE t (id INT PRIMARY KEY)');
  isError(tt, await server.exec(DB, 'CREATE TEMP TABLE x (a INT)'), 400, UNSUPPORTED, 'TEMP table');
  for (const sql of [
    'CREATE TEMP VIEW v AS SELECT 1',
    'create temporary view v as select 1',
    'CREATE VIEW temp.v AS SELECT 1',
    'CREATE VIEW IF NOT EXISTS "Temp".v AS SELECT 1',
    'CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END',
    'CREATE TRIGGER [TEMP].tr AFTER INSERT ON t BEGIN SELECT 1; END',
  ]) {
    isError(tt, await server.exec(DB, sql), 400, UNSUPPORTED, sql);
  }
  tt.strictSame(
    (await server.get(`/tables?db=${DB}`)).body?.tables?.map((r: { name: string }) => r.name),
    ['t'],
    'nothing was made',
  );
});

t.test('IF NOT EXISTS and IF EXISTS behave as in SQLite', async (tt) => {
  const { server } = await setUp(tt);
  await execOk(
    tt,
    server,
    DB,
    'CREATE TABLE t (id INT PRIMARY KEY); CREATE VIEW v AS SELECT id FROM t; CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END',
  );
  await execOk(
    tt,
    server,
    DB,
    'CREATE VIEW IF NOT EXISTS v AS SELECT 1; CREATE TRIGGER IF NOT EXISTS tr AFTER DELETE ON t BEGIN SELECT 1; END',
  );
  tt.equal((await server.exec(DB, 'CREATE VIEW v AS SELECT 1')).status, 400, 'a second view of the name');
  tt.equal(
    (await server.exec(DB, 'CREATE TRIGGER tr AFTER DELETE ON t BEGIN SELECT 1; END')).status,
    400,
    'a second trigger of the name',
  );
  tt.equal((await server.exec(DB, 'DROP VIEW missing')).status, 400);
  tt.equal((await server.exec(DB, 'DROP TRIGGER missing')).status, 400);
  await execOk(tt, server, DB, 'DROP VIEW IF EXISTS missing; DROP TRIGGER IF EXISTS missing');
});

t.test(
  'replay rebuilds views and triggers, random() and the clock inside triggers included, equal to live',
  async (tt) => {
    const { dir, server } = await setUp(tt);
    await execOk(tt, server, DB, SCHEMA.join(';\n'));
    await execOk(tt, server, DB, 'CREATE TABLE stamps (id INTEGER PRIMARY KEY, pupil INT, r INT, at TEXT, b TEXT)');
    await execOk(
      tt,
      server,
      DB,
      "CREATE TRIGGER stamp AFTER INSERT ON pupils BEGIN INSERT INTO stamps (pupil, r, at, b) VALUES (new.id, random(), datetime('now'), hex(randomblob(8))); END",
    );
    for (const sql of WRITES) await execOk(tt, server, DB, sql);
    await execOk(
      tt,
      server,
      DB,
      "INSERT INTO pupils VALUES (6, 'Fede', TRUE, 1.0); UPDATE stamps SET at = CURRENT_TIMESTAMP WHERE pupil = 6",
    );
    await execOk(
      tt,
      server,
      DB,
      'DROP TRIGGER pupils_upd; CREATE VIEW stamped AS SELECT p.name, s.r FROM pupils p JOIN stamps s ON s.pupil = p.id',
    );
    // A trigger that ends the whole transaction (RAISE(ROLLBACK)) while other writes share it in a write group.
    await execOk(
      tt,
      server,
      DB,
      "CREATE TABLE guarded (id INT PRIMARY KEY, v INT); CREATE TRIGGER guard BEFORE INSERT ON guarded WHEN new.v < 0 BEGIN SELECT RAISE(ROLLBACK, 'negative'); END",
    );
    const guarded = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        server.exec(DB, `INSERT INTO guarded VALUES (${i}, ${i % 2 === 0 ? 1 : -1})`),
      ),
    );
    tt.strictSame(
      guarded.map((reply) => reply.status),
      [200, 400, 200, 400, 200, 400, 200, 400],
      'only the writes the trigger refuses fail',
    );
    tt.strictSame((await execOk(tt, server, DB, 'SELECT id FROM guarded ORDER BY id'))[0]?.rows, [[0], [2], [4], [6]]);
    const stamps = await execOk(tt, server, DB, 'SELECT count(DISTINCT r) FROM stamps');
    tt.strictSame(stamps[0]?.rows, [[6]], 'each firing drew its own random number');
    tt.equal(await server.stop(), 0, 'clean stop');

    const replayed = await runReplay(
      [
        '-log-file',
        path.join(dir, 'journal', 'statements.jsonl'),
        '-out',
        path.join(dir, 'out'),
        '-verify',
        path.join(dir, 'data'),
      ],
      dir,
    );
    tt.equal(replayed.code, 0, `replay -verify exits 0 (${replayed.stderr.slice(0, 500)})`);
    const live = new Database(path.join(dir, 'data', `${DB}.db`), { readonly: true });
    const rebuilt = new Database(path.join(dir, 'out', `${DB}.db`), { readonly: true });
    tt.teardown(() => {
      live.close();
      rebuilt.close();
    });
    const objects = "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('view', 'trigger') ORDER BY name";
    tt.strictSame(rebuilt.prepare(objects).all(), live.prepare(objects).all(), 'the same views and triggers');
    tt.equal(rebuilt.prepare(objects).all().length, 7);
    const stamped = 'SELECT * FROM stamped ORDER BY name';
    tt.strictSame(rebuilt.prepare(stamped).all(), live.prepare(stamped).all(), 'the view reads the same random values');
  },
);
