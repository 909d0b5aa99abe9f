/**
 * SQLite answers SQLITE_FULL both when the disk is full and when a database
 * reaches its max_page_count (Connection.limitSize), with the same words.
 * They are told apart by the disk: when it still has room, the bound was
 * reached, and the client hears DATABASE_TOO_LARGE; otherwise it is the
 * disk, STORAGE_FULL, as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors';
import type { Connection } from './connection-pool';

/**
 * Free bytes above which a SQLITE_FULL cannot be the disk's: a write that fills a disk stops with
 * less than a page or two left. A few MiB leaves room for what another process freed meanwhile.
 */
const DISK_ROOM_BYTES = 4 * 1024 * 1024;

function freeBytes(dir: string): number {
  try {
    const stats = fs.statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return 0;
  }
}

/** `error` (STORAGE_FULL) as DATABASE_TOO_LARGE when the connection's bound, not the disk, refused the write. */
export function sizeLimitError(connection: Connection, error: EngineError): EngineError {
  const limit = connection.sizeLimitBytes;
  if (limit === null || freeBytes(path.dirname(connection.file)) < DISK_ROOM_BYTES) return error;
  const db = path.basename(connection.file);
  const mb = Math.round((limit / (1024 * 1024)) * 100) / 100;
  return new EngineError(
    'DATABASE_TOO_LARGE',
    { db, mb },
    { sqliteCode: error.sqliteCode ?? 'SQLITE_FULL', cause: error },
  );
}
