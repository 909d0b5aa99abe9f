/**
 * The backup and restore drill of docs/deploy.md ("Backups and restoring a
 * whole server"), as the docs give it: a server with snapshot rounds and
 * journal retention takes writes across rotations and rounds; while it runs,
 * deploy/backup/sqlscribe-backup.sh copies its checkpoint, rounds and journal
 * files; the copy is put into a new directory and the databases rebuilt there
 * by `replay -out`; `replay -verify` finds them equal to the live files; and
 * a new server started on the restored directory serves the same rows.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runReplay, startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { ROOT } from './helpers/deploy-files';
import { eventually } from './helpers/wait';

t.setTimeout(180_000);

const SCRIPT = path.join(ROOT, 'deploy/backup/sqlscribe-backup.sh');

t.test('a whole server restored from its backup holds and serves what the live one does', async (tt) => {
  const scratch = scratchDir(tt);
  const live = path.join(scratch, 'live');
  const journal = path.join(live, 'journal/statements.jsonl');
  const flags = [
    '-dir',
    path.join(live, 'data'),
    '-log-file',
    journal,
    '-log-max-size',
    '4K',
    '-snapshot-every',
    '40',
    '-log-retain',
    '1',
  ];
  const server = await startServer(flags, { cwd: scratch });
  tt.teardown(() => server.stop());
  for (const db of ['school', 'lab']) {
    tt.equal((await server.post('/dbs', { db })).status, 201);
    tt.equal((await server.exec(db, 'CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT, at TEXT)')).status, 200);
  }
  for (let i = 0; i < 150; i++) {
    const db = i % 3 === 0 ? 'lab' : 'school';
    // datetime('now') and random(): replay gives the recorded values, not new ones.
    const reply = await server.exec(
      db,
      `INSERT INTO pupils VALUES (${i}, 'pupil ' || ${i} || ' ' || random(), datetime('now'))`,
    );
    tt.equal(reply.status, 200, reply.text.slice(0, 200));
  }
  tt.equal((await server.exec('school', 'DELETE FROM pupils WHERE id % 10 = 0')).status, 200);
  const journalDir = path.dirname(journal);
  const rounds = fs.readdirSync(path.join(journalDir, 'snapshots')).filter((name) => name.startsWith('round-'));
  tt.ok(rounds.length >= 1, `rounds were taken: ${rounds.join(', ')}`);
  // Retention runs after its round, in the background: the journal's start is gone once it says so.
  tt.ok(
    await eventually(() => /retention removed [1-9]\d* journal files/.test(server.stderr()), 10_000),
    'retention removed journal files',
  );
  const hasSeqOne = (await runReplay(['-log-file', journal, '-out', path.join(scratch, 'x'), '-no-snapshots'], scratch))
    .code;
  tt.equal(hasSeqOne, 2, 'retention removed the journal start: only the rounds and the rest restore it');

  // The backup, while the server runs (docs/deploy.md: the script, from cron or a timer).
  const backups = path.join(scratch, 'backup');
  const backup = spawnSync('sh', [SCRIPT, journal, backups], { encoding: 'utf8' });
  tt.equal(backup.status, 0, backup.stderr);
  const copy = path.join(backups, 'latest');
  const copied = fs.readdirSync(copy);
  tt.ok(
    copied.includes('statements.jsonl') &&
      copied.includes('statements.jsonl.checkpoint') &&
      copied.includes('snapshots'),
    copied.join(' '),
  );
  tt.notOk(
    copied.some((name) => name.endsWith('.db') || name.endsWith('.lock') || name.includes('.index')),
    'no live database, lock or index',
  );

  // The restore on the "new machine": the copy becomes the journal directory, replay rebuilds the data.
  const restored = path.join(scratch, 'new-machine');
  fs.mkdirSync(path.join(restored, 'journal'), { recursive: true });
  fs.cpSync(copy + '/', path.join(restored, 'journal'), { recursive: true, dereference: true });
  const newJournal = path.join(restored, 'journal/statements.jsonl');
  const rebuilt = await runReplay(['-log-file', newJournal, '-out', path.join(restored, 'data')], scratch);
  tt.equal(rebuilt.code, 0, rebuilt.stderr);
  // No write since the backup: the live files are the state to compare with.
  const verified = await runReplay(
    ['-log-file', newJournal, '-out', path.join(scratch, 'check'), '-verify', path.join(live, 'data')],
    scratch,
  );
  tt.equal(verified.code, 0, `replay -verify against the live data: ${verified.stdout}${verified.stderr}`);

  const query = { sql: 'SELECT id, name, at FROM pupils ORDER BY id' };
  const liveRows = await Promise.all(['school', 'lab'].map((db) => server.exec(db, query.sql)));
  await server.stop();
  const again = await startServer(
    ['-dir', path.join(restored, 'data'), '-log-file', newJournal, '-snapshot-every', '40', '-log-retain', '1'],
    { cwd: scratch },
  );
  tt.teardown(() => again.stop());
  for (const [i, db] of ['school', 'lab'].entries()) {
    const reply = await again.exec(db, query.sql);
    tt.equal(reply.status, 200);
    tt.same(reply.body?.results, liveRows[i]?.body?.results, `${db}: the same rows`);
  }
  tt.equal((await again.exec('school', 'SELECT count(*) FROM pupils')).body?.results?.[0]?.rows?.[0]?.[0], 90);
  // And it goes on: a write after the restore takes the next seq.
  tt.equal((await again.exec('lab', "INSERT INTO pupils VALUES (1000, 'new', datetime('now'))")).status, 200);
});
