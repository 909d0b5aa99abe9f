/**
 * After a clean stop (SIGTERM), each database's `.db` file alone holds every
 * committed row: an operator who copies only the `.db` (not `-wal`, `-shm`)
 * loses nothing.
 *
 * SQLite empties a write-ahead log by itself only when the last connection
 * closes and wins an exclusive lock. The tests build the two cases where no
 * close wins it: many databases open in several engine processes that all
 * close at once (before the fix, some of 40 databases kept rows in their -wal
 * in every one of four runs by hand; too slow for this suite with 16, so it
 * fails only sometimes there), and a reader from outside the service (an
 * operator's sqlite3 shell, say) left open during the stop (every run).
 *
 * Rows come from many separate requests, several at once, with reads in
 * between, and from a committed session. After the stop each `.db` is copied
 * alone into another directory, opened read-only, and its rows counted.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const TABLE = 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)';
const SESSION_ROWS = 3;

function ok(tt: Test, reply: Reply, label: string): void {
  tt.equal(reply.status, 200, `${label}: ${reply.text.slice(0, 300)}`);
}

/**
 * `count` separate INSERT requests to each database, all databases at once,
 * with a read after each round. Gives how many inserts each database
 * acknowledged: under this load an engine process may be lost (SQ9007), and a
 * refused insert committed nothing, so only acknowledged rows are expected.
 */
async function writeMany(
  tt: Test,
  server: TestServer,
  dbs: Array<string | undefined>,
  count: number,
): Promise<number[]> {
  const acknowledged = dbs.map(() => 0);
  for (let round = 0; round < count; round++) {
    // Ids unique across the round too: in single-DB mode every request goes to the same file.
    const inserts = dbs.map((db, i) =>
      server.exec(db, `INSERT INTO t (id, v) VALUES (${round * dbs.length + i}, 'row')`),
    );
    (await Promise.all(inserts)).forEach((reply, i) => {
      if (reply.status === 200) acknowledged[i] = (acknowledged[i] ?? 0) + 1;
      else
        tt.equal(reply.body?.code, 9007, `only a lost engine process refuses an insert: ${reply.text.slice(0, 300)}`);
    });
    await Promise.all(dbs.map((db) => server.exec(db, 'SELECT count(*) FROM t')));
  }
  tt.ok(acknowledged.reduce((a, b) => a + b, 0) >= (count * dbs.length) / 2, 'most inserts acknowledged');
  return acknowledged;
}

async function commitSession(tt: Test, server: TestServer, db: string | undefined): Promise<void> {
  const begun = await server.post('/tx/begin', db === undefined ? {} : { db });
  ok(tt, begun, 'begin');
  const session = String(begun.body?.session);
  for (let i = 0; i < SESSION_ROWS; i++) {
    const sql = `INSERT INTO t (id, v) VALUES (${10_000 + i}, 'session')`;
    ok(tt, await server.request('POST', `/exec?session=${session}`, { body: { sql } }), 'insert in session');
  }
  ok(tt, await server.post(`/tx/commit?session=${session}`), 'commit');
}

/** Copies the `.db` file alone (into `into`) and counts the rows of t in the copy. */
function countInCopy(file: string, into: string): number {
  fs.mkdirSync(into, { recursive: true });
  const copy = path.join(into, path.basename(file));
  fs.copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return Number(db.prepare('SELECT count(*) FROM t').pluck().get());
  } finally {
    db.close();
  }
}

/** A reader from outside the service; having read once, it holds a shared lock on the file until closed. */
function openOutside(tt: Test, file: string): Database.Database {
  const outside = new Database(file, { readonly: true });
  outside.prepare('SELECT count(*) FROM t').get();
  tt.teardown(() => outside.close());
  return outside;
}

async function stop(tt: Test, server: TestServer): Promise<void> {
  tt.equal(await server.stop(), 0, 'SIGTERM: exit 0');
}

async function multiServer(tt: Test, dir: string, names: string[]): Promise<TestServer> {
  const server = await startServer(['-dir', 'data', '-log-file', path.join('journal', 'statements.jsonl')], {
    cwd: dir,
  });
  tt.teardown(() => void server.stop());
  for (const db of names) {
    tt.equal((await server.post('/dbs', { db })).status, 201, `create ${db}`);
    ok(tt, await server.exec(db, TABLE), 'create table');
  }
  return server;
}

t.test('multi-DB: every .db alone holds every committed row after SIGTERM', async (tt) => {
  const dir = scratchDir(tt);
  const names = Array.from({ length: 16 }, (_, i) => `db${i}`);
  const server = await multiServer(tt, dir, names);
  const acknowledged = await writeMany(tt, server, names, 4);
  await commitSession(tt, server, 'db0');
  // Half the databases also have a reader from outside open during the stop; the others have only the engine processes.
  const withOutside = names.filter((_, i) => i % 2 === 0);
  for (const db of withOutside) openOutside(tt, path.join(dir, 'data', `${db}.db`));
  await stop(tt, server);
  const expected = (i: number): number => (acknowledged[i] ?? 0) + (i === 0 ? SESSION_ROWS : 0);
  const short = names.filter(
    (db, i) => countInCopy(path.join(dir, 'data', `${db}.db`), path.join(dir, 'copies')) < expected(i),
  );
  tt.same(short, [], "no copy misses a row (the session's included)");
  const walWithData = withOutside.filter((db) => fs.statSync(path.join(dir, 'data', `${db}.db-wal`)).size > 0);
  tt.same(walWithData, [], 'every -wal kept open by an outside reader is empty');
});

t.test('single-DB: the -db file alone holds every committed row after SIGTERM', async (tt) => {
  const dir = scratchDir(tt);
  const file = path.join(dir, 'one.db');
  const server = await startServer(['-db', file], { cwd: dir });
  tt.teardown(() => void server.stop());
  ok(tt, await server.exec(undefined, TABLE), 'create table');
  // An outside connection, as above, so that the result does not depend on which close comes last.
  openOutside(tt, file);
  const acknowledged = await writeMany(tt, server, [undefined, undefined, undefined], 20);
  await commitSession(tt, server, undefined);
  await stop(tt, server);
  tt.equal(
    countInCopy(file, path.join(dir, 'copies')),
    acknowledged.reduce((a, b) => a + b, 0) + SESSION_ROWS,
    "every row, the session's too",
  );
});
