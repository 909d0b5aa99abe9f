/**
 * A restore on a replicated primary: the replica refuses it like every write
 * (naming the primary), follows it when it applies the restoredb entry (the
 * state rebuilt from its own copy of the journal), and an undo of the restore
 * too; replay of the replica's journal equals both servers' databases.
 * Needs nats-server (test/helpers/nats-server.ts); build first.
 */
import path from 'node:path';
import t from 'tap';
import { startNats } from './helpers/nats-server';
import { runReplay } from './helpers/server';
import { createMarks, journalSeqOf, marksOf, ok, Stage } from './helpers/replication';

t.setTimeout(180_000);

const DB = 'lesson';

t.test("a replica refuses a restore naming the primary, and follows the primary's restores", async (tt) => {
  const stage = new Stage(tt);
  const nats = await startNats(tt);
  const P = stage.place('primary');
  const R = stage.place('replica');
  const primary = await stage.primary(P, nats.url, 'p1');
  await createMarks(primary, DB);
  const replica = await stage.replica(R, nats.url, 'r1');
  const first = journalSeqOf(await ok(primary.exec(DB, 'INSERT INTO marks VALUES (1, 1, 1)'), 'insert 1'));
  await ok(primary.exec(DB, 'INSERT INTO marks VALUES (2, 2, 2); UPDATE marks SET n = n + 10'), 'insert 2');
  tt.same(
    await marksOf(replica, DB, first + 1),
    [
      [1, 1, 11],
      [2, 2, 12],
    ],
    'the replica has both writes',
  );

  const refused = await replica.post(`/dbs/${DB}/restore`, { to: first });
  tt.equal(refused.status, 409, 'a restore on the replica is refused');
  tt.equal(refused.body.code, 7010, 'READ_ONLY_REPLICA');
  tt.match(refused.body.error, primary.url, 'naming the primary');

  const restored = await ok(primary.post(`/dbs/${DB}/restore`, { to: first }), 'restore on the primary');
  tt.same(await marksOf(primary, DB), [[1, 1, 1]], 'the primary holds the state at the target');
  tt.same(await marksOf(replica, DB, restored.body.seq as number), [[1, 1, 1]], 'the replica follows the restore');
  const undone = await ok(primary.post(`/dbs/${DB}/restore`, { undo: 'last' }), 'undo the restore');
  tt.same(
    await marksOf(replica, DB, undone.body.seq as number),
    [
      [1, 1, 11],
      [2, 2, 12],
    ],
    'and its undo',
  );
  const after = journalSeqOf(await ok(primary.exec(DB, 'INSERT INTO marks VALUES (3, 3, 3)'), 'insert 3'));
  tt.same(await marksOf(replica, DB, after), await marksOf(primary, DB), 'writes after the restores reach it too');

  await stage.fleet.stop(primary);
  await stage.fleet.stop(replica);
  for (const [label, data] of [
    ['primary', P.data],
    ['replica', R.data],
  ] as const) {
    const replayed = await runReplay(
      ['-log-file', R.journal, '-out', path.join(stage.root, `replayed-${label}`), '-verify', data],
      stage.root,
    );
    tt.equal(
      replayed.code,
      0,
      `replay of the replica's journal equals the ${label}'s databases: ${replayed.stderr.slice(0, 600)}`,
    );
  }
});
