/**
 * The engine process as its handle sees it: send a call, hear replies, hear
 * it exit, kill it. Production forks engine-process.ts; a test hands the
 * handle a fake that replies when, and how, the test says (a reply out of
 * turn, a crash, a call that hangs past its deadline).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { EngineCall, EngineReply } from './engine-messages';

export interface EngineChild {
  readonly pid: number | undefined;
  send(call: EngineCall): void;
  onMessage(listener: (reply: EngineReply) => void): void;
  /** `listener` runs once, when the process is gone; listeners run in the order they were added. */
  onceExit(listener: () => void): void;
  onError(listener: () => void): void;
  /** SIGKILL: the process ends wherever it is. */
  kill(): void;
  /** Closes the channel: the process ends once it has answered what it was sent. */
  disconnect(): void;
}

/** Starts one engine process; `boardFd` is its progress board (progress-board.ts), handed over as fd 4. */
export type EngineChildFactory = (boardFd: number) => EngineChild;

/** The built .js beside this file, or the .ts source when running under a TypeScript loader (tests). */
function entryFile(): string {
  const js = path.join(__dirname, 'engine-process.js');
  return fs.existsSync(js) ? js : path.join(__dirname, 'engine-process.ts');
}

/**
 * An engine process keeps little alive between calls (a result is gone once
 * sent), so it needs far less young generation than V8's default of 16 MB.
 * 4 MB: with 1 MB, garbage collection was a fifth of a 1,000-row read and the
 * page cost about 15 % more CPU; 4 MB costs as little CPU as 16 MB and each
 * process a few MB more than 1 MB under load.
 */
const ENGINE_YOUNG_GENERATION = '--max-semi-space-size=4';

/**
 * glibc's malloc gives each thread that allocates an arena of its own (up to
 * eight per core), and memory freed in an arena mostly stays with the
 * process. SQLite's allocations and Node's helper threads spread over them:
 * with two arenas, a 25-student lesson peaked 20–25 MB lower over the
 * server and its engines, and 200 students' server 55–70 MB lower, at the
 * same CPU (docs/performance.md). An operator's own MALLOC_ARENA_MAX is kept.
 * Other C libraries ignore it.
 */
export function engineEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, MALLOC_ARENA_MAX: env['MALLOC_ARENA_MAX'] ?? '2' };
}

/** The real engine process: engine-process.ts forked with the advanced serialization (bigint, Buffers). */
export const forkEngineChild: EngineChildFactory = (boardFd) => {
  const child: ChildProcess = fork(entryFile(), [], {
    execArgv: [...process.execArgv, ENGINE_YOUNG_GENERATION],
    serialization: 'advanced',
    env: engineEnvironment(process.env),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc', boardFd],
  });
  return {
    get pid() {
      return child.pid;
    },
    send: (call) => void child.send(call),
    onMessage: (listener) => void child.on('message', listener),
    onceExit: (listener) => void child.once('exit', listener),
    onError: (listener) => void child.on('error', listener),
    kill: () => void child.kill('SIGKILL'),
    disconnect: () => child.disconnect(),
  };
};
