/**
 * -request-timeout bounds a whole request, not each statement: a batch of
 * statements that are each quick but together long is stopped at the
 * deadline and rolled back (400 [SQ6010]); in a session, the session goes
 * with it ([SQ6012]). A client that hangs up has its work stopped (the engine
 * process running it is killed) within a second, and a write group that held
 * another client's batch runs that batch again.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import { enginePids, postFrom } from './helpers/clients';
import { fileEntries } from './helpers/journal-files';
import { startServer, type TestServer } from './helpers/server';
import { sleep } from './helpers/wait';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

/** About 0.3 s on an idle machine: far under -query-timeout, yet fifty of them are long. */
const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000000) SELECT count(*) FROM c';
const slowBatch = (count: number, first = ''): string => first + Array.from({ length: count }, () => SLOW).join(';\n');

async function server(t: Test, args: string[]): Promise<{ server: TestServer; dir: string }> {
  const dir = scratchDir(t);
  const running = await startServer(
    ['-dir', path.join(dir, 'data'), '-log-file', path.join(dir, 'journal.jsonl'), ...args],
    { cwd: dir },
  );
  t.teardown(() => running.stop());
  return { server: running, dir };
}

t.test('a batch past -request-timeout is stopped and rolled back, though each statement is quick', async (t) => {
  const { server: s } = await server(t, ['-request-timeout', '2s', '-query-timeout', '20s']);
  t.equal((await s.post('/dbs', { db: 'd' })).status, 201);
  t.equal((await s.exec('d', 'CREATE TABLE t (x INT)')).status, 200);
  const started = Date.now();
  const reply = await s.exec('d', slowBatch(50, 'INSERT INTO t VALUES (1);\n'));
  const tookMs = Date.now() - started;
  t.equal(reply.status, 400, reply.text);
  t.equal(reply.body.code, 6010);
  t.match(reply.body.error, /2000 ms \(-request-timeout\)/);
  t.ok(reply.body.statement >= 1, `says which statement it stopped (${reply.body.statement})`);
  t.ok(tookMs < 12_000, `answered at the deadline, not after the 50 statements (${tookMs} ms)`);
  const count = await s.exec('d', 'SELECT count(*) FROM t');
  t.same(count.body.results[0].rows, [[0]], 'the insert before it was rolled back');
  t.equal((await s.get('/health')).status, 200);
});

t.test('a session request past -request-timeout ends the session with it', async (t) => {
  const { server: s } = await server(t, ['-request-timeout', '2s', '-query-timeout', '20s']);
  t.equal((await s.post('/dbs', { db: 'd' })).status, 201);
  const begun = await s.post('/tx/begin', { db: 'd' });
  const session = begun.body.session as string;
  const inSession = (sql: string) => s.request('POST', `/exec?session=${session}`, { body: { db: 'd', sql } });
  t.equal((await inSession('CREATE TABLE t (x INT)')).status, 200);
  const reply = await inSession(slowBatch(50));
  t.equal(reply.status, 400, reply.text);
  t.equal(reply.body.code, 6012);
  t.match(reply.body.error, /the session was rolled back and closed/);
  const after = await inSession('SELECT 1');
  t.equal(after.status, 404, 'the session is gone');
  t.equal(
    (await s.exec('d', 'CREATE TABLE t (x INT)')).status,
    200,
    'its table was rolled back and the database is free',
  );
});

t.test('a client that hangs up has its work stopped within a second', async (t) => {
  // One engine per client: the client's next request can only run once its abandoned one is stopped.
  const { server: s, dir } = await server(t, ['-client-share', '0.25']);
  t.equal((await s.post('/dbs', { db: 'd' })).status, 201);
  t.equal((await s.exec('d', 'CREATE TABLE t (x INT)')).status, 200);
  const before = new Set(enginePids(s));
  const hangUp = new AbortController();
  const abandoned = postFrom(s, {
    from: '127.0.0.2',
    body: { db: 'd', sql: slowBatch(200, 'INSERT INTO t VALUES (1);\n') },
    signal: hangUp.signal,
  }).catch((error: Error) => error);
  await sleep(800);
  const running = enginePids(s).filter((pid) => before.has(pid));
  hangUp.abort();
  const hungUpMs = Date.now();
  let goneMs: number | undefined;
  while (goneMs === undefined && Date.now() - hungUpMs < 5000) {
    const now = new Set(enginePids(s));
    if (running.some((pid) => !now.has(pid))) goneMs = Date.now() - hungUpMs;
    else await sleep(20);
  }
  t.ok(goneMs !== undefined && goneMs < 1000, `the engine process running it ended ${goneMs} ms after the hang-up`);
  t.type(await abandoned, Error, 'the abandoned request got no answer');
  const next = await postFrom(s, { from: '127.0.0.2', body: { db: 'd', sql: 'SELECT count(*) FROM t' } });
  t.equal(next.status, 200, next.text);
  t.same(next.body.results[0].rows, [[0]], 'nothing of the abandoned batch was committed');
  t.ok(Date.now() - hungUpMs < 3000, 'the same client is served again at once');
  await s.stop();
  const closed = fileEntries(path.join(dir, 'journal.jsonl')).filter(
    (entry) => (entry as { code?: number }).code === 6013,
  );
  t.equal(closed.length, 1, 'the journal records the stopped batch as [SQ6013]');
});

t.test('a write group sends the batches of clients still waiting again when one client hangs up', async (t) => {
  // Waits long enough for a loaded machine: here only the hang-up may end a request early.
  const { server: s } = await server(t, ['-lock-timeout', '60s', '-request-timeout', '120s']);
  t.equal((await s.post('/dbs', { db: 'd' })).status, 201);
  t.equal((await s.exec('d', 'CREATE TABLE t (x INT)')).status, 200);
  // While this turn runs, the next batches queue up, and then run as one group: the long one first.
  const blocker = postFrom(s, {
    from: '127.0.0.3',
    body: { db: 'd', sql: slowBatch(3, 'INSERT INTO t VALUES (0);\n') },
  });
  await sleep(150);
  const hangUp = new AbortController();
  const abandoned = postFrom(s, {
    from: '127.0.0.2',
    body: { db: 'd', sql: slowBatch(200, 'INSERT INTO t VALUES (1);\n') },
    signal: hangUp.signal,
  }).catch((error: Error) => error);
  await sleep(150);
  const others = Array.from({ length: 5 }, (_, i) =>
    postFrom(s, { from: `127.0.0.${10 + i}`, body: { db: 'd', sql: `INSERT INTO t VALUES (${10 + i})` } }),
  );
  t.equal((await blocker).status, 200);
  await sleep(500);
  hangUp.abort();
  t.type(await abandoned, Error);
  const replies = await Promise.all(others);
  t.same(
    replies.map((reply) => reply.status),
    [200, 200, 200, 200, 200],
    replies.map((reply) => reply.text).join(' | '),
  );
  const rows = await s.exec('d', 'SELECT x FROM t ORDER BY x');
  t.same(
    rows.body.results[0].rows,
    [[0], [10], [11], [12], [13], [14]],
    'every waiting batch committed, the abandoned one did not',
  );
});
