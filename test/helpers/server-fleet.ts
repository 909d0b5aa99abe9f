/**
 * The servers one test file starts on a data directory and a journal, and
 * stops, kills and starts again: any still running when the file ends is
 * killed, so a failed assertion never leaves a server behind.
 */
import path from 'node:path';
import { startServer, type TestServer } from './server';

/** Where a server keeps its databases and its journal, under `dir` (its working directory). */
export interface ServerPlace {
  dir: string;
  data: string;
  journal: string;
}

/** The usual place in `dir`: databases in data/, the journal in journal/statements.jsonl. */
export function placeAt(dir: string): ServerPlace {
  return { dir, data: path.join(dir, 'data'), journal: path.join(dir, 'journal', 'statements.jsonl') };
}

export class ServerFleet {
  private readonly running = new Set<TestServer>();

  constructor(tap: { teardown(fn: () => void): void }) {
    tap.teardown(() => {
      for (const server of this.running) if (isAlive(server)) server.child.kill('SIGKILL');
    });
  }

  async start(where: ServerPlace, extra: string[] = []): Promise<TestServer> {
    const server = await startServer(['-dir', where.data, '-log-file', where.journal, ...extra], { cwd: where.dir });
    this.running.add(server);
    return server;
  }

  /** A clean stop; any exit code but 0 is an error that carries the server's stderr. */
  async stop(server: TestServer): Promise<void> {
    const code = await server.stop();
    this.running.delete(server);
    if (code !== 0) throw new Error(`the server stopped with ${code}: ${server.stderr()}`);
  }

  /** SIGKILL, and waits until the process is gone. */
  async kill(server: TestServer): Promise<void> {
    const exited = new Promise((resolve) => (isAlive(server) ? server.child.once('exit', resolve) : resolve(null)));
    server.child.kill('SIGKILL');
    await exited;
    this.running.delete(server);
  }

  /** For a server the test ended its own way. */
  forget(server: TestServer): void {
    this.running.delete(server);
  }
}

function isAlive(server: TestServer): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}
