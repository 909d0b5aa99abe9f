/**
 * Exercises that check themselves, over HTTP against a real server with
 * Chinook: answers written differently but equal are right, near misses are
 * wrong with the feedback that says why, a data-changing task is judged
 * through its check query, no check changes the template or the student's
 * database, a runaway answer stops at -query-timeout and a hostile one is
 * refused, a write or read token never sees a solution or a check, and every
 * check is an `attempt` in the journal that a restart and a replay keep.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { importChinook } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';

t.setTimeout(240_000);

const ADMIN = 'teacher-secret';
const root = scratchDir(t);
const dataDir = path.join(root, 'data');
const args = ['-dir', dataDir, '-token', ADMIN, '-query-timeout', '1s'];
let server: TestServer;

/** Every answer a student token received: none may hold a solution or a check. */
const studentBodies: string[] = [];

const EXERCISES = [
  {
    id: 'longest-tracks',
    set: 'lesson-1',
    position: 1,
    title: 'The five longest tracks',
    prompt: "List the **five longest tracks** with their album's title, longest first.",
    template: 'chinook',
    solution:
      'SELECT t.Name, a.Title FROM Track t JOIN Album a ON a.AlbumId = t.AlbumId ORDER BY t.Milliseconds DESC LIMIT 5 -- sol-mark-1',
    order: 'exact',
    showRows: true,
  },
  {
    id: 'brazil',
    set: 'lesson-1',
    position: 2,
    title: 'Customers in Brazil',
    prompt: 'First and last names of the customers in Brazil.',
    template: 'chinook',
    solution: "SELECT FirstName, LastName FROM Customer WHERE Country = 'Brazil' /* sol-mark-2 */",
    showRows: true,
  },
  {
    id: 'average-minutes',
    set: 'lesson-1',
    position: 3,
    title: 'Average length',
    prompt: 'The average track length in minutes.',
    template: 'chinook',
    solution: 'SELECT AVG(Milliseconds) / 60000.0 AS minutes FROM Track -- sol-mark-3',
    tolerance: 0.001,
  },
  {
    id: 'reprice',
    set: 'lesson-1',
    position: 4,
    title: 'New prices',
    prompt: 'Give every track of album 1 a price of 1.29.',
    template: 'chinook',
    solution: 'UPDATE Track SET UnitPrice = 1.29 WHERE AlbumId = 1 -- sol-mark-4',
    check: 'SELECT TrackId, UnitPrice FROM Track WHERE AlbumId IN (1, 2) ORDER BY TrackId -- check-mark-4',
  },
  {
    id: 'by-name',
    set: 'lesson-1',
    position: 5,
    title: 'Columns by name',
    prompt: 'Names and countries of the employees.',
    template: 'chinook',
    solution: 'SELECT LastName, Country FROM Employee -- sol-mark-5',
    columns: 'name',
    showRows: true,
  },
];
const SECRETS = [
  ...EXERCISES.map((e) => e.solution),
  ...EXERCISES.flatMap((e) => (e.check === undefined ? [] : [e.check])),
  'sol-mark',
  'check-mark',
];

let ana = '';
let rita = '';

async function as(secret: string, method: string, url: string, body?: unknown): Promise<Reply> {
  const reply = await server.request(method, url, {
    headers: { 'X-Service-Token': secret },
    ...(body === undefined ? {} : { body }),
  });
  studentBodies.push(reply.text);
  return reply;
}

function check(secret: string, id: string, sql: string): Promise<Reply> {
  return as(secret, 'POST', `/exercises/${id}/check`, { sql });
}

/** A database's contents (schema and every row), read from its file beside the server. */
function contentDigest(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const hash = crypto.createHash('sha256');
    const objects = db.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY type, name').all() as Array<{
      type: string;
      name: string;
      sql: string | null;
    }>;
    for (const object of objects) {
      hash.update(JSON.stringify(object));
      if (object.type === 'table' && !object.name.startsWith('sqlite_')) {
        for (const row of db.prepare(`SELECT * FROM "${object.name}" ORDER BY rowid`).raw().iterate())
          hash.update(JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      }
    }
    return hash.digest('hex');
  } finally {
    db.close();
  }
}

async function start(): Promise<TestServer> {
  return startServer(args, { cwd: root, headers: { 'X-Service-Token': ADMIN } });
}

t.before(async () => {
  server = await start();
  await importChinook(server);
  if ((await server.post('/dbs', { db: 'lab', from: 'chinook' })).status !== 201) throw new Error('POST /dbs lab');
  const made = async (name: string, role: string): Promise<string> => {
    const reply = await server.post('/tokens', { name, role, databases: ['lab'] });
    if (reply.status !== 201) throw new Error(`tokens: ${reply.text}`);
    return reply.body.tokens[0].secret as string;
  };
  ana = await made('ana', 'write');
  rita = await made('rita', 'read');
  for (const exercise of EXERCISES) {
    const made = await server.post('/exercises', exercise);
    if (made.status !== 201) throw new Error(`POST /exercises ${exercise.id}: ${made.text}`);
  }
});
t.teardown(async () => {
  await server?.stop();
});

t.test('an admin defines exercises; every token lists them, without solution or check', async (t) => {
  const listed = await server.get('/exercises?set=lesson-1');
  t.equal(listed.status, 200);
  t.same(
    listed.body.exercises.map((e: { id: string }) => e.id),
    ['longest-tracks', 'brazil', 'average-minutes', 'reprice', 'by-name'],
    "in the lesson's order",
  );
  t.match(listed.body.exercises[3], {
    id: 'reprice',
    template: 'chinook.db',
    order: 'any',
    columns: 'position',
    tolerance: 1e-9,
    showRows: false,
    revision: 1,
    solution: EXERCISES[3]!.solution,
    check: EXERCISES[3]!.check,
  });
  const student = await as(ana, 'GET', '/exercises?set=lesson-1');
  t.equal(student.status, 200);
  t.equal(student.body.exercises.length, 5);
  for (const exercise of student.body.exercises) {
    t.notOk('solution' in exercise, `${exercise.id}: no solution for a write token`);
    t.notOk('check' in exercise, `${exercise.id}: no check for a write token`);
  }
  const one = await as(rita, 'GET', '/exercises/reprice');
  t.equal(one.status, 200);
  t.match(one.body.exercise, {
    id: 'reprice',
    title: 'New prices',
    prompt: 'Give every track of album 1 a price of 1.29.',
  });
  t.notOk('solution' in one.body.exercise);
  const tables = await as(rita, 'GET', '/exercises/brazil/tables');
  t.equal(tables.status, 200);
  t.ok(
    tables.body.tables.some((table: { name: string }) => table.name === 'Customer'),
    "the template's tables, for completion, to a token that may not read the template",
  );
  t.equal((await as(rita, 'GET', '/tables?db=chinook')).status, 403, 'while the template itself stays out of reach');
  t.equal((await as(ana, 'GET', '/exercises?set=nobody')).body.exercises.length, 0);
});

t.test('equal results written differently are right', async (t) => {
  const right: Array<[string, string]> = [
    [
      'longest-tracks',
      'SELECT Track.Name AS song, Album.Title AS album FROM Album JOIN Track USING (AlbumId) ORDER BY Track.Milliseconds DESC LIMIT 5',
    ],
    [
      'longest-tracks',
      'select t.name, (select title from album where albumid = t.albumid) from track t order by milliseconds desc limit 5',
    ],
    [
      'brazil',
      "SELECT c.FirstName AS nombre, c.LastName AS apellido FROM Customer c WHERE c.Country = 'Brazil' ORDER BY c.LastName DESC",
    ],
    [
      'brazil',
      "SELECT FirstName, LastName FROM Customer WHERE CustomerId IN (SELECT CustomerId FROM Customer WHERE Country LIKE 'brazil')",
    ],
    ['average-minutes', 'SELECT SUM(Milliseconds) / 60000.0 / COUNT(*) FROM Track'],
    ['average-minutes', 'SELECT ROUND(AVG(Milliseconds) / 60000.0, 4) FROM Track'],
    ['by-name', 'SELECT Country, LastName FROM Employee ORDER BY EmployeeId DESC'],
    ['reprice', 'UPDATE Track SET UnitPrice = 1.29 WHERE TrackId IN (SELECT TrackId FROM Track WHERE AlbumId = 1)'],
    [
      'reprice',
      'UPDATE Track SET UnitPrice = 0.5 WHERE AlbumId = 1; UPDATE Track SET UnitPrice = UnitPrice + 0.79 WHERE AlbumId = 1',
    ],
  ];
  for (const [id, sql] of right) {
    const reply = await check(ana, id, sql);
    t.equal(reply.status, 200, `${id}: ${sql}`);
    t.match(reply.body, { ok: true, exercise: id, correct: true }, `${id} right: ${sql}`);
    t.notOk('error' in reply.body);
  }
});

t.test('near misses are wrong, with feedback that says why', async (t) => {
  const missing = await check(
    ana,
    'brazil',
    "SELECT FirstName, LastName FROM Customer WHERE Country = 'Brazil' AND CustomerId <> 1",
  );
  t.match(
    missing.body,
    { correct: false, feedback: { rows: { expected: 5, got: 4 }, missingRow: ['Luís', 'Gonçalves'] } },
    'a missing row, quoted',
  );
  t.notOk('extraRow' in missing.body.feedback);
  const extra = await check(
    ana,
    'brazil',
    "SELECT FirstName, LastName FROM Customer WHERE Country IN ('Brazil', 'Chile')",
  );
  t.match(
    extra.body,
    { correct: false, feedback: { rows: { expected: 5, got: 6 }, extraRow: ['Luis', 'Rojas'] } },
    'a row too many, quoted',
  );
  const column = await check(ana, 'brazil', "SELECT FirstName FROM Customer WHERE Country = 'Brazil'");
  t.match(
    column.body,
    { correct: false, feedback: { columns: { missing: ['LastName'], extra: [] }, rows: { expected: 5, got: 5 } } },
    'a column missing',
  );
  const tooMany = await check(ana, 'by-name', 'SELECT LastName, Country, City FROM Employee');
  t.match(
    tooMany.body,
    { correct: false, feedback: { columns: { missing: [], extra: ['City'] } } },
    'a column too many, by name',
  );
  const renamed = await check(ana, 'by-name', 'SELECT LastName AS surname, Country FROM Employee');
  t.match(
    renamed.body,
    { correct: false, feedback: { columns: { missing: ['LastName'], extra: ['surname'] } } },
    'by name, the names count',
  );
  const order = await check(
    ana,
    'longest-tracks',
    'SELECT Name, Title FROM (SELECT t.Name, a.Title FROM Track t JOIN Album a USING (AlbumId) ORDER BY t.Milliseconds DESC LIMIT 5) ORDER BY Name',
  );
  t.match(
    order.body,
    { correct: false, feedback: { rows: { expected: 5, got: 5 }, order: /the order matters here/ } },
    'the right rows in the wrong order, where the order matters',
  );
  t.notOk('missingRow' in order.body.feedback);
  const float = await check(ana, 'average-minutes', 'SELECT AVG(Milliseconds) / 60000.0 + 0.01 FROM Track');
  t.match(float.body, { correct: false, feedback: { rows: { expected: 1, got: 1 } } }, 'a float beyond the tolerance');
  t.notOk('missingRow' in float.body.feedback, 'no row quoted where the exercise does not allow it');
  const wrongWrite = await check(ana, 'reprice', 'UPDATE Track SET UnitPrice = 1.29');
  t.match(
    wrongWrite.body,
    { correct: false },
    'a data-changing task judged through its check: too many tracks changed',
  );
  const noWrite = await check(ana, 'reprice', 'SELECT TrackId, UnitPrice FROM Track WHERE AlbumId = 1');
  t.match(noWrite.body, { correct: false }, 'an answer that changes nothing does not do the task');
  const failing = await check(ana, 'brazil', 'SELECT Nombre FROM Customer');
  t.match(
    failing.body,
    { ok: true, correct: false, error: { code: 2004, class: 2, message: /no such column/ } },
    'an answer that fails gets its engine error',
  );
  const syntax = await check(ana, 'brazil', 'SELEC 1');
  t.match(syntax.body, { correct: false, error: { code: 1001, class: 1 } });
});

t.test("a check never changes the template or the student's database", async (t) => {
  const template = path.join(dataDir, 'chinook.db');
  const lab = path.join(dataDir, 'lab.db');
  const before = [contentDigest(template), contentDigest(lab)];
  const attacks = [
    'DROP TABLE Track',
    'DELETE FROM Customer',
    "UPDATE Album SET Title = 'gone'; DELETE FROM Invoice; SELECT 1",
    'CREATE TABLE stolen AS SELECT * FROM Customer; DROP TABLE Album',
    "INSERT INTO Artist (Name) VALUES ('x'); SELECT * FROM Artist",
  ];
  for (const id of ['brazil', 'reprice']) {
    for (const sql of attacks) {
      const reply = await check(ana, id, sql);
      t.equal(reply.status, 200, `${id}: ${sql}`);
      t.equal(reply.body.correct, false);
    }
  }
  t.same([contentDigest(template), contentDigest(lab)], before, 'both files hold what they held');
  const rows = await as(ana, 'POST', '/exec', { db: 'lab', sql: 'SELECT count(*) FROM Track' });
  t.same(rows.body.results[0].rows, [[3503]], "the student's database is whole");
  const again = await check(ana, 'brazil', "SELECT FirstName, LastName FROM Customer WHERE Country = 'Brazil'");
  t.equal(again.body.correct, true, 'and later checks see the template as it is');
});

t.test('a runaway answer stops at -query-timeout; a hostile one is refused with its code', async (t) => {
  const started = Date.now();
  const runaway = await check(
    rita,
    'brazil',
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
  );
  t.match(runaway.body, { correct: false, error: { code: 6007, class: 6 } }, "stopped, with the timeout's code");
  t.ok(Date.now() - started < 10_000, "within the timeout, not the request's");
  const hostile = await check(rita, 'brazil', "ATTACH DATABASE '/tmp/sqlscribe-exercise-escape.db' AS x");
  t.match(hostile.body, { correct: false, error: { code: 1003, class: 1 } }, 'ATTACH refused as in /exec');
  t.notOk(fs.existsSync('/tmp/sqlscribe-exercise-escape.db'));
  const pragma = await check(rita, 'brazil', "VACUUM INTO '/tmp/sqlscribe-exercise-escape.db'");
  t.equal(pragma.body.correct, false);
  t.notOk(fs.existsSync('/tmp/sqlscribe-exercise-escape.db'));
});

t.test('who may do what, and the errors of the catalog', async (t) => {
  t.match(
    (await as(rita, 'POST', '/exercises', { ...EXERCISES[1], id: 'mine' })).body,
    { code: 1030 },
    'a read token writes no exercise',
  );
  t.match((await as(ana, 'PUT', '/exercises/brazil', EXERCISES[1])).body, { code: 1030 }, 'nor a write token');
  t.match((await as(ana, 'DELETE', '/exercises/brazil')).body, { code: 1030 });
  t.match((await as(ana, 'GET', '/exercises/progress')).body, { code: 1030 }, "progress is the teacher's");
  t.match((await as(ana, 'GET', '/exercises/evidence?set=lesson-1')).body, { code: 1030 });
  t.match(await server.post('/exercises', EXERCISES[0]), { status: 409, body: { code: 2081 } }, 'an exercise exists');
  t.match(await server.get('/exercises/nothing'), { status: 404, body: { code: 2080 } });
  t.match(await as(ana, 'POST', '/exercises/nothing/check', { sql: 'SELECT 1' }), {
    status: 404,
    body: { code: 2080 },
  });
  t.match(await server.post('/exercises', { ...EXERCISES[1], id: 'typo', colour: 'red' }), {
    status: 400,
    body: { code: 1080, error: /unknown field "colour"/ },
  });
  t.match(
    await server.post('/exercises', { ...EXERCISES[1], id: 'bad-sql', solution: 'SELECT nope FROM Customer' }),
    { status: 400, body: { code: 1080, error: /no such column/ } },
    'a solution that fails is refused before it is stored',
  );
  t.match(await server.post('/exercises', { ...EXERCISES[1], id: 'writes', solution: 'DELETE FROM Customer' }), {
    status: 400,
    body: { code: 1080, error: /needs a "check"/ },
  });
  t.match(await server.post('/exercises', { ...EXERCISES[1], id: 'no-template', template: 'nowhere' }), {
    status: 409,
    body: { code: 2082 },
  });
  t.match(await server.post('/exercises', { ...EXERCISES[1], id: 'tolerance', tolerance: -1 }), {
    status: 400,
    body: { code: 1080 },
  });
  t.match(await as(ana, 'POST', '/exercises/brazil/check', { sql: '' }), { status: 400, body: { code: 1081 } });
  t.match(await as(ana, 'POST', '/exercises/brazil/check', { query: 'SELECT 1' }), {
    status: 400,
    body: { code: 1081 },
  });
  // A template dropped after the exercise was written.
  t.equal((await server.post('/dbs', { db: 'scratchpad', from: 'chinook' })).status, 201);
  t.equal(
    (await server.post('/exercises', { ...EXERCISES[1], id: 'orphan', set: 'other', template: 'scratchpad' })).status,
    201,
  );
  t.equal((await server.exec(undefined, 'DROP DATABASE scratchpad')).status, 200);
  t.match(
    await as(ana, 'POST', '/exercises/orphan/check', { sql: 'SELECT 1' }),
    { status: 409, body: { code: 2082 } },
    'the template is gone',
  );
  // PUT replaces, DELETE removes.
  const changed = await server.request('PUT', '/exercises/orphan', {
    body: { ...EXERCISES[1], id: 'orphan', set: 'other', title: 'Renamed' },
  });
  t.match(changed, {
    status: 200,
    body: { exercise: { id: 'orphan', title: 'Renamed', template: 'chinook.db', revision: 2 } },
  });
  t.match(await server.request('DELETE', '/exercises/orphan'), { status: 200, body: { ok: true, id: 'orphan' } });
  t.match(await server.request('DELETE', '/exercises/orphan'), { status: 404, body: { code: 2080 } });
  t.match(
    await server.request('PUT', '/exercises/brazil', { body: { ...EXERCISES[1], id: 'elsewhere' } }),
    { status: 400, body: { code: 1080 } },
    "the body's id must be the path's",
  );
  t.match(
    await server.request('PUT', '/exercises/orphan', { body: EXERCISES[1] }),
    { status: 404, body: { code: 2080 } },
    'PUT changes an exercise, it makes none',
  );
});

t.test('no write or read token ever saw a solution or a check', async (t) => {
  t.ok(studentBodies.length > 40, `${studentBodies.length} answers to student tokens`);
  for (const secret of SECRETS) {
    const found = studentBodies.filter((body) => body.includes(secret));
    t.same(found, [], `never shown: ${secret.slice(0, 40)}`);
  }
});

t.test("the journal's live feed carries each attempt as it is checked", async (t) => {
  const page = await server.get('/journal?kind=attempt&limit=1000');
  const kinds = new Set(
    page.text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { kind: string }).kind),
  );
  t.same([...kinds], ['attempt'], 'kind=attempt: only the attempts');
  t.match(await server.get('/journal?kind=nothing'), { status: 400, body: { code: 1008 } });
  const head = page.headers.get('journal-head') ?? '0';
  const controller = new AbortController();
  const response = await fetch(`${server.url}/journal?kind=attempt&since=${head}`, {
    headers: { 'X-Service-Token': ADMIN, Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  await check(rita, 'brazil', 'SELECT 42 AS live');
  let text = '';
  while (!text.includes('SELECT 42 AS live')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
  }
  controller.abort();
  const data = text.split('\n').find((line) => line.startsWith('data: ') && line.includes('SELECT 42 AS live'));
  t.match(
    JSON.parse((data ?? 'data: {}').slice(6)),
    { kind: 'attempt', tokenName: 'rita', exercise: 'brazil', correct: false, sql: 'SELECT 42 AS live' },
    'a follower sees the attempt',
  );
});

t.test('each check is an attempt in the journal, kept by a restart and by replay', async (t) => {
  const feed = await server.get('/journal?token=ana&limit=1000');
  const entries = feed.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.kind === 'attempt');
  t.ok(entries.length >= 20, `${entries.length} attempts of ana`);
  t.match(
    entries.find((entry) => entry.sql === 'SELECT Nombre FROM Customer'),
    {
      kind: 'attempt',
      db: null,
      exercise: 'brazil',
      tokenName: 'ana',
      correct: false,
      ok: false,
      code: 2004,
      class: 2,
    },
  );
  t.match(
    entries.find((entry) => entry.correct === true),
    { kind: 'attempt', tokenName: 'ana', ok: true },
  );
  const before = await server.get('/exercises/progress?set=lesson-1');
  t.equal(before.status, 200);
  const anaRow = before.body.students.find((row: { token: string }) => row.token === 'ana');
  t.match(anaRow, { token: 'ana', solved: 5 });
  await server.stop();
  server = await start();
  const after = await server.get('/exercises/progress?set=lesson-1');
  t.same(after.body.students, before.body.students, 'the same progress after a restart');
  t.equal(
    (await server.get('/exercises/brazil')).body.exercise.solution,
    EXERCISES[1]!.solution,
    'and the same exercises',
  );
  await server.stop();
  const out = path.join(root, 'replayed');
  const replay = await runReplay(['-log-file', path.join(dataDir, 'journal', 'statements.jsonl'), '-out', out], root);
  t.equal(replay.code, 0, `replay: ${replay.stderr}`);
  const rebuilt = new Database(path.join(out, '_sqlscribe_exercises.db'), { readonly: true });
  t.same(
    rebuilt.prepare('SELECT id FROM exercises ORDER BY set_name, position').pluck().all(),
    ['longest-tracks', 'brazil', 'average-minutes', 'reprice', 'by-name'],
    'replay rebuilds the exercises',
  );
  rebuilt.close();
  server = await start();
});
