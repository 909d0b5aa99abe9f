/**
 * What applies a replica's entries to its databases: replay's rebuild, and
 * the rebuild of a database whose entries its primary voided, on an engine
 * of its own. Two of them: in this thread (the follower's tests), and in a
 * worker thread (the server), because better-sqlite3 is synchronous and a
 * large entry (an import of tens of megabytes) applied on the server's own
 * thread would stop it answering anyone meanwhile.
 *
 * A `restoredb` entry is rebuilt by the server's applier in a rebuild
 * process of its own (replica-restorer.ts), under the restore bounds: the
 * worker thread only waits for it, and the replay of the history, its
 * journal reads and its memory stay out of the server's process.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Engine } from '../../engine/engine';
import { EngineError, type EngineErrorData } from '../../errors';
import type { JournalEntry } from '../../../journal/record';
import { rebuild, type Restorer } from '../../../replay/rebuild';
import { restorerFor } from '../../../replay/point-in-time';
import { redoVoided } from './replica-voids';
import { ReplicaRestorer, type ReplicaRestoreSettings } from './replica-restorer';
import type { DatabasePlaces } from '../../database-names';

export interface DatabaseApplier {
  /** Brings the databases in line with these entries (rebuild skips what each already holds). */
  rebuild(entries: readonly JournalEntry[]): Promise<void>;
  /** Makes again each database that applied entries at `seqs` which its primary voided since. */
  redoVoided(seqs: readonly number[]): Promise<void>;
  /** A fresh engine: a rebuild cut short may have left a session or a batch open. */
  reset(): Promise<void>;
  /** Kills a restore's rebuild process under way, at once (the replica stops): the rebuild it was part of fails. */
  stopRestores(): void;
  close(): Promise<void>;
}

/** What the worker thread is given (plain data: it cannot be handed a function). */
export interface ApplierPlaces extends DatabasePlaces {
  /** The replica's local journal (a voided database is made again from it). */
  readonly journalFile: string;
  /** How `restoredb` entries are rebuilt: in a rebuild process under these bounds; absent: in this thread. */
  readonly restores?: ReplicaRestoreSettings;
}

const REBUILD_OPTIONS = { yieldEvery: 200 } as const;

/** Applies in this thread. */
export class InThreadApplier implements DatabaseApplier {
  private engine = new Engine({ maxOpenDatabases: 64 });
  private readonly restorer: Restorer;
  private readonly processes: ReplicaRestorer | null;

  constructor(
    private readonly fileOf: (db: string) => string,
    private readonly journalFile: string,
    private readonly log: (message: string) => void,
    restores?: ReplicaRestoreSettings,
  ) {
    this.processes = restores === undefined ? null : new ReplicaRestorer(restores, journalFile, log);
    // Without settings (the follower's own tests), a restore is rebuilt here, from the replica's journal and the rounds beside it.
    this.restorer =
      this.processes?.restorer ??
      restorerFor({ logFile: journalFile, snapshotDir: path.join(path.dirname(journalFile), 'snapshots') });
  }

  async rebuild(entries: readonly JournalEntry[]): Promise<void> {
    await rebuild(this.engine, entries, { fileOf: this.fileOf, restorer: this.restorer, ...REBUILD_OPTIONS });
  }

  redoVoided(seqs: readonly number[]): Promise<void> {
    return redoVoided({ engine: this.engine, journalFile: this.journalFile, fileOf: this.fileOf, log: this.log }, seqs);
  }

  reset(): Promise<void> {
    this.engine.close();
    this.engine = new Engine({ maxOpenDatabases: 64 });
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.processes?.close();
    this.engine.close();
    return Promise.resolve();
  }

  stopRestores(): void {
    this.processes?.close();
  }
}

/** A request to the worker, and its answer. */
type ApplierOp =
  | { op: 'rebuild'; entries: readonly JournalEntry[] }
  | { op: 'redoVoided'; seqs: readonly number[] }
  | { op: 'reset' }
  | { op: 'close' };
export type ApplierRequest = ApplierOp & { id: number };
export type ApplierAnswer =
  | { id: number; ok: true }
  /** `engineError`: the error was an EngineError (a restore's code crosses with it). */
  | { id: number; ok: false; error: string; engineError?: EngineErrorData }
  | { log: string };
/** Handled as it arrives, not in turn, and not answered: the worker kills a rebuild process under way. */
export interface StopRestores {
  op: 'stopRestores';
}

/** Applies in a worker thread (replica-applier-thread.ts), one request at a time, in order. */
export class WorkerApplier implements DatabaseApplier {
  private worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();
  private exited: Error | null = null;
  private closing = false;

  constructor(
    private readonly places: ApplierPlaces,
    private readonly log: (message: string) => void,
  ) {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    const worker = new Worker(path.join(__dirname, 'replica-applier-thread.js'), { workerData: this.places });
    worker.on('message', (answer: ApplierAnswer) => this.answer(answer));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the apply worker exited with ${code}`)));
    return worker;
  }

  rebuild(entries: readonly JournalEntry[]): Promise<void> {
    return this.ask({ op: 'rebuild', entries });
  }

  redoVoided(seqs: readonly number[]): Promise<void> {
    return this.ask({ op: 'redoVoided', seqs });
  }

  /** A worker that died (out of memory, a crash in SQLite) is replaced here: the follower resets after every failure. */
  reset(): Promise<void> {
    if (this.exited !== null && !this.closing) {
      this.log(`replica: the apply worker is started again (${this.exited.message})`);
      this.exited = null;
      this.worker = this.spawn();
      return Promise.resolve();
    }
    return this.ask({ op: 'reset' });
  }

  stopRestores(): void {
    if (this.exited !== null) return;
    const message: StopRestores = { op: 'stopRestores' };
    this.worker.postMessage(message);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.exited === null) await this.ask({ op: 'close' }).catch(() => undefined);
    await this.worker.terminate();
  }

  private ask(request: ApplierOp): Promise<void> {
    if (this.exited !== null) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      const message: ApplierRequest = { ...request, id };
      this.worker.postMessage(message);
    });
  }

  private answer(answer: ApplierAnswer): void {
    if ('log' in answer) return this.log(answer.log);
    const waiter = this.waiting.get(answer.id);
    this.waiting.delete(answer.id);
    if (answer.ok) waiter?.resolve();
    else
      waiter?.reject(
        answer.engineError === undefined ? new Error(answer.error) : EngineError.fromData(answer.engineError),
      );
  }

  /** The worker is gone: every request waiting and every later one fails, until a reset starts another. */
  private fail(worker: Worker, error: Error): void {
    if (worker !== this.worker) return;
    this.exited ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
