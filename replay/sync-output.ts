/**
 * The replay tool rebuilds with commits unsynced (synchronous = OFF): a
 * rebuild cut short is simply run again, so only the finished files need to
 * reach the disk, once, here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { syncFile } from '../src/engine/files/database-file';

/** Syncs every database in `dir` (and a WAL file left beside one), then the directory's names. */
export function syncDatabases(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith('.db') || name.endsWith('.db-wal')) syncFile(path.join(dir, name));
  }
  syncFile(dir);
}
