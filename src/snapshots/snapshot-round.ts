/**
 * One snapshot round: a consistent copy of every database changed since its
 * newest copy, with SQLite's online backup (the databases are in WAL mode, so
 * a reader in this process sees one committed state while engine processes
 * write), tagged with the seq each copy holds, then a manifest written last
 * and durably: a round without its manifest does not exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { syncFile } from '../engine/files/database-file';
import { readPosition } from '../engine/files/journal-position';
import { PILOTS_DATABASE } from '../pilots/pilot-store';
import { EXERCISES_DATABASE } from '../database-names';
import {
  listRounds,
  MANIFEST_FORMAT,
  snapshotFileName,
  writeManifest,
  type SnapshotDatabase,
  type SnapshotManifest,
  type SnapshotRound,
} from './manifest';

export interface RoundSources {
  /** Single-DB mode's database, or null: every database of `dataDir`. */
  readonly dbFile: string | null;
  readonly dataDir: string;
  readonly logFile: string;
  readonly snapshotDir: string;
}

/** Pages copied per step: larger steps restart less often under writes, smaller ones give the event loop more turns. */
const PAGES_PER_STEP = 1000;
const DATABASE_NAME = /^[a-z0-9_-]{1,64}\.db$/;

/** The databases to copy, by name in the journal, with their files. */
export function databasesOf(sources: RoundSources): Array<{ db: string; file: string }> {
  if (sources.dbFile !== null) {
    // The service's own databases live beside the file: the pilot records and the exercises.
    const own = [PILOTS_DATABASE, EXERCISES_DATABASE]
      .map((db) => ({ db, file: path.join(sources.dataDir, db) }))
      .filter(({ file }) => fs.existsSync(file));
    return [{ db: path.basename(sources.dbFile), file: sources.dbFile }, ...own];
  }
  return fs
    .readdirSync(sources.dataDir, { withFileTypes: true })
    .filter((d) => d.isFile() && DATABASE_NAME.test(d.name))
    .map((d) => ({ db: d.name, file: path.join(sources.dataDir, d.name) }))
    .sort((a, b) => (a.db < b.db ? -1 : 1));
}

function openReadOnly(file: string): Database.Database | undefined {
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return undefined; // dropped since the directory was listed
  }
}

function positionOf(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return readPosition(db).applied;
  } finally {
    db.close();
  }
}

/** A copy of one database, or the newest one kept when the database has not changed since; undefined when it is gone. */
async function copyDatabase(
  db: string,
  file: string,
  snapshotDir: string,
  newest: SnapshotRound | undefined,
): Promise<SnapshotDatabase | undefined> {
  const live = openReadOnly(file);
  if (live === undefined) return undefined;
  try {
    const applied = readPosition(live).applied;
    const kept = newest?.databases.find((d) => d.db === db);
    if (kept !== undefined && kept.seq === applied && fs.existsSync(path.join(snapshotDir, kept.file))) return kept;
    const temporary = path.join(snapshotDir, `.${db}.tmp`);
    fs.rmSync(temporary, { force: true });
    await live.backup(temporary, { progress: () => PAGES_PER_STEP });
    // The copy's own position, not the one read before: writes may have landed while it was made.
    const seq = positionOf(temporary);
    syncFile(temporary);
    const name = snapshotFileName(db, seq);
    fs.renameSync(temporary, path.join(snapshotDir, name));
    return { db, file: name, seq };
  } finally {
    live.close();
  }
}

/**
 * Takes a round when anything changed since the newest one; returns its
 * manifest, or undefined when there was nothing new to record.
 *
 * `settled` is the write path's settled seq, read before the first copy
 * starts: every entry up to it is applied to its database (or changes
 * nothing), so every copy holds it, and a restore needs the journal only
 * after it. Entries written but not yet applied, and an open session's, lie
 * above it: the write path keeps them unsettled until they are applied.
 */
export async function takeSnapshotRound(sources: RoundSources, settled: number): Promise<SnapshotManifest | undefined> {
  fs.mkdirSync(sources.snapshotDir, { recursive: true });
  const newest = listRounds(sources.snapshotDir).at(-1);
  const databases: SnapshotDatabase[] = [];
  for (const { db, file } of databasesOf(sources)) {
    const copy = await copyDatabase(db, file, sources.snapshotDir, newest);
    if (copy !== undefined) databases.push(copy);
  }
  const base = Math.max(settled, newest?.base ?? 0);
  const through = databases.reduce((max, d) => Math.max(max, d.seq), 0);
  const unchanged =
    newest !== undefined && newest.base === base && JSON.stringify(newest.databases) === JSON.stringify(databases);
  if (unchanged) return undefined;
  // When the copies were done: no copy holds a change made later, so a restore to a time at or after it may start here.
  const taken = new Date().toISOString();
  const manifest: SnapshotManifest = { format: MANIFEST_FORMAT, base, through, throughTime: taken, taken, databases };
  writeManifest(sources.snapshotDir, manifest);
  return manifest;
}
