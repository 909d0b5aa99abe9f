/**
 * Replay applies the plain writes of one database in batches: one
 * transaction for up to MAX_BATCH_ENTRIES entries, and the applied seq
 * recorded once, at the batch's commit. A
 * BEGIN/COMMIT and a position write per entry cost most of a replay of small
 * entries. Entries that ran in one transaction one after the other give what
 * they give one transaction each (the server's write groups rely on the same
 * thing), so the rebuilt files are the same.
 *
 * Only top-level batches that succeeded live and wrote join a batch; the
 * batches that failed live or only read change nothing and need no
 * transaction; anything else (sessions, CREATE/DROP DATABASE, another
 * database) first commits the batch gathered so far (rebuild.ts).
 */
import type { Engine } from '../src/engine/engine';
import type { JournalEntry } from '../journal/record';
import type { JournalApplier } from './apply-entries';

/** Big enough that the commit is noise, small enough that a batch's WAL frames stay modest. */
export const MAX_BATCH_ENTRIES = 1000;

/** A top-level batch that succeeded live and changed something: it may share a transaction. */
export function isBatchable(entry: JournalEntry): boolean {
  return entry.kind === 'exec' && entry.session === null && entry.ok && entry.readonly !== true;
}

/** A top-level batch that failed live or only read: replay does nothing with it, so no batch needs ending. */
export function changesNothing(entry: JournalEntry): boolean {
  return entry.kind === 'exec' && entry.session === null && !isBatchable(entry);
}

export class EntryBatch {
  private entries: JournalEntry[] = [];

  constructor(private readonly maxEntries = MAX_BATCH_ENTRIES) {}

  get db(): string | null {
    return this.entries[0]?.db ?? null;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Whether the entry can be handled without committing the batch first. */
  admits(entry: JournalEntry): boolean {
    if (changesNothing(entry)) return true;
    if (!isBatchable(entry)) return false;
    return this.entries.length === 0 || (entry.db === this.db && this.entries.length < this.maxEntries);
  }

  add(entry: JournalEntry): void {
    this.entries.push(entry);
  }

  /** The gathered entries, oldest first; the batch is empty afterwards. */
  take(): JournalEntry[] {
    const taken = this.entries;
    this.entries = [];
    return taken;
  }
}

/**
 * Applies entries of one database together. Should anything fail (an entry
 * that succeeded live fails here, the disk is full), nothing of the failed
 * group is kept and its entries are applied again one transaction each, as
 * before batching: the error then names the entry that fails, and the
 * entries before it are applied and recorded, exactly as without batches.
 */
export function applyTogether(engine: Engine, applier: JournalApplier, entries: readonly JournalEntry[]): void {
  let done = 0;
  while (done < entries.length) {
    const ran = runGroup(engine, applier, entries.slice(done));
    if (ran === 0) break;
    done += ran;
  }
  for (const entry of entries.slice(done)) applier.apply(entry);
}

/**
 * One transaction: how many entries it applied and committed (the engine may
 * stop a group early, once the schema has deferred foreign keys), or 0 when
 * any of them failed, with nothing kept. No entry has a savepoint of its own
 * (Engine.execHeldRun): a failure anywhere sends the whole group back to be
 * applied one entry at a time, which needs none.
 */
function runGroup(engine: Engine, applier: JournalApplier, entries: readonly JournalEntry[]): number {
  try {
    const ran = engine.execHeldRun(entries.map((entry) => applier.request(entry)));
    engine.commitHeld((entries[ran - 1] as JournalEntry).seq);
    return ran;
  } catch {
    // The same entries, one at a time, meet the same failure and report it with the entry's seq.
    return 0;
  }
}
