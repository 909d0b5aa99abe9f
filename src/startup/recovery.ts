/**
 * Crash recovery: before the server serves, every database is
 * brought in line with the journal. Entries up to the checkpoint are known to
 * be applied; the rest are read and applied where their database lacks them.
 */
import fs from 'node:fs';
import { Engine } from '../engine/engine';
import type { Config } from '../config/options';
import { databaseFileIn } from '../database-names';
import { readCheckpoint, writeCheckpoint } from '../../journal/checkpoint';
import { JournalError, readJournal } from '../../journal/reader';
import { rebuild, type RebuildOptions, type RebuildResult } from '../../replay/rebuild';
import { recoveryStart } from '../snapshots/recovery-start';
import { restorerFor } from '../../replay/point-in-time';

async function entriesFrom(journalFile: string, fromSeq: number) {
  try {
    return await readJournal(journalFile, { fromSeq });
  } catch (error) {
    if (error instanceof JournalError && error.kind === 'missing') return undefined;
    throw error;
  }
}

/** Applies what the databases lack; `db` limits it to one database. */
async function applyFrom(
  config: Config,
  journalFile: string,
  fromSeq: number,
  db?: string,
  onDatabaseFailed?: RebuildOptions['onDatabaseFailed'],
): Promise<RebuildResult & { lastSeq: number; warnings: string[] }> {
  const contents = await entriesFrom(journalFile, fromSeq);
  if (contents === undefined) return { applied: 0, skipped: 0, lastSeq: fromSeq - 1, warnings: [] };
  const entries = db === undefined ? contents.entries : contents.entries.filter((entry) => entry.db === db);
  const engine = new Engine({ maxOpenDatabases: 64 });
  try {
    // A restore entry not yet in its file is rebuilt from the journal and the snapshot rounds, as replay does.
    const restorer = restorerFor({ logFile: journalFile, snapshotDir: config.snapshotDir });
    const result = await rebuild(engine, entries, {
      fileOf: databaseFileIn(config),
      yieldEvery: 200,
      restorer,
      ...(onDatabaseFailed === undefined ? {} : { onDatabaseFailed }),
    });
    const lastSeq = contents.entries.at(-1)?.seq ?? fromSeq - 1;
    return { ...result, lastSeq, warnings: contents.warnings };
  } finally {
    engine.close();
  }
}

/** A database that start-up could not bring in line, and the entry it stopped at. */
export interface UnrecoveredDatabase {
  db: string;
  seq: number;
  reason: string;
}

/**
 * Applies what every database lacks. A database whose entry cannot be applied
 * (its disk is full, its file damaged) is left behind and reported; the
 * server starts anyway and keeps that database's writes waiting for a repair,
 * so a crash or a full disk never stops the service as a whole.
 */
export async function recoverDatabases(
  config: Config,
  journalFile: string,
): Promise<RebuildResult & { warnings: string[]; unrecovered: UnrecoveredDatabase[] }> {
  const known = readCheckpoint(journalFile)?.appliedThrough ?? 0;
  const from = recoveryStart(config.snapshotDir, known, databaseFileIn(config)) + 1;
  const unrecovered: UnrecoveredDatabase[] = [];
  const result = await applyFrom(config, journalFile, from, undefined, (db, seq, error) => {
    unrecovered.push({ db, seq, reason: error instanceof Error ? error.message : String(error) });
  });
  const stoppedAt = Math.min(...unrecovered.map((failure) => failure.seq));
  const through = Number.isFinite(stoppedAt) ? stoppedAt - 1 : Math.max(result.lastSeq, from - 1);
  writeCheckpoint(journalFile, { appliedThrough: through });
  return { ...result, unrecovered };
}

/** The seq of the last entry a database file has applied; 0 when there is no file (the journal must create it). */
function appliedPosition(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const engine = new Engine({ maxOpenDatabases: 1 });
  try {
    return engine.journalPosition(file).applied;
  } finally {
    engine.close();
  }
}

/**
 * Brings one database in line while the server runs: it lacks durable
 * entries (a commit failed after them, and they could not be voided).
 */
export async function repairDatabase(config: Config, journalFile: string, db: string): Promise<void> {
  const result = await applyFrom(config, journalFile, appliedPosition(databaseFileIn(config)(db)) + 1, db);
  process.stderr.write(`sqlscribe: repaired ${db} from the journal (${result.applied} entries applied)\n`);
}
