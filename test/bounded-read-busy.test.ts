/**
 * The server runs bounded reads in its own process, which never waits for a
 * lock (a wait there would stop every request). A read that meets a lock
 * another process holds (SQLITE_BUSY) goes to the engine processes, which may
 * wait for it, instead of failing with [SQ9006]; other errors are answered
 * as before.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { BoundedReadHost } from '../src/engine/in-server/bounded-read-host';
import type { EngineHost, ExecRequest, RowPage, RowsRequest, StatementResult } from '../src/engine/protocol';

const FROM_PROCESSES: StatementResult[] = [{ columns: ['answered by'], rows: [['an engine process']] }];
const PAGE_FROM_PROCESSES = { rowsJson: '[["an engine process"]]' } as unknown as RowPage;

function setUp(t: Test): { file: string; host: BoundedReadHost; sent: string[] } {
  const file = path.join(t.testdir(), 'class.db');
  const db = new Database(file);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT) STRICT; INSERT INTO t VALUES (1, 'one')");
  db.close();
  const sent: string[] = [];
  const processes = {
    exec: async () => (sent.push('exec'), FROM_PROCESSES),
    rows: async () => (sent.push('rows'), PAGE_FROM_PROCESSES),
    closeDatabase: async () => undefined,
    close: async () => undefined,
  } as unknown as EngineHost;
  const host = new BoundedReadHost(processes);
  t.teardown(() => host.close());
  return { file, host, sent };
}

const pointRead = (file: string, sql = 'SELECT * FROM t WHERE id = 1'): ExecRequest => ({
  file,
  statements: [{ sql, kind: 'select' }],
  maxResultRows: 100,
});
const page = (file: string): RowsRequest => ({ file, table: 't', limit: 10, offset: 0, after: null });

/**
 * Another handle holding the file's exclusive lock until released (a rollback-journal file, as
 * the service's files are before their first open in WAL mode: readers then meet SQLITE_BUSY).
 */
function holdLock(file: string): () => void {
  const holder = new Database(file);
  holder.exec("BEGIN EXCLUSIVE; INSERT INTO t VALUES (2, 'two')");
  return () => {
    if (!holder.open) return;
    holder.exec('ROLLBACK');
    holder.close();
  };
}

t.test('a read that meets a lock goes to the engine processes', async (t) => {
  const { file, host, sent } = setUp(t);
  const release = holdLock(file);
  t.teardown(release);
  t.same(await host.exec(pointRead(file)), FROM_PROCESSES, 'locked: the answer of an engine process');
  t.same(await host.rows(page(file)), PAGE_FROM_PROCESSES, 'a page of /rows too');
  t.same(sent, ['exec', 'rows']);
  release();
  t.same((await host.exec(pointRead(file)))[0]?.rows, [[1, 'one']], 'released: read here');
  t.same(sent, ['exec', 'rows'], 'not sent to the processes');
});

t.test('other errors of a read here are answered as before', async (t) => {
  const { file, host, sent } = setUp(t);
  const failed = await host
    .exec(pointRead(file, 'SELECT abs(-9223372036854775807 - 1) FROM t'))
    .catch((e: unknown) => e);
  t.match(failed, { errorName: 'SQL_ERROR', message: /integer overflow/ }, 'the catalog error of the read, met here');
  t.same(sent, []);
});
