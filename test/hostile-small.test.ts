/**
 * Small hostile cases, spoken over HTTP to a real server: each
 * test reproduces one defect a hostile student (or a hostile client) found.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runReplay, serverPerFile, startServer, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const root = scratchDir(t);
let server: TestServer;
serverPerFile(t, root, (started) => (server = started));

t.before(async () => {
  const created = await server.post('/dbs', { db: 'deep' });
  if (created.status !== 201) throw new Error(`POST /dbs deep: ${created.text}`);
});

t.test('refuses 500 KB of nested parentheses after one scan, before the tokenizer reads them', async (tt) => {
  const parens = `SELECT ${'('.repeat(250_000)}1${')'.repeat(250_000)}`;
  const started = performance.now();
  const replies = await Promise.all(Array.from({ length: 8 }, () => server.exec('deep', parens)));
  tt.comment(`eight at once answered in ${(performance.now() - started).toFixed(0)} ms`);
  for (const reply of replies) {
    isError(tt, reply, 400, 6005, '250000 nested parentheses');
    tt.match(reply.body?.error, /parentheses nested 250000 deep \(at most 1000\)/, 'says how deep, and the bound');
    tt.equal(reply.body?.statement, 0, 'names the statement');
  }
  const second = await server.request('POST', '/exec', {
    body: { db: 'deep', statements: [{ sql: 'SELECT 1' }, { sql: `SELECT 2; ${parens}` }] },
  });
  isError(tt, second, 400, 6005, 'the deep statement third in its batch');
  tt.equal(second.body?.statement, 2, 'its index counts the statements before it');

  const bound = `SELECT ${'('.repeat(1000)}1${')'.repeat(1000)}`;
  const atBound = await server.exec('deep', bound);
  tt.equal(atBound.status, 200, `1000 deep still runs: ${atBound.text.slice(0, 200)}`);
  const many = '('.repeat(5000);
  const created = await server.exec('deep', `CREATE TABLE "${many}x" (a INT)`);
  tt.equal(created.status, 200, `5000 in a quoted name: ${created.text.slice(0, 200)}`);
  const inStrings = await server.exec('deep', `SELECT '${many}' AS s /* ${many} */ FROM "${many}x" -- ${many}`);
  tt.equal(inStrings.status, 200, `in strings, names and comments they do not count: ${inStrings.text.slice(0, 200)}`);
  tt.equal((await server.get('/health')).status, 200, 'health answers');
});

t.test('a TEXT answer equal to a BLOB’s base64 text is not the BLOB', async (tt) => {
  const made = await server.post('/dbs', { db: 'blobs' });
  tt.equal(made.status, 201, made.text);
  const setup = await server.exec(
    'blobs',
    "CREATE TABLE b (id INT PRIMARY KEY, v BLOB); INSERT INTO b VALUES (1, x'CAFE')",
  );
  tt.equal(setup.status, 200, setup.text);
  const exercise = await server.post('/exercises', {
    id: 'the-blob',
    set: 'small',
    position: 1,
    title: 'The blob',
    prompt: 'Read the blob of row 1.',
    template: 'blobs',
    solution: 'SELECT v FROM b WHERE id = 1',
    showRows: true,
  });
  tt.equal(exercise.status, 201, exercise.text);
  const check = (sql: string) => server.post('/exercises/the-blob/check', { sql });
  const right = await check('SELECT v FROM b');
  tt.match(right.body, { ok: true, correct: true }, `the blob itself is right: ${right.text}`);
  const cast = await check("SELECT CAST(x'CAFE' AS BLOB)");
  tt.match(cast.body, { correct: true }, `the same bytes written as a literal are right: ${cast.text}`);
  const text = await check("SELECT 'yv4='");
  tt.equal(text.status, 200, text.text);
  tt.match(text.body, { ok: true, correct: false }, `its base64 as TEXT is wrong: ${text.text}`);
  tt.same(text.body?.feedback?.extraRow, ['yv4='], 'the extra row is the text');
  tt.same(text.body?.feedback?.missingRow, ['yv4='], 'the missing row is the blob, shown as /exec shows it');
  const other = await check("SELECT x'CAFF'");
  tt.match(other.body, { correct: false }, 'other bytes are wrong');
});

t.test('an answer that breaks the hidden check learns nothing of its SQL or its tables', async (tt) => {
  const made = await server.post('/dbs', { db: 'hidden' });
  tt.equal(made.status, 201, made.text);
  const setup = await server.exec(
    'hidden',
    'CREATE TABLE ledger_secret (id INT PRIMARY KEY, amount_hidden INT); INSERT INTO ledger_secret VALUES (1, 5)',
  );
  tt.equal(setup.status, 200, setup.text);
  const exercise = await server.post('/exercises', {
    id: 'raise',
    set: 'small',
    position: 2,
    title: 'Raise',
    prompt: 'Double every amount.',
    template: 'hidden',
    solution: 'UPDATE ledger_secret SET amount_hidden = amount_hidden * 2',
    check: 'SELECT id, amount_hidden AS amount FROM ledger_secret ORDER BY id -- check-mark-raise',
  });
  tt.equal(exercise.status, 201, exercise.text);
  const answers = [
    'ALTER TABLE ledger_secret RENAME TO t2',
    'ALTER TABLE ledger_secret RENAME COLUMN amount_hidden TO x',
    'DROP TABLE ledger_secret',
  ];
  for (const sql of answers) {
    const reply = await server.post('/exercises/raise/check', { sql });
    tt.equal(reply.status, 200, `${sql}: ${reply.text}`);
    tt.match(reply.body, { ok: true, correct: false, error: { code: 1091, class: 1 } }, `${sql}: the check's own code`);
    tt.notOk('statement' in (reply.body?.error ?? {}), `${sql}: no statement of the answer is blamed`);
    tt.notMatch(reply.text, /ledger_secret|amount_hidden|check-mark/, `${sql}: neither the check's SQL nor its names`);
  }
  // The teacher still reads the engine's own error in the journal's attempt.
  const attempts = fs
    .readFileSync(path.join(root, 'data', 'journal', 'statements.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.kind === 'attempt' && entry.exercise === 'raise');
  tt.match(
    attempts.find((entry) => entry.sql === answers[0]),
    { ok: false, error: /no such table: ledger_secret/ },
    'the journal keeps what failed',
  );
  // The answer's own error still names what the answer wrote.
  const own = await server.post('/exercises/raise/check', { sql: 'UPDATE nowhere SET a = 1' });
  tt.match(own.body?.error, { code: 2003, statement: 0 }, `an error of the answer is the answer's: ${own.text}`);
  tt.match(own.body?.error?.message, /nowhere/, 'and says what it names');
});

t.test('restore and history read a time alike: a real day, its zone given, the same words when refused', async (tt) => {
  // History is served without tokens only with -journal-feed.
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-journal-feed'], { cwd: dir });
  tt.teardown(() => server.stop());
  const made = await server.post('/dbs', { db: 'times' });
  tt.equal(made.status, 201, made.text);
  tt.equal((await server.exec('times', 'CREATE TABLE t (a INT)')).status, 200);
  const cases: Array<[string, RegExp]> = [
    ['2026-02-30T10:00:00Z', /2026-02-30 is not a day of the calendar/],
    ['2026-11-26T10:15:00', /without its zone/],
    ['2026-11-26', /without its zone/],
    ['2026-11-26T25:00:00Z', /not a time of day/],
  ];
  for (const [text, why] of cases) {
    const restore = await server.post('/dbs/times/restore', { to: text, dryRun: true });
    isError(tt, restore, 400, 1075, `restore to ${text}`);
    tt.match(restore.body?.error, why, `restore says why: ${restore.body?.error}`);
    const history = await server.get(`/dbs/times/history?since=${encodeURIComponent(text)}`);
    isError(tt, history, 400, 1070, `history since ${text}`);
    tt.match(history.body?.error, why, `history says why: ${history.body?.error}`);
    const words = (reply: typeof restore): string =>
      String(reply.body?.error).replace(/^.*?must be |^.*?expected /, '');
    tt.equal(words(restore), words(history), `the same words for ${text}`);
  }
  const ok = await server.post('/dbs/times/restore', { to: new Date().toISOString(), dryRun: true });
  tt.equal(ok.status, 200, `a time toISOString wrote is read: ${ok.text.slice(0, 200)}`);
});

t.test('a name with a character that folds to ASCII reaches no file', async (tt) => {
  isError(tt, await server.post('/dbs', { db: '\u212Aey' }), 400, 1011, 'the Kelvin sign K');
  tt.notOk(fs.existsSync(path.join(root, 'data', 'key.db')), 'no key.db was made');
  tt.equal((await server.post('/dbs', { db: 'key' })).status, 201, 'key itself is made');
  tt.equal((await server.exec('key', 'CREATE TABLE mine (a INT)')).status, 200);
  for (const name of ['\u212Aey', '\uFF4Bey', 'key\u00A0', '\u3000key'])
    isError(tt, await server.exec(name, 'SELECT * FROM mine'), 400, 1011, `${JSON.stringify(name)} does not read key`);
});

t.test('without tokens, history and solutions follow the journal feed: closed unless -journal-feed', async (tt) => {
  // The file's server runs without -token and without -journal-feed.
  isError(tt, await server.get('/journal'), 403, 1022, 'the journal itself is closed');
  isError(tt, await server.get('/dbs/deep/history'), 403, 1095, "a database's history too");
  const one = await server.get('/exercises/the-blob');
  tt.equal(one.status, 200, 'an exercise is still served');
  tt.notOk('solution' in (one.body?.exercise ?? {}), 'without its solution');
  const raise = await server.get('/exercises/raise');
  tt.notOk('check' in (raise.body?.exercise ?? {}), 'or its check');
  const listed = await server.get('/exercises?set=small');
  tt.ok(listed.body?.exercises?.length >= 2, 'the exercises are listed');
  tt.notMatch(listed.text, /"solution"|"check"|ledger_secret/, 'without any solution or check');
  tt.match(
    (await server.post('/exercises/the-blob/check', { sql: 'SELECT v FROM b' })).body,
    { correct: true },
    'answers are still checked',
  );

  tt.equal((await server.exec('deep', 'CREATE TABLE secret_plan (x INT)')).status, 200);
  const dry = await server.post('/dbs/deep/restore', { undo: 'last', dryRun: true });
  tt.equal(dry.status, 200, dry.text);
  tt.equal(dry.body?.undone?.entries?.[0]?.kind, 'exec', 'a dry run still lists the write it would undo');
  tt.equal(dry.body?.undone?.entries?.[0]?.sql, null, 'but not its SQL');
  tt.notMatch(dry.text, /secret_plan/, 'nowhere in the answer');

  const dir = scratchDir(tt);
  const open = await startServer(['-dir', path.join(dir, 'data'), '-journal-feed'], { cwd: dir });
  tt.teardown(() => open.stop());
  tt.equal((await open.post('/dbs', { db: 'tpl' })).status, 201);
  tt.equal((await open.exec('tpl', 'CREATE TABLE t (a INT)')).status, 200);
  const made = await open.post('/exercises', {
    id: 'open',
    set: 'small',
    position: 1,
    title: 'Open',
    prompt: 'Read t.',
    template: 'tpl',
    solution: 'SELECT a FROM t',
  });
  tt.equal(made.status, 201, made.text);
  tt.equal((await open.get('/dbs/tpl/history')).status, 200, 'with -journal-feed the history is served');
  const openDry = await open.post('/dbs/tpl/restore', { undo: 'last', dryRun: true });
  tt.equal(openDry.body?.undone?.entries?.[0]?.sql, 'CREATE TABLE t (a INT)', "and a dry run's SQL");
  tt.equal((await open.get('/exercises/open')).body?.exercise?.solution, 'SELECT a FROM t', 'and the solution');
});

t.test('replay -verify finds the live databases equal to the journal after all of it', async (tt) => {
  await server.stop();
  const data = path.join(root, 'data');
  const replay = await runReplay(
    ['-log-file', path.join(data, 'journal', 'statements.jsonl'), '-out', path.join(root, 'replayed'), '-verify', data],
    root,
  );
  tt.equal(replay.code, 0, `replay -verify: ${replay.stdout.slice(-300)} ${replay.stderr.slice(-300)}`);
});
