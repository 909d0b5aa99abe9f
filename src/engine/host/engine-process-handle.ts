/**
 * One engine process, seen from the parent: it runs one call at a time, and
 * it can be killed when that call runs past its deadline.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../../errors';
import type { EngineCall, EngineMethod, EngineReply } from './engine-messages';
import { nowUs, ProgressBoard } from './progress-board';

/** The built .js beside this file, or the .ts source when running under a TypeScript loader (tests). */
function entryFile(): string {
  const js = path.join(__dirname, 'engine-process.js');
  return fs.existsSync(js) ? js : path.join(__dirname, 'engine-process.ts');
}

/**
 * An engine process keeps little alive between calls (a result is gone once
 * sent), so a 1 MB semi-space serves it as well as V8's default of 16 MB (the
 * same CPU per 1,000-row page, measured), and keeps each process about 20 MB
 * smaller under load (issue 7: memory under load).
 */
const ENGINE_YOUNG_GENERATION = '--max-semi-space-size=1';

export interface PendingCall {
  readonly method: EngineMethod;
  readonly args: unknown[];
  resolve(value: unknown): void;
  reject(error: EngineError): void;
}

export class EngineProcessHandle {
  private readonly child: ChildProcess;
  /** The call running, the statement it runs (as last read from the board) and when that statement began. */
  private current: { call: PendingCall; id: number; statement: number; startedUs: number; timer: NodeJS.Timeout | undefined } | null = null;
  /** Where the process says which statement it runs (progress-board.ts). */
  private readonly board = new ProgressBoard();
  /** Until the process has loaded, a call's time does not count against the query timeout. */
  private ready = false;
  /** Calls for this process only (closing a database everywhere), run before shared work. */
  private readonly own: PendingCall[] = [];
  private nextId = 1;
  private exited = false;
  /** Asked to end: it takes no new call, though it is still on the way out. */
  private closing = false;
  /** Held by a session: only the session's calls run here. */
  reserved = false;
  /** Told when a reserved process is lost, so that its session is closed. */
  lostListener: (() => void) | undefined;

  constructor(
    private readonly queryTimeoutMs: number,
    /** Called once when the process is gone, whatever the reason. */
    private readonly onExit: (handle: EngineProcessHandle) => void,
    /** Called when the process is ready for another call. */
    private readonly onIdle: (handle: EngineProcessHandle) => void,
  ) {
    // Advanced serialization carries bigint (64-bit integers) and Buffers.
    const execArgv = [...process.execArgv, ENGINE_YOUNG_GENERATION];
    this.child = fork(entryFile(), [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc', this.board.fd] });
    this.child.on('message', (reply: EngineReply) => this.receive(reply));
    this.child.once('exit', () => this.exit());
    this.child.on('error', () => this.kill());
  }

  get busy(): boolean {
    // A process killed at the timeout, or asked to end, is not free while its exit is still on the way.
    return this.current !== null || this.exited || this.closing || this.child.killed;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Runs a call meant for this process: now if it is free, else after its current call. */
  runOwn(call: PendingCall): void {
    if (this.exited) call.reject(new EngineError('ENGINE_CRASHED'));
    else if (this.busy) this.own.push(call);
    else this.run(call);
  }

  run(call: PendingCall): void {
    const id = this.nextId++;
    this.current = { call, id, statement: 0, startedUs: nowUs(), timer: this.ready ? this.deadline(this.queryTimeoutMs) : undefined };
    const message: EngineCall = { id, method: call.method, args: call.args };
    this.child.send(message);
  }

  private deadline(ms: number): NodeJS.Timeout {
    return setTimeout(() => this.onDeadline(), ms);
  }

  /** Every statement gets the whole timeout: a statement that began after the current one did has time left. */
  private onDeadline(): void {
    const current = this.current;
    if (current === null) return;
    this.followProgress(current);
    const leftMs = Math.ceil(current.startedUs / 1000 + this.queryTimeoutMs - nowUs() / 1000);
    if (leftMs > 0) current.timer = this.deadline(leftMs);
    else this.stopRunaway();
  }

  private followProgress(current: NonNullable<EngineProcessHandle['current']>): void {
    const progress = this.board.read();
    if (progress === undefined || progress.call !== current.id >>> 0 || progress.statement <= current.statement) return;
    current.statement = progress.statement;
    current.startedUs = progress.startedUs;
  }

  private receive(reply: EngineReply): void {
    if (reply.kind === 'ready') {
      this.ready = true;
      if (this.current !== null) {
        this.current.startedUs = nowUs();
        this.current.timer = this.deadline(this.queryTimeoutMs);
      }
      return;
    }
    const current = this.current;
    if (current === null || reply.id !== current.id) return;
    clearTimeout(current.timer);
    this.current = null;
    if (reply.kind === 'result') current.call.resolve(reply.value);
    else current.call.reject(EngineError.fromData(reply.error));
    const own = this.own.shift();
    if (own) this.run(own);
    else this.onIdle(this);
  }

  private stopRunaway(): void {
    const current = this.current;
    if (current === null) return;
    this.current = null;
    // Answered once the process is gone (after exit(), so a session is closed first): until then it may hold SQLite's write lock.
    this.child.once('exit', () => current.call.reject(new EngineError('QUERY_TIMEOUT', { ms: this.queryTimeoutMs }, { statement: current.statement })));
    this.kill();
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }

  private exit(): void {
    if (this.exited) return;
    this.exited = true;
    const current = this.current;
    this.current = null;
    if (current !== null) {
      clearTimeout(current.timer);
      this.followProgress(current);
      current.call.reject(new EngineError('ENGINE_CRASHED', {}, { statement: current.statement }));
    }
    this.board.close();
    for (const call of this.own.splice(0)) call.reject(new EngineError('ENGINE_CRASHED'));
    if (this.reserved) this.lostListener?.();
    this.onExit(this);
  }

  /** Ends the process once it has finished its current call. */
  close(): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.closing = true;
    return new Promise((resolve) => {
      // A process that misses the disconnect (e.g. still in a --import preloader) must not hold shutdown forever.
      const timer = setTimeout(() => this.kill(), this.queryTimeoutMs + 1000);
      this.child.once('exit', () => (clearTimeout(timer), resolve()));
      this.child.disconnect();
    });
  }
}
