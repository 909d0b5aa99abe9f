/**
 * A `void` names entries its primary journaled but could not apply (their
 * database refused the commit). Rebuild leaves out the entries a void names
 * only when the void is in the same run, but a replica may have applied them
 * from an earlier chunk already: such a database is made again from the
 * replica's own copy of the journal, which now holds the void.
 */
import fs from 'node:fs';
import type { Engine } from '../../engine/engine';
import type { JournalEntry } from '../../../journal/record';
import { readJournal } from '../../../journal/reader';
import { rebuild } from '../../../replay/rebuild';

/** The seqs that the voids among `entries` name and that an earlier run may have applied (they were not fed with the void). */
export function voidedEarlier(entries: readonly JournalEntry[], fed: ReadonlySet<number>): number[] {
  const seqs: number[] = [];
  for (const entry of entries)
    if (entry.kind === 'void') for (const seq of entry.voids ?? []) if (!fed.has(seq)) seqs.push(seq);
  return seqs;
}

export interface RedoContext {
  readonly engine: Engine;
  readonly journalFile: string;
  readonly fileOf: (db: string) => string;
  readonly log: (message: string) => void;
}

/** Whether the database's file holds the entry at `seq` or a later one: it may have applied it. */
function mayHold(context: RedoContext, db: string, seq: number): boolean {
  const file = context.fileOf(db);
  return fs.existsSync(file) && context.engine.journalPosition(file).applied >= seq;
}

/** The databases that applied some of the entries at `seqs`, as the local journal says whose they were. */
async function databasesOf(context: RedoContext, seqs: readonly number[]): Promise<Set<string>> {
  const wanted = new Set(seqs);
  const { entries } = await readJournal(context.journalFile, { fromSeq: Math.min(...seqs) });
  const dbs = new Set<string>();
  for (const entry of entries) {
    if (!wanted.has(entry.seq) || entry.db === null || entry.kind === 'void') continue;
    if (mayHold(context, entry.db, entry.seq)) dbs.add(entry.db);
  }
  return dbs;
}

function removeDatabase(context: RedoContext, db: string): void {
  const file = context.fileOf(db);
  context.engine.closeDatabase(file);
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}

/**
 * Makes `db` again from the whole local journal. A database the journal does
 * not hold from its first entry (older files removed), or one made as a copy
 * of a database that has moved on since, cannot be made again alone: that is
 * said loudly, and the database is left as rebuild could make it.
 */
async function redoDatabase(context: RedoContext, db: string): Promise<void> {
  const contents = await readJournal(context.journalFile);
  if (contents.firstSeq !== null && contents.firstSeq > 1) {
    context.log(
      `REPLICA: database ${db} holds entries its primary voided, and the local journal starts at seq ${contents.firstSeq}: it cannot be rebuilt here; restore it from the primary`,
    );
    return;
  }
  removeDatabase(context, db);
  const entries = contents.entries.filter((entry) => entry.db === db || entry.kind === 'void');
  const result = await rebuild(context.engine, entries, {
    fileOf: context.fileOf,
    yieldEvery: 200,
    onDatabaseFailed: (failed, seq, error) => {
      context.log(
        `REPLICA: database ${failed} could not be rebuilt without the entries its primary voided (stopped at seq ${seq}: ${error instanceof Error ? error.message : String(error)}); restore it from the primary`,
      );
    },
  });
  context.log(
    `replica: rebuilt ${db} from the local journal without voided entries (${result.applied} entries applied)`,
  );
}

/** Rebuilds every database that holds entries now voided; `seqs` from voidedEarlier. */
export async function redoVoided(context: RedoContext, seqs: readonly number[]): Promise<void> {
  if (seqs.length === 0) return;
  for (const db of await databasesOf(context, seqs)) {
    context.log(`replica: entries ${seqs.join(', ')} of ${db} were voided after it applied them: rebuilding ${db}`);
    await redoDatabase(context, db);
  }
}
