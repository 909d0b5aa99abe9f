/**
 * The parts of a restore off the server's thread, each alone: the slots (at
 * most a few at once, a stopped waiter leaves the queue with its stop, a slot
 * comes back however the work ends), and the rebuild process's plan read
 * through the journal index, which must answer exactly what the whole
 * journal answers (the target, its time, the undone entries, the rebuilt
 * state, the refusals), also when the index is not whole (it falls back).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { EngineError } from '../src/errors';
import { indexFileOf } from '../journal/index/journal-index';
import { journalFiles } from '../journal/naming';
import { readJournal } from '../journal/reader';
import { IndexedJournal } from '../replay/indexed-journal';
import { compareDatabases } from '../replay/verify';
import { planAndRebuild, type RestoreJob } from '../src/services/databases/restore-rebuild';
import type { RestoreAsk } from '../src/services/databases/restore-targets';
import { RestoreSlots } from '../src/services/databases/restore-slots';
import { ServerFleet } from './helpers/server-fleet';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const stopped = (reason: 'deadline' | 'gone'): AbortController => {
  const controller = new AbortController();
  controller.abort({ reason, ms: 30 });
  return controller;
};

interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

t.test('slots: at most two run, the rest wait in turn, a stopped waiter leaves with its stop', async (t) => {
  const slots = new RestoreSlots(2);
  const gates = [gate(), gate(), gate(), gate()];
  const started: number[] = [];
  const work = (i: number) => async (): Promise<number> => {
    started.push(i);
    await gates[i]!.promise;
    return i;
  };
  const a = slots.run('a.db', undefined, work(0));
  const b = slots.run('b.db', undefined, work(1));
  const waiting = new AbortController();
  const c = slots.run('c.db', waiting.signal, work(2));
  const d = slots.run('d.db', undefined, work(3));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [0, 1], 'two start at once');
  t.same(slots.load, { running: 2, waiting: 2 }, 'two wait');
  waiting.abort({ reason: 'deadline', ms: 30 });
  await t.rejects(c, { code: 6058 }, 'a waiter past its deadline leaves the queue with [SQ6058]');
  t.same(slots.load, { running: 2, waiting: 1 }, 'and is no longer counted');
  gates[0]!.open();
  t.equal(await a, 0, 'the first ends');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [0, 1, 3], 'the next waiter in turn takes its slot, not the stopped one');
  gates[1]!.open();
  gates[3]!.open();
  t.same(await Promise.all([b, d]), [1, 3], 'the others end');
  t.same(slots.load, { running: 0, waiting: 0 }, 'every slot is back');

  await t.rejects(
    slots.run('e.db', undefined, async () => {
      throw new Error('failed');
    }),
    { message: 'failed' },
    'work that throws answers its error',
  );
  t.same(slots.load, { running: 0, waiting: 0 }, 'and gives its slot back');
  const gone = slots.run('f.db', stopped('gone').signal, async () => 1);
  await t.rejects(gone, { code: 6013 }, 'a request already gone never runs: [SQ6013]');
});

const ADMIN = 'restore-worker-admin-0123456789';

t.test('the plan through the index equals the plan through the whole journal', async (t) => {
  const dir = scratchDir(t);
  const where = { dir, data: path.join(dir, 'data'), journal: path.join(dir, 'journal', 'statements.jsonl') };
  const fleet = new ServerFleet(t);
  const server = await fleet.start(where, ['-token', ADMIN, '-log-max-size', '4K', '-log-compress']);
  const headers = { Authorization: `Bearer ${ADMIN}` };
  const post = async (url: string, body: unknown): Promise<Record<string, unknown>> => {
    const reply = await server.request('POST', url, { body, headers });
    if (reply.status >= 300) throw new Error(`${url}: ${reply.status} ${reply.text}`);
    return reply.body;
  };
  const secrets: string[] = [];
  for (const name of ['ana', 'ben']) {
    const made = (await post('/tokens', { name, role: 'write', databases: ['c*'] })) as {
      tokens: Array<{ secret: string }>;
    };
    secrets.push(made.tokens[0]!.secret);
  }
  const as = (i: number): Record<string, string> => ({ Authorization: `Bearer ${secrets[i]}` });
  // A template with history, a copy written by two tokens with a restore among the writes, and a bystander.
  await post('/dbs', { db: 'tpl' });
  await post('/exec', {
    db: 'tpl',
    sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 1)',
  });
  await post('/dbs', { db: 'other' });
  await post('/exec', { db: 'other', sql: 'CREATE TABLE o (x INT)' });
  await post('/dbs', { db: 'c1', from: 'tpl' });
  await post('/exec', { db: 'tpl', sql: 'INSERT INTO t VALUES (2, 2)' });
  for (let i = 0; i < 6; i++) {
    await server.request('POST', '/exec', {
      body: { db: 'c1', sql: `INSERT INTO t (v) VALUES (${10 + i})` },
      headers: as(i % 2),
    });
    await post('/exec', { db: 'other', sql: `INSERT INTO o VALUES (${i})` });
    if (i === 3) await server.request('POST', '/dbs/c1/restore', { body: { undo: 'last' }, headers: as(0) });
  }
  await fleet.stop(server);

  const entries = (await readJournal(where.journal)).entries;
  const lastSeq = entries.at(-1)!.seq;
  const tokenIds = [...new Set(entries.map((e) => e.tokenId).filter((id): id is string => typeof id === 'string'))];
  const asks: RestoreAsk[] = [
    ...entries.map((e) => ({ to: e.seq })),
    { to: 0 },
    ...entries.flatMap((e) => [
      { time: Date.parse(e.ts), text: e.ts },
      { time: Date.parse(e.ts) - 1, text: 'just before' },
    ]),
    { undo: 'last' },
  ];
  const indexFile = indexFileOf(where.journal);
  // An index that lacks a row: the rebuild process must notice and read the whole journal.
  const holey = path.join(dir, 'holey.index');
  fs.copyFileSync(indexFile, holey);
  const db = new Database(holey);
  db.prepare('DELETE FROM entries WHERE seq = ?').run(Math.floor(lastSeq / 2));
  db.close();

  const whole = await IndexedJournal.open(where.journal, indexFile, lastSeq);
  t.ok(whole !== null, "the server's index is whole: the plans below read through it");
  whole?.close();
  t.equal(await IndexedJournal.open(where.journal, holey, lastSeq), null, 'an index lacking a row is not used');
  t.ok(
    (await journalFiles(where.journal)).some((file) => file.endsWith('.gz')),
    'the journal was rotated and gzipped: lines are read back from both kinds of file',
  );

  let run = 0;
  const plan = async (ask: RestoreAsk, tokenId: string | null, index: string | null): Promise<unknown> => {
    const out = path.join(dir, 'out', String(run++));
    fs.mkdirSync(out, { recursive: true });
    const job: RestoreJob = {
      db: 'c1.db',
      ask,
      lastSeq,
      now: Date.now(),
      tokenId,
      logFile: where.journal,
      snapshotDir: null,
      indexFile: index,
      out,
    };
    try {
      const planned = await planAndRebuild(job);
      return { target: planned.target, undone: planned.undone, file: planned.file };
    } catch (error) {
      if (error instanceof EngineError) return { code: error.code, message: error.message };
      throw error;
    }
  };
  let compared = 0;
  for (const ask of asks) {
    for (const tokenId of 'undo' in ask ? [...tokenIds, null] : [null]) {
      const whole = (await plan(ask, tokenId, null)) as { file?: string };
      const indexed = (await plan(ask, tokenId, indexFile)) as { file?: string };
      const fallback = (await plan(ask, tokenId, holey)) as { file?: string };
      const label = `${JSON.stringify(ask)}${tokenId === null ? '' : ` by ${tokenId}`}`;
      const { file: wholeFile, ...wholeRest } = whole;
      const { file: indexedFile, ...indexedRest } = indexed;
      const { file: fallbackFile, ...fallbackRest } = fallback;
      if (JSON.stringify(wholeRest) !== JSON.stringify(indexedRest))
        t.same(indexedRest, wholeRest, `${label}: same plan`);
      if (JSON.stringify(wholeRest) !== JSON.stringify(fallbackRest))
        t.same(fallbackRest, wholeRest, `${label}: same plan without a whole index`);
      if (wholeFile !== undefined) {
        const diff =
          compareDatabases(wholeFile, indexedFile as string) ?? compareDatabases(wholeFile, fallbackFile as string);
        if (diff !== null) t.equal(diff, null, `${label}: the same state`);
      }
      compared++;
    }
  }
  t.ok(
    compared > 40,
    `${compared} asks answered alike through the index, without a whole one, and through the journal`,
  );
  const refused = (await plan({ to: 1 }, null, indexFile)) as { code?: number };
  t.equal(refused.code, 2076, 'a target before the database is refused through the index too');
});
