/**
 * Where start-up recovery may begin reading the journal. A snapshot round is
 * a checkpoint too: every entry at or below its base that changed a database
 * is in that database's copy, hence in the live file, which only moves
 * forward. So after a crash that left the checkpoint file old, recovery still
 * reads only the journal after the newest round, not the whole of it.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { readPosition } from '../engine/files/journal-position';
import { listRounds } from './manifest';

function appliedOf(file: string): number | undefined {
  if (!fs.existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return readPosition(db).applied;
  } finally {
    db.close();
  }
}

/**
 * The newest round's base when it is above `known` and every live database
 * holds at least what its copy does (a file restored by hand to an older state
 * would need the journal before the round); otherwise `known`.
 */
export function recoveryStart(snapshotDir: string | null, known: number, fileOf: (db: string) => string): number {
  if (snapshotDir === null) return known;
  const newest = listRounds(snapshotDir).at(-1);
  if (newest === undefined || newest.base <= known) return known;
  for (const copy of newest.databases) {
    const applied = appliedOf(fileOf(copy.db));
    // A database missing now was dropped after the round; the journal after base says so.
    if (applied !== undefined && applied < copy.seq) return known;
  }
  return newest.base;
}
