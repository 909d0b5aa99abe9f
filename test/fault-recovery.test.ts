/**
 * Start-up never refuses to start because one database cannot be brought in
 * line with the journal. The state is built by hand: the server is stopped,
 * and an acknowledged-looking entry that cannot be applied is appended to
 * its journal, as a damaged database file or a full disk would leave it. The
 * restarted server serves every other database, reads that one, and refuses
 * its writes with 503 [SQ9010] rather than applying anything out of order.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import { encodeLine, type JournalEntry } from '../journal/record';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(60_000);

t.test('a database that cannot be recovered is held back; the others serve', async (t) => {
  const dir = scratchDir(t);
  const data = path.join(dir, 'data');
  const journal = path.join(dir, 'journal', 'statements.jsonl');
  const args = ['-dir', data, '-log-file', journal];
  let server = await startServer(args, { cwd: dir });
  for (const db of ['good', 'bad']) {
    t.equal((await server.post('/dbs', { db })).status, 201);
    t.equal((await server.exec(db, 'CREATE TABLE t (x INT)')).status, 200);
    t.equal((await server.exec(db, 'INSERT INTO t VALUES (1)')).status, 200);
  }
  t.equal(await server.stop(), 0);

  const last = (await readJournal(journal)).entries.at(-1) as JournalEntry;
  const broken: JournalEntry = {
    seq: last.seq + 1,
    ts: new Date().toISOString(),
    db: 'bad.db',
    session: null,
    kind: 'exec',
    sql: 'INSERT INTO missing VALUES (2)',
    statements: [{ sql: 'INSERT INTO missing VALUES (2)' }],
    ok: true,
    changes: 1,
    ms: 0,
    clock: Date.now(),
    seed: '0123456789abcdef',
  };
  fs.appendFileSync(journal, encodeLine(broken));

  server = await startServer(args, { cwd: dir });
  t.teardown(() => server.stop());
  t.match(
    server.stderr(),
    /bad\.db could not be brought in line with the journal at seq \d+/,
    'the operator is told which database and where',
  );
  t.equal((await server.get('/health')).body?.ready, true, 'the server starts and is ready');
  t.equal((await server.exec('good', 'INSERT INTO t VALUES (2)')).status, 200, 'other databases take writes');
  const read = await server.exec('bad', 'SELECT count(*) AS n FROM t');
  t.equal(read.status, 200, 'the held-back database is still read');
  const refused = await server.exec('bad', 'INSERT INTO t VALUES (3)');
  t.equal(refused.status, 503);
  t.equal(refused.body?.code, 9010, 'its writes are refused with a code of their own');
  t.ok(refused.headers.get('retry-after'));
  t.equal(await server.stop(), 0);
});
