/**
 * Crash recovery (decisions §6): before the server serves, every database is
 * brought in line with the journal. Entries up to the checkpoint are known to
 * be applied; the rest are read and applied where their database lacks them.
 */
import path from 'node:path';
import { Engine } from './engine/engine';
import type { Config } from './options';
import type { DatabaseRef } from './bus/database-directory';
import { readCheckpoint, writeCheckpoint } from '../journal/checkpoint';
import { JournalError, readJournal } from '../journal/reader';
import { rebuild, type RebuildResult } from '../replay/rebuild';
import { recoveryStart } from './snapshots/recovery-start';

/** The file of a database named in the journal, in this server's layout. */
export function databaseFileOf(config: Config): (db: string) => string {
  return (db) => (config.dbFile !== null && db === path.basename(config.dbFile) ? config.dbFile : path.join(config.dir, db));
}

async function entriesFrom(journalFile: string, fromSeq: number) {
  try {
    return await readJournal(journalFile, { fromSeq });
  } catch (error) {
    if (error instanceof JournalError && error.kind === 'missing') return undefined;
    throw error;
  }
}

/** Applies what the databases lack; `db` limits it to one database. */
async function applyFrom(config: Config, journalFile: string, fromSeq: number, db?: string): Promise<RebuildResult & { lastSeq: number; warnings: string[] }> {
  const contents = await entriesFrom(journalFile, fromSeq);
  if (contents === undefined) return { applied: 0, skipped: 0, lastSeq: fromSeq - 1, warnings: [] };
  const entries = db === undefined ? contents.entries : contents.entries.filter((entry) => entry.db === db);
  const engine = new Engine({ maxOpenDatabases: 64 });
  try {
    const result = await rebuild(engine, entries, { fileOf: databaseFileOf(config), yieldEvery: 200 });
    const lastSeq = contents.entries.at(-1)?.seq ?? fromSeq - 1;
    return { ...result, lastSeq, warnings: contents.warnings };
  } finally {
    engine.close();
  }
}

export async function recoverDatabases(config: Config, journalFile: string): Promise<RebuildResult & { warnings: string[] }> {
  const known = readCheckpoint(journalFile)?.appliedThrough ?? 0;
  const from = recoveryStart(config.snapshotDir, known, databaseFileOf(config)) + 1;
  const result = await applyFrom(config, journalFile, from);
  writeCheckpoint(journalFile, { appliedThrough: Math.max(result.lastSeq, from - 1) });
  return result;
}

/** Brings one database in line while the server runs (a commit failed after its entry was written). */
export async function repairDatabase(config: Config, journalFile: string, ref: DatabaseRef): Promise<void> {
  const result = await applyFrom(config, journalFile, 1, ref.name);
  process.stderr.write(`sqlscribe: repaired ${ref.name} from the journal (${result.applied} entries applied)\n`);
}
