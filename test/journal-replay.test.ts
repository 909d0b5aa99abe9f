/**
 * The statement journal end to end, over the real server and
 * the real replay tool (`node dist/replay/cli.js`), both as child processes:
 *
 * - replay rebuilds every database exactly (`-verify` against the live data
 *   directory, and a value-by-value dump of our own, so that a lenient
 *   verifier cannot hide a difference), random() and the clock included;
 * - the lines: fields, crc, headers, failures with code and class, and what
 *   each level writes; alerting with `tail -F` on the class;
 * - rotation (plain and gzipped), point-in-time restore by seq and by time,
 *   -verify against a tampered file, -db;
 * - journals replay must refuse (level error, a gap, a corrupt middle line,
 *   another SQLite) and the one damage it tolerates (a torn last line);
 * - seq across restarts and rotations.
 *
 * Build first (`npx tsc -p tsconfig.json`): the server and the replay tool run from dist/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import {
  decodeLine,
  encodeLine,
  isHeader,
  type JournalEntry,
  type JournalHeader,
  type JournalLine,
} from '../journal/record';
import { META_TABLE } from '../src/engine/files/journal-position';
import { runReplay, type Reply, type TestServer, type ToolRun } from './helpers/server';
import { ServerFleet } from './helpers/server-fleet';
import { scratchDir } from './helpers/scratch-dir';
import { eventually, sleep } from './helpers/wait';

t.setTimeout(120_000);

const JOURNAL_NAME = 'statements.jsonl';

const SQLITE_VERSION = (() => {
  const db = new Database(':memory:');
  try {
    return db.prepare('SELECT sqlite_version()').pluck().get() as string;
  } finally {
    db.close();
  }
})();
const BETTER_SQLITE3_VERSION = (require('better-sqlite3/package.json') as { version: string }).version;

// ---------------------------------------------------------------------------------------------
// Servers, requests, the replay tool
// ---------------------------------------------------------------------------------------------

/** Where one server keeps its data and its journal. */
interface Layout {
  dir: string;
  data: string;
  journalDir: string;
  journal: string;
}

function layout(dir: string): Layout {
  fs.mkdirSync(dir, { recursive: true });
  const journalDir = path.join(dir, 'journal');
  return { dir, data: path.join(dir, 'data'), journalDir, journal: path.join(journalDir, JOURNAL_NAME) };
}

const fleet = new ServerFleet(t);
const start = (where: Layout, extra: string[] = []): Promise<TestServer> => fleet.start(where, extra);
const stop = (server: TestServer): Promise<void> => fleet.stop(server);

function describeReply(reply: Reply): string {
  return `${reply.status} ${reply.text.slice(0, 400)}`;
}

/** Throws unless the reply has the status: fixtures are shared by several tests, so they throw rather than assert. */
function expectStatus(reply: Reply, status: number, label: string): Reply {
  if (reply.status !== status) throw new Error(`${label}: expected ${status}, got ${describeReply(reply)}`);
  return reply;
}

async function createDb(server: TestServer, name: string): Promise<void> {
  expectStatus(await server.post('/dbs', { db: name }), 201, `POST /dbs ${name}`);
}

async function ok(server: TestServer, db: string | undefined, sql: string, params?: unknown): Promise<any[]> {
  const reply = await server.exec(db, sql, params === undefined ? {} : { params });
  if (reply.status !== 200)
    throw new Error(
      `${sql}: expected 200, got ${describeReply(reply)}; server stderr: ${server.stderr().slice(-2000)}`,
    );
  return reply.body.results as any[];
}

/** A statement that must fail with this engine error code. */
async function fails(server: TestServer, db: string | undefined, sql: string, code: number): Promise<void> {
  const reply = await server.exec(db, sql);
  if (reply.status < 400 || reply.body?.code !== code)
    throw new Error(`${sql}: expected [SQ${code}], got ${describeReply(reply)}`);
}

async function begin(server: TestServer, db: string): Promise<string> {
  return expectStatus(await server.post('/tx/begin', { db }), 200, `begin on ${db}`).body.session as string;
}

function inSession(server: TestServer, session: string, sql: string): Promise<Reply> {
  return server.request('POST', '/exec', { body: { sql }, headers: { 'X-Service-Session': session } });
}

async function sessionOk(server: TestServer, session: string, sql: string): Promise<void> {
  expectStatus(await inSession(server, session, sql), 200, `in session: ${sql}`);
}

async function sessionFails(server: TestServer, session: string, sql: string, code: number): Promise<void> {
  const reply = await inSession(server, session, sql);
  if (reply.status < 400 || reply.body?.code !== code)
    throw new Error(`in session: ${sql}: expected [SQ${code}], got ${describeReply(reply)}`);
}

async function end(server: TestServer, session: string, commit: boolean): Promise<void> {
  const reply = await server.post(`/tx/${commit ? 'commit' : 'rollback'}?session=${session}`);
  expectStatus(reply, 200, commit ? 'commit' : 'rollback');
}

/** Runs `work` on every item, at most `size` at a time, and gives the results in order. */
async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

let outCount = 0;
/** A fresh, not yet existing output directory under `dir`. */
function freshOut(dir: string, label = 'out'): string {
  return path.join(dir, `${label}-${++outCount}`);
}

/** Replays `journal` into a fresh directory; returns the run and the directory. */
async function replayInto(
  where: Layout,
  args: string[] = [],
  journal = where.journal,
): Promise<ToolRun & { out: string }> {
  const out = freshOut(where.dir);
  const run = await runReplay(['-log-file', journal, '-out', out, ...args], where.dir);
  return { ...run, out };
}

function toolSummary(run: ToolRun): string {
  return `exit ${run.code}: ${run.stderr.trim().slice(0, 1500)}`;
}

// ---------------------------------------------------------------------------------------------
// Reading the journal and the databases, independently of the code under test
// ---------------------------------------------------------------------------------------------

interface FileLines {
  file: string;
  /** Raw text of each line, without the newline. */
  raw: string[];
  lines: JournalLine[];
}

function journalFileNames(journalDir: string): string[] {
  return fs.readdirSync(journalDir).filter((name) => /^statements(\.\d{8}-\d{6}\.\d+)?\.jsonl(\.gz)?$/.test(name));
}

function fileText(file: string): string {
  const bytes = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
}

/** Every journal file, each line decoded with decodeLine (which checks its crc), files in seq order. */
function readAll(journalDir: string): FileLines[] {
  // A running server compresses rotated files behind the listing: a plain file may be gone (as its .gz) by the time it is read.
  const present = journalFileNames(journalDir).flatMap((name) => {
    const file = path.join(journalDir, name);
    try {
      return [{ file, text: fileText(file) }];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  });
  const files = present.map(({ file, text }) => {
    if (text.length > 0 && !text.endsWith('\n')) throw new Error(`${file} does not end with a newline`);
    const raw = text.split('\n').slice(0, -1);
    const lines = raw.map((line, index) => {
      try {
        return decodeLine(line);
      } catch (error) {
        throw new Error(`${file}:${index + 1}: ${(error as Error).message}`);
      }
    });
    return { file, raw, lines };
  });
  const firstSeq = (f: FileLines): number =>
    (f.lines.find((l) => !isHeader(l)) as JournalEntry | undefined)?.seq ?? Infinity;
  return files.sort((a, b) => firstSeq(a) - firstSeq(b));
}

function entriesOf(files: FileLines[]): JournalEntry[] {
  return files.flatMap((f) => f.lines.filter((l): l is JournalEntry => !isHeader(l)));
}

function lastSeq(journalDir: string): number {
  return Math.max(0, ...entriesOf(readAll(journalDir)).map((e) => e.seq));
}

/** A value as text that keeps its SQLite type, so that 1, 1.0, '1' and x'01' all differ. */
function typed(value: unknown): string {
  if (Buffer.isBuffer(value)) return `blob:${value.toString('hex')}`;
  if (typeof value === 'bigint') return `int:${value}`;
  if (typeof value === 'number') return `real:${Object.is(value, -0) ? '-0' : String(value)}`;
  if (typeof value === 'string') return `text:${value}`;
  return 'null';
}

interface Dump {
  schema: Array<[string, string, string | null]>;
  tables: Record<string, string[][]>;
}

/** Schema and every row (with its rowid) of a database file, as typed text; the service's bookkeeping table left out. */
function dumpDatabase(file: string): Dump {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.defaultSafeIntegers(true);
    const schema = db
      .prepare(
        `SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' AND tbl_name <> ? ORDER BY type, name`,
      )
      .raw(true)
      .all(META_TABLE) as Array<[string, string, string | null]>;
    const tables: Record<string, string[][]> = {};
    for (const [type, name] of schema) {
      if (type !== 'table') continue;
      const rows = db
        .prepare(`SELECT rowid, * FROM "${name.replace(/"/g, '""')}" ORDER BY rowid`)
        .raw(true)
        .all() as unknown[][];
      tables[name] = rows.map((row) => row.map(typed));
    }
    return { schema, tables };
  } finally {
    db.close();
  }
}

function dbNames(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((name) => name.endsWith('.db'))
        .sort()
    : [];
}

/** Asserts that `out` holds the same databases as `live`, each equal value by value. */
function sameDatabases(tt: Test, live: string, out: string, only?: string[]): void {
  const names = only ?? dbNames(live);
  tt.same(dbNames(out), names, 'the rebuild holds the same databases');
  for (const name of names)
    tt.same(
      dumpDatabase(path.join(out, name)),
      dumpDatabase(path.join(live, name)),
      `${name}: same schema and rows, value by value`,
    );
}

function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

// ---------------------------------------------------------------------------------------------
// The mixed workload, at level mod: shared by the tests that read its journal or replay it
// ---------------------------------------------------------------------------------------------

const root = scratchDir(t);

interface MixedRun extends Layout {
  committedSession: string;
  rolledBackSession: string;
  /** Engine codes of the failures the workload provoked, in order. */
  failures: number[];
}

async function mixedWorkload(
  server: TestServer,
): Promise<{ committedSession: string; rolledBackSession: string; failures: number[] }> {
  const failures: number[] = [];
  const fail = async (db: string, sql: string, code: number) => {
    await fails(server, db, sql, code);
    failures.push(code);
  };
  for (const db of ['shop', 'school', 'scratch']) await createDb(server, db);
  await ok(server, undefined, 'CREATE DATABASE logs');

  // shop: DDL, random(), randomblob(), CURRENT_TIMESTAMP defaults, the text 'now' as data, updates, deletes.
  await ok(
    server,
    'shop',
    `CREATE TABLE items (id INT PRIMARY KEY, name TEXT NOT NULL, price FLOAT, active BOOL DEFAULT TRUE,
    token TEXT, r INT, created TEXT DEFAULT CURRENT_TIMESTAMP)`,
  );
  await ok(server, 'shop', 'CREATE INDEX items_name ON items (name)');
  await ok(
    server,
    'shop',
    `INSERT INTO items (id, name, price, token, r) VALUES
    (1, 'apple', 1.5, hex(randomblob(8)), random()),
    (2, 'pear', 2.25, hex(randomblob(8)), random()),
    (3, 'now', 0.5, 'now', random())`,
  );
  await ok(server, 'shop', 'INSERT INTO items (id, name, price, active) VALUES (4, ?, ?, FALSE)', ['fig', 3]);
  await ok(server, 'shop', 'UPDATE items SET price = price * 2, r = random() WHERE id <= 2');
  await ok(server, 'shop', 'DELETE FROM items WHERE id = 4');
  await fail('shop', "INSERT INTO items (id, name) VALUES (1, 'dup')", 3003);
  await fail('shop', "INSERT INTO items (id, name, price) VALUES (9, 'bad', 'not a number')", 4001);
  // A batch whose second statement fails is rolled back whole: row 6 exists nowhere.
  await fail(
    'shop',
    "INSERT INTO items (id, name) VALUES (6, 'six'); INSERT INTO items (id, name) VALUES (6, 'again')",
    3003,
  );
  await ok(server, 'shop', "ALTER TABLE items ADD COLUMN note TEXT DEFAULT 'none'");
  await ok(server, 'shop', "UPDATE items SET note = datetime('now') WHERE id = 1");
  await ok(server, 'shop', "INSERT INTO items (id, name, note) VALUES (5, 'kiwi', 'now')");
  await ok(server, 'shop', 'SELECT count(*) FROM items');

  // school: every clock function, twice with time between, and a default of datetime('now').
  await ok(
    server,
    'school',
    `CREATE TABLE events (id INT PRIMARY KEY, at TEXT, tomorrow TEXT, jd FLOAT, label TEXT,
    stamp TEXT DEFAULT CURRENT_TIMESTAMP, made TEXT DEFAULT (datetime('now')))`,
  );
  for (const id of [1, 2]) {
    await ok(
      server,
      'school',
      `INSERT INTO events (id, at, tomorrow, jd, label) VALUES (${id}, datetime('now'), date('now','+1 day'), julianday('now'), 'now')`,
    );
    await sleep(30);
  }
  await ok(server, 'school', 'INSERT INTO events (id, label, jd) SELECT 3, hex(randomblob(8)), abs(random()) / 1e9');
  await ok(server, 'school', 'SELECT * FROM events');
  await fail('school', 'SELECT * FROM nosuch', 2003);

  // A session committed: savepoints across requests, a failed statement inside, a RELEASE.
  const committedSession = await begin(server, 'school');
  await sessionOk(
    server,
    committedSession,
    "INSERT INTO events (id, at, jd, label) VALUES (10, datetime('now'), julianday('now'), hex(randomblob(4)))",
  );
  await sessionOk(server, committedSession, 'SAVEPOINT s1');
  await sessionOk(server, committedSession, 'INSERT INTO events (id, jd) VALUES (11, random())');
  await sessionOk(server, committedSession, 'SAVEPOINT s2');
  await sessionOk(server, committedSession, "INSERT INTO events (id, label) VALUES (12, 'undone by ROLLBACK TO')");
  await sessionOk(server, committedSession, 'ROLLBACK TO s2');
  await sessionFails(server, committedSession, 'INSERT INTO events (id) VALUES (10)', 3003);
  failures.push(3003);
  await sessionFails(server, committedSession, 'INSERT INTO nosuch VALUES (1)', 2003);
  failures.push(2003);
  await sessionOk(server, committedSession, 'SELECT count(*) FROM events');
  await sessionOk(server, committedSession, 'RELEASE s1');
  await sessionOk(server, committedSession, 'UPDATE events SET label = hex(randomblob(4)) WHERE id = 11');
  await end(server, committedSession, true);

  // A session rolled back, with a savepoint in it.
  const rolledBackSession = await begin(server, 'shop');
  await sessionOk(server, rolledBackSession, "INSERT INTO items (id, name) VALUES (100, 'ghost')");
  await sessionOk(server, rolledBackSession, 'SAVEPOINT a');
  await sessionOk(server, rolledBackSession, 'DELETE FROM items');
  await sessionOk(server, rolledBackSession, 'ROLLBACK TO a');
  await sessionOk(server, rolledBackSession, "UPDATE items SET name = 'changed'");
  await end(server, rolledBackSession, false);

  // logs: written, then a database dropped after it had data.
  await ok(server, 'logs', "CREATE TABLE entries (id INT PRIMARY KEY, at FLOAT DEFAULT (julianday('now')), r INT)");
  await ok(server, 'logs', 'INSERT INTO entries (id, r) VALUES (1, random()), (2, random())');
  await ok(server, 'scratch', 'CREATE TABLE t (x INT)');
  await ok(server, 'scratch', 'INSERT INTO t VALUES (1), (2)');
  await ok(server, undefined, 'DROP DATABASE scratch');
  await ok(server, 'logs', 'UPDATE entries SET r = random() WHERE id = 2');
  return { committedSession, rolledBackSession, failures };
}

function memo<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

const mixed = memo(async (): Promise<MixedRun> => {
  const where = layout(path.join(root, 'mixed'));
  const server = await start(where);
  const outcome = await mixedWorkload(server);
  await stop(server);
  return { ...where, ...outcome };
});

// ---------------------------------------------------------------------------------------------
// Rebuilding
// ---------------------------------------------------------------------------------------------

t.test('rebuilds every database identically after a mixed workload', async (tt) => {
  const run = await mixed();
  tt.same(dbNames(run.data), ['logs.db', 'school.db', 'shop.db'], 'the live directory: scratch was dropped');
  const replayed = await replayInto(run, ['-verify', run.data]);
  tt.equal(replayed.code, 0, `replay -verify exits 0 (${toolSummary(replayed)})`);
  tt.match(replayed.stderr, /equals the live databases/, 'and says the rebuild equals the live databases');
  sameDatabases(tt, run.data, replayed.out);

  // What the workload must have left, read from the rebuild: nothing of the failed or rolled-back work.
  const shop = new Database(path.join(replayed.out, 'shop.db'), { readonly: true });
  const school = new Database(path.join(replayed.out, 'school.db'), { readonly: true });
  try {
    tt.same(
      shop.prepare('SELECT id FROM items ORDER BY id').pluck().all(),
      [1, 2, 3, 5],
      'shop: the failed batch and the rolled-back session left nothing',
    );
    tt.same(
      shop.prepare('SELECT name, token FROM items WHERE id = 3').raw(true).get(),
      ['now', 'now'],
      "the text 'now' stays text",
    );
    tt.equal(
      shop.prepare('SELECT note FROM items WHERE id = 5').pluck().get(),
      'now',
      "the text 'now' in a later column stays text",
    );
    tt.match(
      shop.prepare('SELECT note FROM items WHERE id = 1').pluck().get(),
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
      "datetime('now') gave a time",
    );
    tt.same(
      school.prepare('SELECT id FROM events ORDER BY id').pluck().all(),
      [1, 2, 3, 10, 11],
      'school: the session committed 10 and 11, not 12',
    );
    const [first, second] = school
      .prepare('SELECT jd FROM events WHERE id IN (1, 2) ORDER BY id')
      .pluck()
      .all() as number[];
    tt.ok(
      typeof first === 'number' && typeof second === 'number' && (second as number) > (first as number),
      'julianday() of the two batches differ (their own clocks)',
    );
  } finally {
    shop.close();
    school.close();
  }
});

// ---------------------------------------------------------------------------------------------
// The lines
// ---------------------------------------------------------------------------------------------

t.test('writes each entry with seq, ts, db, session, kind, ok, ms and a valid crc', async (tt) => {
  const run = await mixed();
  const files = readAll(run.journalDir);
  tt.equal(files.length, 1, 'one file (no rotation at the default size)');
  const entries = entriesOf(files);
  tt.ok(entries.length > 30, `many entries (${entries.length})`);
  tt.same(
    entries.map((e) => e.seq),
    entries.map((_, i) => i + 1),
    'seq runs 1, 2, 3, … without gaps, in file order',
  );
  for (const e of entries) {
    const where = `seq ${e.seq}`;
    tt.ok(
      typeof e.ts === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(e.ts),
      `${where}: ts is an ISO time`,
    );
    tt.ok('db' in e && (e.db === null || typeof e.db === 'string'), `${where}: db`);
    tt.ok(
      'session' in e && (e.session === null || /^[0-9a-f]{16}$/.test(e.session)),
      `${where}: session is null or an id`,
    );
    tt.ok(['exec', 'begin', 'commit', 'rollback', 'createdb', 'dropdb'].includes(e.kind), `${where}: kind ${e.kind}`);
    tt.type(e.ok, 'boolean', `${where}: ok`);
    tt.ok(typeof e.ms === 'number' && e.ms >= 0, `${where}: ms`);
    if (e.kind === 'exec' && e.ok) {
      tt.type(e.clock, 'number', `${where}: a successful exec carries its clock`);
      tt.match(e.seed, /^[0-9a-f]{16}$/i, `${where}: and its seed`);
    }
  }
  for (let i = 1; i < entries.length; i++) {
    tt.ok(
      Date.parse((entries[i] as JournalEntry).ts) >= Date.parse((entries[i - 1] as JournalEntry).ts),
      `ts does not go back at seq ${(entries[i] as JournalEntry).seq}`,
    );
  }
  // Each raw line ends with its crc; changing any character breaks it.
  const raw = files[0]!.raw[5] as string;
  tt.match(raw, /,"crc":"[0-9a-f]{8}"\}$/, 'the crc is the last field of the line');
  tt.throws(() => decodeLine(raw.replace('"ok":true', '"ok":false')), 'decodeLine rejects an altered line');
});

t.test('begins each file with a header: format, level, better-sqlite3, SQLite and time zone', async (tt) => {
  const run = await mixed();
  const files = readAll(run.journalDir);
  for (const f of files) {
    const first = f.lines[0];
    tt.ok(first !== undefined && isHeader(first), `${path.basename(f.file)}: the first line is a header`);
    if (first === undefined || !isHeader(first)) continue;
    tt.equal(first.format, 1, 'format');
    tt.equal(first.level, 'mod', 'level');
    tt.equal(first.betterSqlite3, BETTER_SQLITE3_VERSION, 'better-sqlite3 version');
    tt.equal(first.sqlite, SQLITE_VERSION, 'SQLite version');
    tt.ok(typeof first.tz === 'string' && first.tz.length > 0, `time zone (${first.tz})`);
    tt.equal(f.lines.slice(1).filter(isHeader).length, 0, 'only one header per file');
  }
});

t.test('journals failed batches with their code, class and error', async (tt) => {
  const run = await mixed();
  const entries = entriesOf(readAll(run.journalDir));
  const failed = entries.filter((e) => !e.ok);
  tt.same(
    failed.map((e) => e.code),
    run.failures,
    'every failure the clients saw is journaled, in order, with its code',
  );
  for (const e of failed) {
    tt.type(e.code, 'number', `seq ${e.seq}: code`);
    tt.equal(e.class, Math.floor((e.code as number) / 1000), `seq ${e.seq}: class is the first digit of ${e.code}`);
    tt.match(e.error, new RegExp(`^\\[SQ${e.code}\\]`), `seq ${e.seq}: error text starts with its code`);
  }
  const inSessionFailures = failed.filter((e) => e.session === run.committedSession);
  tt.same(
    inSessionFailures.map((e) => e.code),
    [3003, 2003],
    'the failures inside the session carry the session id',
  );
  const batch = failed.find((e) => e.sql?.includes("'again'"));
  tt.equal(batch?.statement, 1, 'the failed batch names its failing statement');
  tt.same(
    batch?.statements,
    [{ sql: "INSERT INTO items (id, name) VALUES (6, 'six'); INSERT INTO items (id, name) VALUES (6, 'again')" }],
    'and records the SQL exactly as sent',
  );
});

t.test('journals sessions, databases and parameters at level mod, but not reads', async (tt) => {
  const run = await mixed();
  const entries = entriesOf(readAll(run.journalDir));
  tt.same(
    entries.filter((e) => e.ok && e.readonly === true),
    [],
    'no successful read is journaled at mod',
  );
  tt.notOk(
    entries.some((e) => e.ok && /^SELECT/i.test(e.sql ?? '')),
    'no SELECT batch at all',
  );
  const kinds = (session: string) =>
    entries.filter((e) => e.session === session && e.kind !== 'exec').map((e) => e.kind);
  tt.same(kinds(run.committedSession), ['begin', 'commit'], 'begin and commit of the committed session');
  tt.same(kinds(run.rolledBackSession), ['begin', 'rollback'], 'begin and rollback of the other');
  tt.equal(entries.find((e) => e.kind === 'rollback')?.reason, 'client', 'the rollback says why');
  tt.ok(
    entries.filter((e) => e.session === run.committedSession && e.kind === 'exec' && e.ok).length >= 7,
    'the writes inside the session',
  );
  const lifecycle = entries.filter((e) => e.kind === 'createdb' || e.kind === 'dropdb').map((e) => `${e.kind} ${e.db}`);
  tt.same(
    lifecycle,
    ['createdb shop.db', 'createdb school.db', 'createdb scratch.db', 'createdb logs.db', 'dropdb scratch.db'],
    'databases created and dropped',
  );
  const withParams = entries.find((e) => e.statements?.some((s) => s.params !== undefined));
  tt.same(withParams?.statements?.[0]?.params, ['fig', 3], 'bound parameters are recorded');
});

/** A small workload with a read, a failed read, a failed write and a session read. */
async function levelWorkload(server: TestServer): Promise<void> {
  await createDb(server, 'lv');
  await ok(server, 'lv', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
  await ok(server, 'lv', "INSERT INTO t VALUES (1, 'one')");
  await ok(server, 'lv', 'SELECT * FROM t');
  await fails(server, 'lv', 'SELECT * FROM missing', 2003);
  await fails(server, 'lv', "INSERT INTO t VALUES (1, 'again')", 3003);
  const session = await begin(server, 'lv');
  await sessionOk(server, session, 'SELECT count(*) FROM t');
  await sessionOk(server, session, "INSERT INTO t VALUES (2, 'two')");
  await end(server, session, true);
}

const levelRun = (level: string) =>
  memo(async (): Promise<Layout> => {
    const where = layout(path.join(root, `level-${level}`));
    const server = await start(where, ['-log-level', level]);
    await levelWorkload(server);
    await stop(server);
    return where;
  });
const levelRuns = { error: levelRun('error'), all: levelRun('all'), none: levelRun('none') };
/** The three servers run at the same time: the first test that needs one starts them all. */
const allLevels = memo(() => Promise.all([levelRuns.error(), levelRuns.all(), levelRuns.none()]));
const errorLevel = async (): Promise<Layout> => (await allLevels())[0];
const allLevel = async (): Promise<Layout> => (await allLevels())[1];
const noneLevel = async (): Promise<Layout> => (await allLevels())[2];

t.test('journals reads too at level all', async (tt) => {
  const where = await allLevel();
  const files = readAll(where.journalDir);
  const header = files[0]?.lines[0] as JournalHeader | undefined;
  tt.equal(header?.level, 'all', 'the header says all');
  const entries = entriesOf(files);
  const reads = entries.filter((e) => e.kind === 'exec' && e.readonly === true);
  tt.same(
    reads.map((e) => [e.sql, e.ok, e.session !== null]),
    [
      ['SELECT * FROM t', true, false],
      ['SELECT * FROM missing', false, false],
      ['SELECT count(*) FROM t', true, true],
    ],
    'every read, inside a session or not, failed or not',
  );
  tt.same(
    entries.filter((e) => e.kind !== 'exec').map((e) => e.kind),
    ['createdb', 'begin', 'commit'],
    'and everything mod journals',
  );
  const replayed = await replayInto(where, ['-verify', where.data]);
  tt.equal(replayed.code, 0, `a journal at level all replays (${toolSummary(replayed)})`);
});

t.test('journals only failed batches at level error', async (tt) => {
  const where = await errorLevel();
  const files = readAll(where.journalDir);
  tt.equal((files[0]?.lines[0] as JournalHeader | undefined)?.level, 'error', 'the header says error');
  const entries = entriesOf(files);
  tt.same(
    entries.map((e) => [e.sql, e.ok, e.code, e.class]),
    [
      ['SELECT * FROM missing', false, 2003, 2],
      ["INSERT INTO t VALUES (1, 'again')", false, 3003, 3],
    ],
    'the two failures and nothing else',
  );
});

t.test('writes nothing at level none', async (tt) => {
  const where = await noneLevel();
  const written = fs.existsSync(where.journalDir)
    ? fs.readdirSync(where.journalDir).filter((name) => fs.statSync(path.join(where.journalDir, name)).size > 0)
    : [];
  tt.same(written, [], 'no journal file with content');
  tt.same(dbNames(where.data), ['lv.db'], 'while the server did work');
});

t.test('lets tail -F select every failed line by class, as it is written', async (tt) => {
  const where = layout(path.join(root, 'tail'));
  const server = await start(where);
  await createDb(server, 'al');
  // The file exists now (the createdb entry is written before the answer).
  const tail: ChildProcess = spawn('tail', ['-n', '+1', '-F', where.journal], { stdio: ['ignore', 'pipe', 'ignore'] });
  tt.teardown(() => {
    tail.kill('SIGKILL');
  });
  let buffered = '';
  const alerts: Array<Record<string, unknown>> = [];
  let unparsable = 0;
  tail.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() as string;
    for (const line of lines) {
      // jq -c 'select(.class == 3)', on raw lines: each line is one complete JSON object.
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        unparsable++;
        continue;
      }
      if (parsed['class'] === 3) alerts.push(parsed);
    }
  });
  await ok(server, 'al', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT NOT NULL)');
  const expected: number[] = [];
  for (let i = 0; i < 6; i++) {
    await ok(server, 'al', `INSERT INTO t VALUES (${i}, 'v${i}')`);
    await fails(server, 'al', `INSERT INTO t VALUES (${i}, 'dup')`, 3003);
    expected.push(3003);
    await fails(server, 'al', `INSERT INTO t VALUES (${100 + i}, NULL)`, 3001);
    expected.push(3001);
    await fails(server, 'al', 'DELETE FROM nowhere', 2003);
  }
  await eventually(() => alerts.length >= expected.length, 10_000, 50);
  tt.same(
    alerts.map((a) => a['code']),
    expected,
    'every class-3 failure reached tail -F, in order, and nothing else',
  );
  tt.ok(
    alerts.every((a) => a['ok'] === false && typeof a['error'] === 'string' && typeof a['seq'] === 'number'),
    'each alert is a whole failed entry',
  );
  tt.equal(unparsable, 0, 'every line tail saw is one JSON object');
  await stop(server);
  const journaled = entriesOf(readAll(where.journalDir))
    .filter((e) => e.class === 3)
    .map((e) => e.seq);
  tt.same(
    alerts.map((a) => a['seq']),
    journaled,
    'the alerts are exactly the class-3 lines of the file',
  );
});

// ---------------------------------------------------------------------------------------------
// Rotation
// ---------------------------------------------------------------------------------------------

/** Enough writes to fill a 4K journal many times over. */
async function rotationWorkload(server: TestServer): Promise<void> {
  await createDb(server, 'rot');
  await createDb(server, 'rot2');
  await ok(server, 'rot', 'CREATE TABLE t (id INT PRIMARY KEY, r INT, at TEXT DEFAULT CURRENT_TIMESTAMP, token TEXT)');
  await ok(server, 'rot2', 'CREATE TABLE u (id INT PRIMARY KEY, jd FLOAT)');
  for (let i = 0; i < 60; i++) {
    await ok(server, 'rot', 'INSERT INTO t (id, r, token) VALUES (?, random(), hex(randomblob(8)))', [i]);
    if (i % 3 === 0) await ok(server, 'rot2', "INSERT INTO u VALUES (?, julianday('now'))", [i]);
    if (i % 7 === 0) await ok(server, 'rot', 'UPDATE t SET r = random() WHERE id % 2 = 0');
    if (i % 11 === 0) await fails(server, 'rot', `INSERT INTO t (id) VALUES (${i})`, 3003);
  }
  await ok(server, 'rot', 'DELETE FROM t WHERE id % 5 = 0');
}

async function checkRotation(tt: Test, where: Layout, compressed: boolean): Promise<void> {
  const names = journalFileNames(where.journalDir);
  const rotated = names.filter((name) => name !== JOURNAL_NAME);
  tt.ok(rotated.length >= 5, `many rotated files (${rotated.length})`);
  if (compressed) {
    tt.ok(
      rotated.every((name) => name.endsWith('.jsonl.gz')),
      'every rotated file ends .gz',
    );
    tt.ok(
      rotated.every((name) =>
        fs
          .readFileSync(path.join(where.journalDir, name))
          .subarray(0, 2)
          .equals(Buffer.from([0x1f, 0x8b])),
      ),
      'and is gzip',
    );
  } else {
    tt.ok(
      rotated.every((name) => name.endsWith('.jsonl')),
      'rotated files are plain',
    );
  }
  const files = readAll(where.journalDir);
  for (const f of files) {
    // The active file is empty when the last write filled the one before it.
    if (f.lines.length === 0 && path.basename(f.file) === JOURNAL_NAME) continue;
    const first = f.lines[0];
    tt.ok(first !== undefined && isHeader(first), `${path.basename(f.file)} starts with a header`);
    tt.equal(f.lines.filter(isHeader).length, 1, `${path.basename(f.file)} holds one header`);
  }
  const seqs = entriesOf(files).map((e) => e.seq);
  tt.same(
    seqs,
    seqs.map((_, i) => i + 1),
    'seq continues across the files without gaps or repeats',
  );
  const replayed = await replayInto(where, ['-verify', where.data]);
  tt.equal(replayed.code, 0, `replay across every file rebuilds exactly (${toolSummary(replayed)})`);
  sameDatabases(tt, where.data, replayed.out);
}

const rotationRun = (label: string, extra: string[]) => async (): Promise<Layout> => {
  const where = layout(path.join(root, label));
  const server = await start(where, ['-log-max-size', '4K', ...extra]);
  await rotationWorkload(server);
  await stop(server);
  return where;
};
/** Both rotating servers run at the same time: the first test that needs one starts both. */
const rotations = memo(() =>
  Promise.all([rotationRun('rotation-plain', [])(), rotationRun('rotation-gzip', ['-log-compress'])()]),
);

t.test('rotates at -log-max-size 4K, each file with a header, and replays across them', async (tt) => {
  const [plain] = await rotations();
  await checkRotation(tt, plain, false);
});

t.test('rotates into gzipped files with -log-compress and replays across them', async (tt) => {
  const [, gzipped] = await rotations();
  await checkRotation(tt, gzipped, true);
});

// ---------------------------------------------------------------------------------------------
// Point-in-time restore
// ---------------------------------------------------------------------------------------------

const STATE_SQL = 'SELECT id, v, CAST(r AS TEXT) AS r, f, ts FROM t ORDER BY id';

interface Step {
  label: string;
  /** The seq of the step's last entry. */
  seq: number;
  /** The rows after it, as the server answered them. */
  rows: unknown[][];
  /** A time after the step and before the next one. */
  after: string;
}

t.test('restores the state after any step, by seq and by time (-until)', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await createDb(server, 'pit');
  const steps: Step[] = [];
  const inside: number[] = [];
  const step = async (label: string, work: () => Promise<void>): Promise<void> => {
    await work();
    const seq = lastSeq(where.journalDir);
    const rows = (await ok(server, 'pit', STATE_SQL)).at(-1).rows as unknown[][];
    await sleep(25);
    steps.push({ label, seq, rows, after: new Date().toISOString() });
    await sleep(25);
  };
  await step('create table', () =>
    ok(
      server,
      'pit',
      'CREATE TABLE t (id INT PRIMARY KEY, v TEXT, r INT, f FLOAT, ts TEXT DEFAULT CURRENT_TIMESTAMP)',
    ).then(() => undefined),
  );
  await step('insert two', () =>
    ok(
      server,
      'pit',
      "INSERT INTO t (id, v, r, f) VALUES (1, 'one', random(), julianday('now')), (2, 'two', random(), julianday('now'))",
    ).then(() => undefined),
  );
  await step('update one', () =>
    ok(server, 'pit', "UPDATE t SET r = random(), v = 'uno', f = julianday('now') WHERE id = 1").then(() => undefined),
  );
  await step('insert now, delete two', () =>
    ok(
      server,
      'pit',
      "INSERT INTO t (id, v, r, f) VALUES (3, 'now', random(), abs(random()) / 1e12); DELETE FROM t WHERE id = 2",
    ).then(() => undefined),
  );
  await step('a committed session', async () => {
    const session = await begin(server, 'pit');
    inside.push(lastSeq(where.journalDir));
    await sessionOk(
      server,
      session,
      "INSERT INTO t (id, v, r, f) VALUES (4, datetime('now'), random(), julianday('now'))",
    );
    inside.push(lastSeq(where.journalDir));
    await end(server, session, true);
  });
  await step('delete one, insert five', () =>
    ok(server, 'pit', "DELETE FROM t WHERE id = 1; INSERT INTO t (id, v, r) VALUES (5, 'five', random())").then(
      () => undefined,
    ),
  );
  await stop(server);

  const rebuiltRows = (out: string): unknown[][] => {
    const db = new Database(path.join(out, 'pit.db'), { readonly: true });
    try {
      return db.prepare(STATE_SQL).raw(true).all() as unknown[][];
    } finally {
      db.close();
    }
  };
  // Every restore at once, a few at a time: each is a process of its own.
  const beforeCommit = steps[3] as Step;
  const cases = [
    ...steps.flatMap((s, k) => [
      { until: String(s.seq), rows: s.rows, what: `step ${k} (${s.label}) by seq` },
      { until: s.after, rows: s.rows, what: `step ${k} (${s.label}) by time` },
    ]),
    // A cut inside a session that commits later: the session never committed in the part replayed.
    ...inside.map((seq) => ({
      until: String(seq),
      rows: beforeCommit.rows,
      what: 'a seq inside an uncommitted session: the state before it',
    })),
  ];
  const runs = await inBatches(cases, 3, (c) => replayInto(where, ['-until', c.until]));
  for (const [i, c] of cases.entries()) {
    const run = runs[i] as ToolRun & { out: string };
    tt.equal(run.code, 0, `-until ${c.until}: exit 0 (${toolSummary(run)})`);
    if (run.code === 0) tt.same(rebuiltRows(run.out), c.rows, `-until ${c.until} gives the state after ${c.what}`);
  }
  tt.ok(
    steps.every((s, i) => i === 0 || s.seq > (steps[i - 1] as Step).seq),
    'each step added entries',
  );
});

// ---------------------------------------------------------------------------------------------
// -verify and -db
// ---------------------------------------------------------------------------------------------

t.test('-verify catches a tampered database and names the table, row and column', async (tt) => {
  const run = await mixed();
  const tampered = path.join(run.dir, `tampered-${++outCount}`);
  copyDir(run.data, tampered);
  const db = new Database(path.join(tampered, 'shop.db'));
  const changed = db.prepare("UPDATE items SET name = 'tampered' WHERE id = 2").run().changes;
  db.close();
  tt.equal(changed, 1, 'one value changed in the live file');
  const replayed = await replayInto(run, ['-verify', tampered]);
  tt.equal(replayed.code, 1, `exit 1 (${toolSummary(replayed)})`);
  tt.match(replayed.stderr, /shop\.db/, 'names the database');
  tt.match(replayed.stderr, /table items, row 2, column name/, 'names the table, the row and the column');
  tt.match(replayed.stderr, /tampered/, 'shows the live value');

  const again = path.join(run.dir, `tampered-${++outCount}`);
  copyDir(run.data, again);
  const other = new Database(path.join(again, 'school.db'));
  other.prepare('DELETE FROM events WHERE id = 11').run();
  other.close();
  const fewer = await replayInto(run, ['-verify', again]);
  tt.equal(fewer.code, 1, `a deleted row is a difference too (${toolSummary(fewer)})`);
  tt.match(fewer.stderr, /school\.db.*events/, 'named by database and table');
});

t.test('-db rebuilds one database only', async (tt) => {
  const run = await mixed();
  const names = ['shop', 'school'];
  const [shop, school, dropped] = await Promise.all([
    ...names.map((name) => replayInto(run, ['-db', name, '-verify', path.join(run.data, `${name}.db`)])),
    replayInto(run, ['-db', 'scratch']),
  ]);
  for (const [name, replayed] of [
    ['shop', shop],
    ['school', school],
  ] as const) {
    tt.equal(replayed?.code, 0, `-db ${name} -verify <its file>: exit 0 (${replayed && toolSummary(replayed)})`);
    if (replayed) sameDatabases(tt, run.data, replayed.out, [`${name}.db`]);
  }
  if (!dropped) throw new Error('no run');
  tt.equal(dropped.code, 0, `-db of a dropped database: exit 0 (${toolSummary(dropped)})`);
  tt.same(dbNames(dropped.out), [], 'and nothing rebuilt: it was dropped');
});

// ---------------------------------------------------------------------------------------------
// Journals replay refuses, and the damage it tolerates
// ---------------------------------------------------------------------------------------------

/** A copy of the mixed run's journal directory, to damage. */
async function journalCopy(): Promise<{ run: MixedRun; journal: string; lines: string[] }> {
  const run = await mixed();
  const dir = path.join(run.dir, `journal-copy-${++outCount}`);
  copyDir(run.journalDir, dir);
  fs.rmSync(path.join(dir, `${JOURNAL_NAME}.checkpoint`), { force: true });
  const journal = path.join(dir, JOURNAL_NAME);
  return { run, journal, lines: fs.readFileSync(journal, 'utf8').split('\n').slice(0, -1) };
}

function writeLines(file: string, lines: string[], tail = ''): void {
  fs.writeFileSync(file, lines.map((line) => `${line}\n`).join('') + tail);
}

t.test('refuses a journal written at level error, saying so (exit 2)', async (tt) => {
  const where = await errorLevel();
  const replayed = await replayInto(where);
  tt.equal(replayed.code, 2, `exit 2 (${toolSummary(replayed)})`);
  tt.match(replayed.stderr, /level error/, 'says the journal was written at level error');
  tt.match(replayed.stderr, /cannot rebuild/, 'and that it cannot rebuild');
  tt.same(dbNames(replayed.out), [], 'and rebuilds nothing');
});

t.test('refuses a journal with a gap in seq, naming the missing seq (exit 2)', async (tt) => {
  const { run, journal, lines } = await journalCopy();
  const index = Math.floor(lines.length / 2);
  const removed = decodeLine(lines[index] as string) as JournalEntry;
  writeLines(
    journal,
    lines.filter((_, i) => i !== index),
  );
  const replayed = await replayInto(run, [], journal);
  tt.equal(replayed.code, 2, `exit 2 (${toolSummary(replayed)})`);
  tt.match(replayed.stderr, new RegExp(`seq ${removed.seq} is missing`), `names seq ${removed.seq}`);
});

t.test('tolerates a torn last line with a warning (exit 0)', async (tt) => {
  const { run, journal, lines } = await journalCopy();
  const last = decodeLine(lines.at(-1) as string) as JournalEntry;
  const next = encodeLine({ ...last, seq: last.seq + 1 });
  writeLines(journal, lines, next.slice(0, Math.floor(next.length / 2)));
  const replayed = await replayInto(run, ['-verify', run.data], journal);
  tt.equal(replayed.code, 0, `exit 0 (${toolSummary(replayed)})`);
  tt.match(replayed.stderr, /warning:.*torn/, 'warns about the torn line');
  tt.match(replayed.stderr, new RegExp(`line ${lines.length + 1}`), 'naming its line');
  sameDatabases(tt, run.data, replayed.out);
});

t.test('refuses a corrupt line in the middle, naming the file and the line (exit 2)', async (tt) => {
  const { run, journal, lines } = await journalCopy();
  const index = Math.floor(lines.length / 2);
  const line = Buffer.from(lines[index] as string, 'utf8');
  const at = line.indexOf('"kind":"') + 9; // a letter inside the kind's value
  line[at] = (line[at] as number) ^ 0x20; // flip one bit: the case of one letter
  lines[index] = line.toString('utf8');
  writeLines(journal, lines);
  const replayed = await replayInto(run, [], journal);
  tt.equal(replayed.code, 2, `exit 2 (${toolSummary(replayed)})`);
  tt.ok(replayed.stderr.includes(`${journal}:${index + 1}`), `names ${path.basename(journal)}:${index + 1}`);
  tt.match(replayed.stderr, /checksum/, 'says the checksum does not match');
});

t.test('refuses a header of another SQLite version without -force, replays with it', async (tt) => {
  const { run, journal, lines } = await journalCopy();
  const header = decodeLine(lines[0] as string) as JournalHeader;
  lines[0] = encodeLine({ ...header, sqlite: '3.8.0' }).trimEnd();
  writeLines(journal, lines);
  const refused = await replayInto(run, ['-verify', run.data], journal);
  tt.equal(refused.code, 2, `without -force: exit 2 (${toolSummary(refused)})`);
  tt.match(refused.stderr, /sqlite 3\.8\.0/, 'names the version in the header');
  tt.match(refused.stderr, /-force/, 'and points to -force');
  tt.same(dbNames(refused.out), [], 'and rebuilds nothing');
  const forced = await replayInto(run, ['-verify', run.data, '-force'], journal);
  tt.equal(forced.code, 0, `with -force: exit 0 (${toolSummary(forced)})`);
  tt.match(forced.stderr, /warning:.*3\.8\.0/, 'with a warning');
  sameDatabases(tt, run.data, forced.out);
});

// ---------------------------------------------------------------------------------------------
// seq across restarts and rotations
// ---------------------------------------------------------------------------------------------

t.test('continues seq across restarts and rotations, without repeats', async (tt) => {
  const where = layout(scratchDir(tt));
  const args = ['-log-max-size', '4K', '-log-compress'];
  const phases: Array<{ first: number; last: number }> = [];
  let server = await start(where, args);
  await createDb(server, 'rs');
  await ok(server, 'rs', 'CREATE TABLE t (id INT PRIMARY KEY, r INT, at TEXT DEFAULT CURRENT_TIMESTAMP)');
  let id = 0;
  const writeSome = async (count: number): Promise<void> => {
    const before = lastSeq(where.journalDir);
    for (let i = 0; i < count; i++) await ok(server, 'rs', 'INSERT INTO t (id, r) VALUES (?, random())', [++id]);
    phases.push({ first: before + 1, last: lastSeq(where.journalDir) });
  };
  await writeSome(20);
  await stop(server);
  // A restart after the process was killed, not stopped: no checkpoint of the last seq is written then.
  server = await start(where, args);
  await writeSome(15);
  server.child.kill('SIGKILL');
  await new Promise((resolve) =>
    server.child.exitCode !== null || server.child.signalCode !== null
      ? resolve(null)
      : server.child.once('exit', resolve),
  );
  fleet.forget(server);
  // Without the checkpoint (only a shortcut), the server must find the last seq in the files, gzipped ones included.
  fs.rmSync(`${where.journal}.checkpoint`, { force: true });
  server = await start(where, args);
  await writeSome(15);
  await stop(server);

  const files = readAll(where.journalDir);
  tt.ok(files.length >= 3, `the journal rotated (${files.length} files)`);
  const seqs = entriesOf(files).map((e) => e.seq);
  tt.equal(new Set(seqs).size, seqs.length, 'no seq appears twice');
  tt.same(
    seqs,
    seqs.map((_, i) => i + 1),
    'seq rises by one across every restart and rotation',
  );
  for (let i = 1; i < phases.length; i++) {
    tt.ok(
      (phases[i] as { first: number }).first > (phases[i - 1] as { last: number }).last,
      `phase ${i + 1} continues after phase ${i}`,
    );
  }
  const replayed = await replayInto(where, ['-verify', where.data]);
  tt.equal(replayed.code, 0, `the journal of three runs replays exactly (${toolSummary(replayed)})`);
  const rows = new Database(path.join(replayed.out, 'rs.db'), { readonly: true });
  tt.equal(rows.prepare('SELECT count(*) FROM t').pluck().get(), id, 'every row of every run');
  rows.close();
});

t.test('journals a batch refused before it ran, so that alerts on class 1 fire', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where, ['-log-level', 'error']);
  await createDb(server, 'refused');
  await fails(server, 'refused', 'SELEC 1', 1001);
  await fails(server, 'refused', "ATTACH 'x.db' AS x", 1003);
  await stop(server);
  const entries = entriesOf(readAll(where.journalDir));
  tt.same(
    entries.map((e) => [e.db, e.sql, e.ok, e.code, e.class]),
    [
      ['refused.db', 'SELEC 1', false, 1001, 1],
      ['refused.db', "ATTACH 'x.db' AS x", false, 1003, 1],
    ],
    'both refusals are journaled with their code and class',
  );
});

t.test('replays random() after a SELECT cut at -max-result-rows in the same batch', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where, ['-max-result-rows', '3']);
  await createDb(server, 'cut');
  await ok(server, 'cut', 'CREATE TABLE t (id INTEGER PRIMARY KEY, r INT)');
  const results = await ok(
    server,
    'cut',
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20) SELECT random() FROM c; INSERT INTO t (r) VALUES (random())',
  );
  tt.equal(results[0]?.truncated, true, 'the SELECT was cut at 3 rows');
  await stop(server);
  const run = await replayInto(where, ['-verify', where.data]);
  tt.equal(run.code, 0, `the value after the cut SELECT replays exactly: ${toolSummary(run)}`);
});
