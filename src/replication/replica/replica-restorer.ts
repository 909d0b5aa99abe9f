/**
 * How a read replica applies a `restoredb` entry: the state the entry puts
 * in place is rebuilt in a rebuild process of its own
 * (src/services/databases/restore-process.ts, the machinery of a live
 * restore), under the replica's -restore-timeout and -restore-memory,
 * reading the replica's own journal through its index when it has one. The
 * replay of the database's history, its journal reads and its memory stay
 * out of the replica's server; the apply worker only waits, then puts the
 * state in place.
 *
 * A rebuild that cannot succeed here however often it is tried (past a
 * bound, or the journal kept here does not reach the target) becomes
 * REPLICA_RESTORE_STOPPED: the follower halts at the entry rather than
 * retrying it for ever or applying past it (replica-follower.ts). Any other
 * end of the process is an ordinary apply failure, retried.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../../errors';
import type { JournalEntry } from '../../../journal/record';
import type { Restorer } from '../../../replay/rebuild';
import { RestoreProcesses, type RebuildBounds } from '../../services/databases/restore-process';

/** What the apply worker is told of its restores (plain data: it crosses into the worker thread). */
export interface ReplicaRestoreSettings {
  readonly bounds: RebuildBounds;
  /** The replica's journal index (settled by the follower before a batch with a `restoredb` entry); null: none. */
  readonly indexFile: string | null;
  /** The snapshot rounds the replica was seeded from, or keeps. */
  readonly snapshotDir: string | null;
  /** Where states are rebuilt (a scratch directory is made and removed in it). */
  readonly scratchDir: string;
}

/** The rebuild process's answers that no retry changes. */
const FINAL: ReadonlySet<string> = new Set(['RESTORE_TIMEOUT', 'RESTORE_OUT_OF_MEMORY', 'RESTORE_TOO_OLD']);

export class ReplicaRestorer {
  private readonly processes: RestoreProcesses;

  constructor(
    private readonly settings: ReplicaRestoreSettings,
    private readonly journalFile: string,
    log: (message: string) => void,
  ) {
    this.processes = new RestoreProcesses(settings.bounds, log);
  }

  /** What replay's rebuild calls on a `restoredb` entry. */
  readonly restorer: Restorer = (entry, put) => this.restore(entry, put);

  /** Kills a rebuild still running (the replica stops): the batch it was in fails, and is applied again at the next start. */
  close(): void {
    this.processes.close();
  }

  private async restore(entry: JournalEntry, put: (file: string) => void): Promise<void> {
    const db = entry.db as string;
    fs.mkdirSync(this.settings.scratchDir, { recursive: true });
    const out = fs.mkdtempSync(path.join(this.settings.scratchDir, 'replica-'));
    try {
      const file = await this.processes
        .rebuildState({
          kind: 'state',
          db,
          seq: entry.to as number,
          lastSeq: entry.seq - 1,
          logFile: this.journalFile,
          snapshotDir: this.settings.snapshotDir,
          indexFile: this.settings.indexFile,
          out,
        })
        .catch((error: unknown) => {
          throw stopped(entry, error);
        });
      put(file);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }
}

/** A final answer as REPLICA_RESTORE_STOPPED (the follower fills in how far it applied); anything else as it came. */
function stopped(entry: JournalEntry, error: unknown): unknown {
  if (!(error instanceof EngineError) || !FINAL.has(error.errorName)) return error;
  return new EngineError(
    'REPLICA_RESTORE_STOPPED',
    { seq: entry.seq, db: entry.db as string, detail: error.message, applied: entry.seq - 1 },
    { cause: error },
  );
}
