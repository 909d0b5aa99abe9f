/**
 * Over HTTP: with lesson reads answered in the server process, a runaway read
 * (a cross join no plan bound admits) still goes to an engine process and is
 * stopped at -query-timeout, while the lesson's reads keep being answered,
 * with the rows SQLite itself gives.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { CHINOOK_SCRIPT, importChinook } from './helpers/chinook';
import { startServer, type Reply } from './helpers/server';
import { isError } from './helpers/assertions';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const SCRIPT = CHINOOK_SCRIPT;
const READS = [
  'SELECT * FROM Artist ORDER BY ArtistId LIMIT 10',
  'SELECT BillingCountry, COUNT(*) AS invoices, SUM(Total) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC, BillingCountry',
  'SELECT al.Title, ar.Name FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId ORDER BY al.AlbumId LIMIT 30',
  "SELECT UPPER(LastName) || ', ' || FirstName AS name, LENGTH(Email), SUBSTR(Phone, 1, 4) FROM Customer ORDER BY CustomerId LIMIT 15",
];
/** Billions of row visits: only killing its process stops it. */
const RUNAWAY = 'SELECT count(*) FROM Track a, Track b, Track c WHERE a.Name || b.Name <> c.Name';

t.test('a runaway among lesson reads is stopped at the timeout while the reads are answered', async (tt) => {
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-query-timeout', '1s', '-client-share', '1'], {
    cwd: dir,
  });
  tt.teardown(() => server.stop());
  await importChinook(server);
  const sqlite = new Database(':memory:');
  sqlite.exec(SCRIPT);
  const expected = READS.map((sql) => sqlite.prepare(sql).raw(true).all());
  sqlite.close();
  for (const sql of READS) tt.equal((await server.exec('chinook', sql)).status, 200, `warm: ${sql}`);

  const started = Date.now();
  let done = false;
  const runaway = server.exec('chinook', RUNAWAY).then((reply) => {
    done = true;
    return { reply, ms: Date.now() - started };
  });
  const reads: Array<{ reply: Reply; index: number; during: boolean }> = [];
  for (let i = 0; !done || i < 8; i++) {
    const index = i % READS.length;
    const reply = await server.exec('chinook', READS[index] as string);
    reads.push({ reply, index, during: !done });
  }
  const stopped = await runaway;
  isError(tt, stopped.reply, 400, 6007, 'the runaway');
  tt.ok(stopped.ms >= 900 && stopped.ms <= 6000, `stopped near the 1 s limit (${stopped.ms} ms)`);
  tt.strictSame(
    reads.filter((read) => read.reply.status !== 200).map((read) => read.reply.text.slice(0, 200)),
    [],
    'every read succeeded',
  );
  for (const read of reads)
    tt.same(read.reply.body?.results?.[0]?.rows, expected[read.index], `read ${read.index} answers as SQLite does`);
  const during = reads.filter((read) => read.during).length;
  tt.ok(during >= 5, `reads were answered while the runaway ran (${during})`);
});

t.test('an error met in the server process is the error an engine process answers', async (tt) => {
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-max-result-rows', '1'], { cwd: dir });
  tt.teardown(() => server.stop());
  tt.equal((await server.post('/dbs', { db: 'e' })).status, 201);
  tt.equal(
    (await server.exec('e', "CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b')"))
      .status,
    200,
  );
  // The same failing read, once as the planner admits it, once with a recursive table no plan bound admits (so an engine runs it).
  const here = await server.exec('e', 'SELECT abs(-9223372036854775807 - 1) FROM t');
  const there = await server.exec(
    'e',
    'WITH RECURSIVE one(n) AS (SELECT 1) SELECT abs(-9223372036854775807 - 1) FROM t, one',
  );
  tt.equal(here.status, there.status);
  tt.same(here.body, there.body, 'same status, code, message and statement index');
  tt.equal(here.status, 400, here.text);
  const rows = await server.exec('e', 'SELECT id, v FROM t ORDER BY id');
  const rowsThere = await server.exec('e', 'WITH RECURSIVE one(n) AS (SELECT 1) SELECT id, v FROM t, one ORDER BY id');
  tt.same(rows.body, rowsThere.body, 'the same rows, types and cut');
  tt.match(rows.body, {
    results: [{ columns: ['id', 'v'], types: ['INT', 'TEXT'], rows: [[1, 'a']], truncated: true }],
  });
});
