/**
 * The checkpoint at shutdown, on files: a database whose -wal holds rows is
 * emptied into its .db; one that cannot be checkpointed (a reader in the
 * middle of a read, a file that is not a database) is reported and skipped,
 * and the others are still done.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { Config } from '../src/config/options';
import { checkpointAtShutdown, servedDatabaseFiles } from '../src/startup/shutdown-checkpoint';

/** A WAL database with `rows` rows left in its -wal: the returned connection stays open, so its close does not checkpoint. */
function walOnly(file: string, rows: number): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  for (let i = 0; i < rows; i++) insert.run(i);
  return db;
}

function countInCopy(file: string): number {
  const copy = `${file}.copy`;
  fs.copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return Number(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 't'").pluck().get()) === 0
      ? -1
      : Number(db.prepare('SELECT count(*) FROM t').pluck().get());
  } finally {
    db.close();
    fs.rmSync(copy);
  }
}

const multi = (dir: string): Config => ({ mode: 'multi', dbFile: null, dir }) as Config;

t.test('checkpoints each database, skips and reports the ones it cannot', async (tt) => {
  const dir = tt.testdir();
  const done = walOnly(path.join(dir, 'done.db'), 50);
  const busy = walOnly(path.join(dir, 'busy.db'), 50);
  const reading = busy.prepare('SELECT x FROM t').iterate();
  reading.next(); // a read in progress: TRUNCATE must wait for it, and gives up
  fs.writeFileSync(path.join(dir, 'junk.db'), 'not a database, but long enough to be read as one'.repeat(100));
  tt.equal(countInCopy(path.join(dir, 'done.db')), -1, 'before: the .db alone does not even hold the table');
  const warnings: string[] = [];
  tt.equal(
    checkpointAtShutdown(multi(dir), (message) => warnings.push(message)),
    2,
    'two skipped',
  );
  tt.equal(countInCopy(path.join(dir, 'done.db')), 50, 'after: the .db alone holds every row');
  tt.equal(fs.statSync(path.join(dir, 'done.db-wal')).size, 0, 'its -wal is empty');
  tt.equal(warnings.length, 2, 'one warning per skipped file');
  tt.match(warnings.join('\n'), /busy\.db.*busy/, 'the busy one is named');
  tt.match(warnings.join('\n'), /junk\.db/, 'the broken one is named');
  reading.return?.();
  busy.close();
  done.close();
});

t.test('single-DB: the file and the service database beside it, nothing else there', async (tt) => {
  const dir = tt.testdir({ 'one.db': '', 'other.db': '', '_sqlscribe_pilots.db': '' });
  const files = servedDatabaseFiles({ mode: 'single', dbFile: path.join(dir, 'one.db'), dir } as Config);
  tt.same(files, [path.join(dir, 'one.db'), path.join(dir, '_sqlscribe_pilots.db')]);
});
