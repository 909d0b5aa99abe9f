/**
 * A restore's rebuild, run in a process of its own (restore-child.ts) so that
 * the server's thread never replays a history: the server's other requests
 * go on while it runs, and what it costs is bounded apart from them.
 *
 * Each rebuild is one process, forked for it and gone after its one reply:
 * killable at any point without anything to clean up in the server, and with
 * nothing of an earlier restore left in its memory. Its bounds: a wall-clock
 * deadline (-restore-timeout) at which it is killed with SIGKILL, a V8 heap
 * of -restore-memory (--max-old-space-size: the decoded journal entries live
 * there; SQLite's page cache is REBUILD_PAGE_CACHE_KIB on top), and a lower
 * CPU priority, so that on a small machine the server and its engine
 * processes win the cores while a rebuild runs.
 *
 * Two kinds of job: a live restore's (rebuild: find the target, rebuild) and
 * a read replica's `restoredb` entry (rebuildState: the state at a known
 * target), under the same bounds and with the same codes past them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../../errors';
import type { RequestStop } from '../../engine/protocol';
import { engineEnvironment } from '../../engine/host/engine-child';
import { onStop, stopError } from '../../engine/host/request-stop';
import { JOB_VARIABLE, type RestoreJob, type RestorePlanned, type RestoreReply } from './restore-rebuild';
import type { StateJob } from './restore-state';

export interface RebuildBounds {
  /** Killed after this long, from its start. */
  readonly timeoutMs: number;
  /** Its V8 heap at most (--max-old-space-size), in bytes. */
  readonly memoryBytes: number;
}

/** The niceness of a rebuild process: below the server and its engines (engine-process-handle's long calls take 10 too). */
const REBUILD_NICENESS = 10;
/** What of a dead process's stderr is kept, to tell running out of memory from other ends and to log. */
const STDERR_TAIL = 8192;
const MiB = 1024 * 1024;

/** The built .js beside this file, or the .ts source under a TypeScript loader (tests). */
function entryFile(): string {
  const js = path.join(__dirname, 'restore-child.js');
  return fs.existsSync(js) ? js : path.join(__dirname, 'restore-child.ts');
}

/** How a rebuild process ended, as seen from here. */
interface Ending {
  reply: RestoreReply | undefined;
  /** Why this side killed it, if it did. */
  killed: { why: 'deadline' } | { why: 'stopped'; stop: RequestStop } | { why: 'closing' } | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export class RestoreProcesses {
  private readonly running = new Set<ChildProcess>();

  constructor(
    private readonly bounds: RebuildBounds,
    /** Told of rebuild processes that ended some other way than with a reply (their stderr's tail). */
    private readonly log: (message: string) => void,
  ) {}

  /**
   * Runs `job` in a new process and answers its plan, or its engine error;
   * past a bound, RESTORE_TIMEOUT or RESTORE_OUT_OF_MEMORY. A client gone
   * (`signal` aborted as 'gone') kills it too; a request deadline does not:
   * once it runs, -restore-timeout is its deadline.
   */
  async rebuild(job: RestoreJob, signal?: AbortSignal): Promise<RestorePlanned> {
    const ending = await this.run(job, signal);
    if (ending.reply?.kind === 'planned') return ending.reply.planned;
    throw this.failure(job, ending);
  }

  /**
   * Runs a replica's `job` in a new process and answers the file of the
   * state it rebuilt in `job.out`; its engine error, or past a bound
   * RESTORE_TIMEOUT or RESTORE_OUT_OF_MEMORY, as rebuild() does.
   */
  async rebuildState(job: StateJob): Promise<string> {
    const ending = await this.run(job, undefined);
    if (ending.reply?.kind === 'state') return ending.reply.file;
    throw this.failure(job, ending);
  }

  /** Why a rebuild process gave no answer of the kind asked. */
  private failure(job: RestoreJob | StateJob, ending: Ending): EngineError {
    const { reply, killed } = ending;
    if (reply?.kind === 'error') return EngineError.fromData(reply.error);
    if (killed?.why === 'deadline')
      return new EngineError('RESTORE_TIMEOUT', { db: job.db, ms: this.bounds.timeoutMs });
    if (killed?.why === 'stopped') return stopError(killed.stop, true);
    if (killed === undefined && ranOutOfMemory(ending))
      return new EngineError('RESTORE_OUT_OF_MEMORY', {
        db: job.db,
        max: `${Math.round(this.bounds.memoryBytes / MiB)} MiB`,
      });
    const detail =
      reply !== undefined && reply.kind !== 'failed'
        ? `it answered ${reply.kind}, not what was asked`
        : reply?.kind === 'failed'
          ? reply.message
          : killed?.why === 'closing'
            ? 'the server is stopping'
            : `it exited with ${ending.signal ?? `code ${ending.code}`}`;
    if (reply === undefined && killed === undefined)
      this.log(`restore of ${job.db}: the rebuild process ${detail}: ${ending.stderr.trim().slice(-2000)}`);
    return new EngineError('RESTORE_FAILED', { db: job.db, detail });
  }

  /** Kills every rebuild still running (the server stops): each answers RESTORE_FAILED. */
  close(): void {
    for (const child of this.running) child.kill('SIGKILL');
  }

  private run(job: RestoreJob | StateJob, signal: AbortSignal | undefined): Promise<Ending> {
    const child = fork(entryFile(), [], {
      execArgv: [...process.execArgv, `--max-old-space-size=${Math.max(1, Math.floor(this.bounds.memoryBytes / MiB))}`],
      env: { ...engineEnvironment(process.env), [JOB_VARIABLE]: JSON.stringify(job) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.running.add(child);
    try {
      if (child.pid !== undefined) os.setPriority(child.pid, REBUILD_NICENESS);
    } catch {
      // Not allowed here (a container without the right): it runs at the server's priority.
    }
    const ending: Ending = { reply: undefined, killed: undefined, code: null, signal: null, stderr: '' };
    const kill = (killed: NonNullable<Ending['killed']>): void => {
      ending.killed ??= killed;
      child.kill('SIGKILL');
    };
    child.stderr?.on('data', (chunk: Buffer) => {
      ending.stderr = (ending.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('message', (message: RestoreReply) => {
      ending.reply ??= message;
    });
    const timer = setTimeout(() => kill({ why: 'deadline' }), this.bounds.timeoutMs);
    const detach =
      signal === undefined
        ? () => undefined
        : onStop(signal, (stop) => {
            if (stop.reason === 'gone') kill({ why: 'stopped', stop });
          });
    return new Promise((resolve) => {
      let done = false;
      const end = (code: number | null, exitSignal: NodeJS.Signals | null): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        detach();
        this.running.delete(child);
        resolve({ ...ending, code, signal: exitSignal });
      };
      // 'close': the process is gone and its stderr read to the end (the heap-limit message is in it).
      child.once('close', end);
      child.once('error', (error) => {
        ending.stderr += String(error);
        // Never started (no 'close' follows then), or failed to be signalled: either way it is let go.
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) end(null, null);
        else child.kill('SIGKILL');
      });
    });
  }
}

/** V8 aborts a process whose heap reached --max-old-space-size, saying so on stderr. */
function ranOutOfMemory(ending: Ending): boolean {
  return /heap limit|heap out of memory|Allocation failed/i.test(ending.stderr) || ending.signal === 'SIGABRT';
}
