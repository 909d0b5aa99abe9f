/**
 * One engine process, seen from the parent: it runs one call at a time, and
 * it can be killed when that call runs past its deadline.
 *
 * The handle alone owns its current call, so that no call is ever lost. A call starts in one
 * place (advance) and ends in one place, and whoever waits for a call that
 * ended hears of it only once the handle is whole again: its next own call
 * started, its queue shifted. Hearing of an end may run the pool's pump at
 * once (process-engine-host.ts), which hands an idle process its next call;
 * when the end was told first, that call was started on this process and
 * then overwritten by the next own call (a closeDatabase), and never answered.
 */
import os from 'node:os';
import type { Clock, Timer } from '../../clock';
import { EngineError } from '../../errors';
import { forkEngineChild, type EngineChild, type EngineChildFactory } from './engine-child';
import type { EngineCall, EngineReply, EngineRequest } from './engine-messages';
import { nowUs, ProgressBoard } from './progress-board';
import { onStop, stopError, stopOf } from './request-stop';

/** A handle's time: its timers, and the monotonic microseconds the progress board speaks (tests move both by hand). */
export interface CallClock extends Clock {
  nowUs(): number;
}

/** Real time; unlike systemClock's, these timers keep the server alive while a call runs (as they always did). */
export const realCallClock: CallClock = {
  now: () => Date.now(),
  nowUs,
  after(ms, fn) {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle) };
  },
};

/**
 * A call whose client went away may still be about to finish: it gets this
 * long before its process is killed, so that clients who drop short requests
 * do not make the pool start a process each time.
 */
const GONE_GRACE_MS = 400;

/**
 * A call that has run this long is a long call: its process gives way on
 * the CPU (a lower priority), so that a few runaway batches do not slow
 * every short request, and it no longer counts against the pool's size.
 */
export const LONG_CALL_MS = 250;
const LONG_CALL_NICENESS = 10;

export interface PendingCall {
  readonly request: EngineRequest;
  resolve(value: unknown): void;
  reject(error: EngineError): void;
  /** The request's signal (CallContext): its abort stops the call, and the process with it. */
  readonly signal?: AbortSignal;
  /** See CallContext.progress. */
  readonly progress?: (statements: number) => void;
}

/** How often a call that wants progress hears of it. */
const PROGRESS_MS = 500;

export class EngineProcessHandle {
  private readonly child: EngineChild;
  /** The call running, the statement it runs (as last read from the board) and when that statement began. */
  private current: {
    call: PendingCall;
    id: number;
    statement: number;
    startedUs: number;
    timer: Timer | undefined;
    calledMs: number;
    detach: () => void;
    long: Timer;
    ticker?: Timer;
  } | null = null;
  /** Where the process says which statement it runs (progress-board.ts). */
  private readonly board = new ProgressBoard();
  /** Until the process has loaded, a call's time does not count against the query timeout. */
  private loaded = false;
  /**
   * Calls waiting for this process, in order: its own (closing a database
   * everywhere, a session's or a held group's calls), run before the pool
   * gives it shared work. Each has the function that stops listening for its stop.
   */
  private readonly waiting: Array<{ call: PendingCall; detach: () => void }> = [];
  private nextId = 1;
  /** The process's CPU priority (0 normal; raised for a long call). */
  private niceness = 0;
  private exited = false;
  /** Asked to end: it takes no new call, though it is still on the way out. */
  private closing = false;
  /** Killed: its exit is on the way, and no call starts here meanwhile. */
  private killing = false;
  /** Held by a session: only the session's calls run here. */
  reserved = false;
  /** Its priority was lowered for a long call and could not be raised again: the pool lets it go when idle. */
  stale = false;
  /** Told when a reserved process is lost, so that its session is closed. */
  lostListener: (() => void) | undefined;

  constructor(
    private readonly queryTimeoutMs: number,
    /** Called once when the process is gone, whatever the reason. */
    private readonly onExit: (handle: EngineProcessHandle) => void,
    /** Called when the process is ready for another call. */
    private readonly onIdle: (handle: EngineProcessHandle) => void,
    spawnChild: EngineChildFactory = forkEngineChild,
    private readonly clock: CallClock = realCallClock,
  ) {
    this.child = spawnChild(this.board.fd);
    this.child.onMessage((reply) => this.receive(reply));
    this.child.onceExit(() => this.exit());
    this.child.onError(() => this.kill());
  }

  /** Loaded, running nothing, nothing waiting for it: a call given to it starts at once. */
  get idle(): boolean {
    return this.loaded && !this.busy && !this.reserved && this.waiting.length === 0;
  }

  /** Started and not yet loaded (it takes a while on a loaded machine). */
  get starting(): boolean {
    return !this.loaded && !this.exited && !this.closing;
  }

  get busy(): boolean {
    // A process killed at the timeout, or asked to end, is not free while its exit is still on the way.
    return this.current !== null || !this.open;
  }

  /** Calls may still start here: it is not gone, not asked to end, not killed. */
  private get open(): boolean {
    return !this.exited && !this.closing && !this.killing;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The current call has run LONG_CALL_MS or more. */
  get runningLong(): boolean {
    return this.current !== null && this.clock.now() - this.current.calledMs >= LONG_CALL_MS;
  }

  /**
   * Runs a call meant for this process: now if it is free, else after its
   * current call and those queued before it. A call whose request stops while
   * it waits leaves the queue at once, answered with its stop.
   */
  runOwn(call: PendingCall): void {
    if (this.exited) return call.reject(new EngineError('ENGINE_CRASHED'));
    const signal = call.signal;
    const entry = { call, detach: (): void => undefined };
    if (signal !== undefined && signal.aborted !== true) {
      entry.detach = onStop(signal, (stop) => {
        const at = this.waiting.indexOf(entry);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        call.reject(stopError(stop, false));
      });
    }
    this.waiting.push(entry);
    if (this.current === null) this.advance([]);
  }

  /**
   * Runs a call the pool chose this process for. The pool gives calls to idle
   * processes only; one that comes while a call runs here waits its turn like
   * an own call: the call running is never overwritten, and none is dropped.
   */
  run(call: PendingCall): void {
    this.runOwn(call);
  }

  /**
   * The one place where calls start, and where those that ended are told: the
   * next waiting call starts first (one stopped before it started is answered
   * with its stop), then `ended` runs (the answers of calls that are over),
   * then, if nothing runs here, the pool may give the process work.
   */
  private advance(ended: Array<() => void>): void {
    while (this.current === null && this.open) {
      const next = this.waiting.shift();
      if (next === undefined) break;
      next.detach();
      const { call } = next;
      const signal = call.signal;
      if (signal?.aborted === true) ended.push(() => call.reject(stopError(stopOf(signal), false)));
      else this.start(call);
    }
    for (const tell of ended) tell();
    if (this.idle) this.onIdle(this);
  }

  private start(call: PendingCall): void {
    const id = this.nextId++;
    const detach = this.watch(call, id);
    const long = this.clock.after(LONG_CALL_MS, () => this.setNiceness(LONG_CALL_NICENESS));
    this.current = {
      call,
      id,
      statement: 0,
      startedUs: this.clock.nowUs(),
      timer: this.loaded ? this.deadline(this.queryTimeoutMs) : undefined,
      calledMs: this.clock.now(),
      detach,
      long,
    };
    if (call.progress !== undefined) this.current.ticker = this.reportProgress(call.progress, id);
    const message: EngineCall = { id, ...call.request };
    this.child.send(message);
  }

  /** Stops call `id` when its request's signal aborts: at once past the deadline, after a grace when the client left. */
  private watch(call: PendingCall, id: number): () => void {
    const signal = call.signal;
    if (signal === undefined) return () => undefined;
    let grace: Timer | undefined;
    const stopListening = onStop(signal, (stop) => {
      const halt = (): void => {
        if (this.current?.id === id) this.stopCurrent((statement) => stopError(stop, true, statement));
      };
      if (stop.reason === 'gone') grace = this.clock.after(GONE_GRACE_MS, halt);
      else halt();
    });
    return () => {
      grace?.cancel();
      stopListening();
    };
  }

  /** Reads the board for a call that wants to hear how far it is (an import), and tells it. */
  private reportProgress(progress: (statements: number) => void, id: number): Timer {
    let timer: Timer;
    const tick = (): void => {
      const current = this.current;
      if (current?.id !== id) return;
      this.followProgress(current);
      progress(current.statement);
      timer = this.clock.after(PROGRESS_MS, tick);
    };
    timer = this.clock.after(PROGRESS_MS, tick);
    return { cancel: () => timer.cancel() };
  }

  private deadline(ms: number): Timer {
    return this.clock.after(ms, () => this.onDeadline());
  }

  /** Every statement gets the whole timeout: a statement that began after the current one did has time left. */
  private onDeadline(): void {
    const current = this.current;
    if (current === null) return;
    this.followProgress(current);
    const leftMs = Math.ceil(current.startedUs / 1000 + this.queryTimeoutMs - this.clock.nowUs() / 1000);
    if (leftMs > 0) current.timer = this.deadline(leftMs);
    else this.stopCurrent((statement) => new EngineError('QUERY_TIMEOUT', { ms: this.queryTimeoutMs }, { statement }));
  }

  private followProgress(current: NonNullable<EngineProcessHandle['current']>): void {
    const progress = this.board.read();
    if (progress === undefined || progress.call !== current.id >>> 0 || progress.statement <= current.statement) return;
    current.statement = progress.statement;
    current.startedUs = progress.startedUs;
  }

  private receive(reply: EngineReply): void {
    if (reply.kind === 'ready') {
      this.loaded = true;
      if (this.current === null) return this.advance([]);
      this.current.startedUs = this.clock.nowUs();
      this.current.timer = this.deadline(this.queryTimeoutMs);
      return;
    }
    const current = this.current;
    // A reply of a call already stopped (its process is being killed) finds nobody.
    if (current === null || reply.id !== current.id) return;
    this.settle(current);
    this.current = null;
    this.setNiceness(0);
    const { call } = current;
    this.advance([
      reply.kind === 'result' ? () => call.resolve(reply.value) : () => call.reject(EngineError.fromData(reply.error)),
    ]);
  }

  /** A call is over: its timers and its stop listener go. */
  private settle(current: NonNullable<EngineProcessHandle['current']>): void {
    current.timer?.cancel();
    current.long.cancel();
    current.ticker?.cancel();
    current.detach();
  }

  /** Lowering a priority is always allowed; raising it back may not be (no CAP_SYS_NICE): then the process is stale. */
  private setNiceness(value: number): void {
    const pid = this.child.pid;
    if (this.niceness === value || this.exited || pid === undefined) return;
    try {
      os.setPriority(pid, value);
      this.niceness = value;
    } catch {
      if (value < this.niceness) this.stale = true;
    }
  }

  /** Kills the process under the current call, which is answered with `error` (given the statement it ran). */
  private stopCurrent(error: (statement: number) => EngineError): void {
    const current = this.current;
    if (current === null) return;
    this.settle(current);
    this.followProgress(current);
    this.current = null;
    // Answered once the process is gone (after exit(), so a session is closed first): until then it may hold SQLite's write lock.
    this.child.onceExit(() => current.call.reject(error(current.statement)));
    this.kill();
  }

  kill(): void {
    if (this.exited) return;
    this.killing = true;
    this.child.kill();
  }

  /** The process is gone: its current call and every call waiting for it are answered, after the pool has let it go. */
  private exit(): void {
    if (this.exited) return;
    this.exited = true;
    const ended: Array<() => void> = [];
    const current = this.current;
    this.current = null;
    if (current !== null) {
      this.settle(current);
      this.followProgress(current);
      ended.push(() => current.call.reject(new EngineError('ENGINE_CRASHED', {}, { statement: current.statement })));
    }
    for (const { call, detach } of this.waiting.splice(0)) {
      detach();
      ended.push(() => call.reject(new EngineError('ENGINE_CRASHED')));
    }
    this.board.close();
    if (this.reserved) this.lostListener?.();
    this.onExit(this);
    for (const tell of ended) tell();
  }

  /** Ends the process once it has finished its current call. */
  close(): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.closing = true;
    return new Promise((resolve) => {
      // A process that misses the disconnect (e.g. still in a --import preloader) must not hold shutdown forever.
      const timer = this.clock.after(this.queryTimeoutMs + 1000, () => this.kill());
      this.child.onceExit(() => (timer.cancel(), resolve()));
      this.child.disconnect();
    });
  }
}
