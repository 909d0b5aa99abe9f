/**
 * Starts the real server (the built dist/, as `npm start` runs it) as a child
 * process on a free port, and speaks HTTP to it.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const MAIN = path.resolve(__dirname, '../../dist/src/main.js');
const SHEBANG = fs.readFileSync(MAIN, 'utf8').split('\n')[0] ?? '';
/** The environment main.js's #! line sets before node (`env -S NAME=value … node`); npm start and the systemd unit set the same. */
export const SERVER_ENVIRONMENT: Readonly<Record<string, string>> = Object.fromEntries(
  (/^#!\S*env -S((?: \w+=\S+)*) node\b/.exec(SHEBANG)?.[1] ?? '')
    .split(' ')
    .filter(Boolean)
    .map((assignment) => assignment.split('=', 2) as [string, string]),
);
/** The node flags the server is launched with (main.js's #! line; npm start and the systemd unit say the same). */
export const SERVER_NODE_FLAGS: readonly string[] = (/^#!.*\bnode((?: --\S+)*)\s*$/m.exec(SHEBANG)?.[1] ?? '')
  .split(' ')
  .filter(Boolean);

/**
 * Runs `node args…` without the test runner's hooks. tap preloads its
 * process-info module into every Node process it can see start (it rewrites
 * NODE_OPTIONS in each spawn), which makes each engine process start several
 * times slower and can hold an orphaned one at exit; `env -u` drops it just
 * before node starts (same pid: env execs node).
 */
export function spawnNode(args: readonly string[], options: SpawnOptions): ChildProcess {
  return spawn('env', ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', process.execPath, ...args], options);
}

export interface Reply {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as it is, without JSON encoding. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestServer {
  readonly url: string;
  /** The directory the server was started in. */
  readonly cwd: string;
  readonly child: ChildProcess;
  /** Everything the server wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  request(method: string, pathAndQuery: string, options?: RequestOptions): Promise<Reply>;
  get(pathAndQuery: string, headers?: Record<string, string>): Promise<Reply>;
  post(pathAndQuery: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** POST /exec with { db, sql } (db omitted when undefined). */
  exec(db: string | undefined, sql: string, extra?: Record<string, unknown>): Promise<Reply>;
  stop(): Promise<number | null>;
}

/**
 * One server for a whole test file, with `-dir <cwd>/data`: started before
 * the file's first test, stopped after its last; `started` receives it.
 */
export function serverPerFile(
  tap: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void },
  cwd: string,
  started: (server: TestServer) => void,
): void {
  let server: TestServer | undefined;
  tap.before(async () => {
    server = await startServer(['-dir', path.join(cwd, 'data')], { cwd });
    started(server);
  });
  tap.teardown(async () => {
    if (server !== undefined) await server.stop();
  });
}

/** Starts `node dist/src/main.js -addr 127.0.0.1:0 ...args` in cwd (`addr` in place of 127.0.0.1:0: a restart on the same port). */
export async function startServer(
  args: string[],
  options: { cwd: string; headers?: Record<string, string>; addr?: string },
): Promise<TestServer> {
  const child = spawnNode([MAIN, '-addr', options.addr ?? '127.0.0.1:0', ...args], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 15000);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(err);
      // The server listens at once but serves only when crash recovery is done.
      if (match && /\nsqlscribe ready/.test(err)) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
  const defaults = options.headers ?? {};
  const request = async (method: string, pathAndQuery: string, req: RequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...defaults, ...req.headers };
    let body: string | Buffer | undefined;
    if (req.rawBody !== undefined) body = req.rawBody;
    else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] ??= 'application/json';
    }
    // Node's fetch takes a Buffer; the DOM typings the tests also load do not say so.
    return replyOf(await fetch(url + pathAndQuery, { method, headers, body: body as BodyInit | undefined }));
  };
  return {
    url,
    cwd: options.cwd,
    child,
    stdout: () => out,
    stderr: () => err,
    request,
    get: (p, headers) => request('GET', p, headers ? { headers } : {}),
    post: (p, body, headers) => request('POST', p, headers ? { body, headers } : { body }),
    exec: (db, sql, extra = {}) =>
      request('POST', '/exec', { body: db === undefined ? { sql, ...extra } : { db, sql, ...extra } }),
    // A server that has not exited 20 s after SIGTERM is killed, so that it neither hangs the run nor outlives it.
    stop: () =>
      new Promise((resolve) => {
        // A process already gone (killed by a signal: exitCode null) sends no further 'exit'.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
        child.kill('SIGTERM');
      }),
  };
}

/** A fetch response as a Reply: its text, and its body parsed where it is JSON (undefined where not). */
export async function replyOf(response: Response): Promise<Reply> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A request that gives undefined when the connection is lost (the server was killed under it). */
export async function attempt(request: () => Promise<Reply>): Promise<Reply | undefined> {
  try {
    return await request();
  } catch {
    return undefined;
  }
}

export const REPLAY = path.resolve(__dirname, '../../dist/replay/cli.js');

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built script of the project to completion; killed after `timeoutMs`. */
function runScript(script: string, args: string[], cwd: string, timeoutMs: number): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawnNode([script, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the server's CLI to completion (for start-up errors and -h). */
export function runCli(args: string[], cwd: string): Promise<ToolRun> {
  return runScript(MAIN, args, cwd, 10_000);
}

/** Runs the replay tool (`npm run replay`) to completion. */
export function runReplay(args: string[], cwd: string): Promise<ToolRun> {
  return runScript(REPLAY, args, cwd, 60_000);
}

export const TAIL = path.resolve(__dirname, '../../dist/tail/cli.js');

/** Runs the journal follower (`npm run tail`) to completion, e.g. with -once. */
export function runTail(args: string[], cwd: string): Promise<ToolRun> {
  return runScript(TAIL, args, cwd, 30_000);
}
