/**
 * The idle timeout of a session, on a clock the test moves: the timer rolls
 * an idle session back and frees its database for a write already waiting;
 * every request starts the idle time again; a session whose timer could not
 * run is expired by the next request that names it, never committed. (The
 * real timer, end to end, is in sessions.test.ts.)
 */
import t, { type Test } from 'tap';
import { SessionManager } from '../src/sessions/session-manager';
import { WriteLocks } from '../src/services/writes/write-locks';
import { WritePath } from '../src/services/writes/write-path';
import type { EngineHost, ExecStatement } from '../src/engine/protocol';
import { EngineError } from '../src/errors';
import { FakeClock } from './helpers/fake-clock';
import { FakeEngine } from './helpers/fake-engine';
import { FakeJournal } from './helpers/fake-journal';

const REF = { name: 'a.db', file: '/nowhere/a.db' };
const INSERT: ExecStatement[] = [{ sql: 'INSERT INTO t VALUES (1)', kind: 'insert' }];
const IDLE_MS = 60_000;

function setup(t: Test) {
  const clock = new FakeClock();
  const engine = new FakeEngine();
  const journal = new FakeJournal();
  const locks = new WriteLocks();
  const path = new WritePath(journal, { repair: async () => undefined, log: () => undefined });
  const sessions = new SessionManager(engine as unknown as EngineHost, locks, path, {
    idleTimeoutMs: IDLE_MS,
    lockTimeoutMs: 600_000,
    maxResultRows: 10,
    maxResultBytes: 1 << 20,
    clock,
  });
  t.teardown(() => sessions.shutdown());
  return { clock, engine, journal, locks, sessions };
}

/** Lets the promise callbacks of a rollback run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function codeOf(work: Promise<unknown>): Promise<number | undefined> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof EngineError ? error.code : undefined;
}

t.test('the timer rolls back an idle session and frees its database for a write already waiting', async (t) => {
  const { clock, engine, journal, locks, sessions } = setup(t);
  const { session, expires_unix } = await sessions.begin(REF);
  t.equal(expires_unix, Math.floor((clock.now() + IDLE_MS) / 1000), 'expires_unix is now + the idle timeout');
  await sessions.exec(session, REF, INSERT, false);
  let granted = false;
  const waiting = locks.acquire(REF.file, 'batch', 600_000).then((release) => ((granted = true), release));
  clock.advance(IDLE_MS - 1);
  await settle();
  t.notOk(granted, 'the database stays held until the idle timeout');
  t.notOk(engine.calls.includes('rollback'));
  clock.advance(20);
  await settle();
  t.ok(granted, 'the waiting write gets the database once the timer rolled the session back');
  (await waiting)();
  t.same(engine.calls, ['open', 'exec', 'rollback'], 'rolled back, never committed');
  t.same(journal.kinds(), ['begin', 'exec', 'rollback']);
  t.equal(await codeOf(sessions.exec(session, REF, INSERT, false)), 5003, 'its id answers "expired"');
});

t.test('every request starts the idle time again', async (t) => {
  const { clock, engine, sessions } = setup(t);
  const { session } = await sessions.begin(REF);
  for (let i = 0; i < 5; i++) {
    clock.advance(IDLE_MS * 0.9);
    await settle();
    const { info } = await sessions.exec(session, REF, INSERT, false);
    t.equal(info.expires_unix, Math.floor((clock.now() + IDLE_MS) / 1000), `request ${i + 1}: expires_unix moved on`);
  }
  t.notOk(engine.calls.includes('rollback'), 'used for 4.5 idle timeouts, still open');
  await sessions.end(session, true);
  t.ok(
    engine.calls.some((call) => call.startsWith('commit')),
    'and it commits',
  );
});

t.test('a session whose timer could not run is expired by the next request that names it, even a commit', async (t) => {
  const { clock, engine, sessions } = setup(t);
  const { session } = await sessions.begin(REF);
  await sessions.exec(session, REF, INSERT, false);
  clock.skip(IDLE_MS + 1);
  t.equal(await codeOf(sessions.end(session, true)), 5003, 'the commit answers "expired"');
  await settle();
  t.notOk(
    engine.calls.some((call) => call.startsWith('commit')),
    'nothing was committed',
  );
  t.ok(engine.calls.includes('rollback'), 'it was rolled back');
  const next = await sessions.begin(REF);
  t.ok(next.session, 'the database is free for a new session');
});

t.test('a session in use is not expired by its timer, however long the request runs', async (t) => {
  const { clock, engine, sessions } = setup(t);
  const { session } = await sessions.begin(REF);
  let finish: () => void = () => undefined;
  engine.execGate = new Promise<void>((resolve) => (finish = resolve));
  const running = sessions.exec(session, REF, INSERT, false);
  await settle();
  clock.advance(IDLE_MS * 3);
  await settle();
  t.notOk(engine.calls.includes('rollback'), 'not rolled back while a request runs');
  finish();
  await running;
  clock.advance(IDLE_MS - 1);
  await settle();
  t.notOk(engine.calls.includes('rollback'), 'the idle time counts from the end of that request');
  clock.advance(20);
  await settle();
  t.ok(engine.calls.includes('rollback'), 'and then it expires');
});
