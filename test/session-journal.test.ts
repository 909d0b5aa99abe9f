/**
 * Sessions through the write path, with a fake engine and a fake journal:
 * a session's transaction never holds work that the journal lacks, and a
 * commit the journal cannot take leaves the session open for another try.
 */
import t from 'tap';
import { EngineError } from '../src/errors';
import { SessionManager } from '../src/sessions/session-manager';
import { WriteLocks } from '../src/services/writes/write-locks';
import { WritePath } from '../src/services/writes/write-path';
import type { EngineHost, ExecStatement } from '../src/engine/protocol';
import { enospc, FakeJournal } from './helpers/fake-journal';
import { FakeEngine } from './helpers/fake-engine';

const REF = { name: 'a.db', file: '/nowhere/a.db' };
const INSERT: ExecStatement[] = [{ sql: 'INSERT INTO t VALUES (1)', kind: 'insert' }];

function setup() {
  const journal = new FakeJournal();
  const engine = new FakeEngine();
  const path = new WritePath(journal, { repair: async () => undefined, log: () => undefined });
  const sessions = new SessionManager(engine as unknown as EngineHost, new WriteLocks(), path, {
    idleTimeoutMs: 60_000,
    lockTimeoutMs: 100,
    maxResultRows: 10,
    maxResultBytes: 1 << 20,
  });
  t.teardown(() => sessions.shutdown());
  return { journal, engine, path, sessions };
}

t.test('a begin the journal cannot take opens no session and frees the database', async (t) => {
  const { journal, engine, sessions } = setup();
  journal.failures = [enospc()];
  await t.rejects(sessions.begin(REF), { code: 9009 });
  t.same(engine.calls, ['open', 'rollback'], 'the engine transaction was rolled back');
  const info = await sessions.begin(REF);
  t.ok(info.session, 'the database is free for the next begin');
});

t.test('a write the journal cannot take rolls the session back', async (t) => {
  const { journal, engine, sessions } = setup();
  const { session } = await sessions.begin(REF);
  journal.failures = [enospc()];
  const error = (await sessions.exec(session, REF, INSERT, false).catch((e: unknown) => e)) as EngineError;
  t.equal(error.code, 9009);
  t.match(error.message, new RegExp(`session ${session} was rolled back`));
  t.ok(engine.calls.includes('rollback'));
  await t.rejects(sessions.exec(session, REF, INSERT, false), { code: 5002 }, 'the session is gone');
  t.notOk(journal.kinds().includes('commit'));
});

t.test('a commit the journal cannot take leaves the session open; the next commit goes through', async (t) => {
  const { journal, engine, path, sessions } = setup();
  const { session } = await sessions.begin(REF);
  await sessions.exec(session, REF, INSERT, false);
  journal.failures = [enospc()];
  await t.rejects(sessions.end(session, true), { code: 9009 });
  t.notOk(
    engine.calls.some((call) => call.startsWith('commit')),
    'nothing committed',
  );
  t.equal(path.settledThrough(), 0, 'the open session keeps the checkpoint before its begin');
  await sessions.exec(session, REF, INSERT, false);
  await sessions.end(session, true);
  t.same(
    engine.calls.filter((call) => call.startsWith('commit')),
    ['commit 4'],
    "committed once, with the commit entry's seq",
  );
  t.same(journal.kinds(), ['begin', 'exec', 'exec', 'commit']);
  t.equal(path.settledThrough(), 4);
});

t.test('a commit the database refuses is voided; the session ends', async (t) => {
  const { journal, engine, sessions } = setup();
  const { session } = await sessions.begin(REF);
  engine.endError = new EngineError('STORAGE_FULL');
  await t.rejects(sessions.end(session, true), { code: 9003 });
  t.same(journal.kinds(), ['begin', 'commit', 'void']);
  t.same(journal.appended[2]?.entry.voids, [2]);
  await t.rejects(sessions.exec(session, REF, INSERT, false), { code: 5002 });
  engine.endError = undefined;
  t.ok((await sessions.begin(REF)).session, 'the database is free again');
});
