/**
 * A body refused before it was read (413) is answered, and the client reads
 * that answer: the server reads and throws away the rest of the body before it
 * closes, instead of resetting a client that is still sending.
 */
import http from 'node:http';
import t, { type Test } from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

interface Outcome {
  status?: number;
  body?: { code?: number };
  /** The error the client met before it had read the whole answer, if any. */
  error?: string;
}

function drainedOrClosed(req: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/** Streams `bytes` of spaces (with or without a Content-Length) and reads the answer. */
function streamBody(
  server: TestServer,
  path: string,
  type: string,
  bytes: number,
  announce: boolean,
): Promise<Outcome> {
  const { hostname, port } = new URL(server.url);
  const headers: Record<string, string | number> = { 'content-type': type };
  if (announce) headers['content-length'] = bytes;
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const req = http.request({ hostname, port, path, method: 'POST', headers, agent: false }, (res) => {
      outcome.status = res.statusCode;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          outcome.body = JSON.parse(text);
        } catch {
          outcome.error = `not JSON: ${text.slice(0, 80)}`;
        }
        resolve(outcome);
      });
      res.on('error', (error) => resolve({ ...outcome, error: String(error) }));
    });
    req.on('error', (error) => {
      if (outcome.body === undefined)
        resolve({ ...outcome, error: (error as NodeJS.ErrnoException).code ?? String(error) });
    });
    void (async () => {
      for (let sent = 0; sent < bytes && !req.destroyed; sent += CHUNK.length) {
        if (!req.write(CHUNK.subarray(0, Math.min(CHUNK.length, bytes - sent)))) await drainedOrClosed(req);
      }
      req.end();
    })();
  });
}

async function tenTries(tt: Test, send: (announce: boolean) => Promise<Outcome>, code: number): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const announce = i % 2 === 0;
    const outcome = await send(announce);
    const seen = { status: outcome.status, code: outcome.body?.code, error: outcome.error ?? 'none' };
    tt.strictSame(
      seen,
      { status: 413, code, error: 'none' },
      `try ${i + 1} (${announce ? 'Content-Length' : 'chunked'}): the client read 413 [SQ${code}]`,
    );
  }
}

t.test('a refused body: the client reads the 413 every time', async (tt) => {
  const cwd = scratchDir(tt);
  const server = await startServer(['-dir', 'data', '-max-import-bytes', '1M'], { cwd });
  tt.teardown(() => server.stop());
  tt.equal((await server.post('/dbs', { db: 'school' })).status, 201, 'setup: a database');

  // The body is JSON-shaped only in its type: the server refuses it by size before parsing.
  const exec = (announce: boolean): Promise<Outcome> =>
    streamBody(server, '/exec', 'application/json', 5 * 1024 * 1024, announce);
  await tenTries(tt, exec, 6002);
  const imported = (announce: boolean): Promise<Outcome> =>
    streamBody(server, '/dbs/school/import', 'application/sql', 5 * 1024 * 1024, announce);
  await tenTries(tt, imported, 6050);
  tt.equal((await server.get('/health')).status, 200, 'the server still serves');
});
