/**
 * Slow clients cannot hold the class's connections: a request whose headers
 * do not arrive within -header-timeout, or whose body does not arrive within
 * -body-timeout after them, gets 408 and its connection is closed. After a
 * slowloris of twice -max-connections, a normal client is served within
 * 10 s. Loopback only; every socket is closed at the end.
 */
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { sleep, waitFor } from './helpers/wait';

t.setTimeout(60_000);

/** A socket that starts a request and then sends one more header byte every `everyMs`, never finishing. */
function slowloris(port: number, everyMs: number): { socket: net.Socket; closedByServer(): boolean; stop(): void } {
  const socket = net.connect(port, '127.0.0.1');
  let ended = false;
  socket.on('error', () => undefined);
  socket.on('end', () => (ended = true));
  socket.resume();
  socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  const timer = setInterval(() => socket.writable && socket.write('a'), everyMs);
  return { socket, closedByServer: () => ended, stop: () => (clearInterval(timer), socket.destroy()) };
}

t.test('after a slowloris of twice -max-connections a normal client is served within 10 s', async (t) => {
  const dir = scratchDir(t);
  const max = 4;
  const server = await startServer(['-dir', path.join(dir, 'data'), '-max-connections', String(max)], { cwd: dir });
  t.teardown(() => server.stop());
  const port = Number(new URL(server.url).port);
  const attackers = Array.from({ length: 2 * max }, () => slowloris(port, 500));
  t.teardown(() => attackers.forEach((a) => a.stop()));
  await sleep(300);
  const started = Date.now();
  let served = false;
  while (!served && Date.now() - started < 15_000) {
    const reply = await fetch(`${server.url}/health`, { headers: { connection: 'close' } }).catch(() => undefined);
    served = reply?.status === 200;
    if (!served) await sleep(250);
  }
  const waited = Date.now() - started;
  t.ok(served, 'the normal client is served');
  t.ok(
    waited < 10_000,
    `within 10 s (${waited} ms, the attackers' headers time out after -header-timeout, 5 s by default)`,
  );
  await waitFor(() => attackers.every((a) => a.closedByServer()), {
    timeoutMs: 1500,
    what: 'the server to close every slow connection',
  }).catch(() => undefined);
  t.equal(
    attackers.filter((a) => a.closedByServer()).length,
    attackers.length,
    'every slow connection was closed by the server',
  );
});

t.test('a body that does not arrive within -body-timeout gets 408 and the connection closes', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-header-timeout', '1s', '-body-timeout', '1s'], {
    cwd: dir,
  });
  t.teardown(() => server.stop());
  const port = Number(new URL(server.url).port);
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const started = Date.now();
  socket.write(
    'POST /exec HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"db":"x","sql":"SELE',
  );
  await Promise.race([closed, sleep(10_000)]);
  t.match(answer, /^HTTP\/1\.1 408 /, `408 (${answer.split('\r\n')[0]})`);
  t.ok(Date.now() - started < 5_000, `closed within the header and body timeouts (${Date.now() - started} ms)`);
  t.equal((await server.get('/health')).status, 200, 'the server serves on');
});
