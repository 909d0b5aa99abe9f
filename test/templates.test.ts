/**
 * Databases from a template and reset, over the real server and the real
 * replay tool:
 *
 * - thirty copies in one request, each equal to the template in schema and
 *   rows, each on its own (a write to one touches no other, nor the template);
 *   the three request forms, all or nothing, and the errors;
 * - reset after breaking a copy, to the template's current state; 409 for a
 *   database without a template, or whose template is gone;
 * - an open session on the template or on the copy: 409, the session untouched;
 * - replay (full, point in time, from a snapshot round) and crash recovery
 *   make the same copies and resets, `-verify` equal to the live files;
 * - a copy taken while the template is written concurrently holds exactly the
 *   writes journaled before it.
 *
 * Build first: the server and the replay tool run from dist/.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { encodeLine, type JournalEntry } from '../journal/record';
import { listRounds } from '../src/snapshots/manifest';
import { fileEntries } from './helpers/journal-files';
import { runReplay, type Reply, type TestServer } from './helpers/server';
import { ServerFleet } from './helpers/server-fleet';
import { scratchDir } from './helpers/scratch-dir';
import { eventually } from './helpers/wait';

t.setTimeout(120_000);

interface Layout {
  dir: string;
  data: string;
  journal: string;
}

function layout(dir: string): Layout {
  return { dir, data: path.join(dir, 'data'), journal: path.join(dir, 'journal', 'statements.jsonl') };
}

const fleet = new ServerFleet(t);
const start = (where: Layout, extra: string[] = []): Promise<TestServer> => fleet.start(where, extra);
const stop = (server: TestServer): Promise<void> => fleet.stop(server);
const kill = (server: TestServer): Promise<void> => fleet.kill(server);

function describe(reply: Reply): string {
  return `${reply.status} ${reply.text.slice(0, 300)}`;
}

async function mustExec(server: TestServer, db: string, sql: string): Promise<Reply> {
  const reply = await server.exec(db, sql);
  if (reply.status !== 200) throw new Error(`${sql}: ${describe(reply)}`);
  return reply;
}

async function inSession(server: TestServer, session: string, db: string, sql: string): Promise<void> {
  const reply = await server.request('POST', `/exec?session=${session}`, { body: { db, sql } });
  if (reply.status !== 200) throw new Error(`${sql}: ${describe(reply)}`);
}

/** Schema (as /tables reports it) and every row of every table, in rowid order. */
async function dump(server: TestServer, db: string): Promise<{ tables: unknown; rows: Record<string, unknown> }> {
  const tables = await server.get(`/tables?db=${db}`);
  if (tables.status !== 200) throw new Error(`/tables ${db}: ${describe(tables)}`);
  const rows: Record<string, unknown> = {};
  for (const table of tables.body.tables as Array<{ name: string }>) {
    rows[table.name] = (
      await mustExec(server, db, `SELECT rowid, * FROM "${table.name}" ORDER BY rowid`)
    ).body.results[0].rows;
  }
  return { tables: tables.body.tables, rows };
}

const CLASS_SQL = [
  'CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT NOT NULL, score FLOAT DEFAULT 0)',
  'CREATE TABLE marks (id INT PRIMARY KEY, pupil INT REFERENCES pupils(id), mark INT)',
  'CREATE INDEX marks_pupil ON marks (pupil)',
  "INSERT INTO pupils (id, name, score) VALUES (1, 'Ada', 6.5), (2, 'Brahe', 5.25), (3, 'Curie', 7)",
  'INSERT INTO marks (id, pupil, mark) VALUES (1, 1, 6), (2, 2, 5), (3, 3, 7)',
].join(';\n');

async function makeClass(server: TestServer, name = 'class'): Promise<void> {
  const created = await server.post('/dbs', { db: name });
  if (created.status !== 201) throw new Error(`create ${name}: ${describe(created)}`);
  await mustExec(server, name, CLASS_SQL);
}

async function replayVerify(
  where: Layout,
  extra: string[] = [],
  out = 'replayed',
): Promise<{ code: number | null; stderr: string }> {
  return runReplay(
    ['-log-file', where.journal, '-out', path.join(where.dir, out), '-verify', where.data, ...extra],
    where.dir,
  );
}

function numbered(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}.db`);
}

t.test('makes thirty copies in one request, each equal to the template and on its own', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await makeClass(server);
  const template = await dump(server, 'class');

  const reply = await server.post('/dbs', { prefix: 'student', count: 30, from: 'class' });
  tt.equal(reply.status, 201, describe(reply));
  tt.same(reply.body.dbs, numbered('student', 30), 'the copies are named prefix-01 … prefix-30');
  tt.equal(reply.body.from, 'class.db');
  const listed = (await server.get('/dbs')).body.dbs as string[];
  tt.same(listed, ['class.db', ...numbered('student', 30)], 'GET /dbs lists the template and its thirty copies');
  for (const db of numbered('student', 30))
    tt.same(await dump(server, db), template, `${db} equals the template in schema and rows`);

  await mustExec(
    server,
    'student-07',
    "INSERT INTO pupils (id, name) VALUES (4, 'Darwin'); UPDATE marks SET mark = 1 WHERE id = 1; DROP INDEX marks_pupil",
  );
  const changed = await dump(server, 'student-07');
  tt.not(JSON.stringify(changed), JSON.stringify(template), 'the copy written to has changed');
  tt.same(await dump(server, 'student-08'), template, 'its neighbour did not');
  tt.same(await dump(server, 'student-30'), template, 'nor the last copy');
  tt.same(await dump(server, 'class'), template, 'nor the template');

  await mustExec(server, 'class', "INSERT INTO pupils (id, name) VALUES (9, 'Euler')");
  tt.same(await dump(server, 'student-08'), template, 'a write to the template reaches no copy');

  await stop(server);
  const replayed = await replayVerify(where);
  tt.equal(replayed.code, 0, `replay -verify makes the same thirty copies: ${replayed.stderr.slice(-600)}`);
});

t.test('copies one or a list of names, all or nothing, and refuses bad requests with their codes', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await makeClass(server);

  const one = await server.post('/dbs', { db: 'Solo', from: 'class.db' });
  tt.equal(one.status, 201, describe(one));
  tt.equal(one.body.db, 'solo.db', 'the name is normalized like any database name');
  const list = await server.post('/dbs', { dbs: ['ana', 'ben'], from: 'class' });
  tt.same([list.status, list.body.dbs], [201, ['ana.db', 'ben.db']], describe(list));

  const taken = await server.post('/dbs', { dbs: ['fresh', 'ben'], from: 'class' });
  tt.same([taken.status, taken.body.code], [409, 2007], `a taken name refuses the whole request: ${describe(taken)}`);
  tt.notOk((await server.get('/dbs')).body.dbs.includes('fresh.db'), 'and no other copy of it was made');

  const cases: Array<[string, unknown, number, number]> = [
    ['an unknown template', { db: 'x', from: 'nope' }, 404, 2001],
    ['too many copies', { prefix: 'p', count: 101, from: 'class' }, 400, 1040],
    ['two forms at once', { db: 'x', prefix: 'p', count: 2, from: 'class' }, 400, 1006],
    ['a count that is not a positive integer', { prefix: 'p', count: 0, from: 'class' }, 400, 1006],
    ['a bad copy name', { db: '../x', from: 'class' }, 400, 1011],
    ['the same name twice', { dbs: ['y', 'y'], from: 'class' }, 400, 1006],
    ['a copy onto its template', { db: 'class', from: 'class' }, 409, 2007],
  ];
  for (const [what, body, status, code] of cases) {
    const reply = await server.post('/dbs', body);
    tt.same([reply.status, reply.body?.code], [status, code], `${what}: ${describe(reply)}`);
  }
  tt.same(
    (await server.get('/dbs')).body.dbs,
    ['ana.db', 'ben.db', 'class.db', 'solo.db'],
    'no refused request left a database behind',
  );
  await stop(server);
});

t.test('resets a broken copy to the template as it is now; 409 without a template or when it is gone', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await makeClass(server);
  await server.post('/dbs', { prefix: 'student', count: 3, from: 'class' });
  await mustExec(server, 'student-02', 'DROP TABLE marks; DELETE FROM pupils WHERE id > 1');
  await mustExec(server, 'class', "INSERT INTO pupils (id, name) VALUES (4, 'Darwin')");
  const untouched = await dump(server, 'student-03');

  const reset = await server.post('/dbs/student-02/reset');
  tt.same([reset.status, reset.body], [200, { ok: true, db: 'student-02.db', template: 'class.db' }], describe(reset));
  tt.same(
    await dump(server, 'student-02'),
    await dump(server, 'class'),
    'the copy equals the template in its current state',
  );
  tt.same(await dump(server, 'student-03'), untouched, 'the other copies are not reset');
  await mustExec(server, 'student-02', 'INSERT INTO marks (id, pupil, mark) VALUES (9, 4, 3)');

  const noTemplate = await server.post('/dbs/class/reset');
  tt.same(
    [noTemplate.status, noTemplate.body.code],
    [409, 2040],
    `a database made empty has no template: ${describe(noTemplate)}`,
  );
  const unknown = await server.post('/dbs/ghost/reset');
  tt.same([unknown.status, unknown.body.code], [404, 2001], describe(unknown));

  await server.post('/dbs', { db: 'second', from: 'student-02' });
  await mustExec(server, 'second', 'DELETE FROM marks');
  const ofCopy = await server.post('/dbs/second/reset');
  tt.same(
    [ofCopy.status, ofCopy.body.template],
    [200, 'student-02.db'],
    'a copy of a copy is reset to its own template',
  );
  tt.same(await dump(server, 'second'), await dump(server, 'student-02'));

  await makeClass(server, 'scratch');
  await server.post('/dbs', { db: 'orphan', from: 'scratch' });
  await mustExec(server, 'scratch', 'DROP DATABASE scratch');
  const gone = await server.post('/dbs/orphan/reset');
  tt.same([gone.status, gone.body.code], [409, 2041], `the template was dropped: ${describe(gone)}`);

  await stop(server);
  const replayed = await replayVerify(where);
  tt.equal(replayed.code, 0, `replay -verify makes the same resets: ${replayed.stderr.slice(-600)}`);
});

t.test(
  'resets while the copy is being read: every read sees the old state or the new, and later writes last',
  async (tt) => {
    const where = layout(scratchDir(tt));
    const server = await start(where);
    await makeClass(server);
    await server.post('/dbs', { db: 'kid', from: 'class' });
    let stopReading = false;
    const seen = new Set<number>();
    const failures: string[] = [];
    const readers = Array.from({ length: 3 }, async () => {
      while (!stopReading) {
        const reply = await server.exec('kid', 'SELECT count(*) FROM pupils');
        if (reply.status === 200) seen.add(reply.body.results[0].rows[0][0] as number);
        else failures.push(describe(reply));
      }
    });
    for (let round = 0; round < 8; round++) {
      await mustExec(
        server,
        'kid',
        `INSERT INTO pupils (id, name) VALUES (${100 + round}, 'extra'); INSERT INTO pupils (id, name) VALUES (${200 + round}, 'extra')`,
      );
      const reset = await server.post('/dbs/kid/reset');
      if (reset.status !== 200) failures.push(describe(reset));
    }
    stopReading = true;
    await Promise.all(readers);
    tt.same(failures, [], 'no read and no reset failed');
    tt.same(
      [...seen].filter((count) => count !== 3 && count !== 5),
      [],
      `reads saw the template's 3 rows or the 5 before a reset (${[...seen].join(', ')})`,
    );
    await mustExec(server, 'kid', "INSERT INTO pupils (id, name) VALUES (77, 'after the resets')");
    await stop(server);

    const again = await start(where);
    tt.same(
      (await mustExec(again, 'kid', 'SELECT id FROM pupils ORDER BY id')).body.results[0].rows,
      [[1], [2], [3], [77]],
      'the write after the resets survived a restart',
    );
    await stop(again);
    const replayed = await replayVerify(where);
    tt.equal(replayed.code, 0, `replay -verify agrees: ${replayed.stderr.slice(-600)}`);
  },
);

t.test(
  'an open session on the template or on the copy makes a copy or a reset 409, and stays as it was',
  async (tt) => {
    const where = layout(scratchDir(tt));
    const server = await start(where, ['-lock-timeout', '300ms']);
    await makeClass(server);
    await server.post('/dbs', { db: 'kid', from: 'class' });

    const begun = await server.post('/tx/begin', { db: 'class' });
    tt.equal(begun.status, 200, describe(begun));
    const session = begun.body.session as string;
    await inSession(server, session, 'class', "INSERT INTO pupils (id, name) VALUES (50, 'uncommitted')");
    const held = await server.post('/dbs', { db: 'late', from: 'class' });
    tt.same([held.status, held.body.code], [409, 5005], `a copy waits for the session, then 409: ${describe(held)}`);
    const rolledBack = await server.post(`/tx/rollback?session=${session}`);
    tt.equal(rolledBack.status, 200);
    const after = await server.post('/dbs', { db: 'late', from: 'class' });
    tt.equal(after.status, 201, describe(after));
    const late = (await mustExec(server, 'late', 'SELECT id FROM pupils ORDER BY id')).body.results[0].rows;
    tt.same(late, [[1], [2], [3]], 'the copy holds committed rows only');

    const onCopy = await server.post('/tx/begin', { db: 'kid' });
    const kidSession = onCopy.body.session as string;
    await inSession(server, kidSession, 'kid', "INSERT INTO pupils (id, name) VALUES (60, 'kept')");
    const reset = await server.post('/dbs/kid/reset');
    tt.same(
      [reset.status, reset.body.code],
      [409, 5005],
      `a reset refuses while a session holds the copy: ${describe(reset)}`,
    );
    const committed = await server.post(`/tx/commit?session=${kidSession}`);
    tt.equal(committed.status, 200, 'the session was left alone and commits');
    tt.same((await mustExec(server, 'kid', 'SELECT id FROM pupils WHERE id = 60')).body.results[0].rows, [[60]]);
    tt.equal((await server.post('/dbs/kid/reset')).status, 200, 'once the session is over, the reset goes through');
    tt.same(
      (await mustExec(server, 'kid', 'SELECT id FROM pupils WHERE id = 60')).body.results[0].rows,
      [],
      'and undoes the committed session',
    );

    await stop(server);
    const replayed = await replayVerify(where);
    tt.equal(replayed.code, 0, `replay -verify agrees: ${replayed.stderr.slice(-600)}`);
  },
);

t.test('replay to a point in time stops before or after a copy and a reset', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await makeClass(server);
  await server.post('/dbs', { db: 'kid', from: 'class' });
  await mustExec(server, 'kid', 'DROP TABLE marks');
  await server.post('/dbs/kid/reset');
  await stop(server);

  const entries = fileEntries(where.journal);
  const copied = entries.find((entry) => entry.kind === 'copydb') as JournalEntry;
  const reset = entries.find((entry) => entry.kind === 'resetdb') as JournalEntry;
  tt.same(
    [copied.db, copied.from, reset.db, reset.from],
    ['kid.db', 'class.db', 'kid.db', 'class.db'],
    'the entries name the copy and its template',
  );

  const before = await runReplay(
    ['-log-file', where.journal, '-out', path.join(where.dir, 'before-copy'), '-until', String(copied.seq - 1)],
    where.dir,
  );
  tt.equal(before.code, 0, before.stderr);
  tt.notOk(fs.existsSync(path.join(where.dir, 'before-copy', 'kid.db')), 'before its entry the copy does not exist');
  const broken = await runReplay(
    ['-log-file', where.journal, '-out', path.join(where.dir, 'broken'), '-until', String(reset.seq - 1)],
    where.dir,
  );
  tt.equal(broken.code, 0, broken.stderr);
  const brokenFile = new Database(path.join(where.dir, 'broken', 'kid.db'), { readonly: true });
  const brokenTables = brokenFile
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")
    .pluck()
    .all();
  brokenFile.close();
  tt.same(brokenTables, ['pupils'], 'just before the reset the copy lacks the table it lost');
  const full = await replayVerify(where);
  tt.equal(full.code, 0, `and the whole journal gives the live files: ${full.stderr.slice(-600)}`);
  const single = await runReplay(
    [
      '-log-file',
      where.journal,
      '-out',
      path.join(where.dir, 'one'),
      '-db',
      'kid.db',
      '-verify',
      path.join(where.data, 'kid.db'),
    ],
    where.dir,
  );
  tt.equal(single.code, 0, `-db rebuilds a copy with its template's history: ${single.stderr.slice(-600)}`);
  tt.same(
    fs.readdirSync(path.join(where.dir, 'one')).filter((name) => name.endsWith('.db')),
    ['kid.db'],
    'and leaves only the copy asked for',
  );
});

t.test('replay from a snapshot round makes the copies and resets journaled after it', async (tt) => {
  const where = layout(scratchDir(tt));
  const snapshots = path.join(where.dir, 'journal', 'snapshots');
  const server = await start(where, ['-snapshot-every', '5']);
  await makeClass(server);
  await server.post('/dbs', { prefix: 'early', count: 2, from: 'class' });
  for (let i = 10; i < 16; i++) await mustExec(server, 'class', `INSERT INTO pupils (id, name) VALUES (${i}, 'p${i}')`);
  await eventually(() => listRounds(snapshots).length > 0, 20_000);
  const round = listRounds(snapshots).at(-1);
  tt.ok(round !== undefined, 'a snapshot round was taken');
  await mustExec(server, 'class', "INSERT INTO pupils (id, name) VALUES (40, 'after the round')");
  await mustExec(server, 'early-01', 'DELETE FROM marks; DELETE FROM pupils');
  tt.equal((await server.post('/dbs/early-01/reset')).status, 200);
  tt.equal((await server.post('/dbs', { prefix: 'late', count: 2, from: 'class' })).status, 201);
  await stop(server);

  const entries = fileEntries(where.journal);
  const after = entries.filter(
    (entry) => (entry.kind === 'copydb' || entry.kind === 'resetdb') && entry.seq > (round?.base ?? 0),
  );
  tt.ok(after.length >= 3, "copies and a reset lie after the round's base");
  const replayed = await replayVerify(where);
  tt.equal(replayed.code, 0, `replay -verify from the round: ${replayed.stderr.slice(-600)}`);
  tt.match(replayed.stderr, /started from the snapshot through seq \d+/, 'it started from the snapshot round');
});

t.test('crash recovery makes a copy and a reset whose entries are durable but not applied', async (tt) => {
  const where = layout(scratchDir(tt));
  const first = await start(where);
  await makeClass(first);
  await first.post('/dbs', { db: 'kid', from: 'class' });
  await mustExec(first, 'kid', 'DELETE FROM marks');
  await kill(first);

  // As a server killed right after writing the entries, before applying them, leaves them.
  const last = fileEntries(where.journal).at(-1) as JournalEntry;
  const base = { ts: new Date().toISOString(), session: null, sql: null, ok: true, ms: 0 } as const;
  const written: JournalEntry[] = [
    { ...base, seq: last.seq + 1, kind: 'copydb', db: 'crashed.db', from: 'class.db' },
    { ...base, seq: last.seq + 2, kind: 'resetdb', db: 'kid.db', from: 'class.db' },
  ];
  fs.appendFileSync(where.journal, written.map((entry) => encodeLine(entry)).join(''));

  const server = await start(where);
  tt.match(server.stderr(), /ready \(2 journal entries applied/, 'start-up applied both entries');
  const template = await dump(server, 'class');
  tt.same(await dump(server, 'crashed'), template, 'the copy was made');
  tt.same(await dump(server, 'kid'), template, 'the reset was applied');
  await mustExec(server, 'crashed', 'DELETE FROM marks');
  tt.equal((await server.post('/dbs/crashed/reset')).status, 200, 'the recovered copy knows its template');
  await stop(server);
  const replayed = await replayVerify(where);
  tt.equal(replayed.code, 0, `replay -verify agrees with recovery: ${replayed.stderr.slice(-600)}`);
});

t.test(
  'recovery from an old checkpoint passes over a copy that was dropped after its template moved on',
  async (tt) => {
    const where = layout(scratchDir(tt));
    const first = await start(where);
    await makeClass(first);
    await first.post('/dbs', { db: 'kid', from: 'class' });
    await mustExec(first, 'class', "INSERT INTO pupils (id, name) VALUES (7, 'after the copy')");
    await mustExec(first, 'kid', 'DROP DATABASE kid');
    await stop(first);
    // As if the server had died before its checkpoint covered these entries: start-up reads them all again.
    fs.rmSync(`${where.journal}.checkpoint`, { force: true });

    const server = await start(where);
    tt.notMatch(server.stderr(), /could not be brought in line/, `no database is left behind: ${server.stderr()}`);
    tt.same((await server.get('/dbs')).body.dbs, ['class.db'], 'the dropped copy stays dropped');
    tt.equal(
      (await server.post('/dbs', { db: 'kid', from: 'class' })).status,
      201,
      'and its name can be copied to again',
    );
    await stop(server);
    const replayed = await replayVerify(where);
    tt.equal(replayed.code, 0, `replay -verify agrees: ${replayed.stderr.slice(-600)}`);
  },
);

t.test('a copy taken while the template is written holds exactly the writes journaled before it', async (tt) => {
  const where = layout(scratchDir(tt));
  const server = await start(where);
  await server.post('/dbs', { db: 'live' });
  await mustExec(server, 'live', 'CREATE TABLE t (id INT PRIMARY KEY, v INT)');

  const WRITERS = 4;
  const PER_WRITER = 40;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; i < PER_WRITER; i++) {
      const id = w * 1000 + i;
      await mustExec(server, 'live', `INSERT INTO t (id, v) VALUES (${id}, ${id})`);
    }
  });
  const copiers = (async () => {
    for (let c = 1; c <= 6; c++) {
      const reply = await server.post('/dbs', { prefix: `c${c}`, count: 3, from: 'live' });
      if (reply.status !== 201) throw new Error(describe(reply));
    }
  })();
  await Promise.all([...writers, copiers]);

  const entries = fileEntries(where.journal);
  const insertedAt = new Map<number, number>();
  for (const entry of entries) {
    const match = entry.kind === 'exec' && entry.ok ? /VALUES \((\d+),/.exec(entry.sql ?? '') : null;
    if (match) insertedAt.set(Number(match[1]), entry.seq);
  }
  const copies = entries.filter((entry) => entry.kind === 'copydb');
  tt.equal(copies.length, 18, 'eighteen copies were journaled');
  const sizes = new Set<number>();
  for (const copy of copies) {
    const expected = [...insertedAt]
      .filter(([, seq]) => seq < copy.seq)
      .map(([id]) => id)
      .sort((a, b) => a - b);
    const rows = (await mustExec(server, (copy.db as string).slice(0, -3), 'SELECT id FROM t ORDER BY id')).body
      .results[0].rows as number[][];
    tt.same(
      rows.map((row) => row[0]),
      expected,
      `${copy.db} (seq ${copy.seq}) holds the ${expected.length} rows journaled before it`,
    );
    sizes.add(expected.length);
  }
  tt.comment(`copies saw ${sizes.size} different states of the template`);
  await stop(server);
  const replayed = await replayVerify(where);
  tt.equal(replayed.code, 0, `replay -verify agrees: ${replayed.stderr.slice(-600)}`);
});
