/**
 * Introspection over HTTP, as every SQLite course teaches it: the read-only
 * PRAGMAs (table_info, table_xinfo, index_list, index_info, index_xinfo,
 * foreign_key_list, foreign_key_check, integrity_check, quick_check,
 * foreign_keys) and their pragma_* table-valued forms, EXPLAIN and EXPLAIN
 * QUERY PLAN, each answered with the columns and values SQLite gives
 * (better-sqlite3 opened directly on a copy of the same file); the service's
 * own tables never shown; what stays refused refused with its true reason;
 * the same inside a session; EXPLAIN of a write a read that takes no write
 * lock and changes nothing; and replay -verify equal at the end.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { isError } from './helpers/assertions';
import { importChinook } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';

t.setTimeout(120_000);

const dir = scratchDir(t);
const DATA = path.join(dir, 'data');
const JOURNAL = path.join(dir, 'journal');
let server: TestServer;

t.before(async () => {
  fs.mkdirSync(DATA);
  server = await startServer(['-dir', DATA, '-log-file', JOURNAL, '-log-level', 'all'], { cwd: dir });
  await importChinook(server);
});
t.teardown(async () => {
  await server?.stop();
});

interface Answer {
  columns: string[];
  rows: unknown[][];
}

/** Chinook as the server holds it, copied into memory and opened by better-sqlite3 itself. */
function directCopy(db = 'chinook'): Database.Database {
  const live = new Database(path.join(DATA, `${db}.db`), { readonly: true, fileMustExist: true });
  try {
    const image = live.serialize();
    // Bytes 18 and 19 of the header say WAL; a database in memory keeps its journal in memory.
    image[18] = 1;
    image[19] = 1;
    return new Database(image);
  } finally {
    live.close();
  }
}

function sqliteAnswer(db: Database.Database, sql: string): Answer {
  const statement = db.prepare(sql);
  return { columns: statement.columns().map((column) => column.name), rows: statement.raw(true).all() as unknown[][] };
}

async function answerOf(tt: Test, sql: string, db = 'chinook'): Promise<Answer> {
  const reply = await server.exec(db, sql);
  tt.equal(reply.status, 200, `${sql}: ${reply.text.slice(0, 300)}`);
  const result = reply.body?.results?.[0] as Answer | undefined;
  return { columns: result?.columns ?? [], rows: result?.rows ?? [] };
}

/** The rows of the service's own objects, which SQLite's copy shows and the service must not. */
function withoutInternal(answer: Answer): Answer {
  return { ...answer, rows: answer.rows.filter((row) => !JSON.stringify(row).includes('_sqlscribe')) };
}

const PRAGMA_STATEMENTS = [
  'PRAGMA table_info(Album)',
  'PRAGMA table_info("Invoice")',
  "PRAGMA table_info('Track')",
  'PRAGMA table_info = Genre',
  'pragma main.table_info([Customer])',
  'PRAGMA table_xinfo(Track)',
  'PRAGMA index_list(Invoice)',
  'PRAGMA index_list(PlaylistTrack)',
  'PRAGMA index_info(IFK_InvoiceCustomerId)',
  'PRAGMA index_info(sqlite_autoindex_PlaylistTrack_1)',
  'PRAGMA index_xinfo(IFK_TrackAlbumId)',
  'PRAGMA foreign_key_list(InvoiceLine)',
  'PRAGMA foreign_key_list(Track)',
  'PRAGMA foreign_key_check',
  'PRAGMA foreign_key_check(Invoice)',
  'PRAGMA integrity_check',
  'PRAGMA integrity_check(5)',
  'PRAGMA main.integrity_check(Track)',
  'PRAGMA quick_check',
  'PRAGMA quick_check(Album)',
  'PRAGMA foreign_keys',
  'PRAGMA table_info(NoSuchTable)',
];

const PRAGMA_SELECTS = [
  "SELECT * FROM pragma_table_info('Album')",
  "SELECT name, type, pk FROM pragma_table_xinfo('Track') WHERE pk = 0 ORDER BY cid",
  "SELECT * FROM pragma_index_list('Track') ORDER BY name",
  "SELECT * FROM pragma_index_info('IFK_TrackGenreId')",
  "SELECT * FROM pragma_index_xinfo('IFK_TrackGenreId')",
  "SELECT * FROM pragma_foreign_key_list('PlaylistTrack')",
  'SELECT * FROM pragma_foreign_key_check',
  "SELECT * FROM pragma_foreign_key_check('Track')",
  'SELECT * FROM pragma_integrity_check',
  "SELECT * FROM pragma_quick_check('Invoice')",
  'SELECT * FROM pragma_foreign_keys',
  "SELECT count(*) FROM pragma_table_info('Album')",
  "SELECT (SELECT group_concat(name) FROM pragma_table_info('Album'))",
  "SELECT * FROM main.pragma_table_info('Album', 'main')",
  "SELECT p.name FROM pragma_table_info('Album') AS p JOIN pragma_table_info('Artist') q USING (name)",
  "SELECT l.name, i.name FROM pragma_index_list('Track') l JOIN pragma_index_info(l.name) i ORDER BY 1, 2",
  'SELECT t.name, f."table", f."from" FROM sqlite_schema t, pragma_foreign_key_list(t.name) f WHERE t.type = \'table\' ORDER BY 1, 2, 3',
];

t.test('each introspection PRAGMA answers the columns and values SQLite does', async (tt) => {
  const direct = directCopy();
  tt.teardown(() => direct.close());
  for (const sql of PRAGMA_STATEMENTS) tt.strictSame(await answerOf(tt, sql), sqliteAnswer(direct, sql), sql);
});

t.test('each pragma_* table-valued form answers as SQLite does, joins included', async (tt) => {
  const direct = directCopy();
  tt.teardown(() => direct.close());
  for (const sql of PRAGMA_SELECTS) tt.strictSame(await answerOf(tt, sql), sqliteAnswer(direct, sql), sql);
  // The one of the issue: every table's columns, read through the schema table (which hides the service's rows).
  const joined = 'SELECT m.name, p.* FROM sqlite_schema m JOIN pragma_table_info(m.name) p ORDER BY m.name, p.cid';
  const got = await answerOf(tt, joined);
  tt.strictSame(got, withoutInternal(sqliteAnswer(direct, joined)), joined);
  tt.ok(got.rows.length > 60, `${got.rows.length} columns listed`);
  const many = await server.exec('chinook', PRAGMA_STATEMENTS.join(';\n'));
  tt.equal(many.status, 200, 'the pragmas as one batch');
  tt.equal(many.body?.results?.length, PRAGMA_STATEMENTS.length);
});

const PLANNED = [
  'SELECT * FROM Track WHERE AlbumId = 5',
  "SELECT * FROM Track WHERE Name = 'Balls to the Wall'",
  "SELECT a.Title, count(*) FROM Album a JOIN Track t ON t.AlbumId = a.AlbumId WHERE a.Title LIKE 'B%' GROUP BY a.Title ORDER BY 2 DESC",
  'SELECT c.LastName FROM Customer c LEFT JOIN Invoice i ON i.CustomerId = c.CustomerId WHERE i.InvoiceId IS NULL',
  'SELECT * FROM Invoice WHERE Total > (SELECT avg(Total) FROM Invoice)',
  'SELECT DISTINCT BillingCountry FROM Invoice ORDER BY 1',
  'WITH big AS (SELECT CustomerId, sum(Total) s FROM Invoice GROUP BY 1) SELECT * FROM big WHERE s > 40',
  'UPDATE Track SET UnitPrice = UnitPrice * 2 WHERE GenreId = 1',
  "INSERT INTO Genre (Name) VALUES ('Zydeco')",
  'DELETE FROM InvoiceLine WHERE InvoiceId IN (SELECT InvoiceId FROM Invoice WHERE Total < 1)',
  "SELECT * FROM pragma_table_info('Album')",
];

t.test('EXPLAIN QUERY PLAN and EXPLAIN answer SQLite rows, and never run the statement', async (tt) => {
  const direct = directCopy();
  tt.teardown(() => direct.close());
  for (const sql of PLANNED) {
    const plan = `EXPLAIN QUERY PLAN ${sql}`;
    const got = await answerOf(tt, plan);
    tt.strictSame(got.columns, ['id', 'parent', 'notused', 'detail'], `${plan}: columns`);
    tt.strictSame(got, sqliteAnswer(direct, plan), plan);
  }
  for (const sql of [
    'SELECT 1',
    'SELECT Name FROM Artist WHERE ArtistId = 3',
    'DELETE FROM Genre WHERE GenreId = 25',
  ]) {
    const code = `EXPLAIN ${sql}`;
    const got = await answerOf(tt, code);
    tt.strictSame(got.columns, ['addr', 'opcode', 'p1', 'p2', 'p3', 'p4', 'p5', 'comment'], `${code}: columns`);
    tt.strictSame(got, sqliteAnswer(direct, code), code);
  }
  tt.strictSame(
    await answerOf(tt, 'explain query plan pragma table_info(Album)'),
    sqliteAnswer(direct, 'explain query plan pragma table_info(Album)'),
  );

  const before = await answerOf(tt, 'SELECT count(*) FROM Track');
  const explained = await server.exec('chinook', 'EXPLAIN DELETE FROM Track; EXPLAIN QUERY PLAN DROP TABLE Genre');
  tt.equal(explained.status, 200, explained.text.slice(0, 200));
  tt.strictSame(await answerOf(tt, 'SELECT count(*) FROM Track'), before, 'EXPLAIN DELETE deleted nothing');
  tt.equal((await server.exec('chinook', 'SELECT count(*) FROM Genre')).status, 200, 'EXPLAIN DROP dropped nothing');
  const entry = journalEntries().find((line) => String(line.sql).startsWith('EXPLAIN DELETE FROM Track'));
  tt.equal(entry?.readonly, true, 'journaled as a read');
});

t.test('EXPLAIN of a write takes no write lock: it answers while a session holds one', async (tt) => {
  const begun = await server.post('/tx/begin', { db: 'chinook' });
  tt.equal(begun.status, 200, begun.text);
  const session = String(begun.body?.session);
  const held = await server.request('POST', '/exec', {
    body: { sql: "INSERT INTO Genre (Name) VALUES ('Held')" },
    headers: { 'X-Service-Session': session },
  });
  tt.equal(held.status, 200, 'the session holds the write lock');
  const started = Date.now();
  const explained = await server.exec('chinook', "EXPLAIN INSERT INTO Genre (Name) VALUES ('Other')");
  tt.equal(explained.status, 200, explained.text.slice(0, 200));
  tt.ok(Date.now() - started < 1500, `answered at once (${Date.now() - started} ms), not after the lock timeout`);
  tt.equal((await server.post(`/tx/rollback?session=${session}`)).status, 200);
});

/** Every entry of the active journal file, parsed (reads are in it: the server runs with -log-level all). */
function journalEntries(): Array<Record<string, unknown>> {
  return fs
    .readFileSync(JOURNAL, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"seq":'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** [sql, code, words the reason must hold] */
const REFUSED: Array<[string, number, RegExp]> = [
  ["ATTACH 'x.db' AS x", 1003, /ATTACH is not allowed: it would reach outside the database/],
  ['DETACH x', 1003, /DETACH/],
  ["VACUUM INTO '/tmp/introspection-copy.db'", 1003, /VACUUM/],
  ["SELECT load_extension('x')", 1003, /load_extension/],
  ['PRAGMA database_list', 1003, /PRAGMA database_list \(it shows the server's file paths\)/],
  ['SELECT * FROM pragma_database_list', 1003, /file paths/],
  ['PRAGMA journal_mode = DELETE', 1003, /PRAGMA journal_mode \(/],
  ['PRAGMA main.journal_mode', 1003, /journal_mode/],
  ['PRAGMA synchronous = OFF', 1003, /synchronous/],
  ['PRAGMA cache_size = 10', 1003, /cache_size \(.*process/],
  ['PRAGMA mmap_size = 268435456', 1003, /mmap_size/],
  ["PRAGMA temp_store_directory = '/tmp'", 1003, /temp_store_directory/],
  ['PRAGMA writable_schema = 1', 1003, /writable_schema \(.*schema table/],
  ['PRAGMA table_list', 1003, /service's own tables/],
  ['PRAGMA foreign_keys = OFF', 1101, /PRAGMA foreign_keys cannot be set.*enforces foreign keys/],
  ['PRAGMA foreign_keys = ON', 1101, /PRAGMA foreign_keys cannot be set/],
  ['PRAGMA recursive_triggers = 1', 1101, /recursive_triggers cannot be set/],
  ['PRAGMA user_version = 7', 1101, /user_version cannot be set/],
  ['PRAGMA user_version', 1100, /PRAGMA user_version is not answered.*table_info/],
  ['PRAGMA no_such_pragma', 1100, /no_such_pragma/],
  ['SELECT * FROM pragma_page_count', 1100, /page_count/],
  ['PRAGMA temp.table_info(Album)', 1102, /temp.*only main/],
  ['PRAGMA other.index_list(Album)', 1102, /other/],
  ["SELECT * FROM pragma_table_info('Album', 'temp')", 1102, /temp/],
  ["SELECT * FROM temp.pragma_table_info('Album')", 1102, /temp/],
  ["SELECT * FROM pragma_table_info WHERE arg = 'Album'", 1103, /arguments in parentheses/],
  ["SELECT * FROM pragma_table_info('Album') p WHERE p.schema = 'temp'", 1103, /arguments in parentheses/],
  ["CREATE VIEW cols AS SELECT * FROM pragma_table_info('Album')", 1103, /view or trigger/],
  ["SELECT 1 WHERE 'x' IN pragma_table_info('Album')", 1103, /FROM list/],
  ['PRAGMA foreign_keys(1)', 1101, /foreign_keys cannot be set/],
  ['PRAGMA index_info', 1103, /PRAGMA index_info takes an index name/],
  ['PRAGMA table_info(1)', 1103, /table name/],
  ['EXPLAIN CREATE DATABASE other', 1104, /CREATE DATABASE/],
  ['EXPLAIN INTEGRITY CHECK', 1104, /INTEGRITY CHECK/],
  ["EXPLAIN ATTACH 'x.db' AS x", 1003, /ATTACH is not allowed/],
  ['EXPLAIN QUERY PLAN BEGIN', 1004, /BEGIN/],
  ['EXPLAIN CREATE TABLE c AS SELECT 1', 1002, /AS SELECT/],
  ['EXPLAIN PRAGMA journal_mode = DELETE', 1003, /journal_mode/],
  ['EXPLAIN EXPLAIN SELECT 1', 1001, /EXPLAIN/],
];

t.test('what stays refused says its true reason', async (tt) => {
  for (const [sql, code, reason] of REFUSED) {
    const reply = await server.exec('chinook', sql);
    isError(tt, reply, 400, code, sql);
    tt.match(String(reply.body?.error), reason, `${sql}: ${reply.body?.error}`);
  }
  tt.notOk(fs.existsSync('/tmp/introspection-copy.db'), 'no VACUUM INTO copy');
});

const INTERNAL_PROBES = [
  'PRAGMA table_info(_sqlscribe_meta)',
  "PRAGMA table_info('_SQLSCRIBE_META')",
  'PRAGMA main.table_xinfo("_sqlscribe_meta")',
  'PRAGMA index_list(_sqlscribe_meta)',
  'PRAGMA index_info(sqlite_autoindex__sqlscribe_meta_1)',
  'PRAGMA index_xinfo([SQLITE_AUTOINDEX__SQLSCRIBE_META_1])',
  'PRAGMA foreign_key_list(_sqlscribe_meta)',
  'PRAGMA foreign_key_check(_sqlscribe_meta)',
  'PRAGMA integrity_check(_sqlscribe_meta)',
  "SELECT * FROM pragma_table_info('_sqlscribe_meta')",
  "SELECT * FROM pragma_table_info('_sql' || 'scribe_meta')",
  "SELECT * FROM pragma_index_xinfo(lower('SQLITE_AUTOINDEX__SQLSCRIBE_META_1'))",
  "SELECT * FROM pragma_table_info((SELECT '_sqlscribe' || '_meta'))",
  'SELECT p.* FROM probe JOIN pragma_table_info(probe.n) p',
  "EXPLAIN SELECT * FROM pragma_table_info('_sqlscribe' || '_meta')",
];

t.test("the service's own tables are never revealed", async (tt) => {
  tt.equal(
    (await server.exec('chinook', "CREATE TABLE probe (n TEXT); INSERT INTO probe VALUES ('_sqlscribe_meta')")).status,
    200,
  );
  for (const sql of INTERNAL_PROBES) {
    const reply = await server.exec('chinook', sql);
    // EXPLAIN only compiles: the guard that refuses the name runs when the statement runs, and the bytecode names nothing internal.
    if (sql.startsWith('EXPLAIN')) {
      tt.equal(reply.status, 200, sql);
      tt.notMatch(reply.text.toLowerCase(), /_sqlscribe_meta|key|value/, `${sql}: nothing of the table`);
      continue;
    }
    isError(tt, reply, 400, 1003, sql);
    tt.notMatch(reply.text, /"key"|"value"|INTEGER NOT NULL/, `${sql}: no column of the table`);
  }
  for (const sql of [
    'PRAGMA foreign_key_check',
    'PRAGMA integrity_check',
    'SELECT m.name, p.* FROM sqlite_schema m JOIN pragma_table_info(m.name) p',
    'SELECT m.name, p.* FROM sqlite_schema m JOIN pragma_index_list(m.name) p',
    'SELECT i.* FROM sqlite_schema m, pragma_index_list(m.name) l, pragma_index_xinfo(l.name) i',
  ]) {
    const reply = await server.exec('chinook', sql);
    tt.equal(reply.status, 200, sql);
    tt.notMatch(reply.text.toLowerCase(), /_sqlscribe/, `${sql}: nothing internal`);
  }
  await server.exec('chinook', 'DROP TABLE probe');
});

t.test('introspection inside a session sees what the session made', async (tt) => {
  const begun = await server.post('/tx/begin', { db: 'chinook' });
  tt.equal(begun.status, 200, begun.text);
  const headers = { 'X-Service-Session': String(begun.body?.session) };
  const inSession = (sql: string): Promise<Reply> => server.request('POST', '/exec', { body: { sql }, headers });
  tt.equal(
    (await inSession('CREATE TABLE draft (id INT PRIMARY KEY, album INT REFERENCES Album (AlbumId))')).status,
    200,
  );
  const reply = await inSession(
    "PRAGMA table_info(draft); SELECT * FROM pragma_foreign_key_list('draft'); EXPLAIN QUERY PLAN SELECT * FROM draft WHERE id = 1; PRAGMA foreign_key_check(draft)",
  );
  tt.equal(reply.status, 200, reply.text.slice(0, 300));
  const results = reply.body?.results as Answer[];
  tt.strictSame(
    results[0]?.rows.map((row) => row[1]),
    ['id', 'album'],
    'table_info lists the uncommitted table',
  );
  tt.equal(results[1]?.rows[0]?.[2], 'Album', 'foreign_key_list names its parent');
  tt.match(String(results[2]?.rows[0]?.[3]), /SEARCH draft USING/, 'the plan searches by key');
  tt.strictSame(results[3]?.rows, [], 'no violation');
  const outside = await server.exec('chinook', 'PRAGMA table_info(draft)');
  tt.strictSame(outside.body?.results?.[0]?.rows, [], 'outside the session the table does not exist yet');
  tt.equal((await server.post(`/tx/rollback?session=${headers['X-Service-Session']}`)).status, 200);
});

t.test('foreign_key_check lists the violations of a file served as it is', async (tt) => {
  const own = scratchDir(tt);
  const file = path.join(own, 'broken.db');
  const made = new Database(file);
  made.pragma('foreign_keys = OFF');
  made.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id));
    INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1, 1), (2, 7), (3, 9);`);
  made.close();
  const single = await startServer(['-db', file], { cwd: own });
  tt.teardown(() => single.stop());
  const direct = new Database(file, { readonly: true });
  tt.teardown(() => direct.close());
  for (const sql of [
    'PRAGMA foreign_key_check',
    'PRAGMA foreign_key_check(child)',
    'SELECT * FROM pragma_foreign_key_check',
  ]) {
    const reply = await single.exec(undefined, sql);
    tt.equal(reply.status, 200, `${sql}: ${reply.text.slice(0, 200)}`);
    const got = reply.body?.results?.[0] as Answer;
    tt.strictSame({ columns: got.columns, rows: got.rows }, sqliteAnswer(direct, sql), sql);
    tt.equal(got.rows.length, 2, `${sql}: two violations`);
  }
});

t.test('a write that reads introspection replays equal', async (tt) => {
  const write = await server.exec(
    'chinook',
    "CREATE TABLE columns_of (tbl TEXT, col TEXT, type TEXT); INSERT INTO columns_of SELECT m.name, p.name, p.type FROM sqlite_schema m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'; PRAGMA table_info(columns_of)",
  );
  tt.equal(write.status, 200, write.text.slice(0, 300));
  const count = await answerOf(tt, 'SELECT count(*) FROM columns_of');
  tt.ok(Number(count.rows[0]?.[0]) > 60, 'every column was copied');
  tt.notMatch(JSON.stringify(await answerOf(tt, 'SELECT * FROM columns_of')), /_sqlscribe/, 'none of the service');
});

t.test('replay -verify equals the live data', async (tt) => {
  tt.equal(await server.stop(), 0, 'clean stop');
  const replayed = await runReplay(['-log-file', JOURNAL, '-out', path.join(dir, 'out'), '-verify', DATA], dir);
  tt.equal(replayed.code, 0, `replay -verify exits 0 (${replayed.stderr.slice(0, 500)})`);
});
