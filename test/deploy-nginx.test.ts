/**
 * deploy/nginx/sqlscribe.conf in front of a real server: Debian's
 * nginx, rendered with sed, over HTTPS with a throw-away certificate, and the
 * server started with -trust-proxy 127.0.0.1. Two clients, bound to
 * 127.0.0.2 and 127.0.0.3, go through it: the console keeps its CSP, /exec,
 * a 10 MB import and the service's own JSON 413 pass, the journal's event
 * stream is not held back, the request log names each client, and one
 * client's runaway batches leave the other its engines. Without nginx the
 * file fails, naming the apt-get line; it never skips.
 */
import https from 'node:https';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { boundRequest, type BoundReply } from './helpers/bound-request';
import { nginxPath, renderConf, requireNginx, startNginx, type Proxy } from './helpers/nginx';
import { findChromium, launch } from './helpers/browser';
import { eventually, waitFor } from './helpers/wait';

t.setTimeout(180_000);

const A = '127.0.0.2';
const B = '127.0.0.3';
const MiB = 1024 * 1024;

/** A .sql script of about `bytes` bytes: INSERTs of 1,000 rows each. */
function script(bytes: number): string {
  const row = (i: number): string => `(${i}, '${'x'.repeat(80)}')`;
  const parts = ['CREATE TABLE IF NOT EXISTS bulk (id INTEGER, s TEXT);'];
  let size = parts[0]!.length;
  for (let n = 0; size < bytes && n < 10_000; n++) {
    const statement = `INSERT INTO bulk VALUES ${Array.from({ length: 1000 }, (_, i) => row(n * 1000 + i)).join(', ')};`;
    parts.push(statement);
    size += statement.length + 1;
  }
  return parts.join('\n');
}

/** The -log-json request lines for this path. */
function logLines(server: TestServer, path: string): Array<Record<string, unknown>> {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.path === path);
}

function waitForLog(server: TestServer, path: string, count: number): Promise<Array<Record<string, unknown>>> {
  return waitFor(
    () => {
      const lines = logLines(server, path);
      return lines.length >= count ? lines : undefined;
    },
    { what: `${count} log lines for ${path}`, timeoutMs: 2000, everyMs: 20 },
  );
}

t.test('without nginx the test fails, naming the apt-get line', async (t) => {
  t.throws(() => nginxPath([scratchDir(t)]), { message: /apt-get install -y nginx/ });
});

t.test("the rendered file keeps none of the operator's placeholders", async (t) => {
  const conf = renderConf({
    upstream: '127.0.0.1:1234',
    port: 4321,
    cert: '/tmp/c.pem',
    key: '/tmp/k.pem',
    prefix: '/tmp/p',
  });
  const directives = conf
    .split('\n')
    .map((line) => line.replace(/#.*/, ''))
    .join('\n');
  t.notMatch(directives, /\/var\/lib\/sqlscribe-nginx|\/etc\/ssl|:8080|listen 443/);
  t.match(conf, /server 127\.0\.0\.1:1234;/);
  t.match(conf, /listen 127\.0\.0\.1:4321 ssl;/);
});

let missing: string | null = null;
try {
  requireNginx();
} catch (error) {
  missing = (error as Error).message;
}

if (missing !== null) {
  t.fail(missing);
} else {
  t.test('behind nginx', async (t) => {
    const dir = scratchDir(t);
    const server = await startServer(
      [
        '-dir',
        path.join(dir, 'data'),
        '-log-json',
        '-trust-proxy',
        '127.0.0.1',
        '-journal-feed',
        '-max-import-bytes',
        '12M',
        '-request-timeout',
        '3s',
        '-query-timeout',
        '20s',
      ],
      { cwd: dir },
    );
    t.teardown(() => server.stop());
    const proxy = await startNginx(t, new URL(server.url).host);
    const through = (p: string, options: Parameters<typeof boundRequest>[1] = {}): Promise<BoundReply> =>
      boundRequest(`${proxy.url}${p}`, { ca: proxy.cert, ...options });
    const execFrom = (from: string, db: string, sql: string): Promise<BoundReply> =>
      through('/exec', {
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ db, sql }),
      });
    t.equal((await server.post('/dbs', { db: 'school' })).status, 201, 'setup: a database');

    t.test('/exec answers over HTTPS, and the log names each client', async (t) => {
      const a = await execFrom(A, 'school', 'CREATE TABLE t (x INT)');
      t.equal(a.status, 200, a.text);
      const b = await execFrom(B, 'school', 'INSERT INTO t VALUES (1)');
      t.equal(b.status, 200, b.text);
      const lines = await waitForLog(server, '/exec', 2);
      t.same(
        lines.slice(-2).map((line) => [line.addr, line.proto]),
        [
          [A, 'https'],
          [B, 'https'],
        ],
      );
    });

    t.test('a forged X-Forwarded-For is ignored, through nginx and directly', async (t) => {
      const forged = { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.10' };
      t.equal((await through('/forged-through', { localAddress: A, headers: forged })).status, 404);
      t.equal(
        (await waitForLog(server, '/forged-through', 1))[0]?.addr,
        A,
        'nginx appends the address it saw, which wins',
      );
      t.equal((await boundRequest(`${server.url}/forged-direct`, { localAddress: B, headers: forged })).status, 404);
      t.equal(
        (await waitForLog(server, '/forged-direct', 1))[0]?.addr,
        B,
        'a peer that is not the proxy is not believed',
      );
    });

    t.test("a 10 MB import passes; one over -max-import-bytes gets the service's JSON 413", async (t) => {
      const body = script(10 * MiB);
      t.ok(body.length >= 10 * MiB, `${(body.length / MiB).toFixed(1)} MB`);
      const ok = await through('/dbs/school/import', {
        method: 'POST',
        localAddress: A,
        headers: { 'content-type': 'application/sql' },
        body,
        timeoutMs: 120_000,
      });
      t.equal(ok.status, 200, ok.text.slice(0, 300));
      t.equal(ok.body?.format, 'sql');
      const big = await through('/dbs/school/import', {
        method: 'POST',
        localAddress: A,
        headers: { 'content-type': 'application/sql' },
        body: script(13 * MiB),
        timeoutMs: 120_000,
      });
      t.equal(big.status, 413);
      t.match(big.headers['content-type'], /^application\/json/, "JSON, not nginx's page");
      t.equal(big.body?.code, 6050);
    });

    t.test("the journal's event stream delivers a new failure within a second", async (t) => {
      const events: Array<{ at: number; data: string }> = [];
      const req = https.request(`${proxy.url}/journal?failed=true&since=999999999`, {
        ca: proxy.cert,
        servername: 'localhost',
        localAddress: B,
        agent: false,
        headers: { accept: 'text/event-stream' },
      });
      const opened = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const data = block
                .split('\n')
                .filter((line) => line.startsWith('data:'))
                .map((line) => line.slice(5).trim())
                .join('');
              if (data !== '') events.push({ at: Date.now(), data });
            }
          });
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
      });
      t.teardown(() => void req.destroy());
      req.end();
      t.equal(await opened, 200, 'the stream opens');
      const failed = await execFrom(A, 'school', 'SELECT * FROM no_such_table_zq');
      t.equal(failed.status, 400, 'setup: a failure');
      const sent = Date.now();
      await eventually(() => events.some((event) => event.data.includes('no_such_table_zq')), 2000, 20);
      const event = events.find((candidate) => candidate.data.includes('no_such_table_zq'));
      t.ok(
        event !== undefined && event.at - sent < 1000,
        `the failure arrived ${event === undefined ? 'never' : `${event.at - sent} ms after its answer`}`,
      );
    });

    t.test('four runaway clients from one address leave the other address its reads', async (t) => {
      const SLOW =
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000000) SELECT count(*) FROM c';
      const RUNAWAY = Array.from({ length: 200 }, () => SLOW).join(';\n');
      const endMs = Date.now() + 4000;
      const loop = async (from: string, sql: string): Promise<Array<{ status: number; ms: number; code: unknown }>> => {
        const outcomes = [];
        for (let i = 0; i < 1000 && Date.now() < endMs; i++) {
          const started = Date.now();
          const reply = await execFrom(from, 'school', sql);
          outcomes.push({ status: reply.status, ms: Date.now() - started, code: reply.body?.code });
        }
        return outcomes;
      };
      const runaway = Array.from({ length: 4 }, () => loop(A, RUNAWAY));
      const reads = await Promise.all(Array.from({ length: 2 }, () => loop(B, 'SELECT count(*), sum(x) FROM t')));
      const runawayOutcomes = (await Promise.all(runaway)).flat();
      t.same(
        runawayOutcomes.filter((outcome) => outcome.code !== 6010 && outcome.code !== 6011),
        [],
        'the runaway batches end at their deadline',
      );
      const all = reads.flat();
      t.same(
        all.filter((outcome) => outcome.status !== 200),
        [],
        `every one of ${all.length} reads from ${B} was served`,
      );
      t.ok(all.length >= 10, 'and they kept being served');
      const sorted = all.map((outcome) => outcome.ms).sort((x, y) => x - y);
      t.comment(
        `reads behind nginx beside four runaway clients: median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms`,
      );
    });

    t.test('the console loads in Chromium over HTTPS with its CSP intact', async (t) => {
      const chromium = findChromium();
      if (chromium === undefined) {
        t.fail('chromium is missing: apt-get update && apt-get install -y chromium');
        return;
      }
      await consoleOverHttps(t, chromium, proxy);
    });
  });
}

async function consoleOverHttps(t: Test, executablePath: string, proxy: Proxy): Promise<void> {
  const context = await launch(t, executablePath, ['--ignore-certificate-errors']);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.exposeFunction('reportCsp', (what: string) => problems.push(`CSP: ${what}`));
  await page.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (event) =>
      (window as unknown as { reportCsp(s: string): void }).reportCsp(`${event.violatedDirective} ${event.blockedURI}`),
    ),
  );
  const response = await page.goto(`${proxy.url}/`);
  t.equal(response?.status(), 200);
  t.match(response?.headers()['content-security-policy'], /script-src/, 'the CSP header passes nginx');
  await page.waitForSelector('body[data-ready="true"]');
  t.equal(new URL(page.url()).protocol, 'https:');
  t.same(problems, [], 'no script error and no CSP violation');
}
