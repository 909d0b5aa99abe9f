/**
 * One sqlscribe per data directory and per journal. Two servers on the same
 * files would both number entries from the same seq and both write the same
 * databases, so the second one refuses to start.
 *
 * The lock is an OS lock, not a file's presence: a small SQLite file opened
 * with locking_mode=EXCLUSIVE holds a write lock for the life of the process.
 * The kernel drops it when the process dies, however it dies, so nothing a
 * crash leaves behind can block the next start, and a reused pid cannot be
 * taken for a live holder. Engine processes neither inherit it (POSIX record
 * locks belong to one process) nor can release it.
 *
 * The holder's pid is written to a plain side file, only for the message: a
 * locked SQLite file cannot be read by another process. This process must
 * never open the lock file itself with `fs`: closing any descriptor of a file
 * drops every POSIX lock the process holds on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/options';

/** Another sqlscribe holds the directory or the journal: start-up stops with exit code 2. */
export class InstanceLockError extends Error {
  constructor(what: string, holderPid: number | null) {
    super(`${what} is in use by another sqlscribe (pid ${holderPid ?? 'unknown'})`);
    this.name = 'InstanceLockError';
  }
}

export interface InstanceLock {
  /** Lets the next server start; called once the databases and the journal are closed. */
  release(): void;
}

/** The lock file in a data directory; hidden, and not a `.db`, so it is never listed as a database. */
export const DIRECTORY_LOCK = '.sqlscribe.lock';

/** The lock file beside a journal; no journal reader takes it for a journal file. */
export function journalLockFile(journalFile: string): string {
  return `${journalFile}.lock`;
}

function pidFile(lockFile: string): string {
  return `${lockFile}.pid`;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

function readHolderPid(lockFile: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile(lockFile), 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the lock at `lockFile`, or throws InstanceLockError naming `what`.
 * Timeout 0: a held lock answers SQLITE_BUSY at once instead of waiting.
 */
export function takeLock(lockFile: string, what: string): InstanceLock {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  const db = new Database(lockFile, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // No rollback journal file beside the lock file: it holds nothing worth keeping.
    db.pragma('journal_mode = MEMORY');
    // In EXCLUSIVE locking mode the write lock taken here is kept after COMMIT, until close().
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new InstanceLockError(what, readHolderPid(lockFile));
    throw error;
  }
  fs.writeFileSync(pidFile(lockFile), `${process.pid}\n`);
  let held = true;
  return {
    release(): void {
      if (!held) return;
      held = false;
      // The pid file goes first: once the lock is free, the next holder writes its own.
      fs.rmSync(pidFile(lockFile), { force: true });
      db.close();
    },
  };
}

/** How the data directory is named in the refusal: in single-DB mode it is the directory of the -db file. */
function directoryName(config: Config): string {
  return config.dbFile === null ? `data directory ${config.dir}` : `directory ${config.dir} (of -db ${config.dbFile})`;
}

/**
 * Locks the data directory, then the journal (which may lie elsewhere). In
 * single-DB mode the directory of the file is locked, not the file alone: the
 * service's own databases live beside it, so two servers there would share them.
 */
export function lockInstance(config: Config): InstanceLock {
  const locks = [takeLock(path.join(config.dir, DIRECTORY_LOCK), directoryName(config))];
  // At level none nothing is ever written to the journal, so it is not ours to lock.
  if (config.logFile !== null && config.logLevel !== 'none') {
    try {
      locks.push(takeLock(journalLockFile(config.logFile), `journal ${config.logFile}`));
    } catch (error) {
      locks[0]?.release();
      throw error;
    }
  }
  return {
    release(): void {
      for (const lock of [...locks].reverse()) lock.release();
    },
  };
}
