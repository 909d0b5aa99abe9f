/**
 * Only server faults page anyone: a 4xx or a 503 leaves no stack trace on
 * stderr and does not move faults_total (JSON or Prometheus); a 503 still
 * counts in errors_total, which is every 5xx. A real 500 is logged with its
 * stack, counted in both, and hidden from the client.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Context } from 'koa';
import t from 'tap';
import { EngineError } from '../src/errors';
import { errorHandler } from '../src/http/bookkeeping/error-handler';
import { Metrics } from '../src/http/metrics';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { getOver } from './helpers/agent-request';

t.setTimeout(120_000);

const STACK_TEXT = /\n\s*at\s|\bat\s+\S+\s+\(|\.(?:js|ts|mjs|cjs):\d+/;

/** The value of an unlabelled Prometheus sample, e.g. `sqlscribe_errors_total 0`; NaN when there is none. */
function sample(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match === null ? NaN : Number(match[1]);
}

async function faults(
  server: TestServer,
): Promise<{ errors: number; faults: number; errorsProm: number; faultsProm: number }> {
  const json = (await server.get('/metrics')).body;
  const prometheus = (await server.get('/metrics?format=prometheus')).text;
  return {
    errors: json?.errors_total,
    faults: json?.faults_total,
    errorsProm: sample(prometheus, 'sqlscribe_errors_total'),
    faultsProm: sample(prometheus, 'sqlscribe_faults_total'),
  };
}

t.test('4xx answers leave stderr quiet and the counters still; a 500 is logged and counted', async (tt) => {
  const cwd = scratchDir(tt);
  const server = await startServer(['-dir', 'data'], { cwd });
  tt.teardown(() => server.stop());
  const before = await faults(server);
  const stderrBefore = server.stderr();
  const json = { 'content-type': 'application/json' };
  const clientErrors = [
    await server.request('POST', '/exec', { rawBody: '{nope', headers: json }),
    await server.request('POST', '/exec', { rawBody: '{"__proto__":{},"sql":"SELECT 1"}', headers: json }),
    await server.request('POST', '/exec', { rawBody: '{"sql":"SELECT 1"}', headers: { 'content-type': 'text/plain' } }),
    await server.get('/no-such-endpoint'),
    await server.get('/tables?db=missing'),
    await server.exec(undefined, 'SELEC nonsense'),
  ];
  for (const reply of clientErrors)
    tt.ok(reply.status >= 400 && reply.status < 500, `a client error: ${reply.status} ${reply.text.slice(0, 120)}`);
  tt.strictSame(await faults(server), before, 'errors_total and faults_total did not move, in JSON or Prometheus');
  tt.equal(server.stderr(), stderrBefore, 'nothing was written to stderr');

  // A file that is not a SQLite database: acting on it is a storage fault (500).
  fs.writeFileSync(path.join(cwd, 'data', 'broken.db'), Buffer.alloc(4096, 0x5a));
  const failed = await server.get('/tables?db=broken');
  tt.equal(failed.status, 500, 'a corrupt database is a server fault');
  tt.notMatch(failed.text, STACK_TEXT, 'the client sees no stack');
  const after = await faults(server);
  const plusOne = {
    errors: before.errors + 1,
    faults: before.faults + 1,
    errorsProm: before.errorsProm + 1,
    faultsProm: before.faultsProm + 1,
  };
  tt.strictSame(after, plusOne, 'the 500 counts in errors_total and faults_total');
  tt.match(
    server.stderr().slice(stderrBefore.length),
    /GET \/tables failed: .*\n\s+at /,
    'and is logged with its stack',
  );
  const classes = (await server.get('/metrics?format=prometheus')).text;
  tt.match(classes, /^sqlscribe_http_responses_total\{class="4xx"\} \d+$/m, 'responses are counted by class');
  tt.match(
    classes,
    /^sqlscribe_commands_total\{command="exec",outcome="class1"\} [1-9]\d*$/m,
    'the bus counts the refused batch by its error class (a syntax error: class 1)',
  );
  tt.match(
    classes,
    /^sqlscribe_commands_total\{command="list-tables",outcome="class9"\} 1$/m,
    'and the storage fault by its own',
  );
  tt.match(classes, /^sqlscribe_command_duration_seconds_count\{command="exec"\} [1-9]\d*$/m, 'and times each command');
});

t.test('503s for overload leave stderr quiet and faults_total still, and count in errors_total', async (tt) => {
  const cwd = scratchDir(tt);
  const server = await startServer(['-dir', 'data', '-max-connections', '1'], { cwd });
  const held = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const extra = [
    new http.Agent({ keepAlive: true, maxSockets: 1 }),
    new http.Agent({ keepAlive: true, maxSockets: 1 }),
  ];
  tt.teardown(async () => {
    for (const agent of [held, ...extra]) agent.destroy();
    await server.stop();
  });
  tt.equal((await getOver(held, server.url, '/health')).status, 200, 'the one admitted connection');
  const stderrBefore = server.stderr();
  for (const agent of extra)
    tt.equal((await getOver(agent, server.url, '/health')).status, 503, 'a connection over the ceiling gets 503');
  const metrics = JSON.parse((await getOver(held, server.url, '/metrics')).text);
  tt.equal(metrics.requests_by_status['503'], 2, 'the 503s are counted by status');
  tt.equal(metrics.errors_total, 2, 'and in errors_total, which is every 5xx');
  tt.equal(metrics.faults_total, 0, 'but not as server faults');
  tt.equal(server.stderr(), stderrBefore, 'nothing was written to stderr');
});

/** Just enough of a Koa context for the error handler. */
function fakeContext(): Context & { sent: { status?: number; body?: string; headers: Record<string, string> } } {
  const sent: { status?: number; body?: string; headers: Record<string, string> } = { headers: {} };
  return {
    method: 'POST',
    path: '/exec',
    state: {},
    sent,
    set(name: string, value: string) {
      sent.headers[name] = value;
    },
    set status(value: number) {
      sent.status = value;
    },
    set type(_value: string) {},
    set body(value: string) {
      sent.body = value;
    },
  } as unknown as Context & { sent: typeof sent };
}

/** Runs the error handler over a middleware that throws `error`; returns the response and what went to stderr. */
async function handle(error: unknown): Promise<{ status?: number; body?: string; stderr: string }> {
  const ctx = fakeContext();
  const writes: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => writes.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    await errorHandler(1024)(ctx, async () => {
      throw error;
    });
  } finally {
    process.stderr.write = write;
  }
  return { status: ctx.sent.status, body: ctx.sent.body, stderr: writes.join('') };
}

t.test('the error handler: which errors reach stderr', async (tt) => {
  const unexpected = await handle(new TypeError('cannot read properties of undefined (reading "rows")'));
  tt.equal(unexpected.status, 500, 'an unexpected exception is a 500');
  tt.match(
    unexpected.stderr,
    /POST \/exec failed: TypeError: cannot read properties.*\n\s+at /,
    'logged with its stack',
  );
  tt.notMatch(unexpected.body, /TypeError|reading|\bat\s/, 'the client sees none of it');
  tt.match(unexpected.body, /\[SQ9001\] internal error/);

  for (const name of ['NOT_READY', 'TOO_MANY_CONNECTIONS', 'JOURNAL_UNAVAILABLE', 'DATABASE_BEHIND'] as const) {
    const answered = await handle(
      new EngineError(
        name,
        { reason: 'disk', outcome: 'nothing was written', db: 'x', max: 1 },
        { cause: new Error('EIO') },
      ),
    );
    tt.equal(answered.status, 503, `${name} is a 503`);
    tt.equal(answered.stderr, '', `${name} is not logged`);
  }
  for (const error of [
    new EngineError('BAD_REQUEST', { detail: 'x' }),
    Object.assign(new SyntaxError('Unexpected token'), { status: 400 }),
  ]) {
    const answered = await handle(error);
    tt.equal(answered.status, 400, `${error.message}: a 400`);
    tt.equal(answered.stderr, '', `${error.message}: not logged`);
  }
});

t.test('Metrics: errors_total counts every 5xx, faults_total those other than 503', async (tt) => {
  const metrics = new Metrics();
  for (const status of [200, 400, 404, 413, 503, 503, 500, 507]) metrics.observe(status, 1);
  tt.equal(metrics.snapshot().errors_total, 4, 'the two 503s, the 500 and the 507');
  tt.equal(metrics.snapshot().faults_total, 2, 'the 500 and the 507 only');
  const text = await metrics.prometheus();
  tt.equal(sample(text, 'sqlscribe_errors_total'), 4, 'the same in Prometheus');
  tt.equal(sample(text, 'sqlscribe_faults_total'), 2, 'both');
  tt.match(text, /^sqlscribe_http_responses_total\{class="5xx"\} 4$/m, 'the class counter keeps all four 5xx');
});
