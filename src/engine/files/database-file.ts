/**
 * A new database file, made whole before it takes its name: it is built
 * under a temporary name (WAL mode, and its journal position when the
 * journal created it), synced, and renamed into place. A crash leaves either
 * no database or a complete one, never a file without its position, which
 * recovery would take for a database the journal knows nothing about.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { useWal } from '../connection-pool';
import { META_TABLE, META_TABLE_DDL } from './journal-position';

/** SQLite's files beside a database; orphans of a dropped database must not meet a new one. */
const COMPANIONS = ['-wal', '-shm', '-journal'];

export function createDatabaseFile(file: string, createdSeq?: number): void {
  const temporary = `${file}.creating`;
  removeWithCompanions(temporary);
  const db = new Database(temporary, { timeout: 0 });
  try {
    useWal(db);
    if (createdSeq !== undefined) {
      db.exec(META_TABLE_DDL);
      const insert = db.prepare(`INSERT INTO ${META_TABLE} (key, value) VALUES (?, ?)`);
      db.transaction(() => {
        insert.run('created', BigInt(createdSeq));
        insert.run('applied', BigInt(createdSeq));
      })();
    }
  } finally {
    // The last handle's close checkpoints the WAL into the file and removes it.
    db.close();
  }
  syncFile(temporary);
  for (const suffix of COMPANIONS) fs.rmSync(file + suffix, { force: true });
  fs.renameSync(temporary, file);
  syncFile(path.dirname(file));
}

function removeWithCompanions(file: string): void {
  for (const suffix of ['', ...COMPANIONS]) fs.rmSync(file + suffix, { force: true });
}

/** Syncs a file (or a directory, for the names in it) to disk. */
export function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
