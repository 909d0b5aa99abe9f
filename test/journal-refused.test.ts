/**
 * The audit trail of refused requests, over the real server (build first): a
 * student's 403 on a classmate's database, a 401 and a statement refused as
 * hostile ([SQ1003]) each appear, with the student's name, the client's
 * address, the database and the code, in the request log (stderr, JSON with
 * -log-json, text without; the stdout request line stays transport only), in
 * the journal as a `refused` entry at level all and not at level mod, in
 * sqlscribe_refused_total, and in GET /class. Replay and crash recovery pass
 * (at start-up) pass over refused entries, even one naming a database that
 * never existed.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { Context } from 'koa';
import { EngineError } from '../src/errors';
import { Metrics } from '../src/http/metrics';
import { requestLog } from '../src/http/bookkeeping/request-log';
import { Refusals, type Refusal } from '../src/services/refusals';
import { WritePath } from '../src/services/writes/write-path';
import { isError } from './helpers/assertions';
import { sleep } from './helpers/wait';
import { FakeJournal } from './helpers/fake-journal';
import { runReplay, runTail, startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

/* eslint-disable @typescript-eslint/no-explicit-any -- journal entries and log lines are JSON */

const ADMIN = 'audit-admin-0123456789';
const admin = { 'X-Service-Token': ADMIN };

interface Classroom {
  server: TestServer;
  dir: string;
  as(name: string): Record<string, string>;
}

async function classroom(tt: Test, level: 'all' | 'mod', extra: string[] = []): Promise<Classroom> {
  const dir = scratchDir(tt);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-token', ADMIN, '-log-level', level, ...extra], {
    cwd: dir,
  });
  tt.teardown(() => server.stop());
  const made = await server.post('/tokens', { prefix: 'alumno', count: 6, role: 'write' }, admin);
  tt.equal(made.status, 201, 'a class of six');
  const secrets = new Map<string, string>(
    (made.body.tokens as Array<{ name: string; secret: string }>).map((token) => [token.name, token.secret]),
  );
  return { server, dir, as: (name) => ({ 'X-Service-Token': secrets.get(name) ?? '' }) };
}

/** alumno-05 reaches for alumno-06's database. */
async function probeClassmate(tt: Test, room: Classroom): Promise<void> {
  const reply = await room.server.post(
    '/exec',
    { db: 'alumno-06', sql: 'SELECT * FROM sqlite_master' },
    room.as('alumno-05'),
  );
  isError(tt, reply, 403, 1031, "a classmate's database");
}

/** The entries of the journal, read by the admin (bounded wait for the refused entries to be durable). */
async function journalEntries(server: TestServer, until: (entries: any[]) => boolean): Promise<any[]> {
  let entries: any[] = [];
  for (let tries = 0; tries < 100; tries++) {
    const reply = await server.get('/journal', admin);
    entries =
      reply.text === ''
        ? []
        : reply.text
            .trimEnd()
            .split('\n')
            .map((line) => JSON.parse(line));
    if (until(entries)) return entries;
    await sleep(50);
  }
  return entries;
}

/** The server's stderr once it holds `count` lines matching `pattern` (the pipe may lag behind the answer). */
async function stderrWith(server: TestServer, pattern: RegExp, count = 1): Promise<string> {
  for (let tries = 0; tries < 100; tries++) {
    if (
      server
        .stderr()
        .split('\n')
        .filter((line) => pattern.test(line)).length >= count
    )
      break;
    await sleep(20);
  }
  return server.stderr();
}

function refusedCount(metrics: string, code: number): number {
  const match = new RegExp(`^sqlscribe_refused_total\\{code="${code}"\\} (\\d+)$`, 'm').exec(metrics);
  return Number(match?.[1] ?? 0);
}

t.test("at level all: a student's 403, a 401 and a hostile statement, everywhere the audit trail goes", async (tt) => {
  const room = await classroom(tt, 'all', ['-log-json']);
  const { server } = room;
  await probeClassmate(tt, room);
  isError(tt, await server.get('/dbs', { 'X-Service-Token': 'not-a-token' }), 401, 1012, 'a wrong token');
  isError(
    tt,
    await server.post('/exec', { db: 'alumno-05', sql: "ATTACH DATABASE 'x.db' AS x" }, room.as('alumno-05')),
    400,
    1003,
    'a hostile statement',
  );
  isError(
    tt,
    await server.post('/exec', { db: 'fantasma', sql: 'CREATE TABLE t (id INT)' }, room.as('alumno-05')),
    403,
    1031,
    'a database that does not exist',
  );

  const logged = (await stderrWith(server, /"event":"refused"/, 4))
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const probe = logged.find((line) => line.event === 'refused' && line.code === 1031 && line.db === 'alumno-06.db');
  tt.ok(probe, 'the request log (stderr, JSON with -log-json) has the 403');
  tt.equal(probe?.token, 'alumno-05', "with the student's name");
  tt.match(probe?.client, /127\.0\.0\.1/, "and the client's address");
  tt.same([probe?.status, probe?.method, probe?.path], [403, 'POST', '/exec']);
  tt.ok(Number.isInteger(probe?.ts_unix), 'and the time');
  tt.ok(
    logged.some((line) => line.event === 'refused' && line.code === 1012 && line.token === null),
    'the 401, without a token name',
  );
  tt.ok(
    logged.some(
      (line) =>
        line.event === 'refused' && line.code === 1003 && line.token === 'alumno-05' && line.db === 'alumno-05.db',
    ),
    'the hostile statement',
  );
  const out = server.stdout();
  const requestLines = out
    .slice(0, out.lastIndexOf('\n'))
    .split('\n')
    .map((line) => JSON.parse(line));
  tt.ok(
    requestLines.every(
      (line) => Object.keys(line).sort().join() === 'addr,latency_ms,method,path,proto,status,ts_unix',
    ),
    'the stdout request line stays transport only',
  );

  const entries = await journalEntries(server, (all) => all.filter((e) => e.kind === 'refused').length >= 4);
  const refused = entries.filter((entry) => entry.kind === 'refused');
  const entry = refused.find((e) => e.code === 1031 && e.db === 'alumno-06.db');
  tt.ok(entry, 'the journal has a refused entry for the 403');
  tt.same(
    [entry?.tokenName, entry?.ok, entry?.class, entry?.request, entry?.session, entry?.sql],
    ['alumno-05', false, 1, 'POST /exec', null, null],
    "with the student's name, the code's class and the request",
  );
  tt.match(entry?.client, /127\.0\.0\.1/, 'and the client');
  tt.ok(
    refused.some((e) => e.code === 1012 && e.tokenName === undefined && e.request === 'GET /dbs'),
    'the 401',
  );
  tt.ok(
    refused.some((e) => e.code === 1003 && e.tokenName === 'alumno-05'),
    'the hostile statement',
  );
  tt.ok(
    entries.some((e) => e.kind === 'exec' && e.code === 1003),
    'which is journaled as the failed batch it is, too',
  );
  const byStudent = (await server.get('/journal?token=alumno-05&failed=true', admin)).text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  tt.ok(
    byStudent.some((e) => e.kind === 'refused' && e.code === 1031),
    'the feed selects them by token name',
  );

  const metrics = (await server.get('/metrics?format=prometheus', admin)).text;
  tt.equal(refusedCount(metrics, 1031), 2, 'sqlscribe_refused_total{code="1031"}');
  tt.equal(refusedCount(metrics, 1012), 1, 'sqlscribe_refused_total{code="1012"}');
  tt.equal(refusedCount(metrics, 1003), 1, 'sqlscribe_refused_total{code="1003"}');
  tt.notMatch(metrics, /sqlscribe_journal_failed_total\{class="1",code="1031"\}/, 'a refusal is no failed batch');

  const view = await server.get('/class', admin);
  tt.equal(view.status, 200);
  const seen = (view.body.refused as any[]).find((r) => r.code === 1031 && r.db === 'alumno-06.db');
  tt.ok(seen, 'the class view lists the 403');
  tt.equal(seen?.tokenName, 'alumno-05', "under the student's name");
  tt.equal(view.body.refused[0].db, 'fantasma.db', 'newest first');
  const classmate = (view.body.databases as any[]).find((d) => d.db === 'alumno-06.db');
  tt.same(classmate?.recentErrors, [], "and not as an error of the classmate's database");

  await server.stop();
  const replayed = await runReplay(
    [
      '-log-file',
      path.join(room.dir, 'data/journal/statements.jsonl'),
      '-out',
      path.join(room.dir, 'out'),
      '-verify',
      path.join(room.dir, 'data'),
    ],
    room.dir,
  );
  tt.equal(replayed.code, 0, `replay passes over refused entries (${replayed.stderr.slice(-300)})`);
  tt.notOk(fs.existsSync(path.join(room.dir, 'out/fantasma.db')), 'and makes no database a refused request named');
  const tail = await runTail(
    [
      '-log-file',
      path.join(room.dir, 'data/journal/statements.jsonl'),
      '-once',
      '-from-seq',
      '1',
      '-kind',
      'refused',
      '-token-name',
      'alumno-05',
      '-format',
      'text',
    ],
    room.dir,
  );
  tt.match(tail.stdout, / alumno-06\.db alumno-05 1031 \[SQ1031\]/, 'the follower selects them, and names the token');
});

t.test('recovery at start-up passes over a refused entry naming a database that does not exist', async (tt) => {
  const room = await classroom(tt, 'all');
  isError(
    tt,
    await room.server.post('/exec', { db: 'fantasma', sql: 'SELECT 1' }, room.as('alumno-05')),
    403,
    1031,
    'refused',
  );
  await journalEntries(room.server, (all) => all.some((e) => e.kind === 'refused'));
  await room.server.stop();
  // Without its checkpoint, start-up reads the whole journal and applies what each database lacks, as after a crash.
  const checkpoint = path.join(room.dir, 'data/journal/statements.jsonl.checkpoint');
  tt.ok(fs.existsSync(checkpoint), 'the checkpoint is where recovery looks for it');
  fs.rmSync(checkpoint);
  const again = await startServer(['-dir', path.join(room.dir, 'data'), '-token', ADMIN, '-log-level', 'all'], {
    cwd: room.dir,
  });
  tt.teardown(() => again.stop());
  tt.notOk(fs.existsSync(path.join(room.dir, 'data/fantasma.db')), 'recovery made no database for it');
  tt.equal((await again.get('/dbs', admin)).body.dbs.includes('fantasma.db'), false);
});

t.test('at level mod: logged as text, counted, in the class view, not in the journal', async (tt) => {
  const room = await classroom(tt, 'mod');
  const { server } = room;
  await probeClassmate(tt, room);
  tt.match(
    await stderrWith(server, /refused 403/),
    /refused 403 \[SQ1031\] POST "\/exec" token "alumno-05" from \S*127\.0\.0\.1 db alumno-06\.db/,
    'the text form of the request log',
  );
  tt.equal(refusedCount((await server.get('/metrics?format=prometheus', admin)).text, 1031), 1, 'counted');
  const view = await server.get('/class', admin);
  tt.ok(
    (view.body.refused as any[]).some((r) => r.tokenName === 'alumno-05' && r.db === 'alumno-06.db' && r.code === 1031),
    'in the class view',
  );
  await server.exec('alumno-05', 'SELECT 1'); // something after it, so a late refused entry would be in the file
  const entries = await journalEntries(server, () => true);
  tt.notOk(
    entries.some((e) => e.kind === 'refused'),
    'the journal keeps refusals at level all only',
  );
});

t.test('a journal that cannot take the entry fails nothing: the client still gets its 401', async (tt) => {
  const journal = new FakeJournal();
  journal.failures = [Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })];
  const logged: string[] = [];
  const noted: Refusal[] = [];
  const refusals = new Refusals(
    new WritePath(journal, { repair: async () => undefined, log: (line) => logged.push(line) }),
    { noteRefusal: (r) => noted.push(r) },
  );
  const ctx = {
    state: {},
    method: 'GET',
    path: '/dbs',
    ip: '127.0.0.1',
    query: {},
    request: {},
    status: 200,
    set: () => undefined,
    get: () => '',
  } as unknown as Context;
  const answered = requestLog(
    new Metrics(),
    false,
    refusals,
  )(ctx, async () => {
    // What the error handler does with a 401 (src/http/bookkeeping/error-handler.ts): answer it, and keep it for the log.
    ctx.state.answeredError = new EngineError('UNAUTHORIZED');
    ctx.status = 401;
  });
  await tt.resolves(answered, 'the request ends as answered');
  tt.equal(ctx.status, 401, 'with its 401');
  tt.equal(noted.length, 1, 'the class view has it');
  for (let tries = 0; tries < 100 && logged.length === 0; tries++) await sleep(10);
  tt.match(logged[0], /could not record a refused entry/, "the journal's failure is logged, not thrown");

  const broken = {
    record: () => {
      throw new Error('anything else');
    },
  } as unknown as Refusals;
  await tt.resolves(
    requestLog(new Metrics(), false, broken)(ctx, async () => undefined),
    'even a trace that throws does not fail the answer',
  );
});
