/**
 * GET /class, the teacher's view: admin only; each database with its last
 * activity, its recent errors (who, which code, which statement) and its
 * template; and a student's database reset through POST /dbs/{db}/reset,
 * after which its errors are gone. Over the real server (build first).
 */
import path from 'node:path';
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(90_000);

const ADMIN = 'teacher-secret-0123456789';
const admin = { 'X-Service-Token': ADMIN };

interface ClassEntry {
  db: string;
  template?: string;
  lastActivity: string | null;
  entries: number;
  recentErrors: Array<{
    seq: number;
    ts: string;
    class: number;
    code: number;
    tokenName: string | null;
    statement: string | null;
    error: string;
  }>;
}

t.test('the class view', async (tt) => {
  const dir = scratchDir(tt);
  const server: TestServer = await startServer(['-dir', path.join(dir, 'data'), '-token', ADMIN], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
  });

  tt.equal((await server.post('/dbs', { db: 'lesson' }, admin)).status, 201);
  const schema = await server.post(
    '/exec',
    {
      db: 'lesson',
      sql: "CREATE TABLE owners (id INT PRIMARY KEY, name TEXT NOT NULL);\nCREATE TABLE pets (id INT PRIMARY KEY, owner_id INT REFERENCES owners(id));\nINSERT INTO owners VALUES (1, 'Ada')",
    },
    admin,
  );
  tt.equal(schema.status, 200, schema.text);
  tt.equal((await server.post('/dbs', { dbs: ['alumno-01', 'alumno-02'], from: 'lesson' }, admin)).status, 201);
  const made = await server.post('/tokens', { prefix: 'alumno', count: 2, role: 'write' }, admin);
  tt.equal(made.status, 201, made.text);
  const viewer = await server.post('/tokens', { name: 'viewer', role: 'read', databases: ['alumno-*'] }, admin);
  const secrets = new Map<string, string>(
    (made.body.tokens as Array<{ name: string; secret: string }>).map((token) => [token.name, token.secret]),
  );
  const student = (name: string): Record<string, string> => ({ 'X-Service-Token': secrets.get(name) ?? '' });

  await tt.test('only an admin token may look', async (t2) => {
    const asWrite = await server.get('/class', student('alumno-01'));
    t2.equal(asWrite.status, 403);
    t2.equal(asWrite.body.code, 1030);
    const asRead = await server.get('/class', { 'X-Service-Token': viewer.body.tokens[0].secret as string });
    t2.equal(asRead.status, 403);
    t2.equal((await server.get('/class')).status, 401);
  });

  // Student activity: alumno-01 gets stuck on a foreign key, alumno-02 on a typo, then works.
  await server.post('/exec', { db: 'alumno-01', sql: 'INSERT INTO pets VALUES (1, 1)' }, student('alumno-01'));
  const stuck = await server.post(
    '/exec',
    { db: 'alumno-01', sql: 'SELECT 1;\nINSERT INTO pets VALUES (2, 42)' },
    student('alumno-01'),
  );
  tt.equal(stuck.body.code, 3004);
  const typo = await server.post('/exec', { db: 'alumno-02', sql: 'SELEC * FROM owners' }, student('alumno-02'));
  tt.equal(typo.body.code, 1001);
  tt.equal(
    (await server.post('/exec', { db: 'alumno-02', sql: 'DELETE FROM pets' }, student('alumno-02'))).status,
    200,
  );

  let view = await server.get('/class', admin);
  tt.equal(view.status, 200, view.text);
  let byDb = new Map((view.body.databases as ClassEntry[]).map((entry) => [entry.db.replace(/\.db$/, ''), entry]));
  tt.same([...byDb.keys()].sort(), ['alumno-01', 'alumno-02', 'lesson']);
  const one = byDb.get('alumno-01');
  tt.equal(one?.template, 'lesson.db');
  tt.notOk(byDb.get('lesson')?.template, 'the template itself has none');
  tt.ok(
    one?.lastActivity !== null && Date.parse(one?.lastActivity ?? '') > Date.now() - 60_000,
    "last activity is the last entry's time",
  );
  tt.equal(one?.recentErrors.length, 1);
  tt.match(one?.recentErrors[0], {
    class: 3,
    code: 3004,
    tokenName: 'alumno-01',
    statement: 'INSERT INTO pets VALUES (2, 42)',
  });
  tt.match(one?.recentErrors[0]?.error, /pets\.owner_id = 42 has no owners\.id/);
  const two = byDb.get('alumno-02');
  tt.match(two?.recentErrors[0], { class: 1, code: 1001, tokenName: 'alumno-02', statement: 'SELEC * FROM owners' });
  tt.ok((two?.lastActivity ?? '') >= (two?.recentErrors[0]?.ts ?? ''), 'the later success moves last activity');

  // The reset button's flow: the teacher resets alumno-01; its rows are the template's again, its errors gone.
  const reset = await server.post('/dbs/alumno-01/reset', {}, admin);
  tt.equal(reset.status, 200, reset.text);
  tt.equal(reset.body.template, 'lesson.db');
  const pets = await server.post('/exec', { db: 'alumno-01', sql: 'SELECT count(*) FROM pets' }, student('alumno-01'));
  tt.same(pets.body.results[0].rows, [[0]]);
  view = await server.get('/class', admin);
  byDb = new Map((view.body.databases as ClassEntry[]).map((entry) => [entry.db.replace(/\.db$/, ''), entry]));
  tt.same(byDb.get('alumno-01')?.recentErrors, []);
  tt.equal(byDb.get('alumno-02')?.recentErrors.length, 1);

  // After a restart the view is seeded from the journal's tail.
  await server.stop();
  const again = await startServer(['-dir', path.join(dir, 'data'), '-token', ADMIN], { cwd: dir });
  tt.teardown(async () => {
    await again.stop();
  });
  const seeded = await again.get('/class', admin);
  const seededByDb = new Map(
    (seeded.body.databases as ClassEntry[]).map((entry) => [entry.db.replace(/\.db$/, ''), entry]),
  );
  tt.match(seededByDb.get('alumno-02')?.recentErrors[0], { code: 1001, tokenName: 'alumno-02' });
  tt.same(seededByDb.get('alumno-01')?.recentErrors, []);
  tt.equal(seededByDb.get('alumno-01')?.template, 'lesson.db');
});

t.test('a server without tokens shows the class only with -journal-feed', async (tt) => {
  const dir = scratchDir(tt);
  const closed = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  tt.teardown(async () => {
    await closed.stop();
  });
  const refused = await closed.get('/class');
  tt.equal(refused.status, 403);
  tt.equal(refused.body.code, 1090);
  const other = scratchDir(tt);
  const open = await startServer(['-dir', path.join(other, 'data'), '-journal-feed'], { cwd: other });
  tt.teardown(async () => {
    await open.stop();
  });
  tt.equal((await open.post('/dbs', { db: 'solo' })).status, 201);
  const view = await open.get('/class');
  tt.equal(view.status, 200, view.text);
  tt.equal(view.body.databases[0].db, 'solo.db');
});
