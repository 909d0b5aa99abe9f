/**
 * A small file beside the journal that saves reading the whole journal at
 * start-up: the seq through which every entry is known to be applied to its
 * database. It is only a shortcut: without it the server reads the whole
 * journal, and a stale one only makes it read more. The last seq written is
 * not kept here: the writer reads it from the active file's tail, which cannot
 * disagree with what is in the journal.
 */
import fs from 'node:fs';

export interface Checkpoint {
  /** Every entry up to this seq is applied to its database (or needed nothing). */
  appliedThrough?: number;
}

export function checkpointFile(journalFile: string): string {
  return `${journalFile}.checkpoint`;
}

export function readCheckpoint(journalFile: string): Checkpoint | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(checkpointFile(journalFile), 'utf8')) as Checkpoint;
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Merges `update` into the saved checkpoint; written to a temporary file and renamed, so it is never half written. */
export function writeCheckpoint(journalFile: string, update: Checkpoint): void {
  const merged = { ...readCheckpoint(journalFile), ...update };
  const file = checkpointFile(journalFile);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(merged)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}
