/**
 * Journaled writes, grouped (issue 7). Writes to one database take turns
 * (write-locks.ts), and each turn costs two engine round trips and a journal
 * write; batches that arrive during a turn queue up here, and the next turn
 * runs all of them at once: one engine call runs them in one transaction,
 * each in a savepoint of its own (Engine.execHeldGroup), their journal
 * entries are appended together (the writer puts them in one write), and one
 * commit follows, through the write path (write-path.ts): every batch has its
 * entry durable before its changes commit, and the entries' seq order is the
 * order the batches ran in, which is the order replay applies them in.
 */
import { EngineError } from '../errors';
import type { EngineHost, GroupOutcome, HeldGroup, StatementResult } from '../engine/protocol';
import { batchEntry } from '../../journal/journal';
import type { JournaledRequest } from './journaled-request';
import type { DatabaseRef } from './database-directory';
import { lockTimeoutError } from './lock-errors';
import type { WriteLocks } from './write-locks';
import type { JournaledEntry, WritePath } from './write-path';

/** A group's bounds: a group is one engine call and one journal write. */
const MAX_GROUP_BATCHES = 64;
const MAX_GROUP_STATEMENTS = 2000;

interface QueuedBatch {
  readonly batch: JournaledRequest;
  resolve(results: StatementResult[]): void;
  reject(error: unknown): void;
  /** Fires at -lock-timeout while the batch waits for its turn. */
  timer?: NodeJS.Timeout;
}

export interface WriteGroupsOptions {
  lockTimeoutMs: number;
}

export class WriteGroups {
  private readonly queues = new Map<string, QueuedBatch[]>();

  constructor(
    private readonly engine: EngineHost,
    private readonly path: WritePath,
    private readonly locks: WriteLocks,
    private readonly options: WriteGroupsOptions,
  ) {}

  /** Runs a write batch in the database's next turn; answers once its entry is durable and it committed. */
  run(ref: DatabaseRef, batch: JournaledRequest): Promise<StatementResult[]> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ref.file);
      const idle = queue === undefined;
      if (queue === undefined) {
        queue = [];
        this.queues.set(ref.file, queue);
      }
      this.wait(ref, queue, { batch, resolve, reject }, false);
      if (idle) void this.drain(ref, queue);
    });
  }

  /** Queues a batch, at the back (new) or the front (sent back by a group), with a fresh -lock-timeout. */
  private wait(ref: DatabaseRef, queue: QueuedBatch[], queued: QueuedBatch, front: boolean): void {
    queued.timer = setTimeout(() => {
      const at = queue.indexOf(queued);
      if (at < 0) return;
      queue.splice(at, 1);
      queued.reject(lockTimeoutError(ref, this.locks.holderOf(ref.file), this.options.lockTimeoutMs));
    }, this.options.lockTimeoutMs);
    if (front) queue.unshift(queued);
    else queue.push(queued);
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
      await this.path.ready(ref.name);
      held = await this.engine.execHeldGroup(group.map(({ batch }) => batch.request));
    } catch (error) {
      return this.groupFailed(ref, queue, group, error, started);
    }
    const ran = group.slice(0, held.outcomes.length);
    for (const queued of group.slice(held.outcomes.length).reverse()) this.wait(ref, queue, queued, true);
    const outcomes = held.outcomes;
    const entries = ran.map((queued, i): JournaledEntry => ({ event: 'write', entry: this.entryOf(ref, queued.batch, outcomes[i] as GroupOutcome, started) }));
    if (!outcomes.some((outcome) => 'results' in outcome)) {
      await held.rollback();
      await Promise.all(entries.map(({ event, entry }) => this.path.note(event, entry)));
      return settle(ran, outcomes, undefined);
    }
    try {
      await this.path.appendThenApply(ref.name, entries, {
        apply: (last) => (last === null ? held.rollback() : held.commit(last)),
        discard: () => held.rollback(),
        tookEffect: async (last) => (await this.engine.journalPosition(ref.file)).applied >= last,
      });
    } catch (error) {
      return settle(ran, outcomes, error);
    }
    settle(ran, outcomes, undefined);
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
    const failed = culprit === undefined ? group : [culprit.queued];
    if (culprit !== undefined && error instanceof EngineError) {
      error.statement = culprit.statement;
      for (const queued of group.filter((b) => b !== culprit.queued).reverse()) this.wait(ref, queue, queued, true);
    }
    if (error instanceof EngineError) {
      await Promise.all(failed.map(({ batch }) => this.path.note('write', this.entryOf(ref, batch, { error: error.toData() }, started))));
    }
    for (const queued of failed) queued.reject(error);
  }

  private entryOf(ref: DatabaseRef, batch: JournaledRequest, outcome: GroupOutcome, started: number) {
    const result = 'results' in outcome ? { results: outcome.results } : { error: EngineError.fromData(outcome.error) };
    return batchEntry({ db: ref.name, session: null, sources: batch.sources, readonly: false, context: batch.request.context!, ms: performance.now() - started, ...result });
  }
}

/**
 * Answers every batch of a group: a batch that failed on its own gets its own
 * error; the others get their results, or the group's error when the group
 * could not be journaled or applied.
 */
function settle(ran: readonly QueuedBatch[], outcomes: readonly GroupOutcome[], groupError: unknown): void {
  ran.forEach((queued, i) => {
    const outcome = outcomes[i] as GroupOutcome;
    if ('error' in outcome) queued.reject(EngineError.fromData(outcome.error));
    else if (groupError !== undefined) queued.reject(groupError);
    else queued.resolve(outcome.results);
  });
}

/** The next group: the oldest batches, within the bounds (the first always). */
function take(queue: QueuedBatch[]): QueuedBatch[] {
  let count = 0;
  let statements = 0;
  while (count < queue.length && count < MAX_GROUP_BATCHES) {
    const size = (queue[count] as QueuedBatch).batch.request.statements.length;
    if (count > 0 && statements + size > MAX_GROUP_STATEMENTS) break;
    statements += size;
    count++;
  }
  const group = queue.splice(0, count);
  for (const queued of group) clearTimeout(queued.timer);
  return group;
}

/** The batch that ran statement `index` of the group (counted over the whole group), and its own index of it. */
function locate(group: readonly QueuedBatch[], index: number): { queued: QueuedBatch; statement: number } {
  let offset = 0;
  for (const queued of group) {
    const size = queued.batch.request.statements.length;
    if (index < offset + size) return { queued, statement: index - offset };
    offset += size;
  }
  return { queued: group[group.length - 1] as QueuedBatch, statement: 0 };
}
