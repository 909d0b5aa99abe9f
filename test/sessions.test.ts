/**
 * Cross-request transaction sessions over HTTP.
 *
 * Every row of the state table is walked against the real server: begin,
 * a second begin (409), /exec in the session (header and ?session=), commit,
 * rollback, idle expiry by the real timer, wrong ids, auto-commit
 * without a session, isolation of uncommitted rows, the lock timeout of
 * outside writes, savepoints across requests, failures inside a session,
 * statements a session refuses, a query timeout inside a session, INSERT OR
 * ROLLBACK, multi-DB and single-DB begin, and token authentication.
 *
 * Every test starts its own server in its own directory. Timing bounds are
 * deliberately generous: this runs on a shared, noisy machine. The idle
 * timeout's rules (each request restarts it, lazy expiry, a running request
 * is never expired) are tested on a clock the test moves, in
 * session-timers.test.ts.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { execOk } from './helpers/exec';
import { sleep } from './helpers/wait';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(300_000);

/** Never ends by itself: SQLite counts forever. */
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
const TABLE = 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)';
const SESSION_ID = /^[0-9a-f]{16}$/;
/** The default idle timeout. */
const DEFAULT_TIMEOUT_S = 300;

const nowUnix = (): number => Date.now() / 1000;

interface Multi {
  server: TestServer;
  /** The names the server gives the two databases (as POST /dbs answered them). */
  a: string;
  b: string;
}

/**
 * The server of the tests that need no flags of their own, started by the first of them and
 * stopped with the file: a server start costs more CPU than most of these tests, and a fresh
 * pair of databases per test keeps them apart (each test ends the sessions it begins, since
 * one client holds one session at a time).
 */
let shared: Promise<TestServer> | undefined;
let pairs = 0;
// Made before the teardown that stops the server is registered, so removed after it has run.
const sharedDir = scratchDir(t);
t.teardown(async () => {
  if (shared !== undefined) await (await shared).stop();
});

/**
 * A multi-DB server with `args`, and two fresh databases `a` and `b`, each with table t
 * (id INT PRIMARY KEY, v TEXT): a server of its own when `args` or `headers` are given,
 * else the file's shared one, where the pair is named a<n> and b<n>.
 */
async function multiServer(tt: Test, args: string[] = [], headers?: Record<string, string>): Promise<Multi> {
  const own = args.length > 0 || headers !== undefined;
  let server: TestServer;
  if (own) {
    const dir = scratchDir(tt);
    server = await startServer(
      ['-dir', path.join(dir, 'data'), ...args],
      headers ? { cwd: dir, headers } : { cwd: dir },
    );
    tt.teardown(async () => {
      await server.stop();
    });
  } else {
    shared ??= startServer(['-dir', path.join(sharedDir, 'data')], { cwd: sharedDir });
    server = await shared;
  }
  const suffix = own ? '' : String(++pairs);
  const names: string[] = [];
  for (const db of ['a' + suffix, 'b' + suffix]) {
    let created = await server.post('/dbs', { db });
    // With a short -query-timeout, the first call to an engine process still starting up (slow under
    // tap's preloaders on a loaded machine) can be stopped at the timeout (6007): try again.
    for (let attempt = 0; attempt < 10 && created.body?.code === 6007; attempt++) {
      await sleep(500);
      created = await server.post('/dbs', { db });
    }
    tt.equal(created.status, 201, `POST /dbs ${db}: ${created.text}`);
    names.push(String(created.body?.db ?? db));
    await execOk(tt, server, db, TABLE);
  }
  return { server, a: names[0] as string, b: names[1] as string };
}

/** The rows of the last statement, run outside any session. */
async function outsideRows(
  tt: Test,
  server: TestServer,
  db: string | undefined,
  sql = 'SELECT id, v FROM t ORDER BY id',
): Promise<unknown[][]> {
  const results = await execOk(tt, server, db, sql);
  return (results[results.length - 1]?.rows ?? []) as unknown[][];
}

function begin(server: TestServer, body?: unknown): Promise<Reply> {
  return server.post('/tx/begin', body);
}

/** Begins a session and checks the 200 answer; returns its id. */
async function beginOk(tt: Test, server: TestServer, db: string | undefined, expectDb?: string): Promise<string> {
  const reply = await begin(server, db === undefined ? {} : { db });
  tt.equal(reply.status, 200, `begin ${db ?? '{}'}: ${reply.text}`);
  tt.equal(reply.body?.ok, true, 'begin: ok');
  tt.match(reply.body?.session, SESSION_ID, 'begin: session is 16 lowercase hex characters');
  if (expectDb !== undefined) tt.equal(reply.body?.db, expectDb, 'begin: db names the database');
  return String(reply.body?.session);
}

type Via = 'header' | 'query';

/** POST /exec in session `id`, the id sent as X-Service-Session (default) or ?session=. */
function sx(server: TestServer, id: string, sql: string, options: { db?: string; via?: Via } = {}): Promise<Reply> {
  const body = options.db === undefined ? { sql } : { db: options.db, sql };
  if (options.via === 'query') return server.request('POST', `/exec?session=${encodeURIComponent(id)}`, { body });
  return server.request('POST', '/exec', { body, headers: { 'X-Service-Session': id } });
}

async function sxOk(
  tt: Test,
  server: TestServer,
  id: string,
  sql: string,
  options: { db?: string; via?: Via } = {},
): Promise<any[]> {
  const reply = await sx(server, id, sql, options);
  tt.equal(reply.status, 200, `session ${sql.slice(0, 80)} → ${reply.text.slice(0, 300)}`);
  tt.equal(reply.body?.session, id, 'session response carries the session id');
  return (reply.body?.results ?? []) as any[];
}

async function sessionRows(
  tt: Test,
  server: TestServer,
  id: string,
  sql = 'SELECT id, v FROM t ORDER BY id',
): Promise<unknown[][]> {
  const results = await sxOk(tt, server, id, sql);
  return (results[results.length - 1]?.rows ?? []) as unknown[][];
}

function commit(server: TestServer, id: string): Promise<Reply> {
  return server.post(`/tx/commit?session=${encodeURIComponent(id)}`);
}

function rollback(server: TestServer, id: string): Promise<Reply> {
  return server.post(`/tx/rollback?session=${encodeURIComponent(id)}`);
}

async function endOk(tt: Test, server: TestServer, id: string, doCommit: boolean, db?: string): Promise<void> {
  const reply = doCommit ? await commit(server, id) : await rollback(server, id);
  const message = doCommit ? 'COMMIT' : 'ROLLBACK';
  tt.equal(reply.status, 200, `${message}: ${reply.text}`);
  tt.equal(reply.body?.ok, true, `${message}: ok`);
  tt.equal(reply.body?.message, message, `${message}: message`);
  if (db !== undefined) tt.equal(reply.body?.db, db, `${message}: db`);
}

/** The id is not the active session: 404 with `code` on /exec (header and query), commit and rollback. */
async function isGone(tt: Test, server: TestServer, id: string, code: number, label: string): Promise<void> {
  isError(tt, await sx(server, id, 'SELECT 1'), 404, code, `${label}: /exec with the id in the header`);
  isError(tt, await sx(server, id, 'SELECT 1', { via: 'query' }), 404, code, `${label}: /exec with ?session=`);
  isError(tt, await commit(server, id), 404, code, `${label}: /tx/commit`);
  isError(tt, await rollback(server, id), 404, code, `${label}: /tx/rollback`);
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work();
  return { value, ms: Date.now() - started };
}

t.test('begins sessions with fresh 16-hex ids, the db and expires_unix ≈ now + timeout', async (tt) => {
  const { server, a } = await multiServer(tt);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const before = nowUnix();
    const reply = await begin(server, { db: a });
    tt.equal(reply.status, 200, `begin #${i}: ${reply.text}`);
    tt.equal(reply.body?.ok, true, 'ok');
    tt.match(reply.body?.session, SESSION_ID, 'session: 16 lowercase hex');
    tt.equal(reply.body?.db, a, 'db');
    tt.type(reply.body?.expires_unix, 'number', 'expires_unix is a number');
    tt.ok(Number.isInteger(reply.body?.expires_unix), 'expires_unix is whole seconds');
    tt.ok(
      Math.abs(reply.body.expires_unix - (before + DEFAULT_TIMEOUT_S)) <= 5,
      `expires_unix ${reply.body?.expires_unix} ≈ now + ${DEFAULT_TIMEOUT_S}`,
    );
    ids.push(String(reply.body?.session));
    await endOk(tt, server, String(reply.body?.session), i % 2 === 0, a);
  }
  tt.equal(new Set(ids).size, ids.length, `the ids differ: ${ids.join(' ')}`);
});

t.test(
  'refuses a second begin with 409 (5004), Retry-After and the db name, leaving the session as it was',
  async (tt) => {
    const { server, a, b } = await multiServer(tt);
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'one')");
    for (const db of [a, b]) {
      const second = await begin(server, { db });
      isError(tt, second, 409, 5004, `second begin on ${db}`);
      const retryAfter = second.headers.get('retry-after');
      tt.match(retryAfter, /^\d+$/, `Retry-After is integer seconds: ${retryAfter}`);
      tt.ok(
        Number(retryAfter) > 0 && Number(retryAfter) <= DEFAULT_TIMEOUT_S,
        `Retry-After ${retryAfter} in 1..${DEFAULT_TIMEOUT_S}`,
      );
      tt.ok(String(second.body?.error).includes(a), `the error names the held database ${a}: ${second.body?.error}`);
      if (db === b)
        tt.notOk(String(second.body?.error).includes(b), 'the error names the held database, not the asked one');
    }
    tt.same(await sessionRows(tt, server, id), [[1, 'one']], 'the active session is still usable and kept its row');
    tt.same(await outsideRows(tt, server, a), [], 'still uncommitted');
    await endOk(tt, server, id, true, a);
    tt.same(await outsideRows(tt, server, a), [[1, 'one']], 'the first session commits');
  },
);

t.test('runs /exec with the session id in the open transaction, without auto-commit', async (tt) => {
  const { server, a, b } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);

  const before = nowUnix();
  const byHeader = await sx(server, id, "INSERT INTO t VALUES (1, 'header')");
  tt.equal(byHeader.status, 200, `X-Service-Session: ${byHeader.text}`);
  tt.equal(byHeader.body?.ok, true, 'ok');
  tt.equal(byHeader.body?.session, id, 'the response carries the session');
  tt.equal(byHeader.body?.results?.[0]?.message, 'INSERT 1', 'the statement ran');
  tt.type(byHeader.body?.expires_unix, 'number', 'the response carries expires_unix');
  tt.ok(
    Math.abs(byHeader.body?.expires_unix - (before + DEFAULT_TIMEOUT_S)) <= 5,
    `expires_unix ${byHeader.body?.expires_unix} ≈ now + ${DEFAULT_TIMEOUT_S}`,
  );

  const byQuery = await sx(server, id, "INSERT INTO t VALUES (2, 'query')", { via: 'query' });
  tt.equal(byQuery.status, 200, `?session=: ${byQuery.text}`);
  tt.equal(byQuery.body?.session, id, 'the response carries the session');
  tt.type(byQuery.body?.expires_unix, 'number', 'the response carries expires_unix');

  tt.same(await outsideRows(tt, server, a), [], 'nothing was auto-committed');
  tt.same(
    await sessionRows(tt, server, id),
    [
      [1, 'header'],
      [2, 'query'],
    ],
    'the session sees both requests',
  );

  await sxOk(tt, server, id, "INSERT INTO t VALUES (3, 'no db')");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (4, 'same db')", { db: a });
  await sxOk(tt, server, id, "INSERT INTO t VALUES (5, 'same db, its full name')", { db: a });
  const other = await sx(server, id, "INSERT INTO t VALUES (6, 'other db')", { db: b });
  isError(tt, other, 400, 5006, '/exec in the session with another db');
  tt.ok(String(other.body?.error).includes(a), `the error names the session's database: ${other.body?.error}`);
  tt.same(await outsideRows(tt, server, b), [], 'nothing reached the other database');

  const both = await server.request('POST', `/exec?session=${id}`, {
    body: { sql: 'SELECT 1' },
    headers: { 'X-Service-Session': id },
  });
  tt.equal(both.status, 200, `the same id in the header and the query: ${both.text}`);
  const differ = await server.request('POST', '/exec?session=0123456789abcdef', {
    body: { sql: 'SELECT 1' },
    headers: { 'X-Service-Session': id },
  });
  tt.equal(differ.status, 400, `different ids in the header and the query: ${differ.text}`);

  tt.same(await outsideRows(tt, server, a), [], 'still nothing committed');
  await endOk(tt, server, id, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'header'],
      [2, 'query'],
      [3, 'no db'],
      [4, 'same db'],
      [5, 'same db, its full name'],
    ],
    'commit made every request visible',
  );
  tt.same(await outsideRows(tt, server, b), [], 'b untouched');
});

t.test('commits a session: changes visible outside, then the id is 404 (5002)', async (tt) => {
  const { server, a } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'one'); INSERT INTO t VALUES (2, 'two')");
  await sxOk(tt, server, id, "UPDATE t SET v = 'TWO' WHERE id = 2");
  tt.same(await outsideRows(tt, server, a), [], 'invisible before commit');
  await endOk(tt, server, id, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'one'],
      [2, 'TWO'],
    ],
    'visible after commit',
  );
  await isGone(tt, server, id, 5002, 'committed id');
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'one'],
      [2, 'TWO'],
    ],
    'a late rollback of the id changed nothing',
  );
  const next = await beginOk(tt, server, a, a);
  tt.not(next, id, 'a new session gets a new id');
  await endOk(tt, server, next, false, a);
});

t.test('rolls back a session: changes gone, then the id is 404 (5002)', async (tt) => {
  const { server, a } = await multiServer(tt);
  await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'kept')");
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'gone')");
  await sxOk(tt, server, id, 'DELETE FROM t WHERE id = 1; CREATE TABLE u (x INT)');
  tt.same(await sessionRows(tt, server, id), [[2, 'gone']], 'the session sees its changes');
  await endOk(tt, server, id, false, a);
  tt.same(await outsideRows(tt, server, a), [[1, 'kept']], 'every change of the session is gone');
  const tables = await server.get(`/tables?db=${a}`);
  tt.same(
    (tables.body?.tables ?? []).map((table: any) => table.name),
    ['t'],
    'the table created in the session is gone',
  );
  await isGone(tt, server, id, 5002, 'rolled-back id');
  await execOk(tt, server, a, "INSERT INTO t VALUES (3, 'after')");
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'kept'],
      [3, 'after'],
    ],
    'the database is writable again',
  );
});

t.test('rolls back an idle session by its timer after -session-timeout', async (tt) => {
  const { server, a } = await multiServer(tt, ['-session-timeout', '1s', '-lock-timeout', '500ms']);
  await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'committed')");
  const id = await beginOk(tt, server, a, a);
  const begun = nowUnix();
  const inSession = await sx(server, id, "INSERT INTO t VALUES (2, 'uncommitted')");
  tt.equal(inSession.status, 200, inSession.text);
  tt.ok(
    Math.abs(inSession.body?.expires_unix - (begun + 1)) <= 2,
    `expires_unix ${inSession.body?.expires_unix} ≈ now + 1 s`,
  );

  isError(
    tt,
    await server.exec(a, "INSERT INTO t VALUES (3, 'blocked')"),
    409,
    5005,
    'an outside write while the session is active',
  );

  // No request at all meanwhile: only the timer can end the session.
  await sleep(2500);

  // An outside write does not look at the session: it succeeds only if the timer released the database.
  const write = await timed(() => server.exec(a, "INSERT INTO t VALUES (3, 'after expiry')"));
  tt.equal(write.value.status, 200, `the outside write that was blocked succeeds now: ${write.value.text}`);
  tt.ok(write.ms < 2000, `…at once (${write.ms} ms)`);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'committed'],
      [3, 'after expiry'],
    ],
    "the session's uncommitted row is gone",
  );

  await isGone(tt, server, id, 5003, 'expired id');
  const expired = await sx(server, id, 'SELECT 1');
  tt.ok(String(expired.body?.error).includes(id), `the error names the session: ${expired.body?.error}`);

  const next = await beginOk(tt, server, a, a);
  await sxOk(tt, server, next, "INSERT INTO t VALUES (4, 'new session')");
  await endOk(tt, server, next, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'committed'],
      [3, 'after expiry'],
      [4, 'new session'],
    ],
    'a new session works',
  );
});

t.test('lets a write that waits for an idle session through when the timer rolls the session back', async (tt) => {
  const { server, a } = await multiServer(tt, ['-session-timeout', '1s', '-lock-timeout', '5s']);
  for (let round = 1; round <= 2; round++) {
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, `INSERT INTO t VALUES (${round * 10}, 'session ${round}')`);
    const write = await timed(() => server.exec(a, `INSERT INTO t VALUES (${round * 10 + 1}, 'outside ${round}')`));
    tt.equal(
      write.value.status,
      200,
      `round ${round}: the waiting write runs once the timer ended the session: ${write.value.text}`,
    );
    tt.ok(write.ms >= 500 && write.ms < 4500, `round ${round}: after about the idle timeout (${write.ms} ms)`);
    const rows = await outsideRows(tt, server, a);
    tt.same(rows[rows.length - 1], [round * 10 + 1, `outside ${round}`], `round ${round}: the outside row is there`);
    tt.notOk(
      rows.some((row) => row[0] === round * 10),
      `round ${round}: the session's row is not`,
    );
    isError(tt, await sx(server, id, 'SELECT 1'), 404, 5003, `round ${round}: the expired id`);
  }
});

t.test(
  'answers commit/rollback without session 400 (5009) and with a wrong id 404, leaving the state unchanged',
  async (tt) => {
    const { server, a } = await multiServer(tt);
    for (const endpoint of ['/tx/commit', '/tx/rollback']) {
      isError(tt, await server.post(endpoint), 400, 5009, `${endpoint} without session, state none`);
      isError(tt, await server.post(`${endpoint}?session=`), 400, 5009, `${endpoint}?session= (empty), state none`);
      isError(
        tt,
        await server.post(`${endpoint}?session=0123456789abcdef`),
        404,
        5002,
        `${endpoint} with a never-existing id, state none`,
      );
    }
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'one')");
    for (const endpoint of ['/tx/commit', '/tx/rollback']) {
      isError(tt, await server.post(endpoint), 400, 5009, `${endpoint} without session, state active`);
      isError(tt, await server.post(endpoint, {}), 400, 5009, `${endpoint} with a body but no session, state active`);
      const wrongs = ['0123456789abcdef', 'garbage', `${id}0`, id.slice(1)];
      if (id.toUpperCase() !== id) wrongs.push(id.toUpperCase());
      for (const wrong of wrongs) {
        const reply = await server.post(`${endpoint}?session=${encodeURIComponent(wrong)}`);
        tt.equal(reply.status, 404, `${endpoint}?session=${wrong}: ${reply.text}`);
        tt.equal(reply.body?.ok, false, 'ok false');
      }
    }
    isError(
      tt,
      await sx(server, '0123456789abcdef', "INSERT INTO t VALUES (9, 'wrong')"),
      404,
      5002,
      '/exec with an unknown id',
    );
    isError(
      tt,
      await sx(server, 'garbage', "INSERT INTO t VALUES (9, 'wrong')", { via: 'query' }),
      404,
      5002,
      '/exec with a garbage id',
    );

    tt.same(await outsideRows(tt, server, a), [], 'no wrong-id commit committed the active session');
    tt.same(await sessionRows(tt, server, id), [[1, 'one']], 'no wrong-id rollback rolled the active session back');
    isError(tt, await begin(server, { db: a }), 409, 5004, 'the session is still active');
    await endOk(tt, server, id, true, a);
    tt.same(await outsideRows(tt, server, a), [[1, 'one']], 'the session commits');
    await isGone(tt, server, id, 5002, 'closed id');
  },
);

t.test('auto-commits each request without a session id, as before sessions', async (tt) => {
  const { server, a } = await multiServer(tt);
  const insert = await server.exec(a, "INSERT INTO t VALUES (1, 'auto')");
  tt.equal(insert.status, 200, insert.text);
  tt.equal(insert.body?.session, undefined, 'no session in a response without one');
  tt.equal(insert.body?.expires_unix, undefined, 'no expires_unix in a response without a session');
  const rows = await server.get(`/rows?db=${a}&table=t`);
  tt.same(rows.body?.rows, [[1, 'auto']], 'committed at the end of the request');

  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'session')");
  await endOk(tt, server, id, false, a);
  tt.same(
    await outsideRows(tt, server, a),
    [[1, 'auto']],
    "a session's rollback does not undo earlier auto-committed requests",
  );

  const failing = await server.exec(a, "INSERT INTO t VALUES (3, 'x'); INSERT INTO t VALUES (1, 'dup')");
  isError(tt, failing, 400, 3003, 'a failing request without session');
  tt.same(await outsideRows(tt, server, a), [[1, 'auto']], 'a failing request without session is all or nothing');
  await execOk(tt, server, a, "INSERT INTO t VALUES (4, 'auto again')");
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'auto'],
      [4, 'auto again'],
    ],
    'auto-commit after a session',
  );
});

t.test("hides the session's uncommitted changes from outside readers; the session sees them", async (tt) => {
  const { server, a } = await multiServer(tt);
  await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'before')");
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'session'); UPDATE t SET v = 'changed' WHERE id = 1");
  await sxOk(tt, server, id, 'CREATE TABLE u (x INT); INSERT INTO u VALUES (7)');

  tt.same(await outsideRows(tt, server, a), [[1, 'before']], '/exec SELECT without session');
  const rows = await server.get(`/rows?db=${a}&table=t`);
  tt.equal(rows.status, 200, rows.text);
  tt.equal(rows.body?.total, 1, '/rows total');
  tt.same(rows.body?.rows, [[1, 'before']], '/rows rows');
  const tables = await server.get(`/tables?db=${a}`);
  tt.equal(tables.status, 200, tables.text);
  tt.same(
    (tables.body?.tables ?? []).map((table: any) => table.name),
    ['t'],
    "/tables does not list the session's new table",
  );
  tt.equal((await server.get(`/rows?db=${a}&table=u`)).status, 404, "/rows of the session's new table: 404");

  tt.same(
    await sessionRows(tt, server, id),
    [
      [1, 'changed'],
      [2, 'session'],
    ],
    'the session sees its rows',
  );
  tt.same(await sessionRows(tt, server, id, 'SELECT x FROM u'), [[7]], 'the session sees its table');

  await endOk(tt, server, id, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'changed'],
      [2, 'session'],
    ],
    'visible after commit',
  );
  const after = await server.get(`/tables?db=${a}`);
  tt.same(
    (after.body?.tables ?? []).map((table: any) => table.name).sort(),
    ['t', 'u'],
    '/tables lists the new table after commit',
  );
});

t.test(
  'makes outside writes to the held database fail after -lock-timeout (409, 5005); other databases and reads go on',
  async (tt) => {
    const { server, a, b } = await multiServer(tt, ['-lock-timeout', '500ms']);
    await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'committed')");
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'session')");

    const write = await timed(() => server.exec(a, "INSERT INTO t VALUES (3, 'outside')"));
    isError(tt, write.value, 409, 5005, 'an outside write to the held database');
    tt.ok(String(write.value.body?.error).includes(a), `the error names the database: ${write.value.body?.error}`);
    tt.ok(write.ms >= 400, `it waited about -lock-timeout (${write.ms} ms)`);
    tt.ok(write.ms < 5000, `…and not much longer (${write.ms} ms)`);

    const create = await timed(() => server.exec(a, 'CREATE TABLE w (x INT)'));
    isError(tt, create.value, 409, 5005, 'an outside CREATE TABLE on the held database');

    const other = await timed(() => server.exec(b, "INSERT INTO t VALUES (1, 'b')"));
    tt.equal(other.value.status, 200, `an outside write to another database: ${other.value.text}`);
    tt.ok(other.ms < 2000, `…is not held up (${other.ms} ms)`);

    const read = await timed(() => server.exec(a, 'SELECT id, v FROM t ORDER BY id'));
    tt.equal(read.value.status, 200, `an outside read of the held database: ${read.value.text}`);
    tt.same(read.value.body?.results?.[0]?.rows, [[1, 'committed']], 'it sees the state before the session');
    tt.ok(read.ms < 2000, `…at once (${read.ms} ms)`);
    const rows = await timed(() => server.get(`/rows?db=${a}&table=t`));
    tt.equal(rows.value.status, 200, `/rows of the held database: ${rows.value.text}`);
    tt.ok(rows.ms < 2000, `…at once (${rows.ms} ms)`);

    tt.same(
      await sessionRows(tt, server, id),
      [
        [1, 'committed'],
        [2, 'session'],
      ],
      'the failed outside write left the session alone',
    );
    await endOk(tt, server, id, true, a);
    tt.same(
      await outsideRows(tt, server, a),
      [
        [1, 'committed'],
        [2, 'session'],
      ],
      'the failed outside write was not applied',
    );
    await execOk(tt, server, a, "INSERT INTO t VALUES (3, 'outside')");
    tt.same(await outsideRows(tt, server, b), [[1, 'b']], 'the write to b was committed');
  },
);

t.test('lets an outside write that waits for the session go through when the session commits', async (tt) => {
  const { server, a } = await multiServer(tt, ['-lock-timeout', '5s']);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'session')");
  const waiting = server.exec(a, "INSERT INTO t VALUES (2, 'outside')");
  await sleep(300);
  await endOk(tt, server, id, true, a);
  const reply = await waiting;
  tt.equal(reply.status, 200, `the waiting write ran after the commit: ${reply.text}`);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'session'],
      [2, 'outside'],
    ],
    'both committed',
  );
});

t.test('keeps savepoints across requests: SAVEPOINT, RELEASE and ROLLBACK TO in separate requests', async (tt) => {
  const { server, a } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, 'SAVEPOINT s1');
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'one')");
  await sxOk(tt, server, id, 'SAVEPOINT s2');
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'two')");
  tt.same(
    await sessionRows(tt, server, id),
    [
      [1, 'one'],
      [2, 'two'],
    ],
    'both rows before ROLLBACK TO',
  );
  await sxOk(tt, server, id, 'ROLLBACK TO s2');
  tt.same(await sessionRows(tt, server, id), [[1, 'one']], 'ROLLBACK TO s2 undid the second row only');
  await sxOk(tt, server, id, 'RELEASE s1');
  tt.same(await outsideRows(tt, server, a), [], 'RELEASE of the outermost client savepoint did not commit');
  tt.same(await sessionRows(tt, server, id), [[1, 'one']], 'RELEASE kept the row');
  isError(tt, await sx(server, id, 'ROLLBACK TO s2'), 400, 5001, 'ROLLBACK TO a released savepoint');
  await endOk(tt, server, id, true, a);
  tt.same(await outsideRows(tt, server, a), [[1, 'one']], 'exactly the expected rows were committed');
});

t.test('rolls back to a savepoint made in an earlier request after inserts in several requests', async (tt) => {
  const { server, a } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (10, 'before sp'); SAVEPOINT sp");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (11, 'r2')");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (12, 'r3'); UPDATE t SET v = 'changed' WHERE id = 10");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (13, 'r4')", { via: 'query' });
  tt.equal((await sessionRows(tt, server, id)).length, 4, 'four rows before ROLLBACK TO');
  await sxOk(tt, server, id, 'ROLLBACK TO sp');
  tt.same(await sessionRows(tt, server, id), [[10, 'before sp']], 'back to the state at the savepoint');
  await sxOk(tt, server, id, "INSERT INTO t VALUES (14, 'after')");
  await sxOk(tt, server, id, 'ROLLBACK TO sp');
  tt.same(
    await sessionRows(tt, server, id),
    [[10, 'before sp']],
    'the savepoint survives ROLLBACK TO and can be used again',
  );
  await sxOk(tt, server, id, "INSERT INTO t VALUES (15, 'last')");
  await endOk(tt, server, id, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [10, 'before sp'],
      [15, 'last'],
    ],
    'commit after ROLLBACK TO',
  );
});

t.test("undoes a failing request's statements only; the session stays open", async (tt) => {
  const { server, a } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'req 1')");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'req 2')");
  const failing = await sx(server, id, "INSERT INTO t VALUES (3, 'ok'); INSERT INTO t VALUES (1, 'duplicate')");
  isError(tt, failing, 400, 3003, 'a duplicate primary key in the session');
  tt.equal(failing.body?.statement, 1, 'the error names statement 1');
  tt.same(
    await sessionRows(tt, server, id),
    [
      [1, 'req 1'],
      [2, 'req 2'],
    ],
    "the failing request's first INSERT is undone, earlier requests kept",
  );

  const syntax = await sx(server, id, "INSERT INTO t VALUES (4, 'ok'); SELEKT nonsense");
  tt.equal(syntax.status, 400, `a syntax error in the session: ${syntax.text}`);
  tt.same(
    await sessionRows(tt, server, id),
    [
      [1, 'req 1'],
      [2, 'req 2'],
    ],
    'a batch with a syntax error changed nothing',
  );

  await sxOk(tt, server, id, "INSERT INTO t VALUES (5, 'later')");
  tt.same(await outsideRows(tt, server, a), [], 'nothing committed by the failures');
  await endOk(tt, server, id, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'req 1'],
      [2, 'req 2'],
      [5, 'later'],
    ],
    'commit commits the good requests',
  );
});

t.test('undoes a failing request inside a savepoint without losing the savepoint', async (tt) => {
  const { server, a } = await multiServer(tt);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "SAVEPOINT sp; INSERT INTO t VALUES (1, 'one')");
  isError(
    tt,
    await sx(server, id, "INSERT INTO t VALUES (2, 'two'); INSERT INTO t VALUES (1, 'dup')"),
    400,
    3003,
    'duplicate key',
  );
  await sxOk(tt, server, id, "INSERT INTO t VALUES (3, 'three')");
  await sxOk(tt, server, id, 'ROLLBACK TO sp');
  tt.same(await sessionRows(tt, server, id), [], 'ROLLBACK TO the savepoint still works after a failed request');
  await sxOk(tt, server, id, "INSERT INTO t VALUES (4, 'four')");
  await endOk(tt, server, id, true, a);
  tt.same(await outsideRows(tt, server, a), [[4, 'four']], 'committed');
});

t.test(
  'refuses database-level statements (5008) and BEGIN/COMMIT/ROLLBACK (1004) in a session, which stays usable',
  async (tt) => {
    const { server, a, b } = await multiServer(tt);
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'session')");
    for (const sql of ['CREATE DATABASE zz', 'DROP DATABASE b', 'SHOW DATABASES', 'CREATE DATABASE IF NOT EXISTS zz']) {
      isError(tt, await sx(server, id, sql), 400, 5008, `${sql} in a session`);
    }
    const dbs = await server.get('/dbs');
    tt.notOk(JSON.stringify(dbs.body).includes('zz'), `no database was created: ${dbs.text}`);
    tt.ok(JSON.stringify(dbs.body).includes(`"${b}"`), 'no database was dropped');
    for (const sql of [
      'BEGIN',
      'BEGIN TRANSACTION',
      'COMMIT',
      'END',
      'ROLLBACK',
      "INSERT INTO t VALUES (2, 'x'); COMMIT",
    ]) {
      const reply = await sx(server, id, sql);
      isError(tt, reply, 400, 1004, `${sql} in a session`);
      tt.match(String(reply.body?.error), /tx\/begin/, 'the error points to /tx/begin');
    }
    isError(tt, await server.exec(a, 'BEGIN'), 400, 1004, 'BEGIN without a session');
    tt.same(await outsideRows(tt, server, a), [], 'COMMIT in /exec did not commit the session');
    tt.same(await sessionRows(tt, server, id), [[1, 'session']], 'the session is still usable and kept its row');
    await endOk(tt, server, id, false, a);
    tt.same(await outsideRows(tt, server, a), [], 'rolled back');
  },
);

t.test('rolls back and closes a session whose statement runs past -query-timeout (6008)', async (tt) => {
  const { server, a } = await multiServer(tt, ['-query-timeout', '1s', '-lock-timeout', '3s']);
  await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'committed')");
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'uncommitted')");
  const runaway = await timed(() => sx(server, id, `SELECT 1; ${RUNAWAY}`));
  isError(tt, runaway.value, 400, 6008, 'a runaway statement in a session');
  tt.equal(runaway.value.body?.statement, 1, 'the error names the statement');
  tt.match(String(runaway.value.body?.error), /session/, 'the error says the session was closed');
  tt.ok(runaway.ms >= 900 && runaway.ms < 15000, `stopped after about -query-timeout (${runaway.ms} ms)`);

  // At once, before anything else: the id is gone.
  const late = await sx(server, id, 'SELECT 1');
  tt.equal(late.status, 404, `the id right after the timeout: ${late.text}`);
  await isGone(tt, server, id, 5002, 'the timed-out session');

  const write = await timed(() => server.exec(a, "INSERT INTO t VALUES (3, 'outside')"));
  tt.equal(write.value.status, 200, `the database is writable from outside: ${write.value.text}`);
  tt.ok(write.ms < 2000, `…at once (${write.ms} ms)`);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'committed'],
      [3, 'outside'],
    ],
    "the session's uncommitted row is gone",
  );

  const next = await beginOk(tt, server, a, a);
  await sxOk(tt, server, next, "INSERT INTO t VALUES (4, 'new session')");
  await endOk(tt, server, next, true, a);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'committed'],
      [3, 'outside'],
      [4, 'new session'],
    ],
    'a new session works',
  );
});

t.test('answers the id of a session stopped at -query-timeout with 404 straight away, every time', async (tt) => {
  const { server, a } = await multiServer(tt, ['-query-timeout', '1s', '-lock-timeout', '3s']);
  for (let round = 1; round <= 2; round++) {
    const id = await beginOk(tt, server, a, a);
    await sxOk(tt, server, id, `INSERT INTO t VALUES (${round}, 'uncommitted')`);
    isError(tt, await sx(server, id, RUNAWAY), 400, 6008, `round ${round}: the runaway statement`);
    // No pause: the very next request naming the id must hear that the session is gone.
    isError(tt, await sx(server, id, 'SELECT 1'), 404, 5002, `round ${round}: /exec with the id right after`);
    isError(tt, await commit(server, id), 404, 5002, `round ${round}: commit right after`);
  }
  tt.same(await outsideRows(tt, server, a), [], 'nothing of the stopped sessions was committed');
});

t.test('frees the database at once when a session times out, for a write already waiting', async (tt) => {
  const { server, a } = await multiServer(tt, ['-query-timeout', '1s', '-lock-timeout', '10s']);
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'uncommitted')");
  const runaway = sx(server, id, RUNAWAY);
  await sleep(200);
  const write = timed(() => server.exec(a, "INSERT INTO t VALUES (2, 'outside')"));
  isError(tt, await runaway, 400, 6008, 'the runaway statement');
  const written = await write;
  tt.equal(written.value.status, 200, `the waiting outside write ran: ${written.value.text}`);
  tt.ok(written.ms < 8000, `…soon after the timeout (${written.ms} ms), not after -lock-timeout`);
  tt.same(await outsideRows(tt, server, a), [[2, 'outside']], 'only the outside row');
});

t.test('closes the session when INSERT OR ROLLBACK conflicts (5007)', async (tt) => {
  const { server, a } = await multiServer(tt, ['-lock-timeout', '3s']);
  await execOk(tt, server, a, "INSERT INTO t VALUES (1, 'committed')");
  const id = await beginOk(tt, server, a, a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (5, 'uncommitted')");
  const conflict = await sx(server, id, "INSERT OR ROLLBACK INTO t VALUES (1, 'conflict')");
  isError(tt, conflict, 400, 5007, 'INSERT OR ROLLBACK that conflicts in a session');

  const late = await sx(server, id, 'SELECT 1');
  tt.equal(late.status, 404, `the id right after: ${late.text}`);
  await isGone(tt, server, id, 5002, 'the aborted session');

  const write = await timed(() => server.exec(a, "INSERT INTO t VALUES (2, 'outside')"));
  tt.equal(write.value.status, 200, `outside writes work: ${write.value.text}`);
  tt.ok(write.ms < 2000, `…at once (${write.ms} ms)`);
  tt.same(
    await outsideRows(tt, server, a),
    [
      [1, 'committed'],
      [2, 'outside'],
    ],
    "the session's rows are gone",
  );
  const next = await beginOk(tt, server, a, a);
  await endOk(tt, server, next, true, a);
});

t.test('requires an existing db to begin in multi-DB mode (7003, 2001)', async (tt) => {
  const { server, a } = await multiServer(tt);
  isError(tt, await begin(server, {}), 400, 7003, 'begin with {}');
  isError(tt, await begin(server), 400, 7003, 'begin without a body');
  isError(tt, await begin(server, { db: '' }), 400, 7003, 'begin with an empty db');
  isError(tt, await begin(server, { db: 'nope' }), 404, 2001, 'begin with an unknown db');
  isError(tt, await begin(server, { db: '../etc' }), 400, 1011, 'begin with an invalid db name');
  const id = await beginOk(tt, server, a, a);
  await endOk(tt, server, id, false, a);
});

t.test('runs sessions in single-DB mode, where begin takes {}', async (tt) => {
  const dir = scratchDir(tt);
  const file = path.join(dir, 'main.db');
  const server = await startServer(['-db', file, '-lock-timeout', '500ms'], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
  });
  await execOk(tt, server, undefined, TABLE);
  await execOk(tt, server, undefined, "INSERT INTO t VALUES (1, 'auto')");

  const reply = await begin(server, {});
  tt.equal(reply.status, 200, `begin {}: ${reply.text}`);
  tt.match(reply.body?.session, SESSION_ID, '16 lowercase hex');
  tt.equal(reply.body?.db, 'main.db', 'db names the file');
  tt.ok(Math.abs(reply.body?.expires_unix - (nowUnix() + DEFAULT_TIMEOUT_S)) <= 5, 'expires_unix ≈ now + 300');
  const id = String(reply.body?.session);

  const second = await begin(server);
  isError(tt, second, 409, 5004, 'a second begin');
  tt.match(second.headers.get('retry-after'), /^[1-9]\d*$/, 'Retry-After');
  tt.ok(String(second.body?.error).includes('main.db'), 'the 409 names the database');

  await sxOk(tt, server, id, "INSERT INTO t VALUES (2, 'session')");
  await sxOk(tt, server, id, "INSERT INTO t VALUES (3, 'query')", { via: 'query' });
  await sxOk(tt, server, id, "INSERT INTO t VALUES (4, 'own name')", { db: 'main.db' });
  tt.same(await outsideRows(tt, server, undefined), [[1, 'auto']], 'outside readers do not see the session');
  isError(
    tt,
    await server.exec(undefined, "INSERT INTO t VALUES (9, 'outside')"),
    409,
    5005,
    'an outside write waits and fails',
  );
  isError(tt, await sx(server, id, 'SHOW DATABASES'), 400, 5008, 'database-level statements in a session');
  isError(tt, await sx(server, id, 'COMMIT'), 400, 1004, 'COMMIT in /exec');
  await endOk(tt, server, id, true, 'main.db');
  tt.same(
    await outsideRows(tt, server, undefined),
    [
      [1, 'auto'],
      [2, 'session'],
      [3, 'query'],
      [4, 'own name'],
    ],
    'committed',
  );
  await isGone(tt, server, id, 5002, 'committed id');

  const next = await beginOk(tt, server, undefined, 'main.db');
  tt.not(next, id, 'a new id');
  await sxOk(tt, server, next, 'DELETE FROM t');
  await endOk(tt, server, next, false, 'main.db');
  tt.equal((await outsideRows(tt, server, undefined)).length, 4, 'rolled back');
  const noBody = await begin(server);
  tt.equal(noBody.status, 200, `begin without a body: ${noBody.text}`);
  await endOk(tt, server, String(noBody.body?.session), false, 'main.db');
});

t.test('needs the token on /tx/* with -token; the session id is not a credential', async (tt) => {
  const token = { 'X-Service-Token': 's3cret' };
  const { server, a } = await multiServer(tt, ['-token', 's3cret'], token);
  /** A request with exactly these headers (none of the server helper's defaults). */
  const bare = async (
    p: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: any }> => {
    const response = await fetch(server.url + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  };
  const unauthorized = (reply: { status: number; body: any }, label: string): void => {
    tt.equal(reply.status, 401, `${label}: 401`);
    tt.equal(reply.body?.code, 1012, `${label}: code 1012`);
  };

  unauthorized(await bare('/tx/begin', { db: 'a' }, {}), '/tx/begin without a token');
  unauthorized(await bare('/tx/begin', { db: 'a' }, { 'X-Service-Token': 'wrong' }), '/tx/begin with a wrong token');
  unauthorized(
    await bare('/tx/begin', { db: 'a' }, { 'X-Service-Session': 's3cret' }),
    '/tx/begin with the token sent as a session id',
  );

  const id = await beginOk(tt, server, 'a', a);
  await sxOk(tt, server, id, "INSERT INTO t VALUES (1, 'session')");

  unauthorized(
    await bare('/exec', { sql: 'SELECT id FROM t' }, { 'X-Service-Session': id }),
    '/exec with only X-Service-Session',
  );
  unauthorized(await bare(`/exec?session=${id}`, { sql: 'SELECT id FROM t' }, {}), '/exec with only ?session=');
  unauthorized(
    await bare(`/tx/commit?session=${id}`, {}, { 'X-Service-Session': id }),
    '/tx/commit with only the session id',
  );
  unauthorized(
    await bare(`/tx/rollback?session=${id}`, {}, { 'X-Service-Session': id }),
    '/tx/rollback with only the session id',
  );
  unauthorized(
    await bare(`/tx/commit?session=${id}`, {}, { 'X-Service-Token': 'wrong' }),
    '/tx/commit with a wrong token',
  );
  unauthorized(await bare('/tx/commit', {}, {}), '/tx/commit without token and session');

  const bearer = await bare(
    '/exec',
    { sql: 'SELECT id, v FROM t' },
    { Authorization: 'Bearer s3cret', 'X-Service-Session': id },
  );
  tt.equal(bearer.status, 200, 'the session with a Bearer token');
  tt.same(bearer.body?.results?.[0]?.rows, [[1, 'session']], 'the unauthorized requests left the session as it was');
  tt.same(await outsideRows(tt, server, 'a'), [], 'the unauthorized commit did not commit');
  await endOk(tt, server, id, true, a);
  tt.same(await outsideRows(tt, server, 'a'), [[1, 'session']], 'committed with the token');
  const again = await bare('/tx/begin', { db: 'a' }, { Authorization: 'Bearer s3cret' });
  tt.equal(again.status, 200, 'begin with a Bearer token');
  const ended = await bare(`/tx/rollback?session=${again.body?.session}`, {}, { Authorization: 'Bearer s3cret' });
  tt.equal(ended.status, 200, 'rollback with a Bearer token');
});
