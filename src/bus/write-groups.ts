/**
 * Journaled writes, grouped (issue 7). Writes to one database take turns
 * (write-locks.ts), and each turn costs two engine round trips and a journal
 * write; batches that arrive during a turn queue up here, and the next turn
 * runs all of them at once: one engine call runs them in one transaction,
 * each in a savepoint of its own (Engine.execHeldGroup), their journal
 * entries are appended together (the writer puts them in one write), and one
 * commit follows. Every batch still has its entry written before its changes
 * commit, and the entries' seq order is the order the batches ran in, which
 * is the order replay applies them in.
 */
import { EngineError } from '../errors';
import type { EngineHost, ExecRequest, GroupOutcome, HeldGroup, StatementResult } from '../engine/protocol';
import { batchEntry, type Journal } from '../../journal/journal';
import type { DatabaseRef } from './database-directory';
import { lockTimeoutError } from './lock-errors';
import type { WriteLocks } from './write-locks';

/** A group's bounds: a group is one engine call and one journal write. */
const MAX_GROUP_BATCHES = 64;
const MAX_GROUP_STATEMENTS = 2000;

interface QueuedBatch {
  readonly request: ExecRequest;
  resolve(results: StatementResult[]): void;
  reject(error: unknown): void;
  /** Fires at -lock-timeout while the batch waits for its turn. */
  timer?: NodeJS.Timeout;
}

export interface WriteGroupsOptions {
  lockTimeoutMs: number;
  /** Brings a database back in line with the journal when a commit after written entries failed. */
  repair(ref: DatabaseRef): Promise<void>;
}

export class WriteGroups {
  private readonly queues = new Map<string, QueuedBatch[]>();

  constructor(
    private readonly engine: EngineHost,
    private readonly journal: Journal,
    private readonly locks: WriteLocks,
    private readonly options: WriteGroupsOptions,
  ) {}

  /** Runs a write batch in the database's next turn; answers once its entry is written and it committed. */
  run(ref: DatabaseRef, request: ExecRequest): Promise<StatementResult[]> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ref.file);
      const idle = queue === undefined;
      if (queue === undefined) {
        queue = [];
        this.queues.set(ref.file, queue);
      }
      this.wait(ref, queue, { request, resolve, reject }, false);
      if (idle) void this.drain(ref, queue);
    });
  }

  /** Queues a batch, at the back (new) or the front (sent back by a group), with a fresh -lock-timeout. */
  private wait(ref: DatabaseRef, queue: QueuedBatch[], batch: QueuedBatch, front: boolean): void {
    batch.timer = setTimeout(() => {
      const at = queue.indexOf(batch);
      if (at < 0) return;
      queue.splice(at, 1);
      batch.reject(lockTimeoutError(ref, this.locks.holderOf(ref.file), this.options.lockTimeoutMs));
    }, this.options.lockTimeoutMs);
    if (front) queue.unshift(batch);
    else queue.push(batch);
  }

  /** Takes turns until the queue is empty; batches time out on their own while the lock is held elsewhere. */
  private async drain(ref: DatabaseRef, queue: QueuedBatch[]): Promise<void> {
    try {
      while (queue.length > 0) {
        const release = await this.locks.acquire(ref.file, 'batch');
        try {
          const group = take(queue);
          if (group.length > 0) await this.runGroup(ref, queue, group);
        } finally {
          release();
        }
      }
    } finally {
      this.queues.delete(ref.file);
    }
  }

  private async runGroup(ref: DatabaseRef, queue: QueuedBatch[], group: QueuedBatch[]): Promise<void> {
    const started = performance.now();
    let held: HeldGroup;
    try {
      held = await this.engine.execHeldGroup(group.map((batch) => batch.request));
    } catch (error) {
      return this.groupFailed(ref, queue, group, error, started);
    }
    const ran = group.slice(0, held.outcomes.length);
    for (const batch of group.slice(held.outcomes.length).reverse()) this.wait(ref, queue, batch, true);
    const appended = ran.map((batch, i) => this.append(ref, batch.request, held.outcomes[i] as GroupOutcome, started));
    try {
      await Promise.all(appended.map(({ written }) => written));
    } catch (error) {
      await held.rollback();
      for (const batch of ran) batch.reject(new EngineError('STORAGE_IO', {}, { cause: error }));
      return;
    }
    const seqs = appended.flatMap(({ seq }) => (seq === null ? [] : [seq]));
    const anyOk = held.outcomes.some((outcome) => 'results' in outcome);
    if (anyOk && seqs.length > 0) await held.commit(Math.max(...seqs)).catch(() => this.options.repair(ref));
    else await held.rollback();
    ran.forEach((batch, i) => {
      const outcome = held.outcomes[i] as GroupOutcome;
      if ('results' in outcome) batch.resolve(outcome.results);
      else batch.reject(EngineError.fromData(outcome.error));
    });
  }

  /**
   * The engine call failed as a whole. A statement stopped at the timeout (or
   * a process that died) is charged to the batch that ran it, whose error
   * says which of its statements; the other batches committed nothing and
   * are sent again. Any other failure is every batch's.
   */
  private async groupFailed(ref: DatabaseRef, queue: QueuedBatch[], group: QueuedBatch[], error: unknown, started: number): Promise<void> {
    const stopped = error instanceof EngineError && (error.errorName === 'QUERY_TIMEOUT' || error.errorName === 'ENGINE_CRASHED');
    const culprit = stopped && group.length > 1 ? locate(group, error.statement ?? 0) : undefined;
    const failed = culprit === undefined ? group : [culprit.batch];
    if (culprit !== undefined && error instanceof EngineError) {
      error.statement = culprit.statement;
      for (const batch of group.filter((b) => b !== culprit.batch).reverse()) this.wait(ref, queue, batch, true);
    }
    if (error instanceof EngineError) {
      const appended = failed.map((batch) => this.append(ref, batch.request, { error: error.toData() }, started));
      await Promise.allSettled(appended.map(({ written }) => written));
    }
    for (const batch of failed) batch.reject(error);
  }

  private append(ref: DatabaseRef, request: ExecRequest, outcome: GroupOutcome, started: number): { seq: number | null; written: Promise<void> } {
    const result = 'results' in outcome ? { results: outcome.results } : { error: EngineError.fromData(outcome.error) };
    const entry = batchEntry({ db: ref.name, session: null, statements: request.statements, readonly: false, context: request.context!, ms: performance.now() - started, ...result });
    return this.journal.append('write', entry);
  }
}

/** The next group: the oldest batches, within the bounds (the first always). */
function take(queue: QueuedBatch[]): QueuedBatch[] {
  let count = 0;
  let statements = 0;
  while (count < queue.length && count < MAX_GROUP_BATCHES) {
    const size = (queue[count] as QueuedBatch).request.statements.length;
    if (count > 0 && statements + size > MAX_GROUP_STATEMENTS) break;
    statements += size;
    count++;
  }
  const group = queue.splice(0, count);
  for (const batch of group) clearTimeout(batch.timer);
  return group;
}

/** The batch that ran statement `index` of the group (counted over the whole group), and its own index of it. */
function locate(group: readonly QueuedBatch[], index: number): { batch: QueuedBatch; statement: number } {
  let offset = 0;
  for (const batch of group) {
    const size = batch.request.statements.length;
    if (index < offset + size) return { batch, statement: index - offset };
    offset += size;
  }
  return { batch: group[group.length - 1] as QueuedBatch, statement: 0 };
}
