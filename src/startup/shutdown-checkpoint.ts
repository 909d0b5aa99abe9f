/**
 * At a clean stop, after the engine processes have closed their handles: every
 * database the service serves or keeps is checkpointed, so that its `.db` file
 * alone holds every committed row. A database that cannot be checkpointed is
 * reported and skipped; it never stops the shutdown (its log still holds the
 * data, and SQLite reads it at the next open).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PILOTS_DATABASE } from '../pilots/pilot-store';
import { EXERCISES_DATABASE } from '../database-names';
import { checkpointWal } from '../engine/files/wal-checkpoint';
import type { Config } from '../config/options';

/** The `.db` files of the data directory, or in single-DB mode the file and the service's own database beside it. */
export function servedDatabaseFiles(config: Config): string[] {
  if (config.dbFile !== null) {
    return [config.dbFile, path.join(config.dir, PILOTS_DATABASE), path.join(config.dir, EXERCISES_DATABASE)].filter(
      (file) => isRegularFile(file),
    );
  }
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(config.dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.db'))
    .map((entry) => path.join(config.dir, entry.name))
    .sort();
}

function isRegularFile(file: string): boolean {
  try {
    return fs.lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/** Checkpoints every served database; returns how many were skipped, each reported through `warn`. */
export function checkpointAtShutdown(config: Config, warn: (message: string) => void): number {
  let skipped = 0;
  for (const file of servedDatabaseFiles(config)) {
    try {
      checkpointWal(file);
    } catch (error) {
      skipped++;
      warn(
        `could not checkpoint ${file} at shutdown, its -wal file still holds data: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return skipped;
}
