/**
 * Errors a learner can read: a failed constraint names its table and
 * columns, in words and in fields of the error body; a foreign key names the
 * reference that failed, for a child row written and for a parent removed.
 * Over the real server (build first: it runs from dist/).
 */
import t from 'tap';
import { serverPerFile, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(60_000);

let server: TestServer;
serverPerFile(t, scratchDir(t), (started) => {
  server = started;
});

const SCHEMA = [
  'CREATE TABLE owners (id INT PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE)',
  'CREATE TABLE pets (id INT PRIMARY KEY, name TEXT, owner_id INT REFERENCES owners(id))',
  "INSERT INTO owners VALUES (1, 'Ada', 'ada@example.org')",
  "INSERT INTO pets VALUES (1, 'Rex', 1)",
].join(';\n');

t.before(async () => {
  const created = await server.post('/dbs', { db: 'zoo' });
  t.equal(created.status, 201, created.text);
  const schema = await server.exec('zoo', SCHEMA);
  t.equal(schema.status, 200, schema.text);
});

t.test('a child row whose reference has no parent names the key, the value and the parent', async (tt) => {
  const reply = await server.exec('zoo', "SELECT 1;\nINSERT INTO pets VALUES (2, 'Tom', 7)");
  tt.equal(reply.status, 400);
  tt.equal(reply.body.code, 3004);
  tt.equal(reply.body.statement, 1);
  tt.match(reply.body.error, /FOREIGN KEY constraint failed: pets\.owner_id = 7 has no owners\.id/);
  tt.equal(reply.body.table, 'pets');
  tt.same(reply.body.columns, ['owner_id']);
  tt.same(reply.body.references, { table: 'owners', columns: ['id'] });
  const pets = await server.exec('zoo', 'SELECT count(*) AS n FROM pets');
  tt.same(pets.body.results[0].rows, [[1]], 'nothing of the failed batch nor of the explanation stays');
});

t.test('an UPDATE of the child names the reference too', async (tt) => {
  const reply = await server.exec('zoo', 'UPDATE pets SET owner_id = 9 WHERE id = 1');
  tt.match(reply.body.error, /pets\.owner_id = 9 has no owners\.id/);
  tt.equal(reply.body.table, 'pets');
});

t.test('removing a parent that a child still uses names the child', async (tt) => {
  const reply = await server.exec('zoo', 'DELETE FROM owners WHERE id = 1');
  tt.equal(reply.status, 400);
  tt.equal(reply.body.code, 3004);
  tt.match(reply.body.error, /FOREIGN KEY constraint failed: owners\.id = 1 is still referenced by pets\.owner_id/);
  tt.equal(reply.body.table, 'pets');
  tt.same(reply.body.columns, ['owner_id']);
  tt.same(reply.body.references, { table: 'owners', columns: ['id'] });
  const owners = await server.exec('zoo', 'SELECT count(*) AS n FROM owners');
  tt.same(owners.body.results[0].rows, [[1]]);
});

t.test('the same inside a session: the session stays usable', async (tt) => {
  const begun = await server.post('/tx/begin', { db: 'zoo' });
  tt.equal(begun.status, 200, begun.text);
  const session = begun.body.session as string;
  const failed = await server.post(`/exec?session=${session}`, {
    db: 'zoo',
    sql: "INSERT INTO pets VALUES (3, 'Kit', 5)",
  });
  tt.match(failed.body.error, /pets\.owner_id = 5 has no owners\.id/);
  const ok = await server.post(`/exec?session=${session}`, { db: 'zoo', sql: "INSERT INTO pets VALUES (3, 'Kit', 1)" });
  tt.equal(ok.status, 200, ok.text);
  const rolled = await server.post(`/tx/rollback?session=${session}`);
  tt.equal(rolled.status, 200, rolled.text);
});

t.test('NOT NULL names the table and the column', async (tt) => {
  const reply = await server.exec('zoo', "INSERT INTO owners (id, email) VALUES (2, 'b@example.org')");
  tt.equal(reply.body.code, 3001);
  tt.match(reply.body.error, /NOT NULL constraint failed: owners\.name/);
  tt.equal(reply.body.table, 'owners');
  tt.same(reply.body.columns, ['name']);
});

t.test('UNIQUE names the table and the column', async (tt) => {
  const reply = await server.exec('zoo', "INSERT INTO owners VALUES (3, 'Bo', 'ada@example.org')");
  tt.equal(reply.body.code, 3002);
  tt.match(reply.body.error, /UNIQUE constraint failed: owners\.email/);
  tt.equal(reply.body.table, 'owners');
  tt.same(reply.body.columns, ['email']);
});

t.test('the success path is unchanged: no extra fields, the same results', async (tt) => {
  const reply = await server.exec('zoo', "INSERT INTO pets VALUES (4, 'Max', 1);\nSELECT name FROM pets ORDER BY id");
  tt.equal(reply.status, 200);
  tt.equal(reply.body.ok, true);
  tt.notOk('columns' in reply.body || 'references' in reply.body);
  tt.same(reply.body.results[1].rows, [['Rex'], ['Max']]);
  tt.notOk('table' in reply.body);
});

t.test('a syntax error at the "-" of a bare dashed name says to quote the name', async (tt) => {
  const hinted: Array<[string, string, boolean]> = [
    // [statement, the name the hint quotes, whether SQLite (not our parser) raised it]
    ['DROP TABLE alumno-08', 'alumno-08', true],
    ['SELECT * FROM alumno-08', 'alumno-08', true],
    ['SELECT id - 1 FROM clase-2024-b WHERE id > 0', 'clase-2024-b', true],
    ['CREATE TABLE my-table (a INT)', 'my-table', false],
  ];
  for (const [sql, name, bySqlite] of hinted) {
    const reply = await server.exec('zoo', `SELECT 1;\n${sql}`);
    tt.equal(reply.status, 400, sql);
    tt.equal(reply.body.code, 1001, `${sql}: still a syntax error`);
    tt.equal(reply.body.statement, 1, `${sql}: the failing statement`);
    tt.match(reply.body.error, /near "-"/, `${sql}: SQLite's words are kept`);
    tt.ok(reply.body.error.endsWith(`(a name with "-" must be quoted: "${name}")`), `${sql}: ${reply.body.error}`);
    tt.equal(reply.body.sqliteCode, bySqlite ? 'SQLITE_ERROR' : undefined, `${sql}: sqliteCode as before`);
  }
  const quoted = await server.exec('zoo', 'CREATE TABLE "alumno-08" (a INT);\nDROP TABLE "alumno-08"');
  tt.equal(quoted.status, 200, `quoted as the hint says, it works: ${quoted.text}`);
});

t.test('no quoting hint where a dash is not the fault', async (tt) => {
  const incomplete = await server.exec('zoo', 'SELECT * FROM pets WHERE');
  tt.equal(incomplete.body.code, 1001);
  tt.notMatch(incomplete.body.error, /must be quoted/, 'a syntax error elsewhere');
  const minus = await server.exec('zoo', 'SELECT id-owner FROM pets');
  tt.equal(minus.body.code, 2004, 'a subtraction of an unknown column is no syntax error');
  tt.notMatch(minus.body.error, /must be quoted/);
  const lone = await server.exec('zoo', 'SELECT * FROM pets WHERE id = -');
  tt.equal(lone.body.code, 1001);
  tt.notMatch(lone.body.error, /must be quoted/, 'near "-" without a dashed name');
});
