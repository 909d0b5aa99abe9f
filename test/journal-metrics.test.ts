/**
 * The journal in Prometheus: entries by kind, failed batches by error class
 * and code, bytes, rotations, the last seq and the time each chunk took to
 * write and sync — what an operator graphs and pages on without reading the
 * files.
 */
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

/** The value of one Prometheus sample (`name{labels} value`), NaN when it is absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

t.test('counts what the journal wrote, by kind, class and code', async (t) => {
  const dir = scratchDir(t);
  const journal = path.join(dir, 'journal', 'statements.jsonl');
  const server = await startServer(['-dir', path.join(dir, 'data'), '-log-file', journal, '-log-max-size', '2K'], {
    cwd: dir,
  });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'class' })).status, 201);
  t.equal((await server.exec('class', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT NOT NULL)')).status, 200);
  for (let i = 0; i < 20; i++)
    t.equal((await server.exec('class', 'INSERT INTO t VALUES (?, ?)', { params: [i, `row ${i}`] })).status, 200);
  t.equal(
    (await server.exec('class', "INSERT INTO t VALUES (1, 'again')")).body?.code,
    3003,
    'a primary key violation',
  );
  t.equal(
    (await server.exec('class', "INSERT INTO t VALUES (99, 'x'); INSERT INTO t VALUES (99, 'y')")).body?.code,
    3003,
    'another, in a batch',
  );
  t.equal((await server.exec('class', 'INSERT INTO t VALUES (100, NULL)')).body?.code, 3001, 'a NOT NULL violation');
  t.equal((await server.exec('class', 'SELEC 1')).body?.code, 1001, 'a syntax error');

  const text = (await server.get('/metrics?format=prometheus')).text;
  t.equal(sample(text, 'sqlscribe_journal_failed_total{class="3",code="3003"}'), 2, 'primary key violations, by code');
  t.equal(sample(text, 'sqlscribe_journal_failed_total{class="3",code="3001"}'), 1);
  t.equal(
    sample(text, 'sqlscribe_journal_failed_total{class="1",code="1001"}'),
    1,
    'the refused batch is journaled and counted too',
  );
  const { entries } = await readJournal(journal);
  const execs = entries.filter((entry) => entry.kind === 'exec').length;
  t.equal(sample(text, 'sqlscribe_journal_entries_total{kind="exec"}'), execs, 'every exec entry the files hold');
  t.equal(sample(text, 'sqlscribe_journal_entries_total{kind="createdb"}'), 1);
  t.equal(sample(text, 'sqlscribe_journal_last_seq'), entries.at(-1)?.seq, "the last seq is the files' last");
  t.ok(sample(text, 'sqlscribe_journal_rotations_total') >= 1, 'a 2K journal rotated');
  t.ok(sample(text, 'sqlscribe_journal_bytes_total') > 2048, 'bytes written');
  t.ok(sample(text, 'sqlscribe_journal_write_seconds_count') >= 1, "each chunk's write is timed");
});

t.test('a restarted server says its last seq before any write', async (t) => {
  const dir = scratchDir(t);
  const args = ['-dir', path.join(dir, 'data'), '-log-file', path.join(dir, 'journal', 'statements.jsonl')];
  const first = await startServer(args, { cwd: dir });
  t.equal((await first.post('/dbs', { db: 'a' })).status, 201);
  t.equal((await first.exec('a', 'CREATE TABLE t (x INT)')).status, 200);
  await first.stop();
  const second = await startServer(args, { cwd: dir });
  t.teardown(() => second.stop());
  t.equal(sample((await second.get('/metrics?format=prometheus')).text, 'sqlscribe_journal_last_seq'), 2);
});
