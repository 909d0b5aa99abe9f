/**
 * A new replica starts from the newest snapshot round in JetStream rather
 * than from the stream's first message: it downloads the round into its own
 * snapshot directory, installs each copy as the live database, makes its
 * journal continue after the round's base, and stores the stream position
 * just before the chunk that holds base + 1. The follower then reads only the
 * tail; entries of that first chunk at or below base are skipped, as on any
 * redelivery.
 *
 * Only a replica that holds nothing is seeded: an empty journal, no database
 * and no stored position. Each step is safe to be cut short, because the
 * next start sees what was done and does the rest right:
 * - during the download: no database yet, so the round is downloaded again;
 * - after some copies were installed: the replica follows from the stream's
 *   first message, and rebuild skips what each database already holds;
 * - after the journal's new start, before the position: it follows from the
 *   first message, skipping every chunk at or below base.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Journal } from '../../../journal/journal';
import { syncFile } from '../../engine/files/database-file';
import type { SnapshotManifest } from '../../snapshots/manifest';
import type { JournalStream } from '../stream/journal-stream';
import { writePosition } from './replica-position';
import { SnapshotStore } from '../stream/snapshot-store';

export interface SeedDeps {
  readonly stream: JournalStream;
  readonly journal: Journal;
  /** The data directory. */
  readonly dir: string;
  /** Single-DB mode's database (made blank at start), or null. */
  readonly dbFile: string | null;
  /** The replica's own snapshot directory; null: it keeps none, and is not seeded. */
  readonly snapshotDir: string | null;
  readonly positionFile: string;
  readonly fileOf: (db: string) => string;
  /** Makes the server's engine processes let go of a database file that was replaced. */
  readonly release: (file: string) => Promise<void>;
  readonly log: (message: string) => void;
}

/** A database file with no table, view or index: single-DB mode's file as the server made it at start. */
function isBlank(file: string): boolean {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n === 0;
  } finally {
    db.close();
  }
}

/** Whether the data directory holds a database with anything in it. */
export function holdsDatabases(dir: string, dbFile: string | null): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  return names
    .filter((name) => name.endsWith('.db'))
    .some((name) => {
      const file = path.join(dir, name);
      return file !== dbFile || !isBlank(file);
    });
}

/**
 * The stream seq to follow after: just before the chunk that holds base + 1,
 * or the chunk that ends at base when the stream has nothing after it yet;
 * null when the stream holds neither (it is not the round's stream).
 */
export async function followAfter(stream: JournalStream, base: number): Promise<number | null> {
  const next = await stream.chunkHolding(base + 1);
  if (next !== null) return next.streamSeq - 1;
  const holding = await stream.chunkHolding(base);
  return holding?.streamSeq ?? null;
}

/** Copies a round's copy over the live database: whole and synced before it takes the name. */
function installCopy(copy: string, target: string): void {
  const temporary = `${target}.seeding`;
  fs.copyFileSync(copy, temporary);
  syncFile(temporary);
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(target + suffix, { force: true });
  fs.renameSync(temporary, target);
}

async function installRound(deps: SeedDeps, snapshotDir: string, manifest: SnapshotManifest): Promise<void> {
  for (const copy of manifest.databases) {
    const target = deps.fileOf(copy.db);
    installCopy(path.join(snapshotDir, copy.file), target);
    await deps.release(target);
  }
  syncFile(deps.dir);
}

/** Whether this replica holds nothing yet, so that it may start from a round. */
function isEmpty(deps: SeedDeps): boolean {
  return deps.journal.lastSeq === 0 && !fs.existsSync(deps.positionFile) && !holdsDatabases(deps.dir, deps.dbFile);
}

/**
 * Seeds an empty replica from the newest round in the bucket; false when it
 * was not (not empty, no bucket, no round, or a round the stream does not
 * continue), and the follower then reads the stream from its start.
 */
export async function seedFromSnapshot(deps: SeedDeps): Promise<boolean> {
  const { snapshotDir, stream, journal, log } = deps;
  if (snapshotDir === null || !isEmpty(deps)) return false;
  const store = await SnapshotStore.existing(stream);
  const manifest = await store?.newestRound();
  if (store === null || manifest === null || manifest === undefined || manifest.base === 0) return false;
  const after = await followAfter(stream, manifest.base);
  if (after === null) {
    log(
      `replica: the stream does not hold seq ${manifest.base} or ${manifest.base + 1}, where snapshot round ${manifest.base}-${manifest.through} ends: following the stream from its start`,
    );
    return false;
  }
  await store.download(manifest, snapshotDir);
  await installRound(deps, snapshotDir, manifest);
  await journal.startAfter(manifest.base);
  writePosition(deps.positionFile, { streamSeq: after, journalSeq: manifest.base, settledThrough: manifest.base });
  log(
    `replica: started from snapshot round ${manifest.base}-${manifest.through} of bucket ${store.bucket} (${manifest.databases.length} databases): the journal continues after seq ${manifest.base}, the stream after seq ${after}`,
  );
  return true;
}
