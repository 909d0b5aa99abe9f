/**
 * Engine isolation: student SQL runs in killable engine
 * processes. A runaway statement is stopped at -query-timeout (6007) and its
 * batch rolled back while other clients keep being served; an engine process
 * killed from outside costs only the request it was running (9007); writes to
 * one database are serialized; reads see committed data only; open database
 * handles stay bounded. Every test starts its own server in its own directory.
 *
 * Timing bounds are deliberately generous: this runs on a shared, noisy machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { execOk } from './helpers/exec';
import { sleep } from './helpers/wait';
import { enginePids } from './helpers/clients';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(240_000);

/** Never ends by itself: SQLite counts forever. */
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
/** A CTE bounded at `n` rows: roughly 0.17 s per million rows on an idle machine. */
const countTo = (n: number): string =>
  `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < ${n}) SELECT count(*) FROM c`;

/** Starts a multi-DB server with `args` in a fresh test directory, stopped when `tt` ends. */
async function ownServer(tt: Test, args: string[] = []): Promise<{ server: TestServer; dataDir: string }> {
  const dir = scratchDir(tt);
  const dataDir = path.join(dir, 'data');
  // Every request here comes from one address: the whole pool is that client's (-client-share 1).
  // Four engine processes, whatever the machine's cores: the tests below count on them.
  const server = await startServer(['-dir', dataDir, '-engines', '4', '-client-share', '1', ...args], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
  });
  return { server, dataDir };
}

async function createDb(tt: Test, server: TestServer, name: string, setup = ''): Promise<void> {
  const created = await server.post('/dbs', { db: name });
  tt.equal(created.status, 201, `POST /dbs ${name}: ${created.text}`);
  if (setup !== '') await execOk(tt, server, name, setup);
}

async function rowsOf(
  tt: Test,
  server: TestServer,
  db: string,
  sql: string,
  extra: Record<string, unknown> = {},
): Promise<unknown[][]> {
  const results = await execOk(tt, server, db, sql, extra);
  return (results[results.length - 1]?.rows ?? []) as unknown[][];
}

/**
 * Brings the engine up to its four processes before a test measures
 * anything, so that no measured request waits for a process to start (which
 * takes long on a loaded machine, under tap's preloaders).
 */
async function warmEngines(tt: Test, server: TestServer, db: string): Promise<void> {
  // A process that starts slower than -query-timeout loses its first call (see the
  // start-up test below); that is not what the callers measure, so try again.
  let failures: string[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const replies = await Promise.all(Array.from({ length: 4 }, () => server.exec(db, countTo(200_000))));
    failures = replies.filter((reply) => reply.status !== 200).map((reply) => reply.text.slice(0, 160));
    // On a loaded machine one call can end before the fourth arrives, and the pool stops at three: go again.
    if (failures.length === 0 && enginePids(server).length === 4) break;
    tt.comment(`warm-up attempt ${attempt}: ${failures.join(' | ')}`);
  }
  tt.strictSame(failures, [], 'warm-up queries succeeded');
  tt.equal(enginePids(server).length, 4, 'four engine processes are up');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Timed {
  reply: Reply;
  startedMs: number;
  endedMs: number;
}

async function timed(work: () => Promise<Reply>): Promise<Timed> {
  const startedMs = Date.now();
  const reply = await work();
  return { reply, startedMs, endedMs: Date.now() };
}

/**
 * Runs `query(i)` again and again, one at a time, until `stop()` says so or
 * a bound on count or time is reached; returns each reply with its end time.
 */
async function loop(
  query: (i: number) => Promise<Reply>,
  stop: () => boolean,
  maxCount = 2000,
  maxMs = 20_000,
): Promise<Timed[]> {
  const replies: Timed[] = [];
  const started = Date.now();
  for (let i = 0; !stop() && i < maxCount && Date.now() - started < maxMs; i++)
    replies.push(await timed(() => query(i)));
  return replies;
}

// ── Runaway statements ─────────────────────────────────────────────────────────

t.test('stops a runaway recursive CTE near the timeout while other clients are served', async (tt) => {
  const { server } = await ownServer(tt, ['-query-timeout', '1s']);
  await createDb(
    tt,
    server,
    'slow',
    "CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'committed')",
  );
  await createDb(
    tt,
    server,
    'other',
    'CREATE TABLE p (id INT PRIMARY KEY, v INT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 100) INSERT INTO p SELECT x, x * 2 FROM c',
  );
  // Warm both databases up, so that the loops below measure serving, not opening.
  tt.strictSame(await rowsOf(tt, server, 'other', 'SELECT v FROM p WHERE id = 7'), [[14]]);
  tt.strictSame(await rowsOf(tt, server, 'slow', 'SELECT v FROM t WHERE id = 1'), [['committed']]);
  await warmEngines(tt, server, 'slow');

  let runawayDone = false;
  let stopLoopsAt = Infinity;
  const runaway = timed(() =>
    server.request('POST', '/exec', {
      body: { db: 'slow', statements: [{ sql: "INSERT INTO t VALUES (2, 'doomed')" }, { sql: RUNAWAY }] },
    }),
  ).then((result) => {
    runawayDone = true;
    // The loops go on a little after the stop, through the replacement of the killed process.
    stopLoopsAt = Date.now() + 700;
    return result;
  });
  const stop = (): boolean => Date.now() >= stopLoopsAt;
  await sleep(50);
  const [stopped, points, sameDb] = await Promise.all([
    runaway,
    loop((i) => server.exec('other', 'SELECT v FROM p WHERE id = ?', { params: [(i % 100) + 1] }), stop),
    loop(async (i) => {
      await sleep(30);
      return server.exec('slow', i % 2 === 0 ? 'SELECT id, v FROM t ORDER BY id' : 'SELECT count(*) FROM t');
    }, stop),
  ]);

  isError(tt, stopped.reply, 400, 6007, 'the runaway');
  tt.equal(stopped.reply.body?.statement, 1, 'the runaway is statement 1 of the batch');
  const elapsed = stopped.endedMs - stopped.startedMs;
  tt.ok(elapsed >= 900 && elapsed <= 4000, `stopped near the 1 s limit (${elapsed} ms)`);
  tt.ok(runawayDone);

  tt.ok(points.length > 0, 'the point-query loop ran');
  tt.strictSame(
    points.filter((p) => p.reply.status !== 200).map((p) => p.reply.text),
    [],
    'every point query on the other database succeeded',
  );
  tt.ok(
    points.every(
      (p, i) => JSON.stringify(p.reply.body?.results?.[0]?.rows) === JSON.stringify([[((i % 100) + 1) * 2]]),
    ),
    'and returned its row',
  );
  const pointsDuring = points.filter((p) => p.endedMs < stopped.endedMs).length;
  tt.ok(
    pointsDuring >= 5,
    `several point queries completed while the runaway ran (${pointsDuring} of ${points.length})`,
  );

  tt.ok(sameDb.length > 0, 'the same-database read loop ran');
  tt.strictSame(
    sameDb.filter((r) => r.reply.status !== 200).map((r) => r.reply.text),
    [],
    'every read on the same database succeeded',
  );
  const sameDuring = sameDb.filter((r) => r.endedMs < stopped.endedMs);
  tt.ok(
    sameDuring.length >= 2,
    `reads on the same database were answered while the runaway ran (${sameDuring.length})`,
  );
  for (const [i, r] of sameDb.entries()) {
    const expected = i % 2 === 0 ? [[1, 'committed']] : [[1]];
    tt.strictSame(r.reply.body?.results?.[0]?.rows, expected, `read ${i} sees only the committed row`);
  }

  tt.strictSame(
    await rowsOf(tt, server, 'slow', 'SELECT id, v FROM t ORDER BY id'),
    [[1, 'committed']],
    'the INSERT before the runaway was rolled back',
  );
});

t.test('stops a runaway cross join of three tables the same way', async (tt) => {
  const { server } = await ownServer(tt, ['-query-timeout', '1s']);
  const fill = (table: string): string =>
    `CREATE TABLE ${table} (x INT PRIMARY KEY); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000) INSERT INTO ${table} SELECT x FROM c`;
  await createDb(tt, server, 'cj', `${fill('a')}; ${fill('b')}; ${fill('c')}; CREATE TABLE log (id INT PRIMARY KEY)`);
  await createDb(tt, server, 'other', 'CREATE TABLE p (id INT PRIMARY KEY); INSERT INTO p VALUES (1)');
  await warmEngines(tt, server, 'other');

  let stopAt = Infinity;
  const cross = timed(() =>
    server.request('POST', '/exec', {
      body: {
        db: 'cj',
        statements: [
          { sql: 'INSERT INTO log VALUES (1)' },
          { sql: 'SELECT count(*) FROM a, b, c WHERE a.x + b.x + c.x > 0' },
        ],
      },
    }),
  ).then((result) => ((stopAt = Date.now()), result));
  const [stopped, points] = await Promise.all([
    cross,
    loop(
      () => server.exec('other', 'SELECT id FROM p WHERE id = 1'),
      () => Date.now() >= stopAt,
    ),
  ]);
  isError(tt, stopped.reply, 400, 6007, 'the cross join');
  tt.equal(stopped.reply.body?.statement, 1, 'the cross join is statement 1');
  const elapsed = stopped.endedMs - stopped.startedMs;
  tt.ok(elapsed >= 900 && elapsed <= 4000, `stopped near the 1 s limit (${elapsed} ms)`);
  tt.strictSame(
    points.filter((p) => p.reply.status !== 200).map((p) => p.reply.text),
    [],
    'point queries on another database succeeded meanwhile',
  );
  tt.ok(points.length >= 3, `several point queries ran meanwhile (${points.length})`);
  tt.strictSame(
    await rowsOf(tt, server, 'cj', 'SELECT count(*) FROM log'),
    [[0]],
    'the INSERT of the batch was rolled back',
  );
  tt.strictSame(await rowsOf(tt, server, 'cj', 'SELECT count(*) FROM a'), [[2000]]);
});

t.test('stays healthy with the database intact after timeouts, even many at once', async (tt) => {
  const { server } = await ownServer(tt, ['-query-timeout', '1s']);
  await createDb(tt, server, 'one', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v)');
  await createDb(tt, server, 'two', 'CREATE TABLE u (id INT PRIMARY KEY); INSERT INTO u VALUES (1), (2)');
  await execOk(
    tt,
    server,
    'one',
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 500) INSERT INTO t SELECT x, 'v' || x FROM c",
  );

  // A runaway that had already written a lot before it was stopped.
  const big = await server.request('POST', '/exec', {
    body: {
      db: 'one',
      statements: [
        {
          sql: "WITH RECURSIVE c(x) AS (SELECT 1001 UNION ALL SELECT x+1 FROM c WHERE x < 50000) INSERT INTO t SELECT x, 'w' || x FROM c",
        },
        { sql: "UPDATE t SET v = 'changed'" },
        { sql: RUNAWAY },
      ],
    },
  });
  isError(tt, big, 400, 6007, 'the runaway after big writes');
  tt.equal(big.body?.statement, 2);

  const health = await server.get('/health');
  tt.equal(health.status, 200, 'health answers');
  tt.equal(health.body?.ok, true);
  tt.strictSame(await rowsOf(tt, server, 'one', 'INTEGRITY CHECK'), [['ok']], 'INTEGRITY CHECK is ok');
  tt.strictSame(
    await rowsOf(tt, server, 'one', "SELECT count(*), min(id), max(id), sum(v = 'v' || id) FROM t"),
    [[500, 1, 500, 500]],
    'exactly the committed rows, unchanged',
  );
  tt.strictSame(
    await rowsOf(tt, server, 'one', "SELECT id FROM t INDEXED BY t_v WHERE v = 'v250'"),
    [[250]],
    'the index agrees',
  );

  // More runaways at once than there are engine processes (at most 4).
  const before = Date.now();
  const many = await Promise.all(
    Array.from({ length: 6 }, (_, i) => server.exec(i % 2 === 0 ? 'one' : 'two', RUNAWAY)),
  );
  const took = Date.now() - before;
  many.forEach((reply, i) => {
    isError(tt, reply, 400, 6007, `runaway ${i}`);
    tt.equal(reply.body?.statement, 0, `runaway ${i}: statement 0`);
  });
  tt.ok(took >= 900 && took <= 15_000, `six runaways were all stopped (${took} ms)`);

  for (let i = 1; i <= 20; i++) {
    const id = (i % 2) + 1;
    tt.strictSame(
      await rowsOf(tt, server, 'two', 'SELECT id FROM u WHERE id = ?', { params: [id] }),
      [[id]],
      `point query ${i} after the runaways`,
    );
  }
  tt.strictSame(await rowsOf(tt, server, 'one', 'SELECT v FROM t WHERE id = 42'), [['v42']]);
  await execOk(tt, server, 'one', "INSERT INTO t VALUES (501, 'v501')");
  tt.strictSame(await rowsOf(tt, server, 'one', 'SELECT count(*) FROM t'), [[501]], 'writes work after the runaways');
  tt.strictSame(await rowsOf(tt, server, 'one', 'INTEGRITY CHECK'), [['ok']]);
  const pids = enginePids(server);
  tt.ok(pids.length >= 1 && pids.length <= 4, `engine processes stay within bounds (${pids.length})`);
});

t.test('does not count the start-up of an engine process against the query timeout', async (tt) => {
  // Engine processes of this server take 1.5 s to start (a preload that sleeps), longer than
  // the 1 s timeout: a call handed to a starting process must not be charged for the wait.
  const dir = scratchDir(tt, {
    'slow-engine-start.js':
      "if (/engine-process\\.js$/.test(process.argv[1] || '')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);\n",
  });
  const saved = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${saved ?? ''} --require ${path.join(dir, 'slow-engine-start.js')}`;
  let server: TestServer;
  try {
    server = await startServer(['-dir', path.join(dir, 'data'), '-query-timeout', '1s'], { cwd: dir });
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
  tt.teardown(async () => {
    await server.stop();
  });
  // No wait for the server's first engine process to be up: the creation is handed to it while it
  // starts, and must be answered like the queries below.
  await createDb(tt, server, 'boot', 'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)');
  // Four at once: two of them wait for processes started for them.
  const first = await Promise.all(Array.from({ length: 4 }, () => server.exec('boot', 'SELECT id FROM t')));
  tt.strictSame(
    first.map((reply) => reply.status),
    [200, 200, 200, 200],
    `queries on starting processes are answered: ${first.map((r) => r.body?.code ?? r.status).join(', ')}`,
  );
  // A stopped runaway is replaced by a process that starts slowly too.
  isError(tt, await server.exec('boot', RUNAWAY), 400, 6007, 'the runaway');
  const after = await Promise.all(Array.from({ length: 4 }, () => server.exec('boot', 'SELECT id FROM t')));
  tt.strictSame(
    after.map((reply) => reply.status),
    [200, 200, 200, 200],
    `queries right after the runaway are answered: ${after.map((r) => r.body?.code ?? r.status).join(', ')}`,
  );
});

// ── Writes and reads ───────────────────────────────────────────────────────────

t.test('serializes concurrent writes to one database with exact results', async (tt) => {
  const { server } = await ownServer(tt);
  await createDb(
    tt,
    server,
    'w',
    'CREATE TABLE t (id INT PRIMARY KEY, writer INT, k INT); CREATE TABLE counter (id INT PRIMARY KEY, n INT); INSERT INTO counter VALUES (1, 0)',
  );
  const writers = Array.from({ length: 20 }, (_, w) =>
    server.request('POST', '/exec', {
      body: {
        db: 'w',
        statements: Array.from({ length: 50 }, (_, k) => ({
          sql: 'INSERT INTO t VALUES (?, ?, ?)',
          params: [w * 50 + k + 1, w, k],
        })),
      },
    }),
  );
  const increments = Array.from({ length: 5 }, () => server.exec('w', 'UPDATE counter SET n = n + 1 WHERE id = 1'));
  const readers = Array.from({ length: 5 }, () => server.exec('w', 'SELECT count(*) FROM t'));
  const replies = await Promise.all([...writers, ...increments]);
  const reads = await Promise.all(readers);
  replies.forEach((reply, i) => tt.equal(reply.status, 200, `write ${i}: ${reply.text.slice(0, 200)}`));
  tt.ok(
    replies.every((reply) => !/BUSY|LOCKED/.test(reply.text)),
    'no SQLITE_BUSY reached a client',
  );
  for (const reply of reads) {
    tt.equal(reply.status, 200, `concurrent read: ${reply.text.slice(0, 200)}`);
    const n = reply.body?.results?.[0]?.rows?.[0]?.[0] as number;
    tt.ok(n % 50 === 0 && n >= 0 && n <= 1000, `a read sees whole batches only (${n})`);
  }
  replies.slice(0, 20).forEach((reply, w) => tt.equal(reply.body?.results?.length, 50, `writer ${w}: 50 results`));
  tt.strictSame(
    await rowsOf(tt, server, 'w', 'SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t'),
    [[1000, 1000, 1, 1000]],
    'every row is there, once',
  );
  tt.strictSame(
    await rowsOf(tt, server, 'w', 'SELECT writer, count(*) FROM t GROUP BY writer HAVING count(*) <> 50'),
    [],
    'fifty rows per writer',
  );
  tt.strictSame(await rowsOf(tt, server, 'w', 'SELECT n FROM counter'), [[5]], 'no increment was lost');
  const metrics = await server.get('/metrics');
  tt.equal(metrics.body?.errors_total, 0, 'no 5xx answered');
});

t.test('shows readers committed data only while a slow write runs', async (tt) => {
  const { server } = await ownServer(tt, ['-query-timeout', '20s']);
  await createDb(tt, server, 'r', 'CREATE TABLE t (id INT PRIMARY KEY)');
  await execOk(tt, server, 'r', 'INSERT INTO t VALUES (1)');
  const read = (): Promise<Reply> => server.exec('r', 'SELECT count(*) FROM t WHERE id = 42');
  tt.strictSame((await read()).body?.results?.[0]?.rows, [[0]], 'warm-up read');

  let writeEndedMs = Infinity;
  const write = timed(() =>
    server.request('POST', '/exec', {
      body: { db: 'r', statements: [{ sql: 'INSERT INTO t VALUES (42)' }, { sql: countTo(6_000_000) }] },
    }),
  ).then((result) => ((writeEndedMs = Date.now()), result));
  await sleep(300); // the INSERT has run by now; the count goes on
  const reads = await loop(
    async () => {
      const reply = await read();
      await sleep(20);
      return reply;
    },
    () => writeEndedMs !== Infinity,
    500,
    30_000,
  );
  const written = await write;
  tt.equal(written.reply.status, 200, `the slow write succeeded: ${written.reply.text.slice(0, 200)}`);
  tt.strictSame(written.reply.body?.results?.[1]?.rows, [[6_000_000]]);
  tt.strictSame(
    reads.filter((r) => r.reply.status !== 200).map((r) => r.reply.text.slice(0, 200)),
    [],
    'every read succeeded',
  );
  // The INSERT ran first, ~0.3 s before the first read; the commit comes only at the end of the batch.
  // A read that starts just before the write's answer reaches us may run after the commit: it sees 1.
  const seen = reads.map((r) => r.reply.body?.results?.[0]?.rows?.[0]?.[0] as number);
  const zeros = seen.filter((n) => n === 0).length;
  tt.ok(zeros >= 3, `reads during the write did not see its INSERT (${zeros} of ${seen.length}: ${seen.join('')})`);
  tt.ok(
    seen.every((n) => n === 0 || n === 1),
    'each read sees 0 or 1 rows',
  );
  tt.ok(
    seen.every((n, i) => i === 0 || n >= (seen[i - 1] as number)),
    `once a read sees the row, every later one does (${seen.join('')})`,
  );
  tt.strictSame((await read()).body?.results?.[0]?.rows, [[1]], 'after the commit the row is seen');
});

// ── Engine processes killed from outside ─────────────────────────────────────

t.test('answers 9007 when the engine process is killed and serves later requests', async (tt) => {
  const { server } = await ownServer(tt, ['-query-timeout', '60s']);
  await createDb(tt, server, 'k', "CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'kept')");
  const before = await server.get('/metrics');
  tt.equal(before.body?.errors_total, 0, 'no errors before');

  const killed = enginePids(server);
  tt.ok(killed.length >= 1, `engine processes found (${killed.join(', ')})`);
  const slow = timed(() =>
    server.request('POST', '/exec', {
      body: { db: 'k', statements: [{ sql: "INSERT INTO t VALUES (2, 'lost')" }, { sql: RUNAWAY }] },
    }),
  );
  await sleep(700);
  const running = enginePids(server);
  for (const pid of running) process.kill(pid, 'SIGKILL');
  tt.ok(running.length >= 1, `killed ${running.length} engine processes`);
  const crashed = await slow;
  isError(tt, crashed.reply, 500, 9007, 'the request of the killed process');
  tt.ok(crashed.endedMs - crashed.startedMs < 30_000, 'answered at once, not at the query timeout');

  for (let i = 0; i < 5; i++) {
    tt.strictSame(
      await rowsOf(tt, server, 'k', 'SELECT id, v FROM t ORDER BY id'),
      [[1, 'kept']],
      `read ${i} after the kill: the batch left nothing`,
    );
  }
  await execOk(tt, server, 'k', "INSERT INTO t VALUES (3, 'after')");
  const concurrent = await Promise.all(
    Array.from({ length: 8 }, (_, i) => server.exec('k', 'INSERT INTO t VALUES (?, ?)', { params: [10 + i, 'c'] })),
  );
  concurrent.forEach((reply, i) => tt.equal(reply.status, 200, `concurrent write ${i}: ${reply.text.slice(0, 200)}`));
  tt.strictSame(await rowsOf(tt, server, 'k', 'SELECT count(*) FROM t'), [[10]], 'writes after the kill are committed');
  tt.strictSame(await rowsOf(tt, server, 'k', 'INTEGRITY CHECK'), [['ok']]);

  const after = enginePids(server);
  tt.ok(after.length >= 1, 'new engine processes serve');
  tt.ok(
    after.every((pid) => !running.includes(pid)),
    'the killed processes were replaced',
  );
  tt.ok(
    running.every((pid) => !isAlive(pid) || !after.includes(pid)),
    'no killed process is reused',
  );
  const metrics = await server.get('/metrics');
  tt.equal(metrics.body?.errors_total, 1, 'errors_total counted the crash');
  tt.equal(metrics.body?.requests_by_status?.['500'], 1);
});

// ── Bounded resources ─────────────────────────────────────────────────────────

t.test('keeps open database handles bounded across 150 databases', async (tt) => {
  const { server, dataDir } = await ownServer(tt);
  const names = Array.from({ length: 150 }, (_, i) => `d${String(i).padStart(3, '0')}`);
  for (const name of names) {
    const created = await server.post('/dbs', { db: name });
    if (created.status !== 201) tt.fail(`POST /dbs ${name}: ${created.text}`);
  }
  let failures = 0;
  for (const [i, name] of names.entries()) {
    const reply = await server.exec(
      name,
      `CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (${i}); SELECT id FROM t`,
    );
    if (reply.status !== 200 || reply.body?.results?.[2]?.rows?.[0]?.[0] !== i) {
      failures++;
      tt.fail(`${name}: ${reply.text.slice(0, 200)}`);
    }
  }
  tt.equal(failures, 0, 'every database answered');
  // A second round, so that evicted handles are reopened.
  for (const [i, name] of names.entries()) {
    const reply = await server.exec(name, 'SELECT id FROM t');
    if (reply.status !== 200 || reply.body?.results?.[0]?.rows?.[0]?.[0] !== i)
      tt.fail(`${name} again: ${reply.text.slice(0, 200)}`);
  }
  const listed = await server.get('/dbs');
  tt.equal(listed.body?.dbs?.length, 150, 'GET /dbs lists them all');

  // Each handle holds the database, its -wal and its -shm open: at most 64 handles per process.
  const bound = 64 * 3;
  let total = 0;
  for (const pid of enginePids(server)) {
    const open = fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dataDir + path.sep);
      } catch {
        return false;
      }
    }).length;
    total += open;
    tt.ok(open <= bound, `engine ${pid} holds ${open} database files open (at most ${bound})`);
  }
  tt.ok(total > 0, `the engines hold database files (${total})`);
  tt.equal((await server.get('/health')).status, 200);
});
