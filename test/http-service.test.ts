/**
 * The HTTP service seen from outside: the real server as a child process,
 * spoken to over HTTP.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { sleep, waitFor } from './helpers/wait';
import { getOver, keepAliveAgent } from './helpers/agent-request';

// Every server is a child process with engine sub-processes: on a loaded machine a start and a
// stop can take seconds each, more than tap's default 30 s for the whole file.
t.setTimeout(120_000);

const TOKEN = 's3cret';
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** Traces of a stack in a body: "    at fn (file.js:1:2)", file positions, module paths. */
const STACK_TEXT = /\n\s*at\s|\bat\s+\S+\s+\(|\.(?:js|ts|mjs|cjs):\d+|node_modules|\/dist\/src\//;

// ── helpers ──────────────────────────────────────────────────────────────────

/** Starts a server whose cwd is a fresh scratch directory, stopped when `t` ends. */
async function serve(
  t: Test,
  args: string[],
  headers?: Record<string, string>,
): Promise<{ server: TestServer; cwd: string }> {
  const cwd = scratchDir(t);
  const server = await startServer(args, headers === undefined ? { cwd } : { cwd, headers });
  t.teardown(() => server.stop());
  return { server, cwd };
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

const nowUnix = (): number => Math.floor(Date.now() / 1000);

/** Asserts a catalog error: status, `ok:false`, `[SQnnnn]` text, `code`, and no stack trace. */
function assertError(t: Test, reply: Reply, status: number, code: number, what: string): void {
  t.equal(reply.status, status, `${what}: status ${status}`);
  t.ok(reply.body !== undefined, `${what}: JSON body`);
  t.equal(reply.body?.ok, false, `${what}: ok false`);
  t.match(reply.body?.error, /^\[SQ\d{4}\]/, `${what}: error starts with [SQnnnn]`);
  t.equal(reply.body?.code, code, `${what}: code ${code}`);
  t.equal(String(reply.body?.error).slice(0, 8), `[SQ${code}]`, `${what}: error text carries its code`);
  t.notMatch(reply.text, STACK_TEXT, `${what}: no stack trace in the body`);
}

/** All files under `root`, relative to it. */
function filesUnder(root: string): string[] {
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath ?? entry.path, entry.name)));
}

/** The lines of stdout after the first `from`, once there are at least `count` of them. */
async function newLines(server: TestServer, from: number, count: number): Promise<string[]> {
  return waitFor(
    () => {
      const lines = server
        .stdout()
        .split('\n')
        .filter((line) => line !== '')
        .slice(from);
      return lines.length >= count ? lines : undefined;
    },
    { what: `${count} log lines`, timeoutMs: 5000, everyMs: 20 },
  );
}

const lineCount = (server: TestServer): number =>
  server
    .stdout()
    .split('\n')
    .filter((line) => line !== '').length;

// ── /health ──────────────────────────────────────────────────────────────────

t.test('GET /health', async (t) => {
  t.test('reports every field of the health record in multi-DB mode', async (t) => {
    const { server, cwd } = await serve(t, ['-dir', 'data']);
    const reply = await server.get('/health');
    t.equal(reply.status, 200);
    const body = reply.body;
    t.equal(body.ok, true, 'ok');
    t.equal(body.name, 'sqlscribe', 'name');
    t.match(body.version, SEMVER, 'version is semver');
    t.equal(body.single, false, 'single is false with -dir');
    t.type(body.dir, 'string', 'dir is a string');
    t.equal(fs.realpathSync(body.dir), fs.realpathSync(path.join(cwd, 'data')), 'dir is the data directory');
    t.ok(isInteger(body.timeUnix), 'timeUnix is an integer');
    t.ok(Math.abs(body.timeUnix - nowUnix()) <= 5, 'timeUnix is now');
    t.equal(body.ready, true, 'ready');
  });

  t.test('reports single true and the database directory in single-DB mode', async (t) => {
    const { server, cwd } = await serve(t, ['-db', 'one.db']);
    const reply = await server.get('/health');
    t.equal(reply.status, 200);
    t.equal(reply.body.ok, true);
    t.equal(reply.body.name, 'sqlscribe');
    t.match(reply.body.version, SEMVER);
    t.equal(reply.body.single, true, 'single is true with -db');
    t.equal(fs.realpathSync(reply.body.dir), fs.realpathSync(cwd), 'dir is the directory of the -db file');
    t.ok(isInteger(reply.body.timeUnix) && Math.abs(reply.body.timeUnix - nowUnix()) <= 5, 'timeUnix is now');
    t.equal(reply.body.ready, true);
  });
});

// ── /metrics ─────────────────────────────────────────────────────────────────

t.test('GET /metrics', async (t) => {
  const { server, cwd } = await serve(t, ['-dir', 'data']);
  const metrics = async (): Promise<any> => {
    const reply = await server.get('/metrics');
    t.equal(reply.status, 200, 'metrics answers 200');
    return reply.body;
  };

  t.test('returns every field of the metrics record with its type', async (t) => {
    await server.get('/health');
    const m = await metrics();
    t.equal(m.ok, true, 'ok');
    t.ok(
      isInteger(m.started_unix) && m.started_unix <= nowUnix() && m.started_unix > nowUnix() - 120,
      'started_unix is a recent integer',
    );
    t.ok(isInteger(m.uptime_s) && m.uptime_s >= 0, 'uptime_s is a non-negative integer');
    t.ok(isInteger(m.requests_total) && m.requests_total >= 1, 'requests_total is an integer');
    t.type(m.requests_by_status, 'object', 'requests_by_status is an object');
    for (const [key, count] of Object.entries(m.requests_by_status as Record<string, unknown>)) {
      t.match(key, /^[1-5]\d\d$/, `key ${key} is a status code string`);
      t.ok(isInteger(count) && count > 0, `count of ${key} is a positive integer`);
    }
    t.ok(isInteger(m.errors_total), 'errors_total is an integer');
    const latency = m.latency_ms;
    t.type(latency, 'object', 'latency_ms is an object');
    t.ok(isInteger(latency.p50) && latency.p50 >= 0, 'p50 is an integer');
    t.ok(isInteger(latency.p95) && latency.p95 >= latency.p50, 'p95 is an integer >= p50');
    t.equal(latency.samples, 1024, 'samples is the ring size');
    t.ok(isInteger(latency.count), 'count is an integer');
  });

  t.test('counts every request in requests_total, count and requests_by_status', async (t) => {
    const before = await metrics();
    await server.get('/health');
    await server.get('/health');
    await server.get('/dbs');
    await server.get('/no-such-endpoint');
    const after = await metrics();
    // The first /metrics request itself is counted, plus the four above.
    t.equal(after.requests_total, before.requests_total + 5, 'requests_total grew by 5');
    t.equal(after.latency_ms.count, before.latency_ms.count + 5, 'latency_ms.count grew by 5');
    t.equal(after.requests_by_status['200'], (before.requests_by_status['200'] ?? 0) + 4, 'four more 200s');
    t.equal(after.requests_by_status['404'], (before.requests_by_status['404'] ?? 0) + 1, 'one more 404');
    t.ok(after.uptime_s >= before.uptime_s, 'uptime does not go back');
    t.equal(after.started_unix, before.started_unix, 'started_unix is fixed');
  });

  t.test('counts client errors in requests_by_status but not in errors_total', async (t) => {
    const before = await metrics();
    await server.get('/no-such-endpoint');
    await server.request('DELETE', '/health');
    await server.request('POST', '/exec', { rawBody: '{nope', headers: { 'content-type': 'application/json' } });
    await server.get('/rows?db=missing&table=t');
    const after = await metrics();
    t.equal(after.errors_total, before.errors_total, 'errors_total unchanged by 4xx');
    t.equal(
      after.requests_by_status['405'],
      (before.requests_by_status['405'] ?? 0) + 1,
      'the 405 is counted by status',
    );
    t.equal(
      after.requests_by_status['400'],
      (before.requests_by_status['400'] ?? 0) + 1,
      'the 400 is counted by status',
    );
  });

  t.test('counts responses of status 500 and above in errors_total', async (t) => {
    // A file that is not a SQLite database: acting on it is a storage error (9xxx, 500).
    fs.writeFileSync(path.join(cwd, 'data', 'broken.db'), Buffer.alloc(4096, 0x5a));
    const before = await metrics();
    const failed = await server.get('/tables?db=broken');
    t.equal(failed.status, 500, 'a corrupt database answers 500');
    t.equal(failed.body?.code, 9004, 'with the storage-corrupt code');
    t.notMatch(failed.text, STACK_TEXT, 'and no stack trace');
    const after = await metrics();
    t.equal(after.errors_total, before.errors_total + 1, 'errors_total grew by one');
    t.equal(after.requests_by_status['500'], (before.requests_by_status['500'] ?? 0) + 1, 'one more 500');
  });

  t.test('answers ?format=prometheus in the text exposition format', async (t) => {
    const reply = await server.get('/metrics?format=prometheus');
    t.equal(reply.status, 200);
    t.match(reply.headers.get('content-type'), /^text\/plain/, 'text/plain');
    t.equal(reply.body, undefined, 'not JSON');
    t.match(reply.text, /^sqlscribe_http_requests_total\{[^}]*status="200"[^}]*\} \d+/m, 'requests counter by status');
  });
});

// ── /dbs ─────────────────────────────────────────────────────────────────────

t.test('/dbs in multi-DB mode', async (t) => {
  const { server, cwd } = await serve(t, ['-dir', 'data']);
  const dataDir = path.join(cwd, 'data');

  t.test('lists the databases in multi-db mode without a single field', async (t) => {
    const reply = await server.get('/dbs');
    t.equal(reply.status, 200);
    t.equal(reply.body.ok, true);
    t.equal(reply.body.mode, 'multi-db');
    t.ok(Array.isArray(reply.body.dbs), 'dbs is an array');
    t.notOk('single' in reply.body, 'no single field in multi-DB mode');
  });

  t.test('creates a database with 201 and lists it', async (t) => {
    const reply = await server.post('/dbs', { db: 'school' });
    t.equal(reply.status, 201);
    t.same(reply.body, { ok: true, db: 'school.db' });
    t.ok(fs.statSync(path.join(dataDir, 'school.db')).isFile(), 'the file is in the data directory');
    const list = await server.get('/dbs');
    t.ok(list.body.dbs.includes('school.db'), 'listed by GET /dbs');
    t.ok(
      list.body.dbs.every((name: unknown) => typeof name === 'string'),
      'names are strings',
    );
  });

  t.test('normalizes names: trims, lower-cases, appends or keeps .db', async (t) => {
    const cases: Array<[string, string]> = [
      ['  Trimmed  ', 'trimmed.db'],
      ['UPPER', 'upper.db'],
      ['kept.db', 'kept.db'],
      ['Mixed_Case-1.DB', 'mixed_case-1.db'],
      ['a'.repeat(64), `${'a'.repeat(64)}.db`],
    ];
    for (const [given, expected] of cases) {
      const reply = await server.post('/dbs', { db: given });
      t.equal(reply.status, 201, `${JSON.stringify(given)} is created`);
      t.equal(reply.body?.db, expected, `${JSON.stringify(given)} becomes ${expected}`);
      t.ok(fs.existsSync(path.join(dataDir, expected)), `${expected} exists`);
    }
    const list = await server.get('/dbs');
    for (const [, expected] of cases) t.ok(list.body.dbs.includes(expected), `${expected} is listed`);
  });

  t.test('answers 409 when the database already exists', async (t) => {
    t.equal((await server.post('/dbs', { db: 'dup' })).status, 201);
    const again = await server.post('/dbs', { db: 'dup' });
    t.equal(again.status, 409);
    t.equal(again.body.ok, false);
    t.match(again.body.error, /^\[SQ\d{4}\]/);
    t.equal(Math.floor(again.body.code / 1000), 2, 'a catalog (2xxx) code');
    t.equal((await server.post('/dbs', { db: ' DUP.db ' })).status, 409, 'the same name after normalization');
  });

  t.test('rejects invalid names with 400 code 1011 and writes nothing outside the data directory', async (t) => {
    const invalid: unknown[] = [
      '../x',
      'a/b',
      '.hidden',
      '',
      '   ',
      'a'.repeat(65),
      'a.b',
      '..',
      'a\\b',
      'x.db.db',
      'sp ace',
      5,
      null,
      true,
      {},
      ['x'],
    ];
    for (const name of invalid) {
      assertError(t, await server.post('/dbs', { db: name }), 400, 1011, `name ${JSON.stringify(name)}`);
    }
    t.equal((await server.post('/dbs', {})).status, 400, 'a missing name is 400');
    const outside = filesUnder(cwd).filter((file) => !file.startsWith(`data${path.sep}`));
    t.same(outside, [], 'no file outside the data directory');
    t.notOk(fs.existsSync(path.join(cwd, 'x.db')), '../x did not escape');
    const list = await server.get('/dbs');
    t.notOk(
      list.body.dbs.some((name: string) => name.startsWith('.') || name.includes('/')),
      'nothing odd is listed',
    );
  });
});

t.test('/dbs in single-DB mode', async (t) => {
  const { server, cwd } = await serve(t, ['-db', 'one.db']);

  t.test('lists the single database in single-db mode', async (t) => {
    const reply = await server.get('/dbs');
    t.equal(reply.status, 200);
    t.same(reply.body, { ok: true, mode: 'single-db', dbs: ['one.db'], single: 'one.db' });
  });

  t.test('refuses POST /dbs with 405', async (t) => {
    const reply = await server.post('/dbs', { db: 'other' });
    t.equal(reply.status, 405);
    t.equal(reply.body.ok, false);
    t.match(reply.body.error, /^\[SQ\d{4}\]/);
    t.equal(Math.floor(reply.body.code / 1000), 7, 'a mode (7xxx) code');
    t.notOk(fs.existsSync(path.join(cwd, 'other.db')), 'no database was created');
  });
});

// ── routing, bodies, error shape ─────────────────────────────────────────────

t.test('routing and request bodies', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-max-body-bytes', '1K']);
  await server.post('/dbs', { db: 'bodies' });

  t.test('answers an unknown path with 404 code 2010', async (t) => {
    assertError(t, await server.get('/no-such-endpoint'), 404, 2010, 'GET /no-such-endpoint');
    assertError(t, await server.post('/v1/exec', { sql: 'SELECT 1' }), 404, 2010, 'POST /v1/exec');
    assertError(t, await server.get('/healthz'), 404, 2010, 'GET /healthz');
  });

  t.test('answers a wrong method on a known path with 405 code 1013 and Allow', async (t) => {
    const cases: Array<[string, string, string[]]> = [
      ['DELETE', '/health', ['GET']],
      ['POST', '/health', ['GET']],
      ['GET', '/exec', ['POST']],
      ['PUT', '/dbs', ['GET', 'POST']],
      ['POST', '/metrics', ['GET']],
    ];
    for (const [method, p, allowed] of cases) {
      const reply = await server.request(method, p);
      assertError(t, reply, 405, 1013, `${method} ${p}`);
      const allow = (reply.headers.get('allow') ?? '').split(/,\s*/);
      for (const m of allowed) t.ok(allow.includes(m), `${method} ${p}: Allow lists ${m}`);
      t.notOk(allow.includes(method), `${method} ${p}: Allow does not list ${method}`);
    }
  });

  t.test('answers malformed JSON with 400 code 1009', async (t) => {
    for (const rawBody of ['{bad', '{"sql": "SELECT 1",}', 'nul']) {
      const reply = await server.request('POST', '/exec', { rawBody, headers: { 'content-type': 'application/json' } });
      assertError(t, reply, 400, 1009, `body ${JSON.stringify(rawBody)}`);
    }
  });

  t.test('answers a body that is not a JSON object with 400 code 1006', async (t) => {
    assertError(t, await server.post('/exec', [{ db: 'bodies', sql: 'SELECT 1' }]), 400, 1006, 'array on /exec');
    assertError(t, await server.post('/dbs', ['x']), 400, 1006, 'array on /dbs');
    for (const rawBody of ['"text"', '42']) {
      const reply = await server.request('POST', '/exec', { rawBody, headers: { 'content-type': 'application/json' } });
      t.equal(reply.status, 400, `scalar ${rawBody} is 400`);
      t.ok(reply.body?.code === 1006 || reply.body?.code === 1009, `scalar ${rawBody} has a request-shape code`);
    }
  });

  t.test('answers a text/plain body with 415 code 1010', async (t) => {
    const reply = await server.request('POST', '/exec', {
      rawBody: JSON.stringify({ db: 'bodies', sql: 'SELECT 1' }),
      headers: { 'content-type': 'text/plain' },
    });
    assertError(t, reply, 415, 1010, 'text/plain');
  });

  t.test('answers a body over -max-body-bytes with 413 code 6002', async (t) => {
    const sql = `SELECT '${'x'.repeat(2000)}'`;
    assertError(t, await server.post('/exec', { db: 'bodies', sql }), 413, 6002, '2 KB body with a 1K limit');
    const fits = await server.post('/exec', { db: 'bodies', sql: `SELECT '${'x'.repeat(500)}'` });
    t.equal(fits.status, 200, 'a body under the limit is served');
  });

  t.test('keeps stack traces out of every error body', async (t) => {
    const replies = [
      await server.post('/exec', { db: 'bodies', sql: 'SELEC 1' }),
      await server.post('/exec', { db: 'bodies', sql: 'SELECT * FROM nowhere' }),
      await server.post('/exec', { db: 'nodb', sql: 'SELECT 1' }),
      await server.post('/exec', { sql: 'SELECT 1' }),
      await server.get('/rows?db=bodies&table=nowhere'),
      await server.get('/rows?db=bodies&table=t&limit=-1'),
    ];
    for (const reply of replies) {
      t.ok(reply.status >= 400, `status ${reply.status} is an error`);
      t.equal(reply.body?.ok, false, 'ok false');
      t.match(reply.body?.error, /^\[SQ\d{4}\]/, 'error starts with [SQnnnn]');
      t.ok(isInteger(reply.body?.code), 'has a numeric code');
      t.notMatch(reply.text, STACK_TEXT, `no stack trace in ${reply.text}`);
    }
  });
});

// ── authentication ───────────────────────────────────────────────────────────

interface Probe {
  method: string;
  path: string;
  body?: unknown;
  /** Status with the right token. */
  ok: number;
}

const PROBES: Probe[] = [
  { method: 'GET', path: '/health', ok: 200 },
  { method: 'GET', path: '/metrics', ok: 200 },
  { method: 'GET', path: '/metrics?format=prometheus', ok: 200 },
  { method: 'GET', path: '/dbs', ok: 200 },
  { method: 'GET', path: '/tables?db=auth', ok: 200 },
  { method: 'GET', path: '/schema?db=auth&table=t', ok: 200 },
  { method: 'GET', path: '/rows?db=auth&table=t', ok: 200 },
  { method: 'POST', path: '/exec', body: { db: 'auth', sql: 'SELECT * FROM t' }, ok: 200 },
  { method: 'GET', path: '/no-such-endpoint', ok: 404 },
];

async function probe(server: TestServer, p: Probe, headers: Record<string, string>, query = ''): Promise<Reply> {
  const sep = p.path.includes('?') ? '&' : '?';
  const target = query === '' ? p.path : `${p.path}${sep}${query}`;
  return server.request(p.method, target, p.body === undefined ? { headers } : { body: p.body, headers });
}

t.test('with -token', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-token', TOKEN]);
  const good = { 'X-Service-Token': TOKEN };
  t.equal((await server.post('/dbs', { db: 'auth' }, good)).status, 201, 'setup: database');
  t.equal(
    (
      await server.request('POST', '/exec', {
        body: { db: 'auth', sql: 'CREATE TABLE t (id INT PRIMARY KEY)' },
        headers: good,
      })
    ).status,
    200,
    'setup: table',
  );

  t.test('answers 401 code 1012 on every endpoint without a token', async (t) => {
    for (const p of PROBES) assertError(t, await probe(server, p, {}), 401, 1012, `${p.method} ${p.path}`);
  });

  t.test('answers 401 code 1012 on every endpoint with a wrong token', async (t) => {
    const wrong: Array<Record<string, string>> = [
      { 'X-Service-Token': 'wrong' },
      { 'X-Service-Token': `${TOKEN}x` },
      { Authorization: 'Bearer wrong' },
      { Authorization: TOKEN },
      { Authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` },
    ];
    for (const p of PROBES) {
      for (const headers of wrong)
        assertError(
          t,
          await probe(server, p, headers),
          401,
          1012,
          `${p.method} ${p.path} with ${JSON.stringify(headers)}`,
        );
    }
  });

  t.test('does not take a token from the query string', async (t) => {
    for (const p of PROBES)
      assertError(t, await probe(server, p, {}, `token=${TOKEN}`), 401, 1012, `${p.method} ${p.path}?token=`);
  });

  t.test('serves every endpoint with X-Service-Token', async (t) => {
    for (const p of PROBES) t.equal((await probe(server, p, good)).status, p.ok, `${p.method} ${p.path}`);
  });

  t.test('serves every endpoint with Authorization: Bearer', async (t) => {
    for (const p of PROBES)
      t.equal((await probe(server, p, { Authorization: `Bearer ${TOKEN}` })).status, p.ok, `${p.method} ${p.path}`);
  });
});

t.test('without -token', async (t) => {
  const { server } = await serve(t, ['-dir', 'data']);
  await server.post('/dbs', { db: 'auth' });
  await server.exec('auth', 'CREATE TABLE t (id INT PRIMARY KEY)');

  t.test('serves every endpoint with no credential', async (t) => {
    for (const p of PROBES) t.equal((await probe(server, p, {})).status, p.ok, `${p.method} ${p.path}`);
  });
});

// ── connection ceiling ───────────────────────────────────────────────────────

t.test('with -max-connections 2', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-max-connections', '2']);
  const agents: http.Agent[] = [];
  const agent = (): http.Agent => {
    const a = keepAliveAgent();
    agents.push(a);
    return a;
  };
  t.teardown(() => agents.forEach((a) => a.destroy()));

  t.test('answers 503 code 6003 on connections over the ceiling while the admitted ones are served', async (t) => {
    const [a, b, c, d] = [agent(), agent(), agent(), agent()];
    t.equal((await getOver(a, server.url, '/health')).status, 200, 'first connection admitted');
    t.equal((await getOver(b, server.url, '/health')).status, 200, 'second connection admitted');
    for (const [name, over] of [
      ['third', c],
      ['fourth', d],
    ] as const) {
      const reply = await getOver(over, server.url, '/health');
      t.equal(reply.status, 503, `${name} connection refused`);
      t.match(reply.headers['content-type'], /application\/json/, `${name}: JSON body`);
      t.equal(reply.body?.ok, false);
      t.equal(reply.body?.code, 6003, `${name}: code 6003`);
      t.match(reply.body?.error, /^\[SQ6003\]/);
    }
    t.equal((await getOver(a, server.url, '/dbs')).status, 200, 'first connection still served');
    // Each admitted connection closes after this answer while others are turned away: one request each.
    const m = await getOver(b, server.url, '/metrics');
    t.equal(m.status, 200, 'second connection still served');
    t.equal(m.body.faults_total, 0, 'the 503s are overload, not server faults: faults_total stays 0');
    t.equal(m.body.errors_total, m.body.requests_by_status['503'], 'errors_total counts every 5xx, the 503s too');
    t.notMatch(server.stderr(), STACK_TEXT, 'and they leave no stack trace on stderr');
    t.ok(m.body.requests_by_status['503'] >= 2, 'the 503s are counted by status');
    a.destroy();
    b.destroy();
    c.destroy();
    d.destroy();
  });

  t.test('admits new connections once the old ones are closed', async (t) => {
    // Once no connection was turned away for a second, the admitted ones are kept alive again.
    await sleep(1200);
    // The server notices the closes asynchronously: retry briefly on fresh connections.
    let e = agent();
    let status = 0;
    await waitFor(
      async () => {
        status = (await getOver(e, server.url, '/health')).status;
        if (status === 200) return true;
        e.destroy();
        e = agent();
        return false;
      },
      { timeoutMs: 5000, everyMs: 50 },
    ).catch(() => undefined);
    t.equal(status, 200, 'a new connection is admitted');
    const f = agent();
    t.equal((await getOver(f, server.url, '/health')).status, 200, 'a second new connection is admitted');
    const g = agent();
    t.equal((await getOver(g, server.url, '/health')).status, 503, 'the ceiling still holds');
  });
});

// ── request log ──────────────────────────────────────────────────────────────

t.test('with -log-json', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-log-json', '-token', TOKEN], { 'X-Service-Token': TOKEN });
  t.equal((await server.post('/dbs', { db: 'logdb' })).status, 201, 'setup: database');
  t.equal((await server.exec('logdb', 'CREATE TABLE t (id INT PRIMARY KEY)')).status, 200, 'setup: table');

  t.test('writes one JSON line per request with exactly the transport fields', async (t) => {
    const from = lineCount(server);
    const requests: Array<[string, string, number]> = [
      ['GET', '/health', 200],
      ['GET', '/dbs', 200],
      ['GET', '/no-such-endpoint', 404],
      ['DELETE', '/health', 405],
    ];
    for (const [method, p, status] of requests)
      t.equal((await server.request(method, p)).status, status, `${method} ${p}`);
    const lines = await newLines(server, from, requests.length);
    await sleep(100);
    t.equal(lineCount(server) - from, requests.length, 'one line per request, no more');
    lines.forEach((line, i) => {
      const [method, p, status] = requests[i] as [string, string, number];
      const entry = JSON.parse(line) as Record<string, unknown>;
      t.same(
        Object.keys(entry).sort(),
        ['addr', 'latency_ms', 'method', 'path', 'proto', 'status', 'ts_unix'],
        `line ${i}: exactly the seven fields`,
      );
      t.equal(entry.addr, '127.0.0.1', `line ${i}: addr is the client's`);
      t.equal(entry.proto, 'http', `line ${i}: proto`);
      t.ok(
        isInteger(entry.ts_unix) && Math.abs((entry.ts_unix as number) - nowUnix()) <= 5,
        `line ${i}: ts_unix is now`,
      );
      t.equal(entry.method, method, `line ${i}: method`);
      t.equal(entry.path, p, `line ${i}: path`);
      t.equal(entry.status, status, `line ${i}: status`);
      t.ok(typeof entry.latency_ms === 'number' && entry.latency_ms >= 0, `line ${i}: latency_ms is a number`);
    });
  });

  t.test('logs a failed /exec with its status and without SQL or error code', async (t) => {
    const from = lineCount(server);
    const reply = await server.exec('logdb', "SELEC marker_col_zq FROM t WHERE id = 'marker_val_zq'");
    t.equal(reply.status, 400, 'the statement fails');
    const [line] = await newLines(server, from, 1);
    const entry = JSON.parse(line as string) as Record<string, unknown>;
    t.equal(entry.path, '/exec');
    t.equal(entry.method, 'POST');
    t.equal(entry.status, 400, 'carries the status');
    t.notOk('code' in entry, 'no code field');
    t.notOk('sql' in entry, 'no sql field');
    t.notOk('error' in entry, 'no error field');
    t.notMatch(server.stdout(), /marker_(col|val)_zq|SELEC/, 'no SQL text on stdout');
    t.notMatch(server.stdout(), /SQ\d{4}/, 'no error code on stdout');
  });

  t.test('never writes the token to stdout', async (t) => {
    const from = lineCount(server);
    await server.get('/health');
    await server.get('/dbs', { Authorization: `Bearer ${TOKEN}` });
    await server.get(`/health?token=${TOKEN}`);
    await server.get(`/health?token=${TOKEN}`, { 'X-Service-Token': 'wrong-token-zq' });
    await newLines(server, from, 4);
    t.notOk(server.stdout().includes(TOKEN), 'the token is absent');
    t.notOk(server.stdout().includes('wrong-token-zq'), 'a presented wrong token is absent');
  });

  t.test('keeps the query string out of path', async (t) => {
    const from = lineCount(server);
    t.equal((await server.get('/rows?db=logdb&table=t&limit=7')).status, 200);
    const [line] = await newLines(server, from, 1);
    const entry = JSON.parse(line as string) as Record<string, unknown>;
    t.equal(entry.path, '/rows', 'path without the query');
    t.notMatch(server.stdout(), /limit=7|table=t/, 'no query string on stdout');
  });
});
