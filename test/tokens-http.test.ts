/**
 * Personal tokens against the real server: what each role may do on every
 * endpoint family, a class of thirty made in one request, revocation on the
 * very next request, sessions that belong to their token, journal entries
 * that name the token — and no secret anywhere on disk.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type Reply, type TestServer } from './helpers/server';

const ADMIN = 'admin-secret-for-tests';

let server: TestServer;
let cwd: string;
/** Every secret the server handed out in this file: none may reach the disk. */
const secrets: string[] = [ADMIN];

t.before(async () => {
  cwd = scratchDir(t);
  // A small journal rotated into gzipped files: the disk check below must look inside them too.
  server = await startServer(
    ['-dir', path.join(cwd, 'data'), '-token', ADMIN, '-log-level', 'all', '-log-max-size', '8K', '-log-compress'],
    { cwd },
  );
});
t.teardown(async () => {
  await server.stop();
});

function as(secret: string | null): Record<string, string> {
  return secret === null ? {} : { 'X-Service-Token': secret };
}

async function call(secret: string | null, method: string, target: string, body?: unknown): Promise<Reply> {
  return server.request(method, target, body === undefined ? { headers: as(secret) } : { body, headers: as(secret) });
}

/** POST an import announcing a 50 MB body, send none of it, and return the status of the answer. */
function refusedBeforeBody(secret: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}/dbs/own/import`, {
      method: 'POST',
      headers: { ...as(secret), 'content-type': 'application/sql', 'content-length': String(50 * 1024 * 1024) },
    });
    request.on('response', (response) => {
      response.resume();
      request.destroy();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.flushHeaders();
  });
}

async function makeToken(spec: Record<string, unknown>): Promise<{ id: string; name: string; secret: string }> {
  const reply = await call(ADMIN, 'POST', '/tokens', spec);
  if (reply.status !== 201) throw new Error(`POST /tokens: ${reply.text}`);
  const token = reply.body.tokens[0] as { id: string; name: string; secret: string };
  secrets.push(token.secret);
  return token;
}

function assertStatus(t: Test, reply: Reply, status: number, code: number | undefined, what: string): void {
  t.equal(
    reply.status,
    status,
    `${what}: ${status}${reply.status === status ? '' : ` (got ${reply.text.slice(0, 200)})`}`,
  );
  if (code !== undefined) t.equal(reply.body?.code, code, `${what}: code ${code}`);
}

t.test('role × endpoint matrix', async (t) => {
  for (const db of ['own', 'other', 'drop-admin', 'drop-write', 'drop-read'])
    assertStatus(t, await call(ADMIN, 'POST', '/dbs', { db }), 201, undefined, `setup ${db}`);
  for (const db of ['own', 'other'])
    assertStatus(
      t,
      await call(ADMIN, 'POST', '/exec', { db, sql: 'CREATE TABLE t (id INT PRIMARY KEY)' }),
      200,
      undefined,
      `setup table in ${db}`,
    );
  assertStatus(
    t,
    await call(ADMIN, 'POST', '/dbs', { dbs: ['drop-kid', 'other-kid'], from: 'own' }),
    201,
    undefined,
    'setup copies',
  );
  const writer = await makeToken({ name: 'writer', role: 'write', databases: ['own', 'drop-*'] });
  const reader = await makeToken({ name: 'reader', role: 'read', databases: ['own', 'drop-*'] });
  const tokens = { admin: ADMIN, write: writer.secret, read: reader.secret, none: null } as const;
  type Who = keyof typeof tokens;
  /** [status, code] per role; a code of undefined is not checked. */
  type Expect = Record<Who, readonly [number, number?]>;
  const ok = (status: number): Expect => ({ admin: [status], write: [status], read: [status], none: [401, 1012] });
  const writeUp = (status: number, code: number): Expect => ({
    admin: [status],
    write: [status],
    read: [403, code],
    none: [401, 1012],
  });
  const adminOnly = (status: number, code = 1030): Expect => ({
    admin: [status],
    write: [403, code],
    read: [403, code],
    none: [401, 1012],
  });
  const insert = 'INSERT INTO t (id) SELECT coalesce(max(id), 0) + 1 FROM t';
  const rows: Array<[string, (who: Who) => [string, string, unknown?], Expect]> = [
    ['GET /dbs', () => ['GET', '/dbs'], ok(200)],
    ['POST /dbs', (who) => ['POST', '/dbs', { db: `made-by-${who}` }], adminOnly(201)],
    ['POST /dbs from a template', (who) => ['POST', '/dbs', { db: `copy-by-${who}`, from: 'own' }], adminOnly(201)],
    ['POST /dbs/{db}/reset (own)', () => ['POST', '/dbs/drop-kid/reset'], writeUp(200, 1030)],
    [
      'POST /dbs/{db}/reset (other)',
      () => ['POST', '/dbs/other-kid/reset'],
      { admin: [200], write: [403, 1031], read: [403, 1030], none: [401, 1012] },
    ],
    ['DROP DATABASE', (who) => ['POST', '/exec', { sql: `DROP DATABASE "drop-${who}"` }], adminOnly(200)],
    ['GET /tables (own)', () => ['GET', '/tables?db=own'], ok(200)],
    ['GET /tables (other)', () => ['GET', '/tables?db=other'], adminOnly(200, 1031)],
    ['GET /schema', () => ['GET', '/schema?db=own&table=t'], ok(200)],
    ['GET /rows', () => ['GET', '/rows?db=own&table=t'], ok(200)],
    ['GET /rows (other)', () => ['GET', '/rows?db=other&table=t'], adminOnly(200, 1031)],
    ['/exec read', () => ['POST', '/exec', { db: 'own', sql: 'SELECT count(*) FROM t' }], ok(200)],
    ['/exec write', () => ['POST', '/exec', { db: 'own', sql: insert }], writeUp(200, 1032)],
    ['/exec write (other)', () => ['POST', '/exec', { db: 'other', sql: insert }], adminOnly(200, 1031)],
    ['GET /dbs/{db}/export', () => ['GET', '/dbs/own/export'], ok(200)],
    ['GET /dbs/{db}/export (other)', () => ['GET', '/dbs/other/export'], adminOnly(200, 1031)],
    ['/tx/begin', () => ['POST', '/tx/begin', { db: 'own' }], writeUp(200, 1030)],
    ['GET /pilots', () => ['GET', '/pilots'], adminOnly(200)],
    ['GET /pilots/schema', () => ['GET', '/pilots/schema'], adminOnly(200)],
    ['GET /pilots/summary', () => ['GET', '/pilots/summary'], adminOnly(200)],
    ['GET /metrics', () => ['GET', '/metrics'], adminOnly(200)],
    ['GET /journal', () => ['GET', '/journal?limit=1'], adminOnly(200)],
    ['GET /tokens', () => ['GET', '/tokens'], adminOnly(200)],
    [
      'POST /tokens',
      (who) => ['POST', '/tokens', { name: `by-${who}`, role: 'read', databases: ['own'] }],
      adminOnly(201),
    ],
    ['GET /health', () => ['GET', '/health'], ok(200)],
    ['GET /openapi.json', () => ['GET', '/openapi.json'], ok(200)],
  ];
  for (const [family, request, expect] of rows) {
    for (const who of Object.keys(tokens) as Who[]) {
      const [method, target, body] = request(who);
      const reply = await call(tokens[who], method, target, body);
      const [status, code] = expect[who];
      assertStatus(t, reply, status, code, `${family} as ${who}`);
      if (family === 'POST /tokens' && reply.status === 201) secrets.push(reply.body.tokens[0].secret as string);
      // One session at a time: the one just opened is rolled back by its own token.
      if (family === '/tx/begin' && reply.status === 200)
        assertStatus(
          t,
          await call(tokens[who], 'POST', `/tx/rollback?session=${reply.body.session}`),
          200,
          undefined,
          `rollback as ${who}`,
        );
    }
  }
  // An import is a write: its body is a file, not JSON.
  const importCsv = (secret: string | null, db: string): Promise<Reply> =>
    server.request('POST', `/dbs/${db}/import?table=marks`, {
      rawBody: 'pupil,mark\n1,2\n',
      headers: { ...as(secret), 'content-type': 'text/csv' },
    });
  assertStatus(t, await importCsv(reader.secret, 'own'), 403, 1030, 'import as read');
  assertStatus(t, await importCsv(writer.secret, 'other'), 403, 1031, 'import as write into another database');
  assertStatus(t, await importCsv(null, 'own'), 401, 1012, 'import without a token');
  assertStatus(t, await importCsv(writer.secret, 'own'), 200, undefined, 'import as write into its own database');
  const streamed = await server.request('POST', '/dbs/own/import?table=marks', {
    rawBody: 'pupil,mark\n1,2\n',
    headers: { ...as(reader.secret), 'content-type': 'text/csv', accept: 'application/x-ndjson' },
  });
  assertStatus(
    t,
    streamed,
    403,
    1030,
    'a streamed import as read is refused with its status, not a 200 and an error line',
  );
  t.equal(
    await refusedBeforeBody(reader.secret),
    403,
    'a read token is refused before its upload is read: the answer comes with no byte of the announced 50 MB sent',
  );
  const listed = await call(writer.secret, 'GET', '/dbs');
  // drop-admin is gone; the write and read tokens could not drop theirs; drop-kid matches their drop-* too.
  t.same(
    listed.body.dbs,
    ['drop-kid.db', 'drop-read.db', 'drop-write.db', 'own.db'],
    'GET /dbs shows a token only its databases',
  );
  const shown = await call(reader.secret, 'POST', '/exec', { sql: 'SHOW DATABASES' });
  t.same(
    shown.body.results?.[0]?.rows,
    [['drop-kid.db'], ['drop-read.db'], ['drop-write.db'], ['own.db']],
    'SHOW DATABASES too, for a read token',
  );
});

t.test('a session belongs to the token that opened it', async (t) => {
  const first = await makeToken({ name: 'session-a', role: 'write', databases: ['own'] });
  const second = await makeToken({ name: 'session-b', role: 'write', databases: ['own'] });
  const begun = await call(first.secret, 'POST', '/tx/begin', { db: 'own' });
  assertStatus(t, begun, 200, undefined, 'begin');
  const id = begun.body.session as string;
  for (const [who, secret] of [
    ['another write token', second.secret],
    ['the admin token', ADMIN],
  ] as const) {
    assertStatus(
      t,
      await call(secret, 'POST', `/exec?session=${id}`, { sql: 'SELECT 1' }),
      404,
      5002,
      `exec in it by ${who}`,
    );
    assertStatus(t, await call(secret, 'POST', `/tx/commit?session=${id}`), 404, 5002, `commit by ${who}`);
  }
  assertStatus(
    t,
    await call(first.secret, 'POST', `/exec?session=${id}`, { sql: 'SELECT 1' }),
    200,
    undefined,
    'its own token uses it',
  );
  assertStatus(t, await call(first.secret, 'POST', `/tx/commit?session=${id}`), 200, undefined, 'and commits it');
  const page = await call(ADMIN, 'GET', '/journal?db=own.db');
  const entries = page.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.session === id);
  t.same(
    entries.map((entry) => entry.kind),
    ['begin', 'exec', 'commit'],
    'the session’s entries',
  );
  t.ok(
    entries.every((entry) => entry.tokenId === first.id && entry.tokenName === 'session-a'),
    'each names the token that owns the session',
  );
});

t.test('a class of thirty in one request', async (t) => {
  const reply = await call(ADMIN, 'POST', '/tokens', { prefix: 'alumno', count: 30, role: 'write' });
  assertStatus(t, reply, 201, undefined, 'POST /tokens {prefix, count}');
  const tokens = reply.body.tokens as Array<{ name: string; databases: string[]; secret: string }>;
  secrets.push(...tokens.map((token) => token.secret));
  t.same(
    tokens.map((token) => token.name),
    Array.from({ length: 30 }, (_, i) => `alumno-${String(i + 1).padStart(2, '0')}`),
    'named alumno-01 … alumno-30',
  );
  t.ok(
    tokens.every((token) => token.databases.length === 1 && token.databases[0] === token.name),
    'each bound to its own database',
  );
  t.equal(reply.body.databases.length, 30, 'and the thirty databases exist');
  t.equal(new Set(tokens.map((token) => token.secret)).size, 30, 'thirty different secrets');
  for (const [i, token] of tokens.entries()) {
    const neighbour = tokens[(i + 1) % tokens.length]!;
    const own = `${token.name}.db`;
    t.same((await call(token.secret, 'GET', '/dbs')).body.dbs, [own], `${token.name} sees only ${own}`);
    assertStatus(
      t,
      await call(token.secret, 'POST', '/exec', {
        db: token.name,
        sql: 'CREATE TABLE notas (id INT PRIMARY KEY, nota INT); INSERT INTO notas VALUES (1, 10)',
      }),
      200,
      undefined,
      `${token.name} writes its own`,
    );
    assertStatus(
      t,
      await call(token.secret, 'POST', '/exec', {
        db: neighbour.name,
        sql: 'CREATE TABLE intruso (id INT PRIMARY KEY)',
      }),
      403,
      1031,
      `${token.name} cannot write ${neighbour.name}`,
    );
  }

  const csv = await call(ADMIN, 'POST', '/tokens?format=csv', { prefix: 'tarjeta', count: 30, role: 'read' });
  assertStatus(t, csv, 201, undefined, 'POST /tokens?format=csv');
  t.match(csv.headers.get('content-type'), /^text\/csv/, 'answered as CSV');
  t.notMatch(csv.text, /\r/, 'LF line ends: no CR for a secret cut from a line to end in');
  const lines = csv.text.trimEnd().split('\n');
  t.equal(lines[0], 'name,database,secret', 'a header line');
  t.equal(lines.length, 31, 'and thirty cards');
  const [name, database, secret] = lines[1]!.split(',') as [string, string, string];
  t.same([name, database], ['tarjeta-01', 'tarjeta-01'], 'name and database of the first card');
  secrets.push(...lines.slice(1).map((line) => line.split(',')[2]!));
  assertStatus(t, await call(secret, 'GET', '/tables?db=tarjeta-01'), 200, undefined, 'a card secret works');
  const accepted = await server.request('POST', '/tokens', {
    body: { prefix: 'acepta', count: 2, role: 'read' },
    headers: { ...as(ADMIN), Accept: 'text/csv' },
  });
  t.equal(accepted.text.split('\n')[0], 'name,database,secret', 'Accept: text/csv answers CSV too');
  secrets.push(
    ...accepted.text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[2]!),
  );

  assertStatus(
    t,
    await call(ADMIN, 'POST', '/tokens', { prefix: 'grande', count: 501, role: 'read' }),
    400,
    1035,
    'a class above 500',
  );
  assertStatus(
    t,
    await call(ADMIN, 'POST', '/tokens', { prefix: 'alumno', count: 2, role: 'read' }),
    409,
    2031,
    'names already taken',
  );
});

t.test(
  'a class made from a template: one request gives every student a copy of the lesson and a token for it',
  async (t) => {
    assertStatus(
      t,
      await call(ADMIN, 'POST', '/dbs', { db: 'leccion' }),
      201,
      undefined,
      'the teacher prepares the lesson',
    );
    assertStatus(
      t,
      await call(ADMIN, 'POST', '/exec', {
        db: 'leccion',
        sql: "CREATE TABLE paises (id INT PRIMARY KEY, nombre TEXT); INSERT INTO paises VALUES (1, 'Chile'), (2, 'Perú')",
      }),
      200,
      undefined,
      'with a table and rows',
    );
    const reply = await call(ADMIN, 'POST', '/tokens', { prefix: 'grupo', count: 3, role: 'write', from: 'leccion' });
    assertStatus(t, reply, 201, undefined, 'POST /tokens {prefix, count, from}');
    const tokens = reply.body.tokens as Array<{ name: string; secret: string }>;
    secrets.push(...tokens.map((token) => token.secret));
    t.same(reply.body.databases, ['grupo-01.db', 'grupo-02.db', 'grupo-03.db'], 'the three databases were made');
    for (const token of tokens) {
      const rows = await call(token.secret, 'POST', '/exec', {
        db: token.name,
        sql: 'SELECT nombre FROM paises ORDER BY id',
      });
      t.same(rows.body.results?.[0]?.rows, [['Chile'], ['Perú']], `${token.name} finds the lesson in its own copy`);
    }
    const [first] = tokens;
    assertStatus(
      t,
      await call(first!.secret, 'POST', '/exec', { db: first!.name, sql: 'DELETE FROM paises' }),
      200,
      undefined,
      'a student empties the table',
    );
    assertStatus(
      t,
      await call(first!.secret, 'POST', `/dbs/${first!.name}/reset`),
      200,
      undefined,
      'and resets the copy with their own token',
    );
    t.same(
      (await call(first!.secret, 'POST', '/exec', { db: first!.name, sql: 'SELECT count(*) FROM paises' })).body
        .results?.[0]?.rows,
      [[2]],
      'the lesson is back',
    );
    assertStatus(
      t,
      await call(ADMIN, 'POST', '/tokens', { prefix: 'otro', count: 2, role: 'write', from: 'no-such-lesson' }),
      404,
      2001,
      'an unknown template is 404, and no token is made',
    );
    t.notOk(
      (await call(ADMIN, 'GET', '/tokens')).body.tokens.some((token: { name: string }) =>
        token.name.startsWith('otro-'),
      ),
      'none was',
    );
  },
);

t.test('revocation takes effect on the very next request', async (t) => {
  const token = await makeToken({ name: 'revoked-soon', role: 'read', databases: ['own'] });
  assertStatus(t, await call(token.secret, 'GET', '/dbs'), 200, undefined, 'before');
  const listed = await call(ADMIN, 'GET', '/tokens');
  t.ok(
    listed.body.tokens.some((item: { id: string }) => item.id === token.id),
    'GET /tokens lists it',
  );
  t.notMatch(listed.text, /sqs_|sha256/, 'without secrets or hashes');
  assertStatus(t, await call(ADMIN, 'DELETE', `/tokens/${token.id}`), 200, undefined, 'DELETE /tokens/{id}');
  assertStatus(t, await call(token.secret, 'GET', '/dbs'), 401, 1012, 'the next request');
  assertStatus(t, await call(ADMIN, 'DELETE', `/tokens/${token.id}`), 404, 2030, 'revoking it again');
  assertStatus(
    t,
    await call(ADMIN, 'POST', '/tokens', {
      name: 'late',
      role: 'read',
      databases: ['own'],
      expires: '2001-01-01T00:00:00Z',
    }),
    400,
    1034,
    'an expiry in the past',
  );
});

t.test(
  'revoking a token ends its open session at once: its rows are rolled back and the session slot is free',
  async (t) => {
    const student = await makeToken({ name: 'left-class', role: 'write', databases: ['own'] });
    const begun = await call(student.secret, 'POST', '/tx/begin', { db: 'own' });
    assertStatus(t, begun, 200, undefined, 'the student opens a session');
    const session = begun.body.session as string;
    assertStatus(
      t,
      await server.request('POST', '/exec', {
        body: { db: 'own', sql: 'INSERT INTO t (id) VALUES (424242)' },
        headers: { ...as(student.secret), 'X-Service-Session': session },
      }),
      200,
      undefined,
      'and writes in it',
    );
    assertStatus(
      t,
      await call(ADMIN, 'DELETE', `/tokens/${student.id}`),
      200,
      undefined,
      'the teacher revokes the token',
    );
    const next = await call(ADMIN, 'POST', '/tx/begin', { db: 'own' });
    assertStatus(t, next, 200, undefined, 'another session opens at once: the revoked one no longer holds the slot');
    assertStatus(t, await call(ADMIN, 'POST', `/tx/rollback?session=${next.body.session}`), 200, undefined, 'rollback');
    const rows = await call(ADMIN, 'POST', '/exec', { db: 'own', sql: 'SELECT count(*) FROM t WHERE id = 424242' });
    t.same(rows.body.results[0].rows, [[0]], "the revoked session's write was rolled back");
    const page = await call(ADMIN, 'GET', '/journal?db=own.db');
    const rollbacks = page.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.kind === 'rollback' && entry.session === session);
    t.match(
      rollbacks,
      [{ reason: 'revoked', tokenName: 'left-class' }],
      'the journal says why the session ended, and whose it was',
    );
  },
);

t.test('journal entries name the token; a dropdb names who dropped it', async (t) => {
  const teacher = await makeToken({ name: 'teacher', role: 'admin' });
  const student = await makeToken({ name: 'student', role: 'write', databases: ['gone'] });
  assertStatus(t, await call(ADMIN, 'POST', '/dbs', { db: 'gone' }), 201, undefined, 'setup');
  assertStatus(
    t,
    await call(student.secret, 'POST', '/exec', { db: 'gone', sql: 'CREATE TABLE x (id INT PRIMARY KEY)' }),
    200,
    undefined,
    'the student writes',
  );
  assertStatus(
    t,
    await call(teacher.secret, 'POST', '/dbs', { db: 'gone-copy', from: 'gone' }),
    201,
    undefined,
    'the teacher copies it',
  );
  const kid = await makeToken({ name: 'kid', role: 'write', databases: ['gone-copy'] });
  assertStatus(t, await call(kid.secret, 'POST', '/dbs/gone-copy/reset'), 200, undefined, 'the kid resets the copy');
  const copyPage = await call(ADMIN, 'GET', '/journal?db=gone-copy.db');
  const copyEntries = copyPage.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.match(
    copyEntries.filter((entry) => entry.kind === 'copydb'),
    [{ from: 'gone', tokenId: teacher.id, tokenName: 'teacher' }],
    'the copydb names who copied',
  );
  t.match(
    copyEntries.filter((entry) => entry.kind === 'resetdb'),
    [{ from: 'gone', tokenId: kid.id, tokenName: 'kid' }],
    'the resetdb names who reset',
  );
  assertStatus(
    t,
    await call(teacher.secret, 'POST', '/exec', { sql: 'DROP DATABASE gone' }),
    200,
    undefined,
    'the teacher drops it',
  );
  const page = await call(ADMIN, 'GET', '/journal?db=gone.db');
  const entries = page.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const byKind = (kind: string) => entries.filter((entry) => entry.kind === kind);
  t.match(byKind('createdb'), [{ tokenId: 'admin', tokenName: 'admin' }], 'the -token holder is "admin"');
  t.match(byKind('exec'), [{ tokenId: student.id, tokenName: 'student' }], 'the student’s batch names the student');
  t.match(byKind('dropdb'), [{ tokenId: teacher.id, tokenName: 'teacher' }], 'the dropdb names the teacher');
  t.notMatch(page.text, /sqs_/, 'no secret in the journal');
});

t.test('no secret anywhere under the directory, rotated and gzipped journal files included', async (t) => {
  t.equal(await server.stop(), 0, 'the server stops cleanly (everything is written)');
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.push(full);
    }
  };
  walk(cwd);
  const gzipped = files.filter((file) => file.endsWith('.gz'));
  t.ok(gzipped.length > 0, `the journal rotated into gzipped files (${gzipped.length})`);
  t.ok(
    files.some((file) => file.endsWith('_sqlscribe_tokens.json')),
    'the token list is kept in the data directory',
  );
  t.ok(secrets.length > 60, `${secrets.length} secrets to look for`);
  const texts = files.map((file) => {
    const bytes = fs.readFileSync(file);
    return { file, text: (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('latin1') };
  });
  t.ok(
    texts.some(({ text }) => text.includes('"tokenName":"alumno-07"')),
    'the search reads the journal (a token name is found)',
  );
  const found = texts.flatMap(({ file, text }) =>
    secrets
      .filter((secret) => text.includes(secret))
      .map((secret) => `${path.relative(cwd, file)}: ${secret.slice(0, 8)}…`),
  );
  t.same(found, [], 'no secret in any file');
});
