/**
 * The journal index: kept from the writer's chunks it equals one rebuilt from
 * the files (rotated and gzipped ones included); a deleted index is rebuilt;
 * a server killed with SIGKILL after its appends catches up at the next start,
 * and retention's removed files take their rows with them.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Journal } from '../journal/journal';
import { indexFileOf, JournalIndex } from '../journal/index/journal-index';
import { journalFiles } from '../journal/naming';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const HEADER = {
  service: 'sqlscribe' as const,
  version: 'test',
  level: 'mod' as const,
  betterSqlite3: 'x',
  sqlite: 'y',
  node: 'z',
  tz: 'UTC',
};
const silent = (message: string): void => void process.stderr.write(`${message}\n`);

async function openJournal(file: string): Promise<Journal> {
  return Journal.open('mod', { file, maxSize: 2048, fsync: false, compress: true, header: HEADER });
}

async function writeSome(journal: Journal, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const db = `db-${i % 3}.db`;
    const sql = `INSERT INTO t VALUES (${i}, '${tag} ✓ ${'x'.repeat(i % 50)}') -- ${i}`;
    const ok = i % 7 !== 0;
    const outcome = ok
      ? { ok: true, changes: 1 }
      : { ok: false, code: 3003, class: 3, error: '[SQ3003] dup', statement: 0 };
    await journal.append('write', {
      db,
      session: null,
      kind: 'exec',
      sql,
      statements: [{ sql }],
      ms: 0,
      clock: 1_700_000_000_000,
      seed: '0123456789abcdef',
      tokenName: `tok-${i % 2}`,
      ...outcome,
    }).written;
  }
}

t.test('an index kept from the chunks equals one rebuilt from the files, rotated and gzipped included', async (tt) => {
  const dir = scratchDir(tt);
  const file = path.join(dir, 'journal', 'statements.jsonl');
  const journal = await openJournal(file);
  const kept = JournalIndex.open(file, journal, silent);
  await kept.ready;
  await writeSome(journal, 60, 'first');
  await Promise.all([writeSome(journal, 20, 'a'), writeSome(journal, 20, 'b')]);
  await journal.close();
  const keptRows = kept.rows();
  await kept.close();
  tt.equal(keptRows.length, 100);
  tt.ok(
    (await journalFiles(file)).some((f) => f.endsWith('.gz')),
    'some files were rotated and gzipped',
  );

  fs.rmSync(indexFileOf(file));
  const reopened = await openJournal(file);
  const rebuilt = JournalIndex.open(file, reopened, silent);
  await rebuilt.ready;
  tt.same(rebuilt.rows(), keptRows, 'the deleted index is rebuilt equal');
  const page = await rebuilt.page({
    db: 'db-1.db',
    before: Number.MAX_SAFE_INTEGER,
    fromSeq: 0,
    toSeq: Number.MAX_SAFE_INTEGER,
    fromTime: null,
    toTime: null,
    failed: false,
    token: null,
    limit: 1000,
  });
  tt.equal(
    page.length,
    keptRows.filter((r) => r.db === 'db-1.db').length,
    'every line is read back, from plain and gzipped files',
  );
  tt.ok(page.every((e, i) => i === 0 || e.seq < (page[i - 1]?.seq ?? 0)));
  tt.ok(page.every((e) => e.sql?.includes('✓')));
  await reopened.close();
  await rebuilt.close();
});

t.test('an index behind the journal catches up; rows of removed files are dropped', async (tt) => {
  const dir = scratchDir(tt);
  const file = path.join(dir, 'journal', 'statements.jsonl');
  const journal = await openJournal(file);
  const index = JournalIndex.open(file, journal, silent);
  await writeSome(journal, 40, 'x');
  await journal.close();
  await index.close();
  // As if the process died between appends and their index update: the last rows never made it.
  const db = new Database(indexFileOf(file));
  db.prepare('DELETE FROM entries WHERE seq > 25').run();
  db.close();
  const oldest = (await journalFiles(file)).filter((f) => f.endsWith('.gz')).sort()[0] as string;
  const again = await openJournal(file);
  const caught = JournalIndex.open(file, again, silent);
  await caught.ready;
  tt.same(
    caught.rows().map((r) => r.seq),
    Array.from({ length: 40 }, (_, i) => i + 1),
  );
  // Retention removes the oldest file: its rows go at the next read.
  fs.rmSync(oldest);
  const page = await caught.page({
    db: 'db-0.db',
    before: Number.MAX_SAFE_INTEGER,
    fromSeq: 0,
    toSeq: Number.MAX_SAFE_INTEGER,
    fromTime: null,
    toTime: null,
    failed: false,
    token: null,
    limit: 1000,
  });
  const first = Math.min(...caught.rows().map((r) => r.seq));
  tt.ok(first > 1, `rows below the oldest kept seq are gone (${first})`);
  tt.ok(page.length > 0 && page.every((e) => e.seq >= first));
  await again.close();
  await caught.close();
});

t.test('a server killed with SIGKILL after its appends has its history complete after restart', async (tt) => {
  const dir = scratchDir(tt);
  const data = path.join(dir, 'data');
  const args = ['-dir', data, '-log-fsync=false', '-journal-feed'];
  const first = await startServer(args, { cwd: dir });
  await first.post('/dbs', { db: 'k' });
  await first.exec('k', 'CREATE TABLE t (n INT)');
  const acked = await Promise.all(Array.from({ length: 40 }, (_, i) => first.exec('k', `INSERT INTO t VALUES (${i})`)));
  tt.ok(acked.every((r) => r.status === 200));
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  // The kill may come before the index took the last chunks; make sure it did, as in the worst case.
  const indexFile = indexFileOf(path.join(data, 'journal', 'statements.jsonl'));
  const db = new Database(indexFile);
  db.prepare('DELETE FROM entries WHERE seq > 10').run();
  db.close();
  const second = await startServer(args, { cwd: dir });
  tt.teardown(async () => {
    await second.stop();
  });
  const reply = await second.get('/dbs/k/history?limit=500');
  tt.equal(reply.status, 200, reply.text);
  const seqs = (reply.body.entries as Array<{ seq: number }>).map((e) => e.seq);
  tt.same(
    seqs,
    Array.from({ length: 42 }, (_, i) => 42 - i),
    'createdb, the table and every acknowledged insert',
  );
  // A deleted index is rebuilt at the next start.
  await second.stop();
  fs.rmSync(indexFile);
  const third = await startServer(args, { cwd: dir });
  tt.teardown(async () => {
    await third.stop();
  });
  tt.same(
    ((await third.get('/dbs/k/history?limit=500')).body.entries as Array<{ seq: number }>).map((e) => e.seq),
    seqs,
  );
});
