/**
 * A snapshot round's manifest: which copy of each database it holds, and the
 * seq from which the journal completes them. A copy is tagged with the seq of
 * the last entry applied to its database; `base` is a seq such that every
 * entry a copy lacks is above it, so a restore needs only the journal after
 * `base`. A round is usable for any target at or after `through`.
 *
 * Layout of the snapshot directory: `round-<base>-<through>.json` manifests and
 * `<name>@<seq>.db` copies, shared by rounds while a database is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { syncFile } from '../engine/files/database-file';

export const MANIFEST_FORMAT = 1;

export interface SnapshotDatabase {
  /** The database's name in the journal, e.g. `school.db`. */
  readonly db: string;
  /** The copy's file name in the snapshot directory. */
  readonly file: string;
  /** The seq of the last journal entry applied to the copy (0: none). */
  readonly seq: number;
}

export interface SnapshotManifest {
  readonly format: number;
  /** Every entry some copy lacks is above this seq: a restore reads the journal from base + 1. */
  readonly base: number;
  /** The largest seq of the copies: the earliest target the round can serve. */
  readonly through: number;
  /** ISO time of the entry `through` (or a later time when it was not at hand): the earliest time target it can serve. */
  readonly throughTime: string;
  /** ISO time the round was written. */
  readonly taken: string;
  readonly databases: readonly SnapshotDatabase[];
}

export interface SnapshotRound extends SnapshotManifest {
  /** The manifest's path. */
  readonly path: string;
}

const ROUND_NAME = /^round-\d+-\d+\.json$/;

export function manifestName(base: number, through: number): string {
  return `round-${String(base).padStart(12, '0')}-${String(through).padStart(12, '0')}.json`;
}

/** `school.db` at seq 1190 → `school@1190.db`. */
export function snapshotFileName(db: string, seq: number): string {
  const stem = db.endsWith('.db') ? db.slice(0, -3) : db;
  return `${stem}@${seq}.db`;
}

function isSafeCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** The manifest's content when it has the expected shape; a foreign or damaged file is not a round. */
export function parseManifest(text: string): SnapshotManifest | undefined {
  let value: Partial<SnapshotManifest>;
  try {
    value = JSON.parse(text) as Partial<SnapshotManifest>;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || value.format !== MANIFEST_FORMAT) return undefined;
  if (
    !isSafeCount(value.base) ||
    !isSafeCount(value.through) ||
    typeof value.throughTime !== 'string' ||
    typeof value.taken !== 'string'
  )
    return undefined;
  if (!Array.isArray(value.databases)) return undefined;
  return (value.databases as unknown[]).every(isDatabaseEntry) ? (value as SnapshotManifest) : undefined;
}

/** One database of a manifest: its name, its copy's file name (no path) and the seq the copy holds. */
function isDatabaseEntry(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const { db, file, seq } = entry as Record<string, unknown>;
  return typeof db === 'string' && typeof file === 'string' && !file.includes('/') && isSafeCount(seq);
}

/** The rounds in `dir`, oldest first (by base, then through); an absent directory holds none. */
export function listRounds(dir: string): SnapshotRound[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const rounds: SnapshotRound[] = [];
  for (const name of names.filter((n) => ROUND_NAME.test(n))) {
    const file = path.join(dir, name);
    const manifest = parseManifest(fs.readFileSync(file, 'utf8'));
    if (manifest) rounds.push({ ...manifest, path: file });
  }
  return rounds.sort((a, b) => a.base - b.base || a.through - b.through);
}

/** Writes a file so that after a crash it is either absent or whole: temporary file, fsync, rename, directory fsync. */
export function writeDurably(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, text);
  syncFile(temporary);
  fs.renameSync(temporary, file);
  syncFile(path.dirname(file));
}

export function writeManifest(dir: string, manifest: SnapshotManifest): string {
  const file = path.join(dir, manifestName(manifest.base, manifest.through));
  writeDurably(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return file;
}
