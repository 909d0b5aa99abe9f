/**
 * Grouped writes through the write path, with a fake engine and a fake
 * journal, failing at each step: the engine call, the journal append, the
 * commit. What each batch is told, and what was committed or rolled back.
 */
import t from 'tap';
import { EngineError } from '../src/errors';
import { WriteGroups } from '../src/services/writes/write-groups';
import { WriteLocks } from '../src/services/writes/write-locks';
import { WritePath } from '../src/services/writes/write-path';
import type { JournaledRequest } from '../src/services/writes/journaled-request';
import type { EngineHost, ExecRequest, GroupOutcome, HeldGroup, JournalPosition } from '../src/engine/protocol';
import { enospc, FakeJournal } from './helpers/fake-journal';
import { sleep } from './helpers/wait';

const REF = { name: 'a.db', file: '/nowhere/a.db' };

/** An engine that runs nothing: each batch's outcome is decided by the test, and every call is recorded. */
class FakeEngine {
  readonly calls: string[] = [];
  applied = 0;
  /** What execHeldGroup does next. */
  next: (requests: readonly ExecRequest[]) => GroupOutcome[] = (requests) =>
    requests.map(() => ({ results: [{ columns: [], rows: [], changes: 1 }] }));
  commitError: Error | undefined;
  /** Whether a failed commit took effect anyway. */
  commitTookEffect = false;

  async execHeldGroup(requests: readonly ExecRequest[]): Promise<HeldGroup> {
    this.calls.push(`exec ${requests.length}`);
    const outcomes = this.next(requests);
    return {
      outcomes,
      commit: async (seq: number) => {
        this.calls.push(`commit ${seq}`);
        if (this.commitError) {
          if (this.commitTookEffect) this.applied = seq;
          throw this.commitError;
        }
        this.applied = seq;
      },
      rollback: async () => {
        this.calls.push('rollback');
      },
    };
  }

  async journalPosition(): Promise<JournalPosition> {
    return { applied: this.applied, created: 0 };
  }
}

function batch(sql = 'INSERT INTO t VALUES (1)'): JournaledRequest {
  return {
    request: {
      file: REF.file,
      statements: [{ sql, kind: 'insert' }],
      maxResultRows: 10,
      context: { clockMs: 0, seed: '0000000000000000' },
    },
    sources: [{ sql }],
  };
}

function setup() {
  const journal = new FakeJournal();
  const engine = new FakeEngine();
  const path = new WritePath(journal, { repair: async () => undefined, log: () => undefined });
  const groups = new WriteGroups(engine as unknown as EngineHost, path, new WriteLocks(), { lockTimeoutMs: 1000 });
  return { journal, engine, groups };
}

t.test('a batch commits only after its entry is written, with that seq', async (t) => {
  const { journal, engine, groups } = setup();
  journal.autoSettle = false;
  const answer = groups.run(REF, batch());
  await sleep(5);
  t.same(engine.calls, ['exec 1'], 'ran, and holds its transaction while the entry is on its way');
  journal.appended[0]?.settle();
  const results = await answer;
  t.equal(results[0]?.changes, 1);
  t.same(engine.calls, ['exec 1', 'commit 1']);
  t.equal(journal.appended[0]?.entry.sql, 'INSERT INTO t VALUES (1)');
});

t.test('a journal failure rolls the group back; each batch hears why it did not commit', async (t) => {
  const { journal, engine, groups } = setup();
  journal.autoSettle = false;
  engine.next = () => [{ results: [] }, { error: new EngineError('CONSTRAINT_UNIQUE', { detail: 't.x' }).toData() }];
  // Both arrive before the database's turn starts, so they run as one group.
  const first = groups.run(REF, batch('INSERT INTO t VALUES (1)')).catch((e: unknown) => e);
  const second = groups.run(REF, batch('INSERT INTO t VALUES (1)')).catch((e: unknown) => e);
  await sleep(5);
  t.same(engine.calls, ['exec 2']);
  // The group's entries are written together: the failure takes both.
  journal.appended[0]?.settle(enospc());
  journal.appended[1]?.settle(enospc());
  t.equal(((await first) as EngineError).code, 9009, 'the write is refused as journal-unavailable');
  t.equal(((await second) as EngineError).code, 3002, 'the batch that failed on its own keeps its own error');
  t.same(engine.calls, ['exec 2', 'rollback'], 'the transaction was rolled back, never committed');
});

t.test('a failed commit voids its entries and answers with the storage error; the next write goes on', async (t) => {
  const { journal, engine, groups } = setup();
  engine.commitError = new EngineError('STORAGE_FULL');
  const refused = await groups.run(REF, batch()).catch((e: unknown) => e);
  t.equal((refused as EngineError).code, 9003);
  t.same(journal.kinds(), ['exec', 'void']);
  t.same(journal.appended[1]?.entry.voids, [1]);
  engine.commitError = undefined;
  await groups.run(REF, batch());
  t.same(engine.calls.slice(-2), ['exec 1', 'commit 3'], 'the next write commits after the void');
});

t.test('a commit that failed but took effect is acknowledged', async (t) => {
  const { journal, engine, groups } = setup();
  engine.commitError = new EngineError('ENGINE_CRASHED');
  engine.commitTookEffect = true;
  const results = await groups.run(REF, batch());
  t.equal(results[0]?.changes, 1);
  t.same(journal.kinds(), ['exec'], 'nothing voided');
});

t.test('an engine failure is noted and refuses the group; nothing is committed', async (t) => {
  const { journal, engine, groups } = setup();
  engine.next = () => {
    throw new EngineError('QUERY_TIMEOUT', { ms: 5 }, { statement: 0 });
  };
  const refused = await groups.run(REF, batch()).catch((e: unknown) => e);
  t.equal((refused as EngineError).code, 6007);
  t.same(journal.kinds(), ['exec']);
  t.equal(journal.appended[0]?.entry.ok, false, 'the failure is journaled for alerts');
  t.notOk(engine.calls.some((call) => call.startsWith('commit')));
});
