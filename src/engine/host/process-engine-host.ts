/**
 * An EngineHost that runs the engine in child processes, one call at a time
 * each, so that a runaway statement stops only the process that runs it: it is
 * killed at -query-timeout and another takes its place. Calls wait in a queue
 * here, in the parent, so a killed process loses only the call it was running.
 */
import { EngineError } from '../../errors';
import type { EngineHost, EngineSession, ExecRequest, GroupOutcome, HeldGroup, JournalPosition, RowPage, RowsRequest, StatementResult } from '../protocol';
import type { TableSchema } from '../schema';
import type { EngineMethod } from './engine-messages';
import { EngineProcessHandle, type PendingCall } from './engine-process-handle';

export interface ProcessEngineHostOptions {
  queryTimeoutMs: number;
  /** Processes kept running. @default 2 */
  minProcesses?: number;
  /** Processes at most, started when every other one is busy. @default 4 */
  maxProcesses?: number;
}

export class ProcessEngineHost implements EngineHost {
  private readonly processes = new Set<EngineProcessHandle>();
  private readonly queue: PendingCall[] = [];
  /** Processes that left the pool and are still ending: shutdown waits for them too. */
  private readonly leaving = new Set<Promise<void>>();
  private readonly minProcesses: number;
  private readonly maxProcesses: number;
  private closing = false;

  constructor(private readonly options: ProcessEngineHostOptions) {
    this.minProcesses = options.minProcesses ?? 2;
    this.maxProcesses = Math.max(this.minProcesses, options.maxProcesses ?? 4);
    for (let i = 0; i < this.minProcesses; i++) this.spawn();
  }

  /** The pids of the running engine processes (for operators and tests). */
  get pids(): number[] {
    return [...this.processes].map((handle) => handle.pid).filter((pid): pid is number => pid !== undefined);
  }

  private spawn(): EngineProcessHandle {
    const handle = new EngineProcessHandle(this.options.queryTimeoutMs, (gone) => this.replace(gone), (ready) => this.release(ready));
    this.processes.add(handle);
    return handle;
  }

  private replace(gone: EngineProcessHandle): void {
    this.processes.delete(gone);
    if (this.closing) return;
    if (this.processes.size < this.minProcesses || this.queue.length > 0) this.release(this.spawn());
  }

  /** A process became free: it takes the oldest waiting call, unless a session holds it. */
  private release(handle: EngineProcessHandle): void {
    if (handle.reserved || handle.busy) return;
    const next = this.queue.shift();
    if (next) handle.run(next);
  }

  private freeProcess(): EngineProcessHandle | undefined {
    for (const handle of this.processes) if (!handle.busy && !handle.reserved) return handle;
    return this.processes.size < this.maxProcesses ? this.spawn() : undefined;
  }

  /** Runs a call on one given process, after its current call if it has one. */
  callOn<T>(handle: EngineProcessHandle, method: EngineMethod, ...args: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => handle.runOwn({ method, args, resolve: resolve as (value: unknown) => void, reject }));
  }

  private call<T>(method: EngineMethod, ...args: unknown[]): Promise<T> {
    if (this.closing) return Promise.reject(new EngineError('NOT_READY'));
    return new Promise<T>((resolve, reject) => {
      const call: PendingCall = { method, args, resolve: resolve as (value: unknown) => void, reject };
      const handle = this.freeProcess();
      if (handle) handle.run(call);
      else this.queue.push(call);
    });
  }

  exec(request: ExecRequest): Promise<StatementResult[]> {
    return this.call('exec', request);
  }

  /** The process that ran the group keeps it until commit or rollback: no other work goes there meanwhile. */
  async execHeldGroup(requests: readonly ExecRequest[]): Promise<HeldGroup> {
    const handle = this.takeProcess();
    let outcomes: GroupOutcome[];
    try {
      outcomes = await this.callOn<GroupOutcome[]>(handle, 'execHeldGroup', requests);
    } catch (error) {
      this.unreserve(handle);
      throw error;
    }
    const finish = (method: EngineMethod, ...args: unknown[]): Promise<void> => this.callOn<void>(handle, method, ...args).finally(() => this.unreserve(handle));
    return { outcomes, commit: (seq) => finish('commitHeld', seq), rollback: () => finish('rollbackHeld') };
  }

  /** A free process, reserved for the caller; one more than the maximum when every process is busy. */
  private takeProcess(): EngineProcessHandle {
    const handle = [...this.processes].find((candidate) => !candidate.busy && !candidate.reserved) ?? this.spawn();
    handle.reserved = true;
    return handle;
  }

  journalPosition(file: string): Promise<JournalPosition> {
    return this.call('journalPosition', file);
  }

  tables(file: string): Promise<TableSchema[]> {
    return this.call('tables', file);
  }

  async schema(file: string, table: string): Promise<TableSchema | undefined> {
    return (await this.call<TableSchema | null>('schema', file, table)) ?? undefined;
  }

  rows(request: RowsRequest): Promise<RowPage> {
    return this.call('rows', request);
  }

  createDatabase(file: string, createdSeq?: number): Promise<void> {
    return this.call('createDatabase', file, createdSeq);
  }

  /** Every process may hold a handle on the file: all of them close it. A process that is gone holds none. */
  async closeDatabase(file: string): Promise<void> {
    await Promise.all([...this.processes].map((handle) => this.callOn(handle, 'closeDatabase', file).catch(() => undefined)));
  }

  /**
   * A session takes a process for itself (one more than the maximum if all
   * are busy: there is only ever one session), so shared work never queues
   * behind a transaction that waits for its client.
   */
  async openSession(file: string): Promise<EngineSession> {
    const handle = this.takeProcess();
    try {
      await this.callOn(handle, 'beginSession', file);
    } catch (error) {
      this.unreserve(handle);
      throw error;
    }
    return {
      exec: (request) => this.callOn(handle, 'execInSession', request),
      end: async (commit, seq) => {
        try {
          await this.callOn(handle, 'endSession', commit, seq);
        } finally {
          this.unreserve(handle);
        }
      },
      onLost: (listener) => {
        handle.lostListener = listener;
      },
    };
  }

  /**
   * A process given back by a session or a write group. One above the maximum
   * ends; it leaves the pool at once, so that no call is handed to a process
   * on its way out (that call would fail as a crashed engine).
   */
  private unreserve(handle: EngineProcessHandle): void {
    handle.reserved = false;
    handle.lostListener = undefined;
    if (this.processes.size <= this.maxProcesses) return this.release(handle);
    this.processes.delete(handle);
    const leaving = handle.close();
    this.leaving.add(leaving);
    void leaving.finally(() => this.leaving.delete(leaving));
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const call of this.queue.splice(0)) call.reject(new EngineError('NOT_READY'));
    await Promise.all([...[...this.processes].map((handle) => handle.close()), ...this.leaving]);
  }
}
