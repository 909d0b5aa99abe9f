/**
 * The -max-connections ceiling under load: connections over
 * the ceiling get 503 (6003) with a JSON body, the admitted ones are served
 * normally, and once connections close a burst over the ceiling's worth of
 * keep-alive connections is served in full. Only 127.0.0.1; every loop is
 * bounded.
 *
 * All HTTP here goes through node:http with agents this file controls, so that
 * no pooled connection of the harness's fetch takes a slot of the ceiling.
 */
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { openServerConnections, readJson } from './helpers/clients';
import { scratchDir } from './helpers/scratch-dir';
import { sleep, waitFor } from './helpers/wait';

t.setTimeout(120_000);

const MAX = 8;

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
  /** The local port of the connection that carried the request. */
  localPort: number | undefined;
}

/** One request on `agent` (or a fresh connection that closes when agent is false). */
function request(
  url: string,
  method: string,
  pathAndQuery: string,
  agent: http.Agent | false,
  body?: unknown,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const target = new URL(pathAndQuery, url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: http.OutgoingHttpHeaders = payload
      ? { 'content-type': 'application/json', 'content-length': payload.length }
      : {};
    if (agent === false) headers.connection = 'close';
    const req = http.request(
      { host: '127.0.0.1', port: target.port, path: target.pathname + target.search, method, agent, headers },
      (res) => {
        readJson(res).then(
          ({ text, body }) =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              body,
              localPort: req.socket?.localPort,
            }),
          reject,
        );
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

async function ownServer(tt: Test, args: string[]): Promise<TestServer> {
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), ...args], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
  });
  return server;
}

/** Settles every promise, so that one failure does not hide the others. */
async function settle<T>(
  promises: Array<Promise<T>>,
): Promise<Array<{ ok: true; value: T } | { ok: false; error: Error }>> {
  const settled = await Promise.allSettled(promises);
  return settled.map((s) =>
    s.status === 'fulfilled' ? { ok: true as const, value: s.value } : { ok: false as const, error: s.reason as Error },
  );
}

t.test('answers connections over -max-connections with 503 and serves the others', async (tt) => {
  const server = await ownServer(tt, ['-max-connections', String(MAX)]);
  // Setup on connections that close at once, so they hold no slot afterwards.
  const created = await request(server.url, 'POST', '/dbs', false, { db: 'load' });
  tt.equal(created.status, 201, created.text);
  const setup = await request(server.url, 'POST', '/exec', false, {
    db: 'load',
    sql: 'CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 10), (2, 20)',
  });
  tt.equal(setup.status, 200, setup.text);
  await waitFor(() => openServerConnections(server) === 0, {
    timeoutMs: 300,
    what: 'the server to close the setup connections',
  }).catch(() => undefined);

  // 20 keep-alive connections at once, one request each.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  const sockets: import('node:net').Socket[] = [];
  agent.on('free', (socket) => {
    if (!sockets.includes(socket)) sockets.push(socket);
  });
  const results = await settle(
    Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? request(server.url, 'GET', '/health', agent)
        : request(server.url, 'POST', '/exec', agent, { db: 'load', sql: 'SELECT v FROM t WHERE id = 1' }),
    ),
  );
  const failed = results.filter((r) => !r.ok);
  tt.strictSame(
    failed.map((r) => (r.ok ? '' : r.error.message)),
    [],
    'no request failed at the socket level',
  );
  const replies = results.flatMap((r) => (r.ok ? [r.value] : []));
  const admitted = replies.filter((r) => r.status === 200);
  const refused = replies.filter((r) => r.status === 503);
  // Under pressure an admitted connection closes after its answer (fair share), so a later one of
  // the twenty may take its slot: at least MAX are served, and the rest are refused.
  tt.ok(admitted.length >= MAX, `at least ${MAX} connections were served (${admitted.length})`);
  tt.ok(refused.length >= 1, `the others got 503 (${refused.length})`);
  tt.equal(admitted.length + refused.length, 20, 'no other status');
  for (const reply of refused) {
    tt.equal(reply.body?.ok, false, '503: ok false');
    tt.equal(reply.body?.code, 6003, '503: code 6003');
    tt.ok(String(reply.body?.error).startsWith('[SQ6003]'), '503: error text');
    tt.match(String(reply.headers['content-type']), /^application\/json/, '503: JSON content type');
  }
  for (const reply of admitted) {
    tt.equal(reply.body?.ok, true, 'admitted: ok true');
    if (reply.body?.results) tt.strictSame(reply.body.results[0].rows, [[10]], 'admitted: the row');
  }
  const admittedPorts = new Set(admitted.map((r) => r.localPort));
  tt.equal(admittedPorts.size, admitted.length, 'the admitted requests came over distinct connections');

  // The admitted connections stay usable: a second request on each is served.
  const again = await settle(Array.from({ length: MAX }, () => request(server.url, 'GET', '/health', agent)));
  tt.ok(
    again.every((r) => r.ok && r.value.status === 200),
    `a second round on the kept-alive connections is served: ${JSON.stringify(again.map((r) => (r.ok ? r.value.status : r.error.message)))}`,
  );

  // Close everything, and let the server leave its pressure mode.
  agent.destroy();
  await sleep(1000); // past the server's one-second pressure window after its last refusal, so the burst keeps its connections

  // A burst of 200 requests over 8 keep-alive connections.
  const burstAgent = new http.Agent({ keepAlive: true, maxSockets: MAX });
  const started = Date.now();
  const burst = await settle(
    Array.from({ length: 200 }, (_, i) => {
      switch (i % 4) {
        case 0:
          return request(server.url, 'GET', '/health', burstAgent);
        case 1:
          return request(server.url, 'POST', '/exec', burstAgent, {
            db: 'load',
            sql: 'SELECT v FROM t WHERE id = ?',
            params: [(i % 2) + 1],
          });
        case 2:
          return request(server.url, 'POST', '/exec', burstAgent, {
            db: 'load',
            sql: 'INSERT INTO t VALUES (?, ?)',
            params: [1000 + i, i],
          });
        default:
          return request(server.url, 'GET', '/rows?db=load&table=t&limit=5', burstAgent);
      }
    }),
  );
  const took = Date.now() - started;
  const bad = burst.filter((r) => !r.ok || (r.value.status !== 200 && r.value.status !== 201));
  tt.strictSame(
    bad.map((r) => (r.ok ? `${r.value.status} ${r.value.text.slice(0, 120)}` : r.error.message)),
    [],
    `all 200 requests of the burst succeeded (${took} ms)`,
  );
  const ports = new Set(burst.flatMap((r) => (r.ok ? [r.value.localPort] : [])));
  tt.ok(ports.size <= MAX, `the burst used at most ${MAX} connections (${ports.size})`);
  burstAgent.destroy();
  await waitFor(() => openServerConnections(server) === 0, {
    timeoutMs: 1000,
    what: 'the server to close the burst connections',
  }).catch(() => undefined);

  const count = await request(server.url, 'POST', '/exec', false, { db: 'load', sql: 'SELECT count(*) FROM t' });
  tt.strictSame(
    count.body?.results?.[0]?.rows,
    [[52]],
    `every insert of the burst was committed: ${count.text.slice(0, 200)}`,
  );
  const metrics = await request(server.url, 'GET', '/metrics', false);
  tt.equal(
    metrics.body?.requests_by_status?.['503'],
    refused.length,
    `metrics counted the refused requests: ${metrics.text.slice(0, 300)}`,
  );
});
