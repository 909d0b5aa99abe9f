/**
 * The write path's rule, with a fake journal and fake work so that a failure
 * can be injected at every step: nothing is applied unless its entries are
 * durable, a failed append discards the work, a failed apply voids the
 * entries (or, when even that fails, holds the database back until it is
 * repaired), and the checkpoint never passes an unsettled entry.
 */
import t from 'tap';
import { EngineError } from '../src/errors';
import { WritePath, type ApplyStep } from '../src/services/writes/write-path';
import type { JournalEvent } from '../journal/journal';
import type { NewEntry } from '../journal/writer';
import { enospc, FakeJournal } from './helpers/fake-journal';

function entry(kind: NewEntry['kind'] = 'exec', ok = true): { event: JournalEvent; entry: NewEntry } {
  return {
    event: 'write',
    entry: {
      db: 'a.db',
      session: null,
      kind,
      sql: 'INSERT INTO t VALUES (1)',
      statements: [{ sql: 'INSERT INTO t VALUES (1)' }],
      ok,
      ms: 0,
      clock: 0,
      seed: '0000000000000000',
    },
  };
}

/** Work that records what was done to it. */
function work(
  options: { applyError?: Error; tookEffect?: boolean } = {},
): ApplyStep & { calls: string[]; appliedWith: Array<number | null> } {
  const calls: string[] = [];
  const appliedWith: Array<number | null> = [];
  return {
    calls,
    appliedWith,
    async apply(last) {
      calls.push('apply');
      appliedWith.push(last);
      if (options.applyError) throw options.applyError;
    },
    async discard() {
      calls.push('discard');
    },
    ...(options.tookEffect === undefined ? {} : { tookEffect: async () => options.tookEffect as boolean }),
  };
}

function setup(repair: (db: string) => Promise<void> = async () => undefined) {
  const journal = new FakeJournal();
  const logs: string[] = [];
  const path = new WritePath(journal, { repair, log: (message) => logs.push(message) });
  return { journal, path, logs };
}

t.test('applies once every entry is durable, with the largest seq', async (t) => {
  const { journal, path } = setup();
  journal.autoSettle = false;
  const step = work();
  const done = path.appendThenApply('a.db', [entry(), entry()], step);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(step.calls, [], 'nothing applied while the entries are on their way');
  journal.appended[1]?.settle();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(step.calls, [], 'nor while one of them is');
  journal.appended[0]?.settle();
  await done;
  t.same(step.calls, ['apply']);
  t.same(step.appliedWith, [2]);
  t.equal(path.settledThrough(), 2, 'applied entries are settled');
});

t.test('a failed append discards the work and answers JOURNAL_UNAVAILABLE', async (t) => {
  const { journal, path } = setup();
  journal.failures = [enospc()];
  const step = work();
  const error = await path.appendThenApply('a.db', [entry(), entry()], step).catch((e: unknown) => e);
  t.ok(error instanceof EngineError);
  t.equal((error as EngineError).code, 9009);
  t.equal((error as EngineError).status, 503);
  t.equal((error as EngineError).retryAfter, 1);
  t.match((error as EngineError).message, /ENOSPC/);
  t.same(step.calls, ['discard'], 'never applied');
  t.equal(path.settledThrough(), journal.lastSeq, 'nothing stays unsettled');
  t.same(journal.kinds(), [], 'the entries of one piece of work fail together: none is left written');
});

t.test('the next write tries the journal again', async (t) => {
  const { journal, path } = setup();
  journal.failures = [enospc()];
  await t.rejects(path.appendThenApply('a.db', [entry()], work()));
  const step = work();
  await path.appendThenApply('a.db', [entry()], step);
  t.same(step.calls, ['apply']);
  t.equal(step.appliedWith[0], 1, 'the seq of the failed append is used again: no gap');
});

t.test('a failed apply voids its entries and answers with its own error', async (t) => {
  const { journal, path } = setup();
  const full = new EngineError('STORAGE_FULL');
  const step = work({ applyError: full, tookEffect: false });
  const error = await path.appendThenApply('a.db', [entry(), entry()], step).catch((e: unknown) => e);
  t.equal(error, full);
  t.same(journal.kinds(), ['exec', 'exec', 'void']);
  const voided = journal.appended[2]?.entry;
  t.same(voided?.voids, [1, 2]);
  t.equal(voided?.db, 'a.db');
  t.equal(voided?.ok, false);
  t.equal(voided?.code, 9003, 'the void carries the failure, so alerts by class see it');
  t.equal(path.settledThrough(), 3);
  t.notOk(path.isBehind('a.db'));
});

t.test('an apply that failed but took effect counts as applied', async (t) => {
  const { journal, path } = setup();
  const step = work({ applyError: new EngineError('ENGINE_CRASHED'), tookEffect: true });
  await path.appendThenApply('a.db', [entry()], step);
  t.same(journal.kinds(), ['exec'], 'no void');
  t.equal(path.settledThrough(), 1);
});

t.test('when the void cannot be written the database is behind until repaired', async (t) => {
  let repairs = 0;
  let repairFails = true;
  const { journal, path, logs } = setup(async () => {
    repairs++;
    if (repairFails) throw new Error('disk still full');
  });
  journal.failures = [undefined, enospc()];
  await t.rejects(
    path.appendThenApply('a.db', [entry()], work({ applyError: new EngineError('STORAGE_FULL'), tookEffect: false })),
    { code: 9003 },
  );
  t.ok(path.isBehind('a.db'));
  t.equal(path.settledThrough(), 0, 'the unapplied entry is not settled: recovery must see it');
  t.match(logs.join('\n'), /a\.db lacks journal entries 1/);
  const refused = await path.ready('a.db').catch((e: unknown) => e);
  t.equal((refused as EngineError).code, 9010, 'writes refused while the repair fails');
  t.equal(repairs, 1);
  await path.ready('b.db');
  t.equal(repairs, 1, 'other databases go on');
  repairFails = false;
  await path.ready('a.db');
  t.equal(repairs, 2);
  t.notOk(path.isBehind('a.db'));
  t.equal(path.settledThrough(), 1);
});

t.test('a held append stays unsettled until released', async (t) => {
  const { path } = setup();
  const release = await path.appendHeld('session', entry('begin').entry);
  await path.appendThenApply('a.db', [entry()], work());
  t.equal(path.settledThrough(), 0, 'a session open since seq 1 keeps the checkpoint before it');
  release();
  t.equal(path.settledThrough(), 2);
});

t.test('a held append that fails answers JOURNAL_UNAVAILABLE', async (t) => {
  const { journal, path } = setup();
  journal.failures = [enospc()];
  await t.rejects(path.appendHeld('session', entry('begin').entry), { code: 9009 });
  t.equal(path.settledThrough(), 0);
});

t.test('notes never throw: a journal failure is logged', async (t) => {
  const { journal, path, logs } = setup();
  journal.failures = [enospc()];
  await path.note('write', entry('exec', false).entry);
  t.match(logs.join('\n'), /could not record/);
  journal.recordsReads = false;
  await path.note('read', { ...entry().entry, readonly: true });
  t.equal(journal.appended.length, 1, 'a read the level does not record is not appended');
});

t.test('the checkpoint never passes an entry still on its way', async (t) => {
  const { journal, path } = setup();
  journal.autoSettle = false;
  const done = path.appendThenApply('a.db', [entry()], work());
  t.equal(path.settledThrough(), 0);
  journal.appended[0]?.settle();
  await done;
  t.equal(path.settledThrough(), 1);
});
