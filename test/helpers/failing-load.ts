/**
 * A real server whose journal rotates (16K files) and is gzipped while two
 * writers insert rows whose keys repeat, so that about half the batches fail
 * with a constraint error (class 3): what a journal follower must keep up with.
 */
import path from 'node:path';
import { startServer, type TestServer } from './server';

export interface FailingLoad {
  readonly server: TestServer;
  /** Stops the writers and waits for their last batches. */
  stopWriting(): Promise<void>;
}

async function insertLoop(server: TestServer, stop: { done: boolean }, client: number): Promise<void> {
  for (let i = 0; !stop.done && i < 5000; i++) {
    await server.exec('a', `INSERT INTO t VALUES (${(i * 7 + client) % 400}, 'row ${i} of client ${client}')`);
  }
}

async function mustExec(server: TestServer, sql: string): Promise<void> {
  const reply = await server.exec('a', sql);
  if (reply.status !== 200) throw new Error(`${sql}: ${reply.status} ${reply.text}`);
}

/** Starts the server in `dir` (data, and the journal under it, in `dir/data`) and its writers; the caller stops the server. */
export async function startFailingLoad(dir: string): Promise<FailingLoad> {
  const server = await startServer(['-dir', path.join(dir, 'data'), '-log-max-size', '16K', '-log-compress'], {
    cwd: dir,
  });
  await mustExec(server, 'CREATE DATABASE a');
  await mustExec(server, 'CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)');
  const stop = { done: false };
  const writers = [insertLoop(server, stop, 1), insertLoop(server, stop, 2)];
  return {
    server,
    stopWriting: async () => {
      stop.done = true;
      await Promise.all(writers);
    },
  };
}
