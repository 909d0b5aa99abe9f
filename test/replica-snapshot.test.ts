/**
 * Replicas that start from a snapshot round kept in JetStream:
 * a primary with -snapshot-every puts its rounds in the object store
 * `<stream>_snapshots`, and a new replica installs the newest one, then
 * follows only the stream's tail — against a real nats-server on loopback.
 * The pure parts (which objects a round needs, which go) are tested first.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm } from '@nats-io/obj';
import { JournalWriter, type NewEntry } from '../journal/writer';
import { readHeader } from '../journal/tail';
import {
  bucketCleanup,
  copiesToPut,
  fileObjectName,
  snapshotBucketOf,
  type BucketRound,
} from '../src/replication/stream/snapshot-bucket-plan';
import { holdsDatabases } from '../src/replication/replica/replica-seed';
import { MANIFEST_FORMAT, type SnapshotManifest } from '../src/snapshots/manifest';
import { startNats } from './helpers/nats-server';
import { scratchDir } from './helpers/scratch-dir';
import { ServerFleet } from './helpers/server-fleet';
import { runReplay } from './helpers/server';
import {
  createMarks,
  entryLines,
  journalSeqOf,
  journalSeqs,
  marksOf,
  ok,
  placeIn,
  writeLoad,
} from './helpers/replication';
import { eventually } from './helpers/wait';

t.setTimeout(240_000);

const DB = 'lesson';

function manifest(base: number, through: number, copies: Array<[string, number]>): SnapshotManifest {
  return {
    format: MANIFEST_FORMAT,
    base,
    through,
    throughTime: '2024-01-01T00:00:00.000Z',
    taken: '2024-01-01T00:00:00.000Z',
    databases: copies.map(([db, seq]) => ({ db, file: `${db.slice(0, -3)}@${seq}.db`, seq })),
  };
}

function round(m: SnapshotManifest): BucketRound {
  return { name: `rounds/round-${m.base}-${m.through}.json`, manifest: m };
}

t.test('a round puts only the copies the bucket lacks, each once', async (tt) => {
  const m = manifest(10, 12, [
    ['a.db', 12],
    ['b.db', 4],
  ]);
  tt.same(copiesToPut(m, new Set()), ['a@12.db', 'b@4.db']);
  tt.same(
    copiesToPut(m, new Set([fileObjectName('b@4.db'), 'rounds/round-1-4.json'])),
    ['a@12.db'],
    'a copy shared with an earlier round is there already',
  );
  tt.equal(snapshotBucketOf('sqlscribe'), 'sqlscribe_snapshots');
});

t.test('the bucket keeps the newest 2 rounds and the copies they refer to', async (tt) => {
  const r1 = manifest(5, 6, [
    ['a.db', 6],
    ['b.db', 4],
  ]);
  const r2 = manifest(20, 21, [
    ['a.db', 21],
    ['b.db', 4],
  ]);
  const r3 = manifest(40, 40, [
    ['a.db', 40],
    ['b.db', 4],
  ]);
  const objects = [
    'rounds/round-5-6.json',
    'rounds/round-20-21.json',
    'rounds/round-40-40.json',
    'files/a@6.db',
    'files/a@21.db',
    'files/a@40.db',
    'files/b@4.db',
    'files/c@3.db',
  ];
  // Given out of order: the age is the manifests' (base, then through), not the listing's.
  const cleanup = bucketCleanup([round(r3), round(r1), round(r2)], objects);
  tt.same(cleanup.rounds, ['rounds/round-5-6.json'], 'the oldest round goes');
  tt.same(
    cleanup.files,
    ['files/a@6.db', 'files/c@3.db'],
    "its own copy goes, and a copy no round refers to (a failed upload's); the shared one stays",
  );
  tt.same(
    bucketCleanup([round(r1), round(r2)], objects.slice(0, 2).concat('files/a@6.db', 'files/a@21.db', 'files/b@4.db')),
    { rounds: [], files: [] },
    'two rounds: nothing goes',
  );
  tt.same(bucketCleanup([], ['files/a@6.db']).files, ['files/a@6.db'], 'no round: no copy is needed');
});

t.test('startAfter makes an empty journal continue after a seq, and only an empty one', async (tt) => {
  const dir = tt.testdir();
  const file = path.join(dir, 'journal', 'statements.jsonl');
  const header = {
    service: 'sqlscribe',
    version: '0.1.0',
    level: 'mod',
    betterSqlite3: 'x',
    sqlite: 'x',
    node: 'x',
    tz: 'UTC',
  } as const;
  const open = () => JournalWriter.open({ file, maxSize: 1 << 20, fsync: true, compress: false, header });
  const writer = await open();
  await writer.startAfter(120);
  tt.equal(writer.lastSeq, 120);
  tt.equal(readHeader(file)?.firstSeq, 121, 'the active file says where the journal begins');
  tt.same(fs.readdirSync(path.dirname(file)).sort(), ['statements.jsonl'], 'nothing rotated, no temporary file left');
  const sql = 'INSERT INTO t VALUES (1)';
  const entry: NewEntry = {
    db: 'a.db',
    session: null,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    ok: true,
    ms: 0,
    clock: 1,
    seed: '0123456789abcdef',
  };
  const { seq, written } = writer.append(entry);
  await written;
  tt.equal(seq, 121, 'the next entry follows the seq');
  await tt.rejects(writer.startAfter(500), /only while it holds no entry/);
  await writer.close();
  const reopened = await open();
  tt.equal(reopened.lastSeq, 121, 'a reopen finds the journal where it was');
  await reopened.close();
  const empty = await JournalWriter.open({
    file: path.join(dir, 'other.jsonl'),
    maxSize: 1 << 20,
    fsync: true,
    compress: false,
    header,
  });
  await empty.startAfter(7);
  await empty.close();
  const again = await JournalWriter.open({
    file: path.join(dir, 'other.jsonl'),
    maxSize: 1 << 20,
    fsync: true,
    compress: false,
    header,
  });
  tt.equal(again.lastSeq, 7, 'an empty journal that starts after 7 still does after a reopen');
  await again.close();
});

t.test("a data directory holds databases unless it has none, or only single-DB mode's blank file", async (tt) => {
  const dir = scratchDir(tt, { '.sqlscribe.lock': '', '_sqlscribe_replica.json': '{}' });
  tt.notOk(holdsDatabases(dir, null));
  tt.notOk(holdsDatabases(path.join(dir, 'absent'), null));
  fs.writeFileSync(path.join(dir, 'school.db'), '');
  tt.notOk(holdsDatabases(dir, path.join(dir, 'school.db')), 'the single database, blank');
  tt.ok(holdsDatabases(dir, null), 'a database file in multi mode');
});

/** The rounds the bucket holds, by object name; none while there is no bucket. */
async function bucketRounds(nc: NatsConnection): Promise<string[]> {
  const store = await new Objm(nc).open(snapshotBucketOf('sqlscribe'));
  return (await store.list())
    .filter((info) => !info.deleted && info.name.startsWith('rounds/'))
    .map((info) => info.name)
    .sort();
}

function baseOf(roundName: string): number {
  return Number(/round-(\d+)-/.exec(roundName)?.[1] ?? NaN);
}

t.test(
  "a new replica starts from the primary's newest snapshot round in JetStream, then follows the tail",
  async (tt) => {
    const root = scratchDir(tt);
    const nats = await startNats(tt);
    const nc = (await connect({ servers: nats.url, timeout: 5_000 })) as NatsConnection;
    tt.teardown(() => nc.close());
    const fleet = new ServerFleet(tt);
    const P = placeIn(root, 'primary');
    const R = placeIn(root, 'replica');
    const primary = await fleet.start(P, ['-journal-nats', nats.url, '-node', 'p1', '-snapshot-every', '50']);
    await createMarks(primary, DB);
    const load = await writeLoad(primary, DB, { clients: 4, perClient: 50 });
    tt.equal(load.acked.size, 200, 'every write was acknowledged');
    let rounds: string[] = [];
    const uploaded = await eventually(
      async () => {
        rounds = await bucketRounds(nc);
        // Read between a new manifest and the removal of the oldest, the bucket holds 3 for a moment.
        return rounds.length > 0 && rounds.length <= 2 && baseOf(rounds.at(-1)!) > 100;
      },
      30_000,
      200,
    );
    tt.ok(
      uploaded,
      `the primary put its rounds in the bucket, which keeps the newest 2 (${rounds.join(', ')}; stderr: ${primary.stderr().slice(-800)})`,
    );
    // The line comes once the upload has also removed the oldest round, a moment after the new manifest is readable.
    const said = await eventually(
      async () => /put in JetStream bucket sqlscribe_snapshots/.test(primary.stderr()),
      10_000,
      100,
    );
    tt.ok(said, `the primary says so (stderr: ${primary.stderr().slice(-400)})`);

    const replica = await fleet.start(R, ['-follow', nats.url, '-node', 'r1']);
    let last = journalSeqOf(await ok(primary.get('/health'), 'primary health'));
    const replicaMarks = await marksOf(replica, DB, last).catch((error: Error) => {
      throw new Error(`${error.message}\n${replica.stderr()}`);
    });
    tt.same(replicaMarks, await marksOf(primary, DB), "the replica reaches the primary's rows");
    tt.match(replica.stderr(), /started from snapshot round/, 'it started from the round');
    // Its journal may hold no entry yet: the round can hold every write there was.
    const firstSeq = readHeader(R.journal)?.firstSeq ?? 1;
    tt.ok(firstSeq > 1, `its journal begins after the round (at seq ${firstSeq}), not at the stream's start`);
    const snapshots = path.join(path.dirname(R.journal), 'snapshots');
    const local = fs.readdirSync(snapshots);
    tt.ok(
      local.some((name) => /^round-\d+-\d+\.json$/.test(name)),
      `its snapshot directory holds the round (${local.join(', ')})`,
    );
    tt.ok(
      local.some((name) => /^lesson@\d+\.db$/.test(name)),
      'and its copy',
    );

    // More writes, then a restart: it resumes from its own directory, downloading nothing.
    await writeLoad(primary, DB, { clients: 2, perClient: 20, firstId: 10_000 });
    last = journalSeqOf(await ok(primary.get('/health'), 'primary health'));
    tt.same(await marksOf(replica, DB, last), await marksOf(primary, DB), 'the rows stay equal under more writes');
    await fleet.stop(replica);
    const restarted = await fleet.start(R, ['-follow', nats.url, '-node', 'r1']);
    await writeLoad(primary, DB, { clients: 2, perClient: 20, firstId: 20_000 });
    last = journalSeqOf(await ok(primary.get('/health'), 'primary health'));
    tt.same(await marksOf(restarted, DB, last), await marksOf(primary, DB), 'after a restart too');
    tt.notMatch(restarted.stderr(), /started from snapshot round/, 'the restart did not download the round again');
    tt.equal(journalSeqs(R.journal)[0], firstSeq, 'its journal begins where its header said, and still does');

    await fleet.stop(restarted);
    await fleet.stop(primary);
    const replicaLines = entryLines(R.journal);
    tt.same(
      replicaLines,
      entryLines(P.journal).filter((line) => Number(/^\{"seq":(\d+),/.exec(line)?.[1]) >= firstSeq),
      "its journal holds the primary's entries from there on, line for line",
    );
    const out = path.join(root, 'replayed');
    const replayed = await runReplay(['-log-file', R.journal, '-out', out, '-verify', P.data], root);
    tt.equal(
      replayed.code,
      0,
      `replay -verify of the replica's journal (with its snapshot directory) against the primary (exit ${replayed.code}: ${replayed.stderr.trim().slice(0, 800)})`,
    );
  },
);

t.test('without a round in JetStream a new replica follows the stream from its first message', async (tt) => {
  const root = scratchDir(tt);
  const nats = await startNats(tt);
  const fleet = new ServerFleet(tt);
  const primary = await fleet.start(placeIn(root, 'primary'), ['-journal-nats', nats.url, '-node', 'p1']);
  await createMarks(primary, DB);
  await writeLoad(primary, DB, { clients: 2, perClient: 10 });
  const R = placeIn(root, 'replica');
  const replica = await fleet.start(R, ['-follow', nats.url, '-node', 'r1']);
  const last = journalSeqOf(await ok(primary.get('/health'), 'primary health'));
  tt.same(await marksOf(replica, DB, last), await marksOf(primary, DB));
  tt.equal(journalSeqs(R.journal)[0], 1, 'its journal begins at seq 1');
  tt.notMatch(replica.stderr(), /started from snapshot round/);
});
