/**
 * Journaled writes, grouped. Writes to one database take turns
 * (write-locks.ts), and each turn costs two engine round trips and a journal
 * write; batches that arrive during a turn queue up here, and the next turn
 * runs all of them at once: one engine call runs them in one transaction,
 * each in a savepoint of its own (Engine.execHeldGroup), their journal
 * entries are appended together (the writer puts them in one write), and one
 * commit follows, through the write path (write-path.ts): every batch has its
 * entry durable before its changes commit, and the entries' seq order is the
 * order the batches ran in, which is the order replay applies them in.
 */
import { EngineError } from '../../errors';
import type { CallContext, EngineHost, GroupOutcome, HeldGroup, StatementResult } from '../../engine/protocol';
import { onStop, stopError, stopOf } from '../../engine/host/request-stop';
import { batchEntry } from '../../../journal/journal';
import type { JournaledRequest } from './journaled-request';
import type { DatabaseRef } from '../databases/database-directory';
import { lockTimeoutError } from './lock-errors';
import type { WriteLocks } from './write-locks';
import type { JournaledEntry, WritePath } from './write-path';

/** A group's bounds: a group is one engine call and one journal write. */
const MAX_GROUP_BATCHES = 64;
const MAX_GROUP_STATEMENTS = 2000;

interface QueuedBatch {
  readonly batch: JournaledRequest;
  /** Its request's deadline and client. */
  readonly call: CallContext;
  resolve(results: StatementResult[]): void;
  reject(error: unknown): void;
  /** Fires at -lock-timeout while the batch waits for its turn. */
  timer?: NodeJS.Timeout;
  /** Stops listening for its request's stop once it leaves the queue. */
  detach?: () => void;
}

/** Errors that stop a request's work (request-stop.ts): they belong to the batches whose requests stopped. */
const STOPS: ReadonlySet<string> = new Set(['REQUEST_TIMEOUT', 'CLIENT_CLOSED', 'ENGINES_BUSY']);

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
  run(ref: DatabaseRef, batch: JournaledRequest, call: CallContext = {}): Promise<StatementResult[]> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ref.file);
      const idle = queue === undefined;
      if (queue === undefined) {
        queue = [];
        this.queues.set(ref.file, queue);
      }
      this.wait(ref, queue, { batch, call, resolve, reject }, false);
      if (idle) void this.drain(ref, queue);
    });
  }

  /**
   * Queues a batch, at the back (new) or the front (sent back by a group),
   * with a fresh -lock-timeout; it leaves the queue at once if its request
   * stops meanwhile.
   */
  private wait(ref: DatabaseRef, queue: QueuedBatch[], queued: QueuedBatch, front: boolean): void {
    const leave = (error: () => unknown): void => {
      const at = queue.indexOf(queued);
      if (at < 0) return;
      queue.splice(at, 1);
      unqueue(queued);
      queued.reject(error());
    };
    const signal = queued.call.signal;
    if (signal?.aborted === true) return queued.reject(stopError(stopOf(signal), false));
    queued.timer = setTimeout(
      () => leave(() => lockTimeoutError(ref, this.locks.holderOf(ref.file), this.options.lockTimeoutMs)),
      this.options.lockTimeoutMs,
    );
    if (signal !== undefined) queued.detach = onStop(signal, (stop) => leave(() => stopError(stop, false)));
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
      held = await this.engine.execHeldGroup(
        group.map(({ batch }) => batch.request),
        groupCall(group),
      );
    } catch (error) {
      return this.groupFailed(ref, queue, group, error, started);
    }
    const ran = group.slice(0, held.outcomes.length);
    for (const queued of group.slice(held.outcomes.length).reverse()) this.wait(ref, queue, queued, true);
    const outcomes = held.outcomes;
    const entries = ran.map((queued, i): JournaledEntry => ({
      event: 'write',
      entry: this.entryOf(ref, queued.batch, outcomes[i] as GroupOutcome, started),
    }));
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
   * The engine call failed as a whole. The batches it is charged to
   * (blame()) get their error, and are journaled as failed; the other
   * batches committed nothing and are sent again.
   */
  private async groupFailed(
    ref: DatabaseRef,
    queue: QueuedBatch[],
    group: QueuedBatch[],
    error: unknown,
    started: number,
  ): Promise<void> {
    const failed = blame(group, error);
    for (const queued of group.filter((b) => !failed.has(b)).reverse()) this.wait(ref, queue, queued, true);
    await Promise.all(
      [...failed].flatMap(([queued, own]) =>
        own instanceof EngineError
          ? [this.path.note('write', this.entryOf(ref, queued.batch, { error: own.toData() }, started))]
          : [],
      ),
    );
    for (const [queued, own] of failed) queued.reject(own);
  }

  private entryOf(ref: DatabaseRef, batch: JournaledRequest, outcome: GroupOutcome, started: number) {
    const result = 'results' in outcome ? { results: outcome.results } : { error: EngineError.fromData(outcome.error) };
    return {
      ...batchEntry({
        db: ref.name,
        session: null,
        sources: batch.sources,
        ...(batch.summary === undefined ? {} : { sql: batch.summary }),
        readonly: false,
        context: batch.request.context!,
        ms: performance.now() - started,
        ...(batch.request.foreignKeys === undefined ? {} : { foreignKeys: batch.request.foreignKeys }),
        ...result,
      }),
      ...batch.by,
    };
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

/**
 * Who a group's failure belongs to, with the error each one gets. A
 * statement stopped at -query-timeout (or a process that died) is the batch's
 * that ran it, whose error says which of its statements; a stopped request
 * (its deadline, its client gone) is the batches' whose requests stopped.
 * Any other failure is every batch's.
 */
function blame(group: readonly QueuedBatch[], error: unknown): Map<QueuedBatch, unknown> {
  const every = new Map(group.map((queued): [QueuedBatch, unknown] => [queued, error]));
  if (!(error instanceof EngineError)) return every;
  if (STOPS.has(error.errorName)) {
    const started = error.errorName !== 'ENGINES_BUSY';
    const stopped = group.filter(({ call }) => call.signal?.aborted === true);
    if (stopped.length === 0) return every;
    const at = error.statement === undefined ? undefined : locate(group, error.statement);
    return new Map(
      stopped.map((queued): [QueuedBatch, unknown] => [
        queued,
        stopError(stopOf(queued.call.signal as AbortSignal), started, at?.queued === queued ? at.statement : undefined),
      ]),
    );
  }
  if ((error.errorName === 'QUERY_TIMEOUT' || error.errorName === 'ENGINE_CRASHED') && group.length > 1) {
    const culprit = locate(group, error.statement ?? 0);
    error.statement = culprit.statement;
    return new Map([[culprit.queued, error]]);
  }
  return every;
}

/**
 * A group's engine call stops when any of its requests stops (blame() then
 * sends the others again), and is counted to the client of its oldest batch.
 */
function groupCall(group: readonly QueuedBatch[]): CallContext {
  const signals = group.flatMap(({ call }) => (call.signal === undefined ? [] : [call.signal]));
  const client = (group[0] as QueuedBatch).call.client;
  const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  const progress = groupProgress(group);
  return { ...(signal && { signal }), ...(client !== undefined && { client }), ...(progress && { progress }) };
}

/** The group's statement count, told to each batch that wants progress as a count of its own statements. */
function groupProgress(group: readonly QueuedBatch[]): ((statements: number) => void) | undefined {
  const listeners: Array<(statements: number) => void> = [];
  let offset = 0;
  for (const { call, batch } of group) {
    const from = offset;
    const count = batch.request.statements.length;
    if (call.progress !== undefined)
      listeners.push((statements) => call.progress?.(Math.min(Math.max(0, statements - from), count)));
    offset += count;
  }
  return listeners.length === 0 ? undefined : (statements) => listeners.forEach((listener) => listener(statements));
}

function unqueue(queued: QueuedBatch): void {
  clearTimeout(queued.timer);
  queued.detach?.();
  queued.detach = undefined;
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
  for (const queued of group) unqueue(queued);
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
