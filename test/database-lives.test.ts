/**
 * A database's life begins at its latest creation (createdb or copydb), over
 * the real server and the real replay tool (build first): a class prefix
 * reused next term never hands the new student last term's SQL in
 * GET /dbs/{db}/history, nor last term's rows through POST /dbs/{db}/restore
 * (a seq or a time before the new creation is 409 [SQ2076]; an undo never
 * reaches back past it). A reset is no new life; a copy made under a dropped
 * name is. An admin reads every life with ?lives=all; anyone else asking is
 * 403. A dropped database's history is its last life, ending at its drop.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { IndexStore, type IndexRow } from '../journal/index/index-store';
import type { JournalEntry } from '../journal/record';
import { latestCreation, targetSeq, undoneEntries } from '../src/services/databases/restore-targets';
import { runReplay, type TestServer } from './helpers/server';
import { placeAt, ServerFleet, type ServerPlace } from './helpers/server-fleet';
import { call, ok, rows } from './helpers/token-calls';
import { scratchDir } from './helpers/scratch-dir';
import { assertCode, engineCodeOf } from './helpers/assertions';

t.setTimeout(180_000);

const ADMIN = 'lives-admin-secret-0123456789';
const fleet = new ServerFleet(t);

interface Entry {
  seq: number;
  time: string;
  token: string | null;
  kind: string;
  sql: string | null;
  ok: boolean;
}

interface Token {
  id: string;
  name: string;
  secret: string;
}

async function history(server: TestServer, secret: string, db: string, query = ''): Promise<Entry[]> {
  return (await ok(server, secret, 'GET', `/dbs/${db}/history?limit=500${query}`)).body.entries as Entry[];
}

/** Waits until the clock has moved past `time`, so that a time target falls between two entries. */
async function after(time: string): Promise<void> {
  while (Date.now() <= Date.parse(time) + 2) await new Promise((resolve) => setImmediate(resolve));
}

async function replayEquals(t: Test, where: ServerPlace, what: string): Promise<void> {
  const out = path.join(where.dir, `replayed-${Date.now()}`);
  const replay = await runReplay(['-log-file', where.journal, '-out', out, '-verify', where.data], where.dir);
  t.equal(replay.code, 0, `${what}: replay -verify equals the live databases: ${replay.stderr}`);
}

t.test("a reused class prefix never reaches last term's data", async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN]);
  const termOne = (await ok(server, ADMIN, 'POST', '/tokens', { prefix: 'alumno', count: 1, role: 'write' })).body
    .tokens[0] as Token;
  const secretSql = "CREATE TABLE notas (t TEXT); INSERT INTO notas VALUES ('term one: the old student answer')";
  await ok(server, termOne.secret, 'POST', '/exec', { db: 'alumno-01', sql: secretSql });
  const oldLife = await history(server, ADMIN, 'alumno-01');
  const oldWrite = oldLife.find((e) => e.kind === 'exec')!;
  await after(oldWrite.time);

  // The end of term: the teacher drops the database and revokes the token; a new class gets the same prefix.
  await ok(server, ADMIN, 'POST', '/exec', { sql: 'DROP DATABASE "alumno-01"' });
  await ok(server, ADMIN, 'DELETE', `/tokens/${termOne.id}`);
  const dropped = await history(server, ADMIN, 'alumno-01');
  t.same(
    dropped.map((e) => e.kind),
    ['dropdb', 'exec', 'createdb'],
    'a dropped database, not made again, shows its last life, ending at the drop',
  );
  const termTwo = (await ok(server, ADMIN, 'POST', '/tokens', { prefix: 'alumno', count: 1, role: 'write' })).body
    .tokens[0] as Token;
  t.equal(termTwo.name, 'alumno-01', 'the same name');

  const fresh = await history(server, termTwo.secret, 'alumno-01');
  t.same(
    fresh.map((e) => e.kind),
    ['createdb'],
    "the new student's history begins at their database's creation",
  );
  const created = fresh[0]!;
  t.ok(created.seq > oldWrite.seq, 'a creation after the old life');
  t.notOk(JSON.stringify(fresh).includes('term one'), "the old student's SQL is nowhere in the new student's history");
  t.same(await history(server, termTwo.secret, 'alumno-01', '&token=alumno-01'), [], 'not even asked by name');
  t.same(
    await history(server, termTwo.secret, 'alumno-01', `&until=${oldWrite.seq}`),
    [],
    'nor by seq before the creation',
  );

  assertCode(
    t,
    await call(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', { to: oldWrite.seq }),
    409,
    2076,
    'a restore to a seq of the old life',
  );
  const refused = await call(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', {
    to: oldWrite.seq,
    dryRun: true,
  });
  assertCode(t, refused, 409, 2076, 'its dry run');
  t.match(refused.body.error, new RegExp(`seq ${created.seq}\\b`), 'naming the seq the database was made at');
  assertCode(
    t,
    await call(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', {
      to: new Date(Date.parse(oldWrite.time) + 1).toISOString(),
    }),
    409,
    2076,
    'a restore to a time of the old life',
  );
  assertCode(
    t,
    await call(server, ADMIN, 'POST', '/dbs/alumno-01/restore', { to: oldWrite.seq }),
    409,
    2076,
    'the admin too: the old life is not this database',
  );
  assertCode(
    t,
    await call(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', { undo: 'last' }),
    409,
    2077,
    'the new student has nothing to undo',
  );
  t.same(
    await rows(server, termTwo.secret, 'alumno-01', "SELECT count(*) FROM sqlite_schema WHERE name = 'notas'"),
    [[0]],
    "the old student's table is not there",
  );

  // The new life has writes, restores and undos of its own.
  await ok(server, termTwo.secret, 'POST', '/exec', {
    db: 'alumno-01',
    sql: 'CREATE TABLE t (x INT); INSERT INTO t VALUES (1)',
  });
  await ok(server, termTwo.secret, 'POST', '/exec', { db: 'alumno-01', sql: 'INSERT INTO t VALUES (2)' });
  const undo = await ok(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', { undo: 'last' });
  t.equal(undo.body.undone.count, 1, 'an undo in the new life undoes its own last write');
  t.same(await rows(server, termTwo.secret, 'alumno-01', 'SELECT x FROM t'), [[1]], 'and its state is the new one');
  const toCreation = await ok(server, termTwo.secret, 'POST', '/dbs/alumno-01/restore', { to: created.seq });
  t.equal(toCreation.body.restored.seq, created.seq, 'the creation itself is the oldest point');
  t.same(
    await rows(server, termTwo.secret, 'alumno-01', 'SELECT count(*) FROM sqlite_schema'),
    [[0]],
    'restored to the empty database of the new life, not the old one',
  );

  // The admin's explicit look at every life.
  const all = await history(server, ADMIN, 'alumno-01', '&lives=all');
  t.ok(
    all.some((e) => e.seq === oldWrite.seq && e.sql === secretSql),
    'an admin reads older lives with lives=all',
  );
  t.ok(
    all.some((e) => e.kind === 'dropdb') && all.filter((e) => e.kind === 'createdb').length === 2,
    'both creations and the drop between them',
  );
  t.same(
    (await history(server, ADMIN, 'alumno-01', '&lives=current')).map((e) => e.seq),
    (await history(server, ADMIN, 'alumno-01')).map((e) => e.seq),
    'lives=current is the default',
  );
  t.ok(
    (await history(server, ADMIN, 'alumno-01')).every((e) => e.seq >= created.seq),
    "without it, the admin too sees this life's entries only",
  );
  assertCode(
    t,
    await call(server, termTwo.secret, 'GET', '/dbs/alumno-01/history?lives=all'),
    403,
    1030,
    'a student may not read older lives',
  );
  assertCode(
    t,
    await call(server, ADMIN, 'GET', '/dbs/alumno-01/history?lives=some'),
    400,
    1070,
    'a bad value of lives',
  );

  await fleet.stop(server);
  await replayEquals(t, where, 'after the reused name');
});

t.test('a copy under a dropped name is a new life; a reset is not', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN]);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'lesson' });
  await ok(server, ADMIN, 'POST', '/exec', {
    db: 'lesson',
    sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('template')",
  });
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'pupil' });
  await ok(server, ADMIN, 'POST', '/exec', {
    db: 'pupil',
    sql: "CREATE TABLE old (x TEXT); INSERT INTO old VALUES ('first life')",
  });
  const firstLife = (await history(server, ADMIN, 'pupil')).find((e) => e.kind === 'exec')!;
  await ok(server, ADMIN, 'POST', '/exec', { sql: 'DROP DATABASE pupil' });
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'pupil', from: 'lesson' });
  const pupil = (await ok(server, ADMIN, 'POST', '/tokens', { name: 'pupil', role: 'write', databases: ['pupil'] }))
    .body.tokens[0].secret as string;

  const copied = await history(server, pupil, 'pupil');
  t.same(
    copied.map((e) => e.kind),
    ['copydb'],
    "a copy's history begins at its copydb",
  );
  const copySeq = copied[0]!.seq;
  assertCode(
    t,
    await call(server, pupil, 'POST', '/dbs/pupil/restore', { to: firstLife.seq }),
    409,
    2076,
    'a target in the life before the copy',
  );

  await ok(server, pupil, 'POST', '/exec', { db: 'pupil', sql: "INSERT INTO t VALUES ('mine')" });
  await ok(server, pupil, 'POST', '/dbs/pupil/reset');
  await ok(server, pupil, 'POST', '/exec', { db: 'pupil', sql: "INSERT INTO t VALUES ('after reset')" });
  const lived = await history(server, pupil, 'pupil');
  t.same(
    lived.map((e) => e.kind),
    ['exec', 'resetdb', 'exec', 'copydb'],
    'a reset is no new life: what came before it stays in the history',
  );
  const beforeReset = lived[2]!.seq;
  await ok(server, pupil, 'POST', '/dbs/pupil/restore', { to: beforeReset });
  t.same(
    await rows(server, pupil, 'pupil', 'SELECT x FROM t ORDER BY rowid'),
    [['template'], ['mine']],
    'and a restore goes back across the reset',
  );
  await ok(server, pupil, 'POST', '/dbs/pupil/restore', { to: copySeq });
  t.same(
    await rows(server, pupil, 'pupil', 'SELECT x FROM t ORDER BY rowid'),
    [['template']],
    'to the copy itself: the template as it was copied',
  );
  t.same(
    await rows(server, pupil, 'pupil', "SELECT count(*) FROM sqlite_schema WHERE name = 'old'"),
    [[0]],
    'never the first life',
  );

  await fleet.stop(server);
  await replayEquals(t, where, 'after the copy and the reset');
});

t.test('a server without tokens keeps lives apart too, and serves every life when asked', async (t) => {
  const where = placeAt(scratchDir(t));
  // Without tokens a history is served only with -journal-feed, as the journal is.
  const server = await fleet.start(where, ['-journal-feed']);
  await server.post('/dbs', { db: 'open' });
  await server.post('/exec', { db: 'open', sql: 'CREATE TABLE before_drop (x INT)' });
  await server.post('/exec', { sql: 'DROP DATABASE open' });
  await server.post('/dbs', { db: 'open' });
  const current = (await server.get('/dbs/open/history')).body.entries as Entry[];
  t.same(
    current.map((e) => e.kind),
    ['createdb'],
    'the current life',
  );
  const all = (await server.get('/dbs/open/history?lives=all')).body.entries as Entry[];
  t.same(
    all.map((e) => e.kind),
    ['createdb', 'dropdb', 'exec', 'createdb'],
    'every life, asked for',
  );
  const reply = await server.post('/dbs/open/restore', { to: all[2]!.seq });
  t.equal(reply.status, 409, 'a restore to the old life');
  t.equal(reply.body.code, 2076, '[SQ2076]');
  await fleet.stop(server);
  await replayEquals(t, where, 'without tokens');
});

function entry(seq: number, kind: JournalEntry['kind'], extra: Partial<JournalEntry> = {}): JournalEntry {
  return {
    seq,
    ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    db: 'd.db',
    session: null,
    kind,
    sql: null,
    ok: true,
    ms: 0,
    tokenId: 'ana',
    tokenName: 'ana',
    ...extra,
  };
}

t.test('the boundary, as pure functions', async (t) => {
  const lives = [
    entry(1, 'createdb'),
    entry(2, 'exec', { sql: 'old life' }),
    entry(3, 'dropdb'),
    entry(4, 'createdb', { ok: false }),
    entry(5, 'exec', { db: 'other.db' }),
    entry(6, 'copydb', { from: 'lesson.db' }),
    entry(7, 'resetdb', { from: 'lesson.db' }),
  ];
  const now = Date.parse(lives.at(-1)!.ts) + 1000;
  t.equal(latestCreation(lives, 'd.db'), 6, 'the latest successful creation: a failed one and a reset are none');
  t.equal(latestCreation(lives.slice(1, 3), 'd.db'), null, 'none kept: no bound');
  t.equal(
    engineCodeOf(() => targetSeq('d.db', { to: 2 }, lives, 7, now, 'ana')),
    2076,
    'a seq of the old life',
  );
  t.equal(
    engineCodeOf(() => targetSeq('d.db', { to: 5 }, lives, 7, now, 'ana')),
    2076,
    'between the lives',
  );
  t.equal(targetSeq('d.db', { to: 6 }, lives, 7, now, 'ana'), 6, 'the creation itself');
  t.equal(
    engineCodeOf(() => targetSeq('d.db', { time: Date.parse(lives[1]!.ts), text: lives[1]!.ts }, lives, 7, now, 'ana')),
    2076,
    'a time of the old life',
  );
  t.equal(targetSeq('d.db', { undo: 'last' }, lives, 7, now, 'ana'), 6, 'an undo of the reset: to the copy');
  const noWriteSince = lives.slice(0, 5).concat(entry(6, 'copydb', { tokenId: 'admin', tokenName: 'admin' }));
  t.equal(
    engineCodeOf(() => targetSeq('d.db', { undo: 'last' }, noWriteSince, 6, now, 'ana')),
    2077,
    "the old life's write by the same token is not this life's",
  );
  t.equal(
    engineCodeOf(() => targetSeq('d.db', { to: 2 }, lives.slice(1), 7, now, 'ana')),
    2076,
    'entries without the old creation (retention took it) are still bounded by the new one',
  );
  t.same(
    undoneEntries(lives, 'd.db', 6).entries.map((e) => e.seq),
    [7],
    'what a restore to the creation undoes',
  );
});

t.test("the index's creations: one lookup, failed ones and other kinds left out", async (t) => {
  const file = path.join(scratchDir(t), 'statements.jsonl.index');
  const store = IndexStore.open(file, (message) => t.fail(message));
  const row = (seq: number, db: string, kind: string, ok = true): IndexRow => ({
    seq,
    db,
    time: seq,
    token: null,
    kind,
    ok,
    errorClass: null,
    code: null,
    file: 1,
    offset: seq * 10,
  });
  store.insert([
    row(1, 'a.db', 'createdb'),
    row(2, 'a.db', 'exec'),
    row(3, 'a.db', 'dropdb'),
    row(4, 'b.db', 'copydb'),
    row(5, 'a.db', 'copydb'),
    row(6, 'a.db', 'createdb', false),
    row(7, 'a.db', 'resetdb'),
  ]);
  t.equal(store.latestCreation('a.db'), 5, 'the latest successful createdb or copydb');
  t.equal(store.latestCreation('b.db'), 4);
  t.equal(store.latestCreation('c.db'), null, 'none');
  store.close();
  const db = new Database(file, { readonly: true });
  const plan = db
    .prepare(
      "EXPLAIN QUERY PLAN SELECT seq FROM entries WHERE db = 'a.db' AND kind IN ('createdb', 'copydb') AND ok = 1 ORDER BY seq DESC LIMIT 1",
    )
    .all() as Array<{ detail: string }>;
  db.close();
  t.match(plan.map((p) => p.detail).join('; '), /entries_creations/, 'read from the partial index of creations');
});
