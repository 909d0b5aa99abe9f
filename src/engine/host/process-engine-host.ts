/**
 * An EngineHost that runs the engine in child processes, one call at a time
 * each, so that a runaway statement stops only the process that runs it: it is
 * killed at -query-timeout (or when its request is stopped) and another takes
 * its place. Calls wait in a queue here, in the parent, so a killed process
 * loses only the call it was running.
 *
 * Who gets the next free process is decided here too (engine-shares.ts): no
 * client holds more than its share of the pool, and calls that have run long
 * let the pool grow, so that a few runaway batches do not stop the rest.
 *
 * Processes are started as work waits for them and end once they have been
 * idle a while, down to a minimum: an idle service holds one engine process,
 * not the most that a busy lesson needed.
 */
import { EngineError } from '../../errors';
import { systemClock, type Clock, type Timer } from '../../clock';
import type {
  CallContext,
  EngineHost,
  EngineSession,
  ExecRequest,
  GroupOutcome,
  HeldGroup,
  JournalPosition,
  RowPage,
  RowsRequest,
  StatementResult,
} from '../protocol';
import type { TableSchema } from '../schema/schema';
import type { ExportRequest } from '../transfer/database-export';
import { requestOf, type AnswerOf, type ArgsOf, type EngineMethod } from './engine-messages';
import type { EngineChildFactory } from './engine-child';
import { EngineProcessHandle, type CallClock, type PendingCall } from './engine-process-handle';
import { EngineShares, processesPerClient } from './engine-shares';
import { onStop, stopError, stopOf } from './request-stop';
import { unpackOutcomes, unpackResults } from './packed-results';
import { packRequest } from './packed-requests';

export interface ProcessEngineHostOptions {
  queryTimeoutMs: number;
  /** Processes kept running, idle or not. @default 1 */
  minProcesses?: number;
  /** Processes at most for calls that run briefly, started when every other one is busy. @default 4 */
  maxProcesses?: number;
  /** The most of maxProcesses one client may hold at once. @default 0.5 */
  clientShare?: number;
  /** A process above minProcesses that has run nothing for this long ends. @default 30000 */
  idleTimeoutMs?: number;
  /** Time for the idle timeout (tests move it by hand). @default systemClock */
  clock?: Clock;
  /** Starts an engine process (a test hands in a fake one). @default forkEngineChild */
  spawnChild?: EngineChildFactory;
  /** Time for each call's deadline and stops (a test moves it by hand). @default realCallClock */
  callClock?: CallClock;
}

/** While work waits, the pool looks this often for calls that have become long. */
const WAITING_TICK_MS = 250;

/** Work waiting for a process: a call, or a group that keeps its process (execHeldGroup). */
interface Waiter {
  readonly client: string | undefined;
  readonly signal: AbortSignal | undefined;
  start(handle: EngineProcessHandle): void;
  reject(error: EngineError): void;
  /** Removes the waiter from the queue when its request is stopped. */
  detach?: () => void;
}

export class ProcessEngineHost implements EngineHost {
  private readonly processes = new Set<EngineProcessHandle>();
  private readonly queue: Waiter[] = [];
  /** Processes that left the pool and are still ending: shutdown waits for them too. */
  private readonly leaving = new Set<Promise<void>>();
  private readonly minProcesses: number;
  private readonly maxProcesses: number;
  private readonly shares: EngineShares;
  private readonly clock: Clock;
  private readonly idleTimeoutMs: number;
  /** For each idle process, the timer that ends it if the pool is above its minimum then. */
  private readonly idleTimers = new Map<EngineProcessHandle, Timer>();
  private tick: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(private readonly options: ProcessEngineHostOptions) {
    this.minProcesses = options.minProcesses ?? 1;
    this.maxProcesses = Math.max(this.minProcesses, options.maxProcesses ?? 4);
    this.clock = options.clock ?? systemClock;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.shares = new EngineShares(processesPerClient(this.maxProcesses, options.clientShare ?? 0.5));
    for (let i = 0; i < this.minProcesses; i++) this.spawn();
  }

  /** The pids of the running engine processes (for operators and tests). */
  get pids(): number[] {
    return [...this.processes].map((handle) => handle.pid).filter((pid): pid is number => pid !== undefined);
  }

  private spawn(): EngineProcessHandle {
    const handle = new EngineProcessHandle(
      this.options.queryTimeoutMs,
      (gone) => this.replace(gone),
      (ready) => this.release(ready),
      this.options.spawnChild,
      this.options.callClock,
    );
    this.processes.add(handle);
    return handle;
  }

  private replace(gone: EngineProcessHandle): void {
    this.processes.delete(gone);
    this.forgetIdle(gone);
    if (this.closing) return;
    // Waiting work may start more (pump); the pool never falls below its minimum.
    this.pump();
    while (this.processes.size < this.minProcesses) this.spawn();
  }

  /** A process became free: waiting work takes it; one the pool no longer needs ends. */
  private release(handle: EngineProcessHandle): void {
    if (!handle.idle) return;
    if (handle.stale) {
      this.retire(handle);
      if (this.processes.size < this.minProcesses) this.spawn();
    }
    this.pump();
    if (handle.idle && this.processes.has(handle) && this.processes.size > this.capacity()) this.retire(handle);
    if (handle.idle && this.processes.has(handle)) this.endWhenIdle(handle);
  }

  /**
   * Arms the idle timeout of a process that has just become free; each call
   * it runs arms it anew, so it counts from the process's last call. When it
   * fires, a process still idle ends if the pool is above its minimum.
   */
  private endWhenIdle(handle: EngineProcessHandle): void {
    this.idleTimers.get(handle)?.cancel();
    this.idleTimers.set(
      handle,
      this.clock.after(this.idleTimeoutMs, () => {
        this.idleTimers.delete(handle);
        if (handle.idle && this.processes.has(handle) && this.loadedCount() > this.minProcesses) this.retire(handle);
      }),
    );
  }

  /** Processes that have loaded: one still starting does not yet stand for the minimum (it ends by its own timeout once loaded). */
  private loadedCount(): number {
    let loaded = 0;
    for (const handle of this.processes) if (!handle.starting) loaded++;
    return loaded;
  }

  private forgetIdle(handle: EngineProcessHandle): void {
    this.idleTimers.get(handle)?.cancel();
    this.idleTimers.delete(handle);
  }

  /** Starts waiting work while processes are idle, the fairest first (nextWaiter); starts processes for the rest. */
  private pump(): void {
    for (let waiter = this.nextWaiter(); waiter !== undefined; waiter = this.nextWaiter()) {
      const handle = this.idleProcess();
      if (handle === undefined) break;
      this.queue.splice(this.queue.indexOf(waiter), 1);
      waiter.detach?.();
      waiter.start(handle);
    }
    this.grow();
    this.watchWaiting();
  }

  private idleProcess(): EngineProcessHandle | undefined {
    for (const handle of this.processes) if (handle.idle) return handle;
    return undefined;
  }

  /**
   * Starts a process for each waiter that none is starting for, up to the
   * capacity. A waiter takes whichever process is idle first: one that
   * finishes its call is often sooner than one that is still starting.
   */
  private grow(): void {
    if (this.closing) return;
    let starting = 0;
    for (const handle of this.processes) if (handle.starting) starting++;
    const wanted = Math.min(this.queue.length - starting, this.capacity() - this.processes.size);
    for (let i = 0; i < wanted; i++) this.spawn();
  }

  /**
   * The waiter to serve next: of those whose client may take a process now,
   * the one whose client holds the fewest and used the least engine time of
   * late, then the oldest (engine-shares.ts).
   */
  private nextWaiter(): Waiter | undefined {
    const full = this.busyCount() >= this.maxProcesses;
    let best: Waiter | undefined;
    for (const waiter of this.queue) {
      if (!this.shares.mayTake(waiter.client, full)) continue;
      if (best === undefined || this.shares.before(waiter.client, best.client)) best = waiter;
    }
    return best;
  }

  private busyCount(): number {
    let busy = 0;
    for (const handle of this.processes) if (handle.busy || handle.reserved) busy++;
    return busy;
  }

  /**
   * maxProcesses, plus one for each call that has run long (at most
   * maxProcesses more), so that short work is not stuck behind long work.
   * An idle process above it ends; below it, one is kept for the next call.
   */
  private capacity(): number {
    let long = 0;
    for (const handle of this.processes) if (handle.runningLong) long++;
    return this.maxProcesses + Math.min(long, this.maxProcesses);
  }

  /** While work waits, calls may become long (or clients fall below their share): look again now and then. */
  private watchWaiting(): void {
    if (this.queue.length === 0 || this.closing) {
      clearInterval(this.tick);
      this.tick = undefined;
    } else if (this.tick === undefined) {
      this.tick = setInterval(() => this.pump(), WAITING_TICK_MS);
      this.tick.unref();
    }
  }

  /** Queues work; a stopped request leaves the queue at once, answered with its stop. */
  private enqueue(waiter: Waiter): void {
    const signal = waiter.signal;
    if (signal?.aborted === true) return waiter.reject(stopError(stopOf(signal), false));
    if (signal !== undefined) {
      waiter.detach = onStop(signal, (stop) => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return;
        this.queue.splice(at, 1);
        waiter.reject(stopError(stop, false));
      });
    }
    this.queue.push(waiter);
    this.pump();
  }

  /** Runs a call on one given process, after its current call if it has one. */
  callOn<M extends EngineMethod>(
    handle: EngineProcessHandle,
    method: M,
    args: ArgsOf<M>,
    signal?: AbortSignal,
    progress?: (statements: number) => void,
  ): Promise<AnswerOf<M>> {
    const request = requestOf(method, args);
    return new Promise((resolve, reject) =>
      handle.runOwn({ request, resolve, reject, ...(signal && { signal }), ...(progress && { progress }) }),
    );
  }

  private call<M extends EngineMethod>(method: M, args: ArgsOf<M>, context: CallContext = {}): Promise<AnswerOf<M>> {
    if (this.closing) return Promise.reject(new EngineError('NOT_READY'));
    const { client, signal } = context;
    const request = requestOf(method, args);
    return new Promise((resolve, reject) => {
      let startedMs = 0;
      const done =
        <V>(settle: (value: V) => void) =>
        (value: V): void => {
          this.shares.give(client, Date.now() - startedMs);
          settle(value);
          this.pump();
        };
      const progress = context.progress?.bind(context);
      const call: PendingCall = {
        request,
        resolve: done(resolve as (value: unknown) => void),
        reject: done(reject),
        ...(signal && { signal }),
        ...(progress && { progress }),
      };
      const start = (handle: EngineProcessHandle): void => {
        startedMs = Date.now();
        this.shares.take(client);
        handle.run(call);
      };
      this.enqueue({ client, signal, reject, start });
    });
  }

  async exec(request: ExecRequest, context?: CallContext): Promise<StatementResult[]> {
    return unpackResults(await this.call('exec', [packRequest(request)], context));
  }

  /** The process that ran the group keeps it until commit or rollback: no other work goes there meanwhile. */
  async execHeldGroup(requests: readonly ExecRequest[], context: CallContext = {}): Promise<HeldGroup> {
    const handle = await this.reserve(context);
    const reservedMs = Date.now();
    const giveBack = (): void => this.unreserve(handle, context.client, Date.now() - reservedMs);
    let outcomes: GroupOutcome[];
    try {
      outcomes = unpackOutcomes(
        await this.callOn(
          handle,
          'execHeldGroup',
          [requests.map(packRequest)],
          context.signal,
          context.progress?.bind(context),
        ),
      );
    } catch (error) {
      giveBack();
      throw error;
    }
    return {
      outcomes,
      commit: (seq) => this.callOn(handle, 'commitHeld', [seq]).finally(giveBack),
      rollback: () => this.callOn(handle, 'rollbackHeld', []).finally(giveBack),
    };
  }

  /** A process of the pool, reserved for the caller (and counted to its client) until unreserve. */
  private reserve(context: CallContext): Promise<EngineProcessHandle> {
    if (this.closing) return Promise.reject(new EngineError('NOT_READY'));
    const { client, signal } = context;
    return new Promise((resolve, reject) => {
      this.enqueue({
        client,
        signal,
        reject,
        start: (handle) => {
          this.shares.take(client);
          handle.reserved = true;
          resolve(handle);
        },
      });
    });
  }

  /** A free process outside the pool's count, for a session: one more than the maximum when every process is busy. */
  private takeProcess(): EngineProcessHandle {
    const handle = [...this.processes].find((candidate) => candidate.idle) ?? this.spawn();
    handle.reserved = true;
    return handle;
  }

  journalPosition(file: string): Promise<JournalPosition> {
    return this.call('journalPosition', [file]);
  }

  tables(file: string): Promise<TableSchema[]> {
    return this.call('tables', [file]);
  }

  async schema(file: string, table: string): Promise<TableSchema | undefined> {
    return (await this.call('schema', [file, table])) ?? undefined;
  }

  rows(request: RowsRequest, context?: CallContext): Promise<RowPage> {
    return this.call('rows', [request], context);
  }

  exportDatabase(file: string, request: ExportRequest, context?: CallContext): Promise<void> {
    return this.call('exportDatabase', [file, request], context);
  }

  uploadStatements(file: string, context?: CallContext): Promise<string[]> {
    return this.call('uploadStatements', [file], context);
  }

  createDatabase(file: string, createdSeq?: number): Promise<void> {
    return this.call('createDatabase', [file, createdSeq]);
  }

  async copyDatabase(source: string, target: string, seq: number | undefined, template: string): Promise<void> {
    await this.closeDatabase(target);
    await this.call('copyDatabase', [source, target, seq ?? null, template]);
    await this.closeDatabase(target);
  }

  /** Every process may hold a handle on the file: all of them close it. A process that is gone holds none. */
  async closeDatabase(file: string): Promise<void> {
    await Promise.all(
      [...this.processes].map((handle) => this.callOn(handle, 'closeDatabase', [file]).catch(() => undefined)),
    );
  }

  /**
   * A session takes a process for itself (one more than the maximum if all
   * are busy: there is only ever one session), so shared work never queues
   * behind a transaction that waits for its client.
   */
  async openSession(file: string): Promise<EngineSession> {
    const handle = this.takeProcess();
    try {
      await this.callOn(handle, 'beginSession', [file]);
    } catch (error) {
      this.unreserve(handle, undefined, 0);
      throw error;
    }
    return {
      exec: async (request, context) =>
        unpackResults(await this.callOn(handle, 'execInSession', [packRequest(request)], context?.signal)),
      end: async (commit, seq) => {
        try {
          await this.callOn(handle, 'endSession', [commit, seq]);
        } finally {
          this.unreserve(handle, undefined, 0);
        }
      },
      onLost: (listener) => {
        handle.lostListener = listener;
      },
    };
  }

  /** A process given back by a session or a write group, and by the client it was counted to (which held it `heldMs`). */
  private unreserve(handle: EngineProcessHandle, client: string | undefined, heldMs: number): void {
    handle.reserved = false;
    handle.lostListener = undefined;
    this.shares.give(client, heldMs);
    this.release(handle);
  }

  /** A process above the maximum leaves the pool at once, so that no call is handed to a process on its way out. */
  private retire(handle: EngineProcessHandle): void {
    this.processes.delete(handle);
    this.forgetIdle(handle);
    const leaving = handle.close();
    this.leaving.add(leaving);
    void leaving.finally(() => this.leaving.delete(leaving));
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.tick);
    for (const timer of this.idleTimers.values()) timer.cancel();
    this.idleTimers.clear();
    for (const waiter of this.queue.splice(0)) {
      waiter.detach?.();
      waiter.reject(new EngineError('NOT_READY'));
    }
    await Promise.all([...[...this.processes].map((handle) => handle.close()), ...this.leaving]);
  }
}
