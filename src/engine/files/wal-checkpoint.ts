/**
 * Moves everything a database's write-ahead log holds into the database file
 * and empties the log, so that the `.db` file alone is complete.
 *
 * SQLite does this by itself only when the last connection to a database
 * closes, and only if that close wins an exclusive lock: when several engine
 * processes close the same database at once, or any other connection is still
 * open, each close leaves the log as it is. Hence an explicit checkpoint once
 * the engine processes are gone.
 */
import Database from 'better-sqlite3';

/** A checkpoint waits this long for a reader or writer outside the service, then gives up. */
const BUSY_WAIT_MS = 200;

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * Checkpoints `file` with TRUNCATE. A file not in WAL mode has nothing to do.
 * @throws when the file cannot be opened or read, or the log could not be emptied (busy).
 */
export function checkpointWal(file: string): void {
  const db = new Database(file, { fileMustExist: true, timeout: BUSY_WAIT_MS });
  try {
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') return;
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as CheckpointRow[];
    if (row !== undefined && row.busy !== 0) {
      throw new Error(`busy: another connection is using it (${row.checkpointed} of ${row.log} log pages copied)`);
    }
  } finally {
    db.close();
  }
}
