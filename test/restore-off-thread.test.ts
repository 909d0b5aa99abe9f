/**
 * Restores run off the server's thread: while a student's dry run and restore
 * replay a history built to take about 5 s, and while ten students press
 * Undo together, a classmate's reads on another database and /health answer
 * with a p99 under 100 ms, every answer correct, the restores' answers too,
 * and the server's resident memory stays bounded. Past its time bound
 * (-restore-timeout) or its memory bound (-restore-memory) a rebuild answers
 * its own code, leaves no scratch directory and no write lock behind. replay
 * -verify equals the live databases afterwards. Build first: all run from dist/.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { importChinook } from './helpers/chinook';
import { runReplay, type Reply, type TestServer } from './helpers/server';
import { placeAt, ServerFleet, type ServerPlace } from './helpers/server-fleet';
import { as, call, ok, rows, tokenSecret } from './helpers/token-calls';
import { classmate, p99, rssKb, type Watch } from './helpers/classmate-watch';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(240_000);

const ADMIN = 'off-thread-admin-secret-0123456789';
const fleet = new ServerFleet(t);
/** What a classmate may wait, at the 99th percentile, while restores run. */
const P99_MS = 100;
/** How long the student's history takes to replay, about. */
const HISTORY_MS = 5000;
/** Rows one heavy write counts (about 1 s on this machine, under the 5 s statement timeout). */
const HEAVY_ROWS = 8_000_000;
/** The statement timeout of these servers: what builds a history runs well under it, even on a busy machine. */
const ROOMY = ['-query-timeout', '30s', '-request-timeout', '60s'];
/** The most the server's resident memory may grow while the restores run. */
const RSS_GROWTH_MB = 120;

const token = (server: TestServer, name: string, databases: string[]): Promise<string> =>
  tokenSecret(server, ADMIN, name, 'write', databases);

const heavyWrite = (n: number): string =>
  `UPDATE t SET v = v + (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT count(*) FROM c) WHERE id = 1`;

/** Heavy writes on `db` until they have taken `ms` live (at most 15): what a replay of them takes again. */
async function heavyHistory(server: TestServer, secret: string, db: string, ms: number): Promise<number> {
  let spent = 0;
  let writes = 0;
  while (spent < ms && writes < 15) {
    const started = performance.now();
    await ok(server, secret, 'POST', '/exec', { db, sql: heavyWrite(HEAVY_ROWS) });
    spent += performance.now() - started;
    writes++;
  }
  return writes;
}

function judge(t: Test, watch: Watch, baselineKb: number, what: string): void {
  t.ok(watch.latencies.length >= 20, `${what}: the classmate was answered ${watch.latencies.length} times meanwhile`);
  t.same(watch.wrong, [], `${what}: every answer the classmate got is correct`);
  const worst = Math.max(...watch.latencies);
  t.ok(
    p99(watch.latencies) < P99_MS,
    `${what}: the classmate's p99 is ${p99(watch.latencies).toFixed(1)} ms (worst ${worst.toFixed(1)} ms), under ${P99_MS} ms`,
  );
  const growthMb = (watch.peakRssKb - baselineKb) / 1024;
  t.ok(growthMb < RSS_GROWTH_MB, `${what}: the server's RSS grew ${growthMb.toFixed(1)} MB, under ${RSS_GROWTH_MB} MB`);
}

function scratchLeft(where: ServerPlace): string[] {
  const dir = path.join(path.dirname(where.journal), 'restoring');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

async function verify(t: Test, where: ServerPlace, server: TestServer): Promise<void> {
  await fleet.stop(server);
  const replayed = await runReplay(
    ['-log-file', where.journal, '-out', path.join(where.dir, 'replay'), '-verify', where.data],
    where.dir,
  );
  t.equal(replayed.code, 0, `replay -verify equals the live databases: ${replayed.stderr}`);
}

t.test("a dry run and a restore of a 5 s history, then ten undos at once: a classmate's reads stay fast", async (t) => {
  const where = placeAt(scratchDir(t));
  // A roomy statement timeout: the heavy writes that build the history must not be stopped on a loaded machine.
  const server = await fleet.start(where, ['-token', ADMIN, ...ROOMY]);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'classmate' });
  const mate = await token(server, 'mate', ['classmate']);
  await ok(server, mate, 'POST', '/exec', {
    db: 'classmate',
    sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO notes VALUES (1, 'a'), (2, 'b')",
  });

  await ok(server, ADMIN, 'POST', '/dbs', { db: 'student' });
  const student = await token(server, 'student', ['student']);
  await ok(server, student, 'POST', '/exec', {
    db: 'student',
    sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0)',
  });
  const writes = await heavyHistory(server, student, 'student', HISTORY_MS);
  const heavy = (await rows(server, student, 'student', 'SELECT v FROM t WHERE id = 1'))[0]?.[0];
  t.equal(heavy, writes * HEAVY_ROWS, `${writes} heavy writes make the history`);
  await ok(server, student, 'POST', '/exec', { db: 'student', sql: 'INSERT INTO t VALUES (2, 42)' });

  const baseline = rssKb(server.child.pid as number);
  const restores = (async () => {
    const dry = await ok(server, student, 'POST', '/dbs/student/restore', { undo: 'last', dryRun: true });
    const real = await ok(server, student, 'POST', '/dbs/student/restore', { undo: 'last' });
    return { dry, real };
  })();
  const watch = await classmate(server, restores, as(mate));
  const { dry, real } = await restores;
  t.equal(dry.body.undone.count, 1, 'the dry run undoes the one last write');
  t.match(dry.body.undone.entries[0], { kind: 'exec', sql: 'INSERT INTO t VALUES (2, 42)' }, 'and names it');
  t.equal(real.body.restored.seq, dry.body.target.seq, 'the restore goes to the dry run’s target');
  t.same(
    await rows(server, student, 'student', 'SELECT id, v FROM t ORDER BY id'),
    [[1, writes * HEAVY_ROWS]],
    "the restore's answer is right: the heavy history stays, the last write is gone",
  );
  judge(t, watch, baseline, 'dry run and restore');

  // Ten students with a copy each of a Chinook template press Undo together: each undo replays the import.
  await importChinook(server, 'lesson', as(ADMIN));
  const students: Array<{ db: string; secret: string }> = [];
  for (let i = 0; i < 10; i++) {
    const db = `pupil${i}`;
    await ok(server, ADMIN, 'POST', '/dbs', { db, from: 'lesson' });
    const secret = await token(server, `pupil${i}`, [db]);
    await ok(server, secret, 'POST', '/exec', { db, sql: 'DELETE FROM InvoiceLine' });
    students.push({ db, secret });
  }
  const beforeUndos = rssKb(server.child.pid as number);
  const undos = Promise.all(
    students.map(({ db, secret }) => ok(server, secret, 'POST', `/dbs/${db}/restore`, { undo: 'last' })),
  );
  const watchUndos = await classmate(server, undos, as(mate));
  await undos;
  for (const { db, secret } of students)
    t.same(
      await rows(server, secret, db, 'SELECT count(*) FROM InvoiceLine'),
      [[2240]],
      `${db}: the undo brought the rows back`,
    );
  judge(t, watchUndos, beforeUndos, 'ten undos at once');
  t.same(scratchLeft(where), [], 'no scratch directory is left');
  await verify(t, where, server);
});

/** A database with one table and `writes` heavy writes on it, then one light write: what the bound tests restore. */
async function boundedHistory(server: TestServer, db: string, writes: number): Promise<void> {
  await ok(server, ADMIN, 'POST', '/dbs', { db });
  await ok(server, ADMIN, 'POST', '/exec', {
    db,
    sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0)',
  });
  for (let i = 0; i < writes; i++) await ok(server, ADMIN, 'POST', '/exec', { db, sql: heavyWrite(HEAVY_ROWS) });
  await ok(server, ADMIN, 'POST', '/exec', { db, sql: 'INSERT INTO t VALUES (2, 42)' });
}

/** What a refused restore must leave: no scratch directory, the write lock free, the database unchanged. */
async function leftNothing(t: Test, server: TestServer, where: ServerPlace, db: string, what: string): Promise<void> {
  t.same(scratchLeft(where), [], `${what}: no scratch directory is left`);
  const write = await call(server, ADMIN, 'POST', '/exec', { db, sql: 'INSERT INTO t VALUES (3, 7)' });
  t.equal(write.status, 200, `${what}: the write lock is free (a write lands at once)`);
  t.same(
    (await rows(server, ADMIN, db, 'SELECT id FROM t ORDER BY id')).map((row) => row[0]),
    [1, 2, 3],
    `${what}: nothing was restored`,
  );
  await ok(server, ADMIN, 'POST', '/exec', { db, sql: 'DELETE FROM t WHERE id = 3' });
}

t.test('past -restore-timeout a rebuild is killed: 400 [SQ6055], no scratch directory, no lock held', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, [
    '-token',
    ADMIN,
    '-restore-timeout',
    '300ms',
    '-lock-timeout',
    '300ms',
    ...ROOMY,
  ]);
  await boundedHistory(server, 'slow', 2);
  for (const body of [{ undo: 'last', dryRun: true }, { undo: 'last' }]) {
    const what = body.dryRun === true ? 'a dry run' : 'a restore';
    const started = performance.now();
    const reply = await call(server, ADMIN, 'POST', '/dbs/slow/restore', body);
    t.equal(reply.status, 400, `${what}: 400`);
    t.equal(reply.body?.code, 6055, `${what}: [SQ6055] ${reply.body?.error}`);
    t.ok(performance.now() - started < 3000, `${what}: answered at the bound, not after the replay`);
    await leftNothing(t, server, where, 'slow', what);
  }
  await verify(t, where, server);
});

t.test('past -restore-memory a rebuild ends: 400 [SQ6056], no scratch directory, no lock held', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, [
    '-token',
    ADMIN,
    '-restore-memory',
    '16MB',
    '-max-body-bytes',
    '4MB',
    '-lock-timeout',
    '300ms',
  ]);
  await boundedHistory(server, 'wide', 0);
  // 32 MB of SQL in the database's history: more than the rebuild's heap can hold decoded.
  const text = 'x'.repeat(2 * 1024 * 1024);
  for (let i = 0; i < 16; i++)
    await ok(server, ADMIN, 'POST', '/exec', {
      db: 'wide',
      sql: `UPDATE t SET v = length('${text}') + ${i} WHERE id = 1`,
    });
  await ok(server, ADMIN, 'POST', '/exec', { db: 'wide', sql: 'DELETE FROM t WHERE id = 2' });
  await ok(server, ADMIN, 'POST', '/exec', { db: 'wide', sql: 'INSERT INTO t VALUES (2, 42)' });
  for (const body of [{ undo: 'last', dryRun: true }, { undo: 'last' }]) {
    const what = body.dryRun === true ? 'a dry run' : 'a restore';
    const reply = await call(server, ADMIN, 'POST', '/dbs/wide/restore', body);
    t.equal(reply.status, 400, `${what}: 400`);
    t.equal(reply.body?.code, 6056, `${what}: [SQ6056] ${reply.body?.error}`);
    await leftNothing(t, server, where, 'wide', what);
  }
  await boundedHistory(server, 'narrow', 0);
  const small = await call(server, ADMIN, 'POST', '/dbs/narrow/restore', { undo: 'last' });
  t.equal(small.status, 200, `a small history restores within the same bound: ${small.text.slice(0, 200)}`);
  await verify(t, where, server);
});
