/**
 * -trust-proxy over real HTTP: the client address in the request log and
 * the refusal trace is the peer's unless the peer is a trusted proxy; forged
 * Forwarded / X-Forwarded-For from anyone else are ignored.
 */
import t, { type Test } from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { boundRequest } from './helpers/bound-request';
import { waitFor } from './helpers/wait';

const TOKEN = 'trust-proxy-admin';
const FORGED = { 'x-forwarded-for': '203.0.113.66', forwarded: 'for=203.0.113.77', 'x-forwarded-proto': 'https' };

/** The JSON lines a stream holds for this path, waited for (bounded). */
function linesFor(read: () => string, path: string): Promise<Array<Record<string, unknown>>> {
  return waitFor(
    () => {
      const found = read()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.path === path);
      return found.length > 0 ? found : undefined;
    },
    { what: `a log line for ${path}`, timeoutMs: 2000, everyMs: 20 },
  );
}

async function serve(tt: Test, args: string[]): Promise<TestServer> {
  const server = await startServer(['-dir', 'data', '-log-json', '-token', TOKEN, ...args], { cwd: scratchDir(tt) });
  tt.teardown(() => server.stop());
  return server;
}

t.test('without -trust-proxy, forged headers change nothing', async (t) => {
  const server = await serve(t, []);
  const reply = await boundRequest(`${server.url}/untrusted-a`, { headers: { ...FORGED, 'x-service-token': TOKEN } });
  t.equal(reply.status, 404);
  const [line] = await linesFor(server.stdout, '/untrusted-a');
  t.equal(line?.addr, '127.0.0.1', 'the peer address stands');
  t.equal(line?.proto, 'http', "and the scheme is the server's own");
  await boundRequest(`${server.url}/dbs`, { headers: { ...FORGED, 'x-service-token': 'wrong' } });
  const [refused] = await linesFor(server.stderr, '/dbs');
  t.equal(refused?.client, '127.0.0.1', 'the refusal names the peer');
});

t.test('with -trust-proxy 127.0.0.1', async (t) => {
  const server = await serve(t, ['-trust-proxy', '127.0.0.1']);

  t.test('believes the trusted proxy, taking its right-most untrusted hop', async (t) => {
    const headers = {
      'x-forwarded-for': '198.51.100.1, 203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-service-token': TOKEN,
    };
    await boundRequest(`${server.url}/via-proxy`, { headers, localAddress: '127.0.0.1' });
    const [line] = await linesFor(server.stdout, '/via-proxy');
    t.equal(line?.addr, '203.0.113.9');
    t.equal(line?.proto, 'https');
    await boundRequest(`${server.url}/via-forwarded`, {
      headers: { forwarded: 'for="[2001:db8::7]:4711";proto=https', 'x-service-token': TOKEN },
      localAddress: '127.0.0.1',
    });
    t.equal((await linesFor(server.stdout, '/via-forwarded'))[0]?.addr, '2001:db8::7', 'RFC 7239 Forwarded, IPv6');
  });

  t.test('ignores forged headers from a peer that is not the proxy', async (t) => {
    await boundRequest(`${server.url}/forged`, {
      headers: { ...FORGED, 'x-service-token': TOKEN },
      localAddress: '127.0.0.2',
    });
    const [line] = await linesFor(server.stdout, '/forged');
    t.equal(line?.addr, '127.0.0.2');
    t.equal(line?.proto, 'http');
  });

  t.test('the refusal trace names the same client', async (t) => {
    await boundRequest(`${server.url}/tokens`, {
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-service-token': 'wrong' },
      localAddress: '127.0.0.1',
    });
    t.equal((await linesFor(server.stderr, '/tokens'))[0]?.client, '203.0.113.9');
    await boundRequest(`${server.url}/pilots`, {
      headers: { ...FORGED, 'x-service-token': 'wrong' },
      localAddress: '127.0.0.3',
    });
    t.equal((await linesFor(server.stderr, '/pilots'))[0]?.client, '127.0.0.3');
  });
});

t.test('refuses a bad -trust-proxy at start-up', async (t) => {
  await t.rejects(
    startServer(['-dir', 'data', '-trust-proxy', 'proxy.example'], { cwd: scratchDir(t) }),
    /-trust-proxy/,
  );
});
