/**
 * Hostile input: SQL and requests written to reach outside
 * the database, to confuse the splitter or the classifier, or to break the
 * server. Every test also checks the aftermath: no new file outside the data
 * directory (the test directory tree and /tmp, looked for by a random token
 * in every file name the attacks use), another database's rows intact, and
 * /health answering.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const root = scratchDir(t);
const dataDir = path.join(root, 'data');
const MAX_STATEMENTS = 50;
let server: TestServer;
/** Every top-level entry of /tmp before the tests: other processes share /tmp, so only names with our token count. */
let tmpBefore: Set<string>;
/** The test directory tree outside the data directory, before the tests. */
let treeBefore: string[];

const KEEPER_ROWS = [
  [1, 'alpha'],
  [2, 'beta'],
  [3, "o'brien; ATTACH"],
];

/** A fresh random token: every file name an attack uses contains one. */
function token(): string {
  return `sqlscribe-hostile-${randomBytes(6).toString('hex')}`;
}
const tokens: string[] = [];
/** Files a test put in /tmp itself, on purpose: not counted as escapes. */
const planted = new Set<string>();
function newToken(): string {
  const value = token();
  tokens.push(value);
  return value;
}

/** Every path under `dir` (directories too), relative to `dir`, skipping `skip`. */
function tree(dir: string, skip: string): string[] {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (full === skip) continue;
      out.push(path.relative(dir, full));
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out.sort();
}

t.before(async () => {
  // Runaway statements are stopped at 2 s rather than the default 5: no statement here should run
  // even one, and each runaway burns a core until it is stopped.
  server = await startServer(['-dir', dataDir, '-max-statements', String(MAX_STATEMENTS), '-query-timeout', '2s'], {
    cwd: root,
  });
  const created = await server.post('/dbs', { db: 'keeper' });
  if (created.status !== 201) throw new Error(`POST /dbs keeper: ${created.text}`);
  const setup = await server.request('POST', '/exec', {
    body: {
      db: 'keeper',
      statements: [
        { sql: 'CREATE TABLE rows (id INT PRIMARY KEY, v TEXT)' },
        ...KEEPER_ROWS.map((row) => ({ sql: 'INSERT INTO rows VALUES (?, ?)', params: row })),
      ],
    },
  });
  if (setup.status !== 200) throw new Error(`setup: ${setup.text}`);
  const victim = await server.post('/dbs', { db: 'victim' });
  if (victim.status !== 201) throw new Error(`POST /dbs victim: ${victim.text}`);
  await server.exec('victim', 'CREATE TABLE t (id INT PRIMARY KEY)');
  tmpBefore = new Set(fs.readdirSync('/tmp'));
  treeBefore = tree(root, dataDir);
});
t.teardown(async () => {
  await server?.stop();
  for (const value of tokens) {
    for (const suffix of ['.db', '.db-wal', '.db-shm', '.db-journal'])
      fs.rmSync(`/tmp/${value}${suffix}`, { force: true });
  }
});

/** POST /exec with a raw `{ db, sql }`. */
function exec(db: string, sql: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  return server.exec(db, sql, extra);
}

/**
 * The checks every attack ends with: no file appeared outside the data
 * directory, the data directory holds only database files, the keeper's rows
 * are intact, and the service is healthy.
 */
async function aftermath(tt: Test): Promise<void> {
  tt.strictSame(tree(root, dataDir), treeBefore, 'no new file in the test directory outside the data directory');
  const newTmp = fs.readdirSync('/tmp').filter((name) => !tmpBefore.has(name) && !planted.has(name));
  tt.strictSame(
    newTmp.filter((name) => name.includes('sqlscribe-hostile-') || /^(x|y|evil)\.db/.test(name)),
    [],
    'no new file of ours in /tmp',
  );
  // Besides databases, only the server's own lock on its directory and its journal (on by default, under the data directory).
  const own = (name: string): boolean =>
    /^\.sqlscribe\.lock(\.pid)?$/.test(name) ||
    (name === 'journal' && fs.statSync(path.join(dataDir, name)).isDirectory());
  const strays = fs
    .readdirSync(dataDir)
    .filter((name) => !/^[a-z0-9_-]{1,64}\.db(-wal|-shm|-journal)?$/.test(name) && !own(name));
  tt.strictSame(strays, [], 'the data directory holds only database files, the lock and the journal');
  const keeper = await exec('keeper', 'SELECT id, v FROM rows ORDER BY id');
  tt.equal(keeper.status, 200, `keeper still answers: ${keeper.text.slice(0, 200)}`);
  tt.strictSame(keeper.body?.results?.[0]?.rows, KEEPER_ROWS, "another database's rows are intact");
  const health = await server.get('/health');
  tt.equal(health.status, 200, 'health answers');
  tt.equal(health.body?.ok, true, 'health ok');
}

// ── Statements that reach outside the database ──────────────────────────────────

t.test('refuses ATTACH of a relative and of an absolute file', async (tt) => {
  const tok = newToken();
  isError(tt, await exec('victim', "ATTACH 'x.db' AS y"), 400, 1003, 'ATTACH relative');
  isError(tt, await exec('victim', `ATTACH DATABASE '/tmp/${tok}.db' AS y`), 400, 1003, 'ATTACH absolute');
  isError(
    tt,
    await exec('victim', `attach database 'file:/tmp/${tok}.db?mode=rwc' as y`),
    400,
    1003,
    'attach with a URI, lower case',
  );
  isError(
    tt,
    await exec('victim', `ATTACH '${dataDir}/keeper.db' AS k`),
    400,
    1003,
    'ATTACH of another database of the directory',
  );
  tt.notOk(fs.existsSync(`/tmp/${tok}.db`), 'no file in /tmp');
  tt.notOk(fs.existsSync(path.join(root, 'x.db')) || fs.existsSync(path.join(dataDir, 'x.db')), 'no x.db anywhere');
  await aftermath(tt);
});

t.test('refuses DETACH', async (tt) => {
  isError(tt, await exec('victim', 'DETACH y'), 400, 1003, 'DETACH');
  isError(tt, await exec('victim', 'DETACH DATABASE main'), 400, 1003, 'DETACH main');
  await aftermath(tt);
});

t.test('refuses VACUUM and VACUUM INTO', async (tt) => {
  const tok = newToken();
  isError(tt, await exec('victim', 'VACUUM'), 400, 1003, 'VACUUM');
  isError(tt, await exec('victim', `VACUUM INTO '/tmp/${tok}.db'`), 400, 1003, 'VACUUM INTO /tmp');
  isError(tt, await exec('victim', `VACUUM main INTO '${tok}.db'`), 400, 1003, 'VACUUM INTO a relative file');
  tt.notOk(fs.existsSync(`/tmp/${tok}.db`), 'no copy in /tmp');
  await aftermath(tt);
});

t.test('refuses PRAGMA writable_schema and PRAGMA database_list', async (tt) => {
  const first = await exec('victim', 'PRAGMA writable_schema=1');
  isError(tt, first, 400, 1003, 'PRAGMA writable_schema');
  tt.equal(first.body?.statement, 0, 'names statement 0');
  isError(tt, await exec('victim', 'PRAGMA database_list'), 400, 1003, 'PRAGMA database_list');
  isError(tt, await exec('victim', 'pragma main.journal_mode = DELETE'), 400, 1003, 'pragma journal_mode');
  // The schema was not made writable: sqlite_schema still refuses direct writes.
  const write = await exec('victim', "UPDATE sqlite_schema SET sql = 'x' WHERE name = 't'");
  tt.equal(write.status, 400, `sqlite_schema stays read-only: ${write.text.slice(0, 200)}`);
  tt.equal((await exec('victim', 'INSERT INTO t VALUES (1)')).status, 200, 'the victim still works');
  await exec('victim', 'DELETE FROM t');
  await aftermath(tt);
});

t.test('refuses load_extension()', async (tt) => {
  const tok = newToken();
  isError(tt, await exec('victim', "SELECT load_extension('x')"), 400, 1003, 'load_extension');
  isError(
    tt,
    await exec('victim', `SELECT load_extension('/tmp/${tok}', 'sqlite3_extension_init')`),
    400,
    1003,
    'load_extension with an entry point',
  );
  await aftermath(tt);
});

t.test('refuses the pragma_database_list table function', async (tt) => {
  isError(tt, await exec('victim', 'SELECT * FROM pragma_database_list'), 400, 1003, 'FROM pragma_database_list');
  isError(tt, await exec('victim', 'SELECT file FROM PRAGMA_DATABASE_LIST'), 400, 1003, 'upper case');
  isError(tt, await exec('victim', 'SELECT * FROM "pragma_database_list"'), 400, 1003, 'quoted identifier');
  isError(tt, await exec('victim', "SELECT * FROM t, 'pragma_database_list'"), 400, 1003, 'as a string in a FROM list');
  isError(
    tt,
    await exec('victim', 'SELECT (SELECT file FROM main.pragma_database_list)'),
    400,
    1003,
    'in a subquery, schema-qualified',
  );
  const text = await exec('victim', "SELECT 'pragma_database_list'");
  tt.equal(text.status, 200, 'the same word as a plain string value is harmless');
  tt.strictSame(text.body?.results?.[0]?.rows, [['pragma_database_list']]);
  await aftermath(tt);
});

// ── The splitter and the classifier ────────────────────────────────────────────

t.test('rejects statements hidden after comments', async (tt) => {
  const tok = newToken();
  const afterLine = await exec('victim', `SELECT 1; -- \n ATTACH '/tmp/${tok}.db' AS y`);
  isError(tt, afterLine, 400, 1003, 'ATTACH after a line comment');
  tt.equal(afterLine.body?.statement, 1, 'the ATTACH is statement 1');
  const afterBlock = await exec('victim', `/* ; */ ATTACH '/tmp/${tok}.db' AS y`);
  isError(tt, afterBlock, 400, 1003, 'ATTACH after a block comment holding a semicolon');
  tt.equal(afterBlock.body?.statement, 0);
  const midBlock = await exec('victim', `SELECT 1 /* */; ATTACH '/tmp/${tok}.db' AS y; SELECT 2`);
  isError(tt, midBlock, 400, 1003, 'ATTACH between two SELECTs');
  tt.equal(midBlock.body?.statement, 1);
  // A write before the hidden statement is not applied either: the batch is refused whole.
  isError(
    tt,
    await exec('victim', `INSERT INTO t VALUES (7); --\nVACUUM INTO '/tmp/${tok}.db'`),
    400,
    1003,
    'VACUUM INTO after an INSERT',
  );
  const rows = await exec('victim', 'SELECT count(*) FROM t');
  tt.strictSame(rows.body?.results?.[0]?.rows, [[0]], 'the INSERT of the refused batch did not happen');
  // A comment that swallows the rest of the line is just a comment, for us and for SQLite.
  const swallowed = await exec('victim', `SELECT 3 -- ; ATTACH '/tmp/${tok}.db' AS y`);
  tt.equal(swallowed.status, 200, `a commented-out ATTACH is harmless: ${swallowed.text.slice(0, 200)}`);
  tt.strictSame(swallowed.body?.results, [{ columns: ['3'], rows: [[3]] }], 'one SELECT ran');
  isError(tt, await exec('victim', `SELECT 4 /* ATTACH '/tmp/${tok}.db' AS y`), 400, 1001, 'an unterminated comment');
  tt.notOk(fs.existsSync(`/tmp/${tok}.db`));
  await aftermath(tt);
});

t.test('treats a semicolon inside a string as text', async (tt) => {
  const reply = await exec('victim', "SELECT ';ATTACH ''x'' AS y'");
  tt.equal(reply.status, 200, reply.text.slice(0, 200));
  tt.equal(reply.body?.results?.length, 1, 'one statement');
  tt.strictSame(reply.body?.results?.[0]?.rows, [[";ATTACH 'x' AS y"]], 'it returns the text');
  const quoted = await exec('victim', 'SELECT 1 AS ";ATTACH \'x.db\' AS y"');
  tt.equal(quoted.status, 200, 'a semicolon inside a quoted identifier');
  tt.strictSame(quoted.body?.results?.[0]?.columns, [";ATTACH 'x.db' AS y"]);
  const bracket = await exec('victim', 'SELECT 1 AS [;VACUUM]');
  tt.equal(bracket.status, 200, 'a semicolon inside a [bracketed] identifier');
  isError(
    tt,
    await exec('victim', "SELECT ';ATTACH 'x.db' AS y"),
    400,
    1001,
    'a string closed early leaves an unterminated one',
  );
  await aftermath(tt);
});

t.test('refuses database names that leave the data directory', async (tt) => {
  const tok = newToken();
  const names = [
    '..',
    `../${tok}`,
    `../../${tok}`,
    `a/${tok}`,
    `a\\${tok}`,
    `a\u0000b`,
    `${tok}\u0000`,
    `/tmp/${tok}`,
    `/tmp/${tok}.db`,
    `.${tok}`,
    '.',
    '',
    ' ',
    `%2e%2e%2f${tok}`,
    `${tok}/../keeper`,
    `C:\\${tok}`,
    'a'.repeat(65),
    `keeper.db/../../${tok}`,
  ];
  for (const name of names) {
    const label = JSON.stringify(name);
    isError(tt, await server.post('/dbs', { db: name }), 400, 1011, `POST /dbs ${label}`);
    const viaQuery = await server.get(`/tables?db=${encodeURIComponent(name)}`);
    tt.ok([400, 404].includes(viaQuery.status), `GET /tables?db=${label}: ${viaQuery.status}`);
    if (name !== '' && name.trim() !== '')
      isError(tt, viaQuery, viaQuery.status, viaQuery.status === 404 ? 2001 : 1011, `?db=${label}`);
    const viaExec = await exec(name, 'CREATE TABLE pwn (id INT PRIMARY KEY)');
    tt.ok([400, 404].includes(viaExec.status), `POST /exec db ${label}: ${viaExec.status}`);
    const viaSql = await server.post('/exec', { sql: `CREATE DATABASE "${name.replace(/"/g, '""')}"` });
    if (name.trim() !== '') isError(tt, viaSql, 400, 1011, `CREATE DATABASE ${label}`);
    else tt.equal(viaSql.status, 400, `CREATE DATABASE ${label}: ${viaSql.text.slice(0, 200)}`);
  }
  // Percent-encoded dots straight in the query string, decoded by the server.
  for (const query of [
    `/tables?db=%2e%2e%2f${tok}`,
    '/tables?db=%2E%2E',
    `/rows?db=..%2Fdata%2Fkeeper&table=rows`,
    `/schema?db=%2fetc%2fpasswd&table=x`,
    `/tables?db=a%00b`,
  ]) {
    const reply = await server.get(query);
    tt.ok([400, 404].includes(reply.status), `GET ${query}: ${reply.status} ${reply.text.slice(0, 200)}`);
    tt.ok([1011, 2001].includes(reply.body?.code), `GET ${query}: code ${reply.body?.code}`);
  }
  isError(tt, await server.post('/exec', { sql: `CREATE DATABASE "../${tok}"` }), 400, 1011, 'CREATE DATABASE "../x"');
  isError(
    tt,
    await server.post('/exec', { sql: `CREATE DATABASE IF NOT EXISTS '/tmp/${tok}'` }),
    400,
    1011,
    "CREATE DATABASE IF NOT EXISTS '/tmp/x'",
  );
  isError(
    tt,
    await server.post('/exec', { sql: `CREATE DATABASE [..\\${tok}]` }),
    400,
    1011,
    'CREATE DATABASE [..\\x]',
  );
  isError(
    tt,
    await server.post('/exec', { sql: 'DROP DATABASE "../data/keeper"' }),
    400,
    1011,
    'DROP DATABASE "../data/keeper"',
  );
  isError(
    tt,
    await server.post('/exec', { sql: 'DROP DATABASE IF EXISTS "../data/keeper"' }),
    400,
    1011,
    'DROP DATABASE IF EXISTS "../data/keeper"',
  );
  const listed = await server.get('/dbs');
  tt.strictSame(listed.body?.dbs, ['keeper.db', 'victim.db'], 'no database was created');
  tt.notOk(fs.existsSync(`/tmp/${tok}.db`) || fs.existsSync(`/tmp/${tok}`), 'nothing in /tmp');
  tt.notOk(
    fs.existsSync(path.join(root, `${tok}.db`)) || fs.existsSync(path.join(root, tok)),
    'nothing beside the data directory',
  );
  await aftermath(tt);
});

t.test('ignores a symlink planted in the data directory', async (tt) => {
  const tok = newToken();
  const target = `/tmp/${tok}.db`;
  planted.add(`${tok}.db`);
  tt.teardown(() => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(target + suffix, { force: true });
  });
  const outside = new Database(target);
  outside.exec("CREATE TABLE secret (v TEXT); INSERT INTO secret VALUES ('do not read')");
  outside.close();
  const before = fs.readFileSync(target);
  const link = path.join(dataDir, 'evil.db');
  fs.symlinkSync(target, link);
  tt.teardown(() => fs.rmSync(link, { force: true }));

  const listed = await server.get('/dbs');
  tt.notOk(listed.body?.dbs?.includes('evil.db'), `GET /dbs does not list evil: ${listed.text}`);
  isError(tt, await server.get('/tables?db=evil'), 404, 2001, '?db=evil');
  isError(tt, await server.get('/rows?db=evil&table=secret'), 404, 2001, '/rows ?db=evil');
  isError(tt, await exec('evil', 'SELECT * FROM secret'), 404, 2001, 'SELECT through the link');
  isError(tt, await exec('evil.db', "INSERT INTO secret VALUES ('pwned')"), 404, 2001, 'INSERT through the link');
  isError(tt, await server.post('/exec', { sql: 'DROP DATABASE evil' }), 404, 2001, 'DROP DATABASE evil');
  const showed = await server.post('/exec', { sql: 'SHOW DATABASES' });
  tt.notOk(JSON.stringify(showed.body?.results).includes('evil'), 'SHOW DATABASES does not list it');
  // Creating a database of that name must not open the file the link points to.
  const created = await server.post('/dbs', { db: 'evil' });
  tt.ok([201, 400, 409].includes(created.status), `POST /dbs evil: ${created.status} ${created.text.slice(0, 200)}`);
  const createdBySql = await server.post('/exec', { sql: 'CREATE DATABASE IF NOT EXISTS evil' });
  tt.ok([200, 400, 409].includes(createdBySql.status), `CREATE DATABASE IF NOT EXISTS evil: ${createdBySql.status}`);
  if (created.status !== 201 && createdBySql.status !== 200) {
    isError(tt, await exec('evil', 'SELECT * FROM secret'), 404, 2001, 'still not served after the refused creation');
  }

  tt.ok(fs.readFileSync(target).equals(before), 'the target file is unchanged');
  tt.notOk(
    fs.existsSync(`${target}-wal`) || fs.existsSync(`${target}-shm`) || fs.existsSync(`${target}-journal`),
    'no -wal, -shm or -journal beside the target',
  );
  tt.ok(fs.existsSync(link), 'the link itself was not followed and removed');
  const check = new Database(target, { readonly: true });
  tt.strictSame(
    check.prepare('SELECT v FROM secret').pluck().all(),
    ['do not read'],
    'the target still holds its one row',
  );
  check.close();
  fs.rmSync(link, { force: true });
  await aftermath(tt);
});

// ── Request bodies ──────────────────────────────────────────────────────────────

t.test('rejects malformed JSON with 1009', async (tt) => {
  const json = { 'content-type': 'application/json' };
  for (const raw of [
    '{"db": "keeper", "sql": ',
    '{db: "keeper"}',
    '{"db":"keeper","sql":"SELECT 1"}}',
    "{'sql': 'SELECT 1'}",
    '\u0000',
  ]) {
    isError(
      tt,
      await server.request('POST', '/exec', { rawBody: raw, headers: json }),
      400,
      1009,
      `body ${JSON.stringify(raw)}`,
    );
  }
  for (const raw of ['[1, 2]', '"SELECT 1"', '42', 'null']) {
    isError(
      tt,
      await server.request('POST', '/exec', { rawBody: raw, headers: json }),
      400,
      [1006, 1009],
      `non-object body ${raw}`,
    );
  }
  await aftermath(tt);
});

t.test('refuses bodies that are not JSON with 415', async (tt) => {
  const body = JSON.stringify({ db: 'keeper', sql: 'DELETE FROM rows' });
  isError(
    tt,
    await server.request('POST', '/exec', { rawBody: body, headers: { 'content-type': 'text/plain' } }),
    415,
    1010,
    'text/plain',
  );
  isError(
    tt,
    await server.request('POST', '/exec', {
      rawBody: 'db=keeper&sql=DELETE+FROM+rows',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    415,
    1010,
    'form-urlencoded',
  );
  isError(
    tt,
    await server.request('POST', '/exec', {
      rawBody: body,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    }),
    415,
    1010,
    'multipart',
  );
  const gzipped = gzipSync(Buffer.from(body));
  isError(
    tt,
    await server.request('POST', '/exec', {
      rawBody: gzipped,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    }),
    415,
    1010,
    'Content-Encoding: gzip',
  );
  isError(
    tt,
    await server.request('POST', '/exec', {
      rawBody: gzipSync(gzipped),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, gzip' },
    }),
    415,
    1010,
    'gzip twice',
  );
  await aftermath(tt);
});

t.test('rejects invalid UTF-8 bytes with 1015', async (tt) => {
  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, Buffer]> = [
    [
      '0xff 0xfe',
      Buffer.concat([
        Buffer.from('{"db":"keeper","sql":"INSERT INTO rows VALUES (9, \''),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('\')"}'),
      ]),
    ],
    [
      'a lone continuation byte',
      Buffer.concat([Buffer.from('{"db":"keeper","sql":"SELECT \''), Buffer.from([0x80]), Buffer.from('\'"}')]),
    ],
    [
      'an overlong slash',
      Buffer.concat([Buffer.from('{"db":"keeper'), Buffer.from([0xc0, 0xaf]), Buffer.from('","sql":"SELECT 1"}')]),
    ],
    [
      'an encoded surrogate',
      Buffer.concat([
        Buffer.from('{"db":"keeper","sql":"SELECT \''),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('\'"}'),
      ]),
    ],
    [
      'a truncated sequence',
      Buffer.concat([Buffer.from('{"db":"keeper","sql":"SELECT 1 -- '), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
    ],
    [
      'a truncated sequence at the very end',
      Buffer.concat([Buffer.from('{"db":"keeper","sql":"SELECT 1"} '), Buffer.from([0xe2, 0x82])]),
    ],
  ];
  for (const [label, raw] of cases)
    isError(tt, await server.request('POST', '/exec', { rawBody: raw, headers: json }), 400, 1015, label);
  await aftermath(tt);
});

t.test('rejects missing, extra and doubled parameters with 1007', async (tt) => {
  isError(tt, await exec('victim', 'SELECT :a, :b', { params: { ':a': 1 } }), 400, 1007, 'a missing named parameter');
  isError(tt, await exec('victim', 'SELECT ?, ?', { params: [1] }), 400, 1007, 'a missing positional parameter');
  isError(tt, await exec('victim', 'SELECT ?', { params: [1, 2] }), 400, 1007, 'an extra positional parameter');
  isError(
    tt,
    await exec('victim', 'SELECT :a', { params: { ':a': 1, ':b': 2 } }),
    400,
    1007,
    'an extra named parameter',
  );
  isError(
    tt,
    await exec('victim', 'SELECT 1', { params: { a: 1 } }),
    400,
    1007,
    'a parameter for a statement that has none',
  );
  isError(
    tt,
    await exec('victim', 'SELECT :a', { params: { ':a': 1, a: 2 } }),
    400,
    1007,
    'a parameter given twice, with and without its sigil',
  );
  isError(
    tt,
    await exec('victim', 'INSERT INTO t VALUES (:a)', { params: { ':a': { nested: 1 } } }),
    400,
    1007,
    'an object as a value',
  );
  isError(tt, await exec('victim', 'INSERT INTO t VALUES (?)', { params: [[1]] }), 400, 1007, 'an array as a value');
  const rows = await exec('victim', 'SELECT count(*) FROM t');
  tt.strictSame(rows.body?.results?.[0]?.rows, [[0]], 'nothing was inserted');
  await aftermath(tt);
});

t.test('requires the token in a header, not in the query string', async (tt) => {
  const dir = scratchDir(tt);
  const own = await startServer(['-dir', path.join(dir, 'data'), '-token', 's3cret-token'], { cwd: dir });
  tt.teardown(async () => {
    await own.stop();
  });
  isError(tt, await own.get('/dbs?token=s3cret-token'), 401, 1012, '?token=');
  isError(tt, await own.get('/dbs?X-Service-Token=s3cret-token'), 401, 1012, '?X-Service-Token=');
  isError(tt, await own.get('/dbs?access_token=s3cret-token'), 401, 1012, '?access_token=');
  isError(
    tt,
    await own.request('POST', '/dbs?token=s3cret-token', { body: { db: 'sneaky' } }),
    401,
    1012,
    'POST /dbs ?token=',
  );
  isError(
    tt,
    await own.request('POST', '/exec?token=s3cret-token', { body: { sql: 'CREATE DATABASE sneaky' } }),
    401,
    1012,
    'POST /exec ?token=',
  );
  isError(tt, await own.get('/dbs', { 'X-Service-Token': 's3cret-tokeN' }), 401, 1012, 'a wrong token');
  isError(
    tt,
    await own.get('/dbs', { Authorization: 'Basic s3cret-token' }),
    401,
    1012,
    'the token as Basic credentials',
  );
  const ok = await own.get('/dbs', { 'X-Service-Token': 's3cret-token' });
  tt.equal(ok.status, 200, 'the header works');
  tt.strictSame(ok.body?.dbs, [], 'no database was created by the refused requests');
  tt.equal((await own.get('/dbs', { Authorization: 'Bearer s3cret-token' })).status, 200, 'Bearer works');
  tt.equal((await own.get('/health', { 'X-Service-Token': 's3cret-token' })).status, 200, 'that server is healthy');
  await aftermath(tt);
});

// ── Size and complexity ──────────────────────────────────────────────────────────

t.test('refuses a body over the limit with 413', async (tt) => {
  const sql = `SELECT '${'x'.repeat(1024 * 1024 + 10)}'`;
  isError(tt, await server.request('POST', '/exec', { body: { db: 'keeper', sql } }), 413, 6002, 'a 1 MiB string');
  const padded = JSON.stringify({ db: 'keeper', sql: 'DELETE FROM rows' }) + ' '.repeat(1536 * 1024);
  isError(
    tt,
    await server.request('POST', '/exec', { rawBody: padded, headers: { 'content-type': 'application/json' } }),
    413,
    6002,
    'a small request padded with whitespace',
  );
  await aftermath(tt);
});

t.test('answers huge and deeply nested SQL with an engine error, not a crash', async (tt) => {
  const huge = `SELECT 1${'+1'.repeat(250_000)}`;
  tt.ok(huge.length > 490_000 && huge.length < 1024 * 1024 - 100, `the SQL is ${huge.length} bytes`);
  const hugeReply = await exec('victim', huge);
  isError(tt, hugeReply, 400, [6005, 1001, 6004], '500 KB of 1+1+1…');

  const parens = `SELECT ${'('.repeat(100_000)}1${')'.repeat(100_000)}`;
  isError(tt, await exec('victim', parens), 400, [6005, 1001], '100000 nested parentheses');

  const subqueries = `${'SELECT ('.repeat(5000)}SELECT 1${')'.repeat(5000)}`;
  isError(tt, await exec('victim', subqueries), 400, [6005, 1001], '5000 nested subqueries');

  const cases = `SELECT ${'CASE WHEN 1 THEN '.repeat(20_000)}1${' END'.repeat(20_000)}`;
  isError(tt, await exec('victim', cases), 400, [6005, 1001], '20000 nested CASE');

  const unclosed = `SELECT ${'('.repeat(200_000)}`;
  isError(tt, await exec('victim', unclosed), 400, [6005, 1001], 'only opening parentheses');

  const wide = `SELECT ${Array.from({ length: 40_000 }, (_, i) => String(i)).join(', ')}`;
  const wideReply = await exec('victim', wide);
  tt.ok(
    wideReply.status === 400 && [6005, 1001, 6004].includes(wideReply.body?.code),
    `40000 result columns: ${wideReply.status} ${wideReply.body?.code}`,
  );

  const withs = `WITH ${Array.from({ length: 3000 }, (_, i) => `c${i} AS (SELECT ${i === 0 ? 1 : `x FROM c${i - 1}`} AS x)`).join(', ')} SELECT x FROM c2999`;
  const withReply = await exec('victim', withs);
  tt.ok(
    [200, 400].includes(withReply.status),
    `3000 chained CTEs: ${withReply.status} ${withReply.text.slice(0, 120)}`,
  );

  for (let i = 0; i < 3; i++)
    tt.equal((await exec('victim', 'SELECT 1')).status, 200, `a plain query works afterwards (${i})`);
  const metrics = await server.get('/metrics');
  tt.equal(metrics.body?.errors_total, 0, 'no request was answered with a 5xx');
  await aftermath(tt);
});

t.test('refuses more statements than -max-statements with 6001', async (tt) => {
  const sql = Array.from({ length: MAX_STATEMENTS + 1 }, (_, i) => `INSERT INTO t VALUES (${i})`).join('; ');
  isError(tt, await exec('victim', sql), 400, 6001, `${MAX_STATEMENTS + 1} statements in one sql`);
  const statements = Array.from({ length: MAX_STATEMENTS + 1 }, (_, i) => ({ sql: `INSERT INTO t VALUES (${i})` }));
  isError(
    tt,
    await server.request('POST', '/exec', { body: { db: 'victim', statements } }),
    400,
    6001,
    `${MAX_STATEMENTS + 1} entries in statements`,
  );
  const exactly = await exec(
    'victim',
    Array.from({ length: MAX_STATEMENTS }, (_, i) => `INSERT INTO t VALUES (${i})`).join('; '),
  );
  tt.equal(exactly.status, 200, `${MAX_STATEMENTS} statements are fine`);
  const rows = await exec('victim', 'SELECT count(*) FROM t');
  tt.strictSame(rows.body?.results?.[0]?.rows, [[MAX_STATEMENTS]], 'only the accepted batch was applied');
  await exec('victim', 'DELETE FROM t');
  await aftermath(tt);
});

t.test('keeps triggers and views from reaching outside, looping or running away', async (tt) => {
  tt.equal((await server.post('/dbs', { db: 'triggers' })).status, 201);
  await exec('triggers', 'CREATE TABLE a (v INT); CREATE TABLE b (v INT); CREATE TABLE c (v INT)');
  const file = `/tmp/${newToken()}.db`;
  for (const sql of [
    `CREATE TRIGGER x AFTER INSERT ON a BEGIN ATTACH '${file}' AS x; END`,
    `CREATE TRIGGER x AFTER INSERT ON a BEGIN VACUUM INTO '${file}'; END`,
    'CREATE TRIGGER x AFTER INSERT ON a BEGIN PRAGMA writable_schema = 1; END',
    `CREATE VIEW x AS SELECT * FROM a; ATTACH '${file}' AS y`,
  ]) {
    tt.equal((await exec('triggers', sql)).status, 400, sql);
  }
  await exec('triggers', "CREATE TRIGGER ext AFTER INSERT ON c BEGIN SELECT load_extension('/tmp/nothing'); END");
  tt.equal(
    (await exec('triggers', 'INSERT INTO c VALUES (1)')).status,
    400,
    'load_extension() in a trigger is refused when it fires',
  );
  await exec(
    'triggers',
    'CREATE TRIGGER ab AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.v + 1); END; CREATE TRIGGER ba AFTER INSERT ON b BEGIN INSERT INTO a VALUES (new.v + 1); END',
  );
  const pingPong = await exec(
    'triggers',
    'INSERT INTO a VALUES (1); SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b)',
  );
  tt.strictSame(
    pingPong.body?.results?.[1]?.rows,
    [[2, 1]],
    'two triggers firing each other stop: SQLite never fires a trigger already running',
  );
  await exec(
    'triggers',
    'CREATE TRIGGER forever AFTER INSERT ON c BEGIN SELECT (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n); END; DROP TRIGGER ext',
  );
  isError(
    tt,
    await exec('triggers', 'INSERT INTO c VALUES (2)'),
    400,
    6007,
    'a trigger that never ends is stopped at -query-timeout',
  );
  tt.strictSame(
    (await exec('triggers', 'SELECT count(*) FROM c')).body?.results?.[0]?.rows,
    [[0]],
    'and its insert was rolled back',
  );
  await exec(
    'triggers',
    'CREATE VIEW endless AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n',
  );
  const listed = await server.get('/tables?db=triggers');
  tt.equal(listed.status, 200, '/tables describes a view that never ends without reading it');
  tt.strictSame(
    listed.body?.tables
      ?.find((table: { name: string }) => table.name === 'endless')
      ?.columns?.map((column: { name: string }) => column.name),
    ['x'],
  );
  isError(
    tt,
    await server.get('/rows?db=triggers&table=endless'),
    400,
    6007,
    '/rows of a view that never ends is stopped at -query-timeout',
  );
  await aftermath(tt);
});

t.test('handles 2000 empty statements', async (tt) => {
  const empties = await exec('victim', ';'.repeat(2000));
  tt.ok(
    empties.status === 200 || (empties.status === 400 && empties.body?.code === 1005),
    `only semicolons: ${empties.status} ${empties.text.slice(0, 200)}`,
  );
  const spaced = await exec('victim', ' ; -- x\n ; /* */ ;'.repeat(700));
  tt.ok(
    spaced.status === 200 || (spaced.status === 400 && spaced.body?.code === 1005),
    `semicolons, spaces and comments: ${spaced.status}`,
  );
  const withOne = await exec('victim', `${';'.repeat(2000)}SELECT 5${';'.repeat(2000)}`);
  tt.equal(withOne.status, 200, `one statement among 4000 semicolons: ${withOne.text.slice(0, 200)}`);
  tt.strictSame(withOne.body?.results, [{ columns: ['5'], rows: [[5]] }], 'just that statement ran');
  await aftermath(tt);
});

t.test('rejects NUL characters in SQL without running what follows', async (tt) => {
  const tok = newToken();
  const hidden = await exec('victim', `SELECT 1\u0000; ATTACH '/tmp/${tok}.db' AS y`);
  tt.equal(hidden.status, 400, `a NUL before an ATTACH: ${hidden.text.slice(0, 200)}`);
  const inString = await exec('victim', "SELECT 'a\u0000b'");
  tt.ok([200, 400].includes(inString.status), `a NUL inside a string: ${inString.status}`);
  const inInsert = await exec('victim', `INSERT INTO t VALUES (1)\u0000; ATTACH '/tmp/${tok}.db' AS y`);
  tt.equal(inInsert.status, 400, 'a NUL after an INSERT');
  const rows = await exec('victim', 'SELECT count(*) FROM t');
  tt.strictSame(rows.body?.results?.[0]?.rows, [[0]], 'nothing was inserted');
  tt.notOk(fs.existsSync(`/tmp/${tok}.db`));
  await aftermath(tt);
});
