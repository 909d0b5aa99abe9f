/**
 * POST /dbs/{db}/restore over the real server and the real replay tool:
 * to a seq, to a time, a dry run that lists exactly what a restore undoes,
 * undo of the caller's own last write (refused over a classmate's later
 * write: test/undo-own-writes.test.ts) and of a restore, an open session
 * (409 SQ5005), targets before the database or older than what is kept (409),
 * the roles (read 403, -restore-role admin), and a student who deletes a
 * whole Chinook table and gets it back while a classmate works on, the
 * server never restarting. Build first: both run from dist/.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { journalFirstSeq } from '../journal/reader';
import { importChinook } from './helpers/chinook';
import { eventually } from './helpers/wait';
import { runReplay, type Reply, type TestServer } from './helpers/server';
import { placeAt, ServerFleet, type ServerPlace } from './helpers/server-fleet';
import { as, call, ok, rows, tokenSecret } from './helpers/token-calls';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const ADMIN = 'restore-admin-secret-0123456789';
const fleet = new ServerFleet(t);

const token = (server: TestServer, name: string, role: string, databases: string[]): Promise<string> =>
  tokenSecret(server, ADMIN, name, role, databases);

interface Entry {
  seq: number;
  ts: string;
  kind: string;
  db: string | null;
  to?: number;
  tokenName?: string;
}

/** The journal's entries of one database, oldest first (GET /journal). */
async function journalOf(server: TestServer, db: string): Promise<Entry[]> {
  const reply = await ok(server, ADMIN, 'GET', `/journal?db=${db}`);
  return reply.text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Entry);
}

function assertCode(t: Test, reply: Reply, status: number, code: number, what: string): void {
  t.equal(reply.status, status, `${what}: ${status}`);
  t.equal(reply.body?.code, code, `${what}: [SQ${code}]`);
}

/** Waits until the clock has moved past `ts`, so that a time target falls between two entries. */
async function after(ts: string): Promise<void> {
  while (Date.now() <= Date.parse(ts) + 2) await new Promise((resolve) => setImmediate(resolve));
}

t.test("restores to a seq, to a time, undoes the caller's last write and a restore", async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN, '-lock-timeout', '300ms']);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'lab' });
  const ana = await token(server, 'ana', 'write', ['lab']);
  const ben = await token(server, 'ben', 'write', ['lab']);
  const reader = await token(server, 'lector', 'read', ['lab']);
  await ok(server, ana, 'POST', '/exec', { db: 'lab', sql: 'CREATE TABLE t (x INT); INSERT INTO t VALUES (1)' });
  await ok(server, ben, 'POST', '/exec', { db: 'lab', sql: 'INSERT INTO t VALUES (2)' });
  const [seqA, seqB] = (await journalOf(server, 'lab.db')).filter((e) => e.kind === 'exec').map((e) => e.seq) as [
    number,
    number,
  ];
  await after((await journalOf(server, 'lab.db')).at(-1)!.ts);
  await ok(server, ana, 'POST', '/exec', { db: 'lab', sql: 'INSERT INTO t VALUES (3)' });
  await ok(server, ben, 'POST', '/exec', { db: 'lab', sql: 'INSERT INTO t VALUES (4)' });
  const execs = (await journalOf(server, 'lab.db')).filter((e) => e.kind === 'exec');
  const [seqC, seqD] = execs.slice(2).map((e) => e.seq) as [number, number];
  const all = 'SELECT x FROM t ORDER BY x';

  const anaUndo = await call(server, ana, 'POST', '/dbs/lab/restore', { undo: 'last', dryRun: true });
  assertCode(t, anaUndo, 409, 2084, "ana's undo, with ben's write after her last one");
  t.match(anaUndo.body.error, /ben wrote on it since/, 'naming who wrote since');

  const dry = await ok(server, ben, 'POST', '/dbs/lab/restore', { to: seqC - 1, dryRun: true });
  t.equal(dry.body.target.seq, seqC - 1, 'a restore to a seq goes back over anyone');
  t.same(
    dry.body.undone.entries.map((e: { seq: number }) => e.seq),
    [seqD, seqC],
    'the dry run lists exactly the writes undone, newest first',
  );
  t.same(
    dry.body.undone.entries.map((e: { token: string }) => e.token),
    ['ben', 'ana'],
    'with who made them',
  );
  t.equal(dry.body.undone.count, 2, 'and counts them');
  t.same(await rows(server, ana, 'lab', all), [[1], [2], [3], [4]], 'a dry run changes nothing');

  const undone = await ok(server, ben, 'POST', '/dbs/lab/restore', { to: seqC - 1 });
  t.match(
    undone.body,
    { ok: true, db: 'lab.db', restored: { seq: seqC - 1 }, undone: { count: 2 } },
    'the restore answers what it restored',
  );
  t.same(await rows(server, reader, 'lab', all), [[1], [2]], "the database is as it was before ana's last write");
  const restoreEntry = (await journalOf(server, 'lab.db')).at(-1)!;
  t.match(
    restoreEntry,
    { kind: 'restoredb', to: seqC - 1, tokenName: 'ben', seq: undone.body.seq },
    'a restoredb entry with its target and its token',
  );

  await ok(server, ben, 'POST', '/dbs/lab/restore', { undo: 'last' });
  t.same(await rows(server, ana, 'lab', all), [[1], [2], [3], [4]], 'undoing the restore brings back what it undid');

  await ok(server, ben, 'POST', '/dbs/lab/restore', { to: seqA });
  t.same(await rows(server, ana, 'lab', all), [[1]], 'to a seq: the state right after that entry');
  const byTime = await ok(server, ben, 'POST', '/dbs/lab/restore', {
    to: new Date(Date.parse(execs[1]!.ts) + 1).toISOString(),
  });
  t.equal(byTime.body.restored.seq, seqB, 'to a time: the last entry written at or before it');
  t.same(await rows(server, ana, 'lab', all), [[1], [2]], 'and its state');

  assertCode(t, await call(server, reader, 'POST', '/dbs/lab/restore', { to: seqA }), 403, 1030, 'a read token');
  assertCode(
    t,
    await call(server, ana, 'POST', '/dbs/lab/restore', { to: 0 }),
    409,
    2076,
    'before the database existed',
  );
  assertCode(
    t,
    await call(server, ana, 'POST', '/dbs/lab/restore', { to: 1_000_000 }),
    400,
    1075,
    'beyond the last seq',
  );
  assertCode(
    t,
    await call(server, ana, 'POST', '/dbs/lab/restore', { to: '2999-01-01T00:00:00Z' }),
    400,
    1075,
    'in the future',
  );
  assertCode(t, await call(server, ana, 'POST', '/dbs/lab/restore', { to: 'yesterday' }), 400, 1075, 'not a time');

  const session = await ok(server, ana, 'POST', '/tx/begin', { db: 'lab' });
  const id = session.body.session as string;
  await ok(server, ana, 'POST', `/exec?session=${id}`, { db: 'lab', sql: 'INSERT INTO t VALUES (9)' });
  assertCode(
    t,
    await call(server, ben, 'POST', '/dbs/lab/restore', { to: seqA }),
    409,
    5005,
    'a session open on the database',
  );
  await ok(server, ana, 'POST', `/tx/commit?session=${id}`);
  t.same(await rows(server, ana, 'lab', all), [[1], [2], [9]], 'the session was left as it was and committed');

  await fleet.stop(server);
  const out = path.join(where.dir, 'replayed');
  const replay = await runReplay(['-log-file', where.journal, '-out', out, '-verify', where.data], where.dir);
  t.equal(replay.code, 0, `replay -verify of the whole journal equals the live databases: ${replay.stderr}`);

  // As after a crash between the restoredb entry and its swap: the file lacks the last restore, and the checkpoint is gone.
  const entries = await (async () => {
    const again = await fleet.start(where, ['-token', ADMIN]);
    const list = await journalOf(again, 'lab.db');
    await fleet.stop(again);
    return list;
  })();
  const lastRestore = entries.filter((e) => e.kind === 'restoredb').at(-1)!;
  const before = path.join(where.dir, 'before-restore');
  t.equal(
    (
      await runReplay(
        ['-log-file', where.journal, '-out', before, '-db', 'lab', '-until', String(lastRestore.seq - 1)],
        where.dir,
      )
    ).code,
    0,
    'the file as it was before the last restore',
  );
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(where.data, `lab.db${suffix}`), { force: true });
  fs.copyFileSync(path.join(before, 'lab.db'), path.join(where.data, 'lab.db'));
  fs.rmSync(`${where.journal}.checkpoint`, { force: true });
  const recovered = await fleet.start(where, ['-token', ADMIN]);
  t.same(
    await rows(recovered, ADMIN, 'lab', all),
    [[1], [2], [9]],
    'crash recovery applies the restoredb entry the file lacked, then what followed',
  );
  await fleet.stop(recovered);
  const check = await runReplay(
    ['-log-file', where.journal, '-out', path.join(where.dir, 'replayed-again'), '-verify', where.data],
    where.dir,
  );
  t.equal(check.code, 0, `and replay -verify still equals the live databases: ${check.stderr}`);
});

t.test('-restore-role admin keeps restores for admins', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN, '-restore-role', 'admin']);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'own' });
  const writer = await token(server, 'escritor', 'write', ['own']);
  await ok(server, writer, 'POST', '/exec', { db: 'own', sql: 'CREATE TABLE t (x INT)' });
  assertCode(t, await call(server, writer, 'POST', '/dbs/own/restore', { undo: 'last' }), 403, 1030, 'a write token');
  const byAdmin = await call(server, ADMIN, 'POST', '/dbs/own/restore', { undo: 'last' });
  t.equal(byAdmin.status, 409, 'the admin may (its own last write is the creation: nothing before it)');
  t.equal(byAdmin.body.code, 2076, 'before the database existed');
  const entries = await journalOf(server, 'own.db');
  t.equal(
    (await call(server, ADMIN, 'POST', '/dbs/own/restore', { to: entries[0]!.seq })).status,
    200,
    'to its creation',
  );
  t.same(
    await rows(server, ADMIN, 'own', "SELECT count(*) FROM sqlite_schema WHERE name = 't'"),
    [[0]],
    'the table is gone',
  );
  await fleet.stop(server);
});

t.test('a target older than what retention keeps is 409, naming the oldest point', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-log-max-size', '2K', '-snapshot-every', '10', '-log-retain', '1']);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'old' });
  await ok(server, ADMIN, 'POST', '/exec', { db: 'old', sql: 'CREATE TABLE t (x INT, pad TEXT)' });
  for (let i = 0; i < 60; i++)
    await ok(server, ADMIN, 'POST', '/exec', { db: 'old', sql: `INSERT INTO t VALUES (${i}, '${'x'.repeat(200)}')` });
  // Rounds and retention run in the background: wait until the journal before seq 2 is gone (under load it takes a moment).
  t.ok(
    await eventually(async () => ((await journalFirstSeq(where.journal)) ?? 1) > 2, 30_000, 50),
    'retention removed the oldest journal files',
  );
  const reply = await server.post('/dbs/old/restore', { to: 2 });
  t.equal(reply.status, 409, 'refused');
  t.equal(reply.body.code, 2075, 'older than what is kept');
  t.match(
    reply.body.error,
    /oldest point that can be restored is seq \d+|journal starts at seq \d+/,
    'naming the oldest point',
  );
  await fleet.stop(server);
});

t.test('"I deleted everything": a student undoes DELETE FROM Track while a classmate works on', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN, '-max-body-bytes', '4M']);
  const pid = server.child.pid;
  await importChinook(server, 'chinook', as(ADMIN));
  const klass = await ok(server, ADMIN, 'POST', '/tokens', {
    prefix: 'alumno',
    count: 2,
    role: 'write',
    from: 'chinook',
  });
  const [one, two] = klass.body.tokens as Array<{ name: string; secret: string }>;
  const tables = (
    (await ok(server, one!.secret, 'GET', `/tables?db=${one!.name}`)).body.tables as Array<{ name: string }>
  ).map((table) => table.name);
  const snapshot = async (): Promise<Record<string, unknown[][]>> => {
    const all: Record<string, unknown[][]> = {};
    for (const table of tables)
      all[table] = await rows(server, one!.secret, one!.name, `SELECT rowid, * FROM "${table}" ORDER BY rowid`);
    return all;
  };
  const before = await snapshot();
  t.equal(before.Track!.length, 3503, 'every track is there');

  let stop = false;
  let classmate = { reads: 0, writes: 0, failures: [] as string[] };
  const work = (async () => {
    await ok(server, two!.secret, 'POST', '/exec', { db: two!.name, sql: 'CREATE TABLE notas (n INT)' });
    for (let i = 0; !stop; i++) {
      const read = await call(server, two!.secret, 'POST', '/exec', {
        db: two!.name,
        sql: 'SELECT count(*) FROM Track',
      });
      if (read.status === 200 && read.body.results[0].rows[0][0] === 3503) classmate.reads++;
      else classmate.failures.push(`read ${read.status} ${read.text.slice(0, 100)}`);
      const write = await call(server, two!.secret, 'POST', '/exec', {
        db: two!.name,
        sql: `INSERT INTO notas VALUES (${i})`,
      });
      if (write.status === 200) classmate.writes++;
      else classmate.failures.push(`write ${write.status} ${write.text.slice(0, 100)}`);
    }
  })();

  // Foreign keys are enforced: what references Track goes first, in the same batch.
  await ok(server, one!.secret, 'POST', '/exec', {
    db: one!.name,
    sql: 'DELETE FROM InvoiceLine; DELETE FROM PlaylistTrack; DELETE FROM Track',
  });
  t.same(await rows(server, one!.secret, one!.name, 'SELECT count(*) FROM Track'), [[0]], 'the tracks are gone');
  const started = process.hrtime.bigint();
  const restored = await ok(server, one!.secret, 'POST', `/dbs/${one!.name}/restore`, { undo: 'last' });
  t.comment(`the restore of a Chinook copy took ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
  t.equal(restored.body.undone.count, 1, 'one write undone');
  t.same(await snapshot(), before, 'every row of every table is back');
  stop = true;
  await work;
  t.same(classmate.failures, [], "the classmate's reads and writes all succeeded meanwhile");
  t.ok(
    classmate.reads > 0 && classmate.writes > 0,
    `the classmate worked on (${classmate.reads} reads, ${classmate.writes} writes)`,
  );
  const health = await server.get('/health', as(ADMIN));
  t.equal(health.status, 200, '/health answers');
  t.equal(server.child.pid, pid, 'the same process');
  t.equal(server.child.exitCode, null, 'which never exited');
  classmate = { reads: 0, writes: 0, failures: [] };
  await fleet.stop(server);
  const out = path.join(where.dir, 'replayed');
  const replay = await runReplay(['-log-file', where.journal, '-out', out, '-verify', where.data], where.dir);
  t.equal(replay.code, 0, `replay -verify equals the live databases: ${replay.stderr}`);
});
