/**
 * No engine call is lost, over HTTP against a real server with
 * Chinook and two engine processes: eight writing exercise checks sent at
 * once by one student (each runs on a scratch copy, then closes it on every
 * engine process), then the same beside a classmate's SELECT on her own
 * database and two resets of the student's database. Every request is
 * answered within its deadline; afterwards the student's token is not
 * refused 503 [SQ6011] (its share of the engines was given back), the
 * template's write lock is free (the teacher's write succeeds), no scratch
 * copy of a writing answer is left, and replay -verify finds every database
 * equal to its replay.
 *
 * Also, without a server: a template copy for the checks that fails in the
 * engine leaves no file behind in the scratch directory, and prepared work
 * whose journal entries are refused outright is discarded (a held write
 * group gives back its engine process).
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ScratchCopies } from '../src/exercises/scratch-copies';
import { WritePath, type JournalPort } from '../src/services/writes/write-path';
import type { EngineHost } from '../src/engine/protocol';
import { EngineError } from '../src/errors';
import { importChinook } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { replyOf, runReplay, startServer, type Reply, type TestServer } from './helpers/server';
import { eventually } from './helpers/wait';

t.setTimeout(240_000);

const ADMIN = 'teacher-secret';
const REQUEST_TIMEOUT_MS = 6000;
/** A request not answered this long after its deadline was lost. */
const ANSWERED_WITHIN_MS = REQUEST_TIMEOUT_MS + 4000;
const root = scratchDir(t);
const dataDir = path.join(root, 'data');
const journalFile = path.join(dataDir, 'journal', 'statements.jsonl');
let server: TestServer;
let ana = '';
let bruno = '';

const EXERCISE = {
  id: 'reprice',
  set: 'lesson-1',
  position: 1,
  title: 'New prices',
  prompt: 'Give every track of album 1 a price of 1.29.',
  template: 'chinook',
  solution: 'UPDATE Track SET UnitPrice = 1.29 WHERE AlbumId = 1',
  check: 'SELECT TrackId, UnitPrice FROM Track WHERE AlbumId IN (1, 2) ORDER BY TrackId',
};
const WRONG_ANSWER = 'UPDATE Track SET UnitPrice = 2';

/** A request with a client-side limit: undefined when no answer came within ANSWERED_WITHIN_MS. */
async function within(secret: string, method: string, url: string, body?: unknown): Promise<Reply | undefined> {
  const limit = AbortSignal.timeout(ANSWERED_WITHIN_MS);
  try {
    const response = await fetch(server.url + url, {
      method,
      signal: limit,
      headers: { 'X-Service-Token': secret, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return await replyOf(response);
  } catch (error) {
    if (limit.aborted) return undefined;
    throw error;
  }
}

const checkBy = (secret: string): Promise<Reply | undefined> =>
  within(secret, 'POST', `/exercises/${EXERCISE.id}/check`, { sql: WRONG_ANSWER });

/** The scratch copies of writing answers (`<template>-w<n>.db`) still on disk, wherever the server keeps them. */
function writeCopiesLeft(): string[] {
  const left: string[] = [];
  for (const dir of [path.join(dataDir, 'checking'), path.join(dataDir, 'journal', 'checking')]) {
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir)) if (/-w\d+\.db/.test(name)) left.push(name);
  }
  return left;
}

function describe(reply: Reply | undefined): string {
  return reply === undefined ? 'no answer' : `${reply.status} ${reply.text.slice(0, 120)}`;
}

t.before(async () => {
  server = await startServer(
    [
      '-dir',
      dataDir,
      '-token',
      ADMIN,
      '-engines',
      '2',
      '-query-timeout',
      '3s',
      '-request-timeout',
      `${REQUEST_TIMEOUT_MS}ms`,
    ],
    { cwd: root, headers: { 'X-Service-Token': ADMIN } },
  );
  await importChinook(server);
  for (const db of ['ana', 'bruno'])
    if ((await server.post('/dbs', { db, from: 'chinook' })).status !== 201) throw new Error(`POST /dbs ${db}`);
  const token = async (name: string, db: string): Promise<string> => {
    const reply = await server.post('/tokens', { name, role: 'write', databases: [db] });
    if (reply.status !== 201) throw new Error(`tokens: ${reply.text}`);
    return reply.body.tokens[0].secret as string;
  };
  ana = await token('ana', 'ana');
  bruno = await token('bruno', 'bruno');
  const made = await server.post('/exercises', EXERCISE);
  if (made.status !== 201) throw new Error(`POST /exercises: ${made.text}`);
});

t.teardown(async () => {
  if (server !== undefined) await server.stop();
});

/** What must hold after a round: ana's engine share given back, the template's lock free, no writing copy left. */
async function nothingHeld(t: Test, round: string): Promise<void> {
  const again = await checkBy(ana);
  t.equal(again?.status, 200, `${round}: ana's next check is answered, not refused (${describe(again)})`);
  const write = await within(ana, 'POST', '/exec', {
    db: 'ana',
    sql: "UPDATE Genre SET Name = 'Rock' WHERE GenreId = 1",
  });
  t.equal(write?.status, 200, `${round}: ana's write on her own database (${describe(write)})`);
  const teacher = await within(ADMIN, 'POST', '/exec', {
    db: 'chinook',
    sql: "UPDATE Genre SET Name = 'Rock' WHERE GenreId = 1",
  });
  t.equal(teacher?.status, 200, `${round}: the teacher writes the template: its lock is free (${describe(teacher)})`);
  t.ok(
    await eventually(() => writeCopiesLeft().length === 0, 10_000),
    `${round}: no scratch copy of a writing answer is left (${writeCopiesLeft().join(', ')})`,
  );
}

t.test("eight writing checks at once from one token: each is answered, and the token's share comes back", async (t) => {
  const replies = await Promise.all(Array.from({ length: 8 }, () => checkBy(ana)));
  const lost = replies.filter((reply) => reply === undefined).length;
  t.equal(lost, 0, `every check is answered within its deadline (${replies.map(describe).join(' | ')})`);
  for (const reply of replies)
    if (reply !== undefined) t.not(reply.status, 500, `no internal error (${describe(reply)})`);
  t.ok(
    replies.some((reply) => reply?.status === 200 && reply.body?.correct === false),
    'the checks ran and were graded',
  );
  await nothingHeld(t, 'eight checks');
});

t.test("the same beside a classmate's SELECT and two resets: nobody waits forever", async (t) => {
  const checks = Array.from({ length: 8 }, () => checkBy(ana));
  const selects = Array.from({ length: 3 }, () =>
    within(bruno, 'POST', '/exec', {
      db: 'bruno',
      sql: 'SELECT g.Name, COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.Name',
    }),
  );
  const resets = Array.from({ length: 2 }, () => within(ana, 'POST', '/dbs/ana/reset'));
  const [checked, selected, reset] = await Promise.all([
    Promise.all(checks),
    Promise.all(selects),
    Promise.all(resets),
  ]);
  t.equal(
    checked.filter((r) => r === undefined).length,
    0,
    `every check answered (${checked.map(describe).join(' | ')})`,
  );
  for (const reply of selected) t.equal(reply?.status, 200, `bruno's SELECT is answered (${describe(reply)})`);
  for (const reply of reset) t.ok(reply !== undefined, `ana's reset is answered (${describe(reply)})`);
  await nothingHeld(t, 'checks, a SELECT and resets');
});

t.test('replay -verify: every database equals its replay', async (t) => {
  await server.stop();
  const replayed = await runReplay(
    ['-log-file', journalFile, '-out', path.join(root, 'replayed'), '-verify', dataDir],
    root,
  );
  t.equal(replayed.code, 0, `replay -verify (exit ${replayed.code}: ${replayed.stderr.trim().slice(0, 1500)})`);
});

t.test('a template copy that fails in the engine leaves no file in the scratch directory', async (t) => {
  const dir = scratchDir(t);
  const scratch = path.join(dir, 'checking');
  const template = path.join(dir, 'template.db');
  fs.writeFileSync(template, 'not really a database');
  // The engine lands the copy, then fails (as a call stopped at its deadline after the rename can).
  const engine = {
    copyDatabase: async (_source: string, target: string) => {
      fs.writeFileSync(target, 'half a copy');
      throw new EngineError('QUERY_TIMEOUT', { ms: 10 });
    },
    closeDatabase: async () => undefined,
  } as unknown as EngineHost;
  const copies = new ScratchCopies(scratch, engine, () => undefined);
  const failed = await copies.readCopy({ name: 'template.db', file: template }).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.equal((failed as EngineError | undefined)?.errorName, 'QUERY_TIMEOUT', "the check hears the engine's error");
  t.ok(
    await eventually(() => !fs.existsSync(scratch) || fs.readdirSync(scratch).length === 0, 5000),
    `nothing left: ${fs.existsSync(scratch) ? fs.readdirSync(scratch).join(', ') : ''}`,
  );
});

t.test(
  'work whose journal entries are refused outright is discarded, not left holding its engine process',
  async (t) => {
    const journal: JournalPort = {
      records: () => true,
      append: () => ({ seq: null, written: Promise.resolve() }),
      appendAll: () => {
        throw new RangeError('Invalid string length');
      },
      lastSeq: 0,
    };
    const path = new WritePath(journal, { repair: async () => undefined, log: () => undefined });
    let discarded = 0;
    let applied = 0;
    const entry = { event: 'write', entry: { db: 'ana.db' } } as never;
    const failed = await path
      .appendThenApply('ana.db', [entry], {
        apply: async () => void applied++,
        discard: async () => void discarded++,
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    t.equal(
      (failed as EngineError | undefined)?.errorName,
      'JOURNAL_UNAVAILABLE',
      'the client hears the journal failed',
    );
    t.equal(discarded, 1, 'the prepared work (a held write group) is rolled back, its process given back');
    t.equal(applied, 0, 'nothing applied');
  },
);
