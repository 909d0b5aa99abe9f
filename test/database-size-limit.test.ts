/**
 * -max-database-mb and a token's maxDatabaseMb, against the real server:
 * `INSERT INTO big VALUES (zeroblob(500000000))` is refused with 413
 * [SQ6060], quickly, before it commits, leaving the database as it was,
 * while another database's reads and writes on the same server go on; the
 * same bound holds in a session, in an import, in an answer checked on a
 * scratch copy and for a copy from a template; a teacher's token made with
 * maxDatabaseMb writes past the default. The refused writes are journaled
 * as failed, so `replay -verify` equals the live files.
 *
 * Build first (`npm run build`): the server runs from dist/.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import { parseTokensFile } from '../src/config/tokens-file';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';

t.setTimeout(180_000);

const ADMIN = 'size-limit-admin';
const cwd = scratchDir(t);
const data = path.join(cwd, 'data');
const journal = path.join(cwd, 'journal', 'statements.jsonl');
let server: TestServer;

t.before(async () => {
  // The default bound (-max-database-mb 100): what a server started without the flag protects.
  server = await startServer(['-dir', data, '-log-file', journal, '-token', ADMIN], {
    cwd,
    headers: { 'X-Service-Token': ADMIN },
  });
});
t.teardown(async () => {
  await server.stop();
});

function as(secret: string): Record<string, string> {
  return { 'X-Service-Token': secret };
}

function ok(reply: Reply, what: string, status = 200): Reply {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.text}`);
  return reply;
}

async function makeToken(spec: Record<string, unknown>): Promise<string> {
  return ok(await server.post('/tokens', spec), 'POST /tokens', 201).body.tokens[0].secret;
}

async function countRows(db: string, table: string): Promise<number> {
  return Number(ok(await server.exec(db, `SELECT count(*) FROM ${table}`), 'count').body.results[0].rows[0][0]);
}

const fileSize = (db: string): number => fs.statSync(path.join(data, `${db}.db`)).size;

t.test('the 500 MB zeroblob is refused with its code, quickly; nothing else on the server notices', async (tt) => {
  for (const db of ['big', 'other']) ok(await server.post('/dbs', { db }), `POST /dbs ${db}`, 201);
  ok(await server.exec('big', 'CREATE TABLE big (b BLOB)'), 'CREATE big');
  ok(await server.exec('big', "INSERT INTO big VALUES (x'00')"), 'a small row');
  ok(await server.exec('other', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)'), 'CREATE t');
  const before = fileSize('big');

  // A classmate works on another database the whole time.
  let writing = true;
  const classmate = (async () => {
    const answers: number[] = [];
    for (let i = 0; writing || i < 3; i++) {
      answers.push((await server.exec('other', 'INSERT INTO t (v) VALUES (?)', { params: [`row ${i}`] })).status);
      answers.push((await server.exec('other', 'SELECT count(*) FROM t')).status);
    }
    return answers;
  })();
  const started = Date.now();
  const refused = await server.exec('big', 'INSERT INTO big VALUES (zeroblob(500000000))');
  const took = Date.now() - started;
  writing = false;
  const answers = await classmate;

  tt.equal(refused.status, 413, `refused as too large for the database: ${refused.text.slice(0, 200)}`);
  tt.equal(refused.body?.code, 6060, 'with its own code');
  tt.match(refused.body?.error, /big\.db may not grow past 100 MiB/, 'naming the database and its bound');
  tt.ok(took < 10_000, `answered in ${took} ms`);
  tt.equal(await countRows('big', 'big'), 1, 'the database holds what it held');
  tt.equal(fileSize('big'), before, 'and its file is the size it was');
  tt.ok(
    answers.length > 0 && answers.every((status) => status === 200),
    `every classmate request meanwhile answered 200 (${answers.length})`,
  );
  ok(await server.exec('big', "INSERT INTO big VALUES (x'01')"), 'a small write to the same database goes on');
  tt.equal((await server.get('/health')).status, 200);
});

t.test('the same bound in a session, an import and a checked answer', async (tt) => {
  const begun = ok(await server.post('/tx/begin', { db: 'big' }), 'begin');
  const session = begun.body.session as string;
  const inSession = await server.request('POST', '/exec', {
    body: { db: 'big', sql: 'INSERT INTO big VALUES (zeroblob(300000000))' },
    headers: { 'X-Service-Session': session },
  });
  tt.match(
    inSession,
    { status: 413, body: { code: 6062 } },
    'a session statement past the bound: SQLite rolled the session back, and it is closed',
  );
  tt.equal((await server.post(`/tx/rollback?session=${session}`)).status, 404, 'the session is gone');
  const next = ok(await server.post('/tx/begin', { db: 'big' }), 'another session opens at once').body.session;
  ok(await server.post(`/tx/rollback?session=${next}`), 'and rolls back');

  const imported = await server.request('POST', '/dbs/big/import', {
    rawBody: 'INSERT INTO big VALUES (zeroblob(300000000));\n',
    headers: { 'content-type': 'application/sql' },
  });
  tt.match(imported, { status: 413, body: { code: 6060 } }, 'an import past the bound');

  ok(
    await server.post('/exercises', {
      id: 'grow',
      set: 'size',
      position: 1,
      title: 'Add a row',
      prompt: 'Add a row to big.',
      template: 'big',
      solution: "INSERT INTO big VALUES (x'02')",
      check: 'SELECT count(*) FROM big',
    }),
    'POST /exercises',
    201,
  );
  const student = await makeToken({ name: 'student', role: 'write', databases: ['big'] });
  const checked = await server.request('POST', '/exercises/grow/check', {
    body: { sql: 'INSERT INTO big VALUES (zeroblob(300000000))' },
    headers: as(student),
  });
  tt.equal(checked.status, 200, `the check answers: ${checked.text.slice(0, 200)}`);
  tt.match(checked.body, { correct: false, error: { code: 6060 } }, 'an answer past the bound on its scratch copy');
  tt.equal(await countRows('big', 'big'), 2, 'none of it reached the database');
});

t.test("a teacher's token with maxDatabaseMb writes past the default; copies keep their maker's bound", async (tt) => {
  const teacher = await makeToken({ name: 'teacher', role: 'admin', maxDatabaseMb: 1024 });
  const listed = ok(await server.get('/tokens'), 'GET /tokens').body.tokens as Array<Record<string, unknown>>;
  tt.match(
    listed.find((token) => token.name === 'teacher'),
    { maxDatabaseMb: 1024 },
    'GET /tokens shows the bound',
  );
  ok(await server.post('/dbs', { db: 'template' }), 'POST /dbs template', 201);
  ok(await server.exec('template', 'CREATE TABLE media (b BLOB)'), 'CREATE media');
  const grown = await server.request('POST', '/exec', {
    body: { db: 'template', sql: 'INSERT INTO media VALUES (zeroblob(120000000))' },
    headers: as(teacher),
  });
  tt.equal(grown.status, 200, `the teacher's write past 100 MiB: ${grown.text.slice(0, 200)}`);
  const student = await makeToken({ name: 'pupil', role: 'write', databases: ['template'] });
  const pupil = await server.request('POST', '/exec', {
    body: { db: 'template', sql: 'INSERT INTO media VALUES (zeroblob(4000000))' },
    headers: as(student),
  });
  tt.match(pupil, { status: 413, body: { code: 6060 } }, "a student's write that grows it past the student's bound");

  const copyByAdmin = await server.post('/dbs', { db: 'copy-admin', from: 'template' });
  tt.match(copyByAdmin, { status: 413, body: { code: 6060 } }, 'the -token admin (default bound) may not copy it');
  tt.notOk(fs.existsSync(path.join(data, 'copy-admin.db')), 'and no copy was made');
  const copyByTeacher = await server.request('POST', '/dbs', {
    body: { db: 'copy-teacher', from: 'template' },
    headers: as(teacher),
  });
  tt.equal(copyByTeacher.status, 201, `the teacher may: ${copyByTeacher.text.slice(0, 200)}`);

  const bad = await server.post('/tokens', { name: 'x', role: 'read', databases: ['big'], maxDatabaseMb: 0 });
  tt.match(bad, { status: 400, body: { code: 1034, error: /maxDatabaseMb/ } }, 'a bound of 0 MiB is refused');
});

t.test('the refused writes are journaled as failed, and replay equals the live files', async (tt) => {
  tt.equal(await server.stop(), 0);
  const entries = (await readJournal(journal)).entries;
  const refused = entries.filter((entry) => entry.code === 6060);
  tt.ok(refused.length >= 3, `the refusals are in the journal (${refused.length})`);
  tt.ok(
    refused.every((entry) => !entry.ok),
    'each as a failed entry, which replay skips',
  );
  const replay = await runReplay(['-log-file', journal, '-out', path.join(cwd, 'replayed'), '-verify', data], cwd);
  tt.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr}`);
});

t.test('-tokens-file takes maxDatabaseMb too, and refuses a bad one naming the token', async (tt) => {
  const hash = `sha256:${'a'.repeat(64)}`;
  const [token] = parseTokensFile(
    JSON.stringify({ tokens: [{ name: 'teacher', role: 'admin', hash, maxDatabaseMb: 2048 }] }),
    'tokens.json',
  );
  tt.match(token, { name: 'teacher', maxDatabaseMb: 2048 });
  tt.throws(
    () => parseTokensFile(JSON.stringify({ tokens: [{ name: 'x', role: 'admin', hash, maxDatabaseMb: 1.5 }] }), 'f'),
    /f: tokens\[0\]: "maxDatabaseMb" must be a whole number of MiB/,
  );
});
