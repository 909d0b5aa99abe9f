/**
 * The replica's follower against a real nats-server: a "primary" journal
 * ships its chunks to the stream through the writer's shipper (as the
 * primary does), or chunks are published by hand where a test needs what a
 * primary would not write (a stale epoch, a gap); the follower must copy the
 * journal byte for byte, apply every entry once, carry a session over
 * chunks and over a restart, and resume where it stopped.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { eventEntry, Journal } from '../journal/journal';
import { encodeLine, type JournalEntry } from '../journal/record';
import type { NewEntry } from '../journal/writer';
import { JournalStream } from '../src/replication/stream/journal-stream';
import { ReplicaFollower, type FollowerDeps } from '../src/replication/replica/replica-follower';
import { readPosition, writePosition } from '../src/replication/replica/replica-position';
import { SessionWindow } from '../src/replication/replica/replica-session-window';
import { startNats, type NatsNode } from './helpers/nats-server';
import { scratchDir } from './helpers/scratch-dir';
import { waitFor } from './helpers/wait';

const HEADER = {
  service: 'sqlscribe',
  version: '0.1.0',
  level: 'mod',
  betterSqlite3: '12.11.1',
  sqlite: '3.50.4',
  node: 'v20',
  tz: 'UTC',
} as const;

function exec(db: string, sql: string, session: string | null = null): NewEntry {
  return {
    db,
    session,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    readonly: false,
    ok: true,
    ms: 0,
    clock: 1,
    seed: '0123456789abcdef',
  };
}

function entryAt(seq: number, entry: NewEntry): JournalEntry {
  return { seq, ts: new Date().toISOString(), ...entry };
}

// ---------------------------------------------------------------- without NATS

t.test("the session window keeps an open session's entries only, until it ends", async (t) => {
  const window = new SessionWindow();
  window.observe([
    entryAt(1, eventEntry('createdb', 'a', null)),
    entryAt(2, eventEntry('begin', 'a', 'S')),
    entryAt(3, exec('b', 'INSERT 1')),
    entryAt(4, exec('a', 'INSERT 2', 'S')),
  ]);
  t.same(
    window.entries.map((e) => e.seq),
    [2, 4],
    "begin and the session's exec; not the other database's entry",
  );
  t.equal(window.beginSeq, 2);
  window.observe([entryAt(5, exec('a', 'INSERT 3', 'S')), entryAt(6, eventEntry('commit', 'a', 'S'))]);
  t.same(window.entries, [], 'a commit ends it');
  t.equal(window.beginSeq, null);

  window.observe([entryAt(7, eventEntry('begin', 'a', 'T')), entryAt(8, eventEntry('rollback', 'a', 'T'))]);
  t.equal(window.beginSeq, null, 'a rollback ends it');

  window.observe([
    entryAt(9, eventEntry('begin', 'a', 'U')),
    entryAt(10, { ...exec('a', 'SELECT 1'), readonly: true }),
  ]);
  t.equal(window.beginSeq, 9, 'a read on its database from outside does not end it');
  window.observe([entryAt(11, exec('a', 'INSERT 4'))]);
  t.equal(window.beginSeq, null, 'a change to its database from outside cuts it short (the process died)');

  window.observe([entryAt(12, eventEntry('begin', 'a', 'V')), entryAt(13, eventEntry('begin', 'b', 'W'))]);
  t.same(
    window.entries.map((e) => e.seq),
    [13],
    'a new begin ends the old session (one at a time)',
  );
  window.clear();
  t.equal(window.beginSeq, null, 'a fence forgets it');
});

t.test('the position file: written whole, read back, missing or damaged means none', async (t) => {
  const dir = scratchDir(t);
  const file = path.join(dir, 'position.json');
  const logs: string[] = [];
  t.equal(
    readPosition(file, (m) => logs.push(m)),
    null,
  );
  writePosition(file, { streamSeq: 7, journalSeq: 40, settledThrough: 38 });
  t.same(
    readPosition(file, (m) => logs.push(m)),
    { streamSeq: 7, journalSeq: 40, settledThrough: 38 },
  );
  t.notOk(fs.existsSync(`${file}.tmp`));
  fs.writeFileSync(file, '{"streamSeq":');
  t.equal(
    readPosition(file, (m) => logs.push(m)),
    null,
  );
  t.match(logs, [/cannot be read/]);
});

// ---------------------------------------------------------------- a nats-server

let nats: NatsNode;
t.before(async () => {
  nats = await startNats(t);
});

async function connectStream(tt: Test, stream: string, name: string): Promise<JournalStream> {
  const connection = await JournalStream.connect({ servers: [nats.url], stream, replicas: 1 }, 5000, name);
  tt.teardown(() => connection.close());
  await connection.ensure();
  return connection;
}

/** A primary: a journal whose every chunk is published to the stream (expecting the stream's end), as a shipping primary does. */
interface Primary {
  readonly file: string;
  readonly stream: JournalStream;
  /** Appends entries as one chunk and gives their seqs once it is in the stream. */
  write(...entries: NewEntry[]): Promise<number[]>;
  /** The primary's entry lines, header left out. */
  lines(): string[];
}

function entryLines(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('{"kind":"header"'));
}

async function startPrimary(tt: Test, dir: string, streamName: string, epoch = 1): Promise<Primary> {
  const stream = await connectStream(tt, streamName, 'primary');
  const file = path.join(dir, 'primary', 'journal.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const journal = await Journal.open('mod', { file, maxSize: 1 << 24, fsync: false, compress: false, header: HEADER });
  tt.teardown(() => journal.close());
  let last = await stream.lastStreamSeq();
  journal.shipThrough({
    epoch,
    ship: async (chunk) => {
      last = await stream.publish({ kind: 'entries', ...chunk, epoch, node: 'primary-1' }, last, 5000);
    },
  });
  return {
    file,
    stream,
    async write(...entries) {
      const { seqs, written } = journal.appendAll(entries.map((entry) => ({ event: 'write' as const, entry })));
      await written;
      return seqs;
    },
    lines: () => entryLines(file),
  };
}

/** A replica's directory: its databases, its journal and its position, as the server lays them out. */
interface Replica {
  readonly dir: string;
  readonly journalFile: string;
  readonly logs: string[];
  follower: ReplicaFollower;
  journal: Journal;
  stop(): Promise<void>;
}

async function startReplica(
  tt: Test,
  dir: string,
  streamName: string,
  options: Partial<FollowerDeps> = {},
): Promise<Replica> {
  const stream = await connectStream(tt, streamName, 'replica');
  const dbDir = path.join(dir, 'replica');
  fs.mkdirSync(dbDir, { recursive: true });
  const journalFile = path.join(dbDir, 'journal.jsonl');
  const journal = await Journal.open('mod', {
    file: journalFile,
    maxSize: 1 << 24,
    fsync: false,
    compress: false,
    header: HEADER,
  });
  const logs: string[] = [];
  const follower = await ReplicaFollower.start({
    stream,
    journal,
    journalFile,
    fileOf: (db) => path.join(dbDir, db),
    positionFile: path.join(dbDir, 'replica-position.json'),
    consumer: 'replica-1',
    log: (message) => logs.push(message),
    lagPollMs: 50,
    retryMinMs: 20,
    retryMaxMs: 200,
    ...options,
  });
  let stopped = false;
  const replica: Replica = {
    dir: dbDir,
    journalFile,
    logs,
    follower,
    journal,
    async stop() {
      if (stopped) return;
      stopped = true;
      await follower.stop();
      await journal.close();
    },
  };
  tt.teardown(() => replica.stop());
  return replica;
}

function rows(replica: Replica, db: string): number[] {
  const database = new Database(path.join(replica.dir, db), { readonly: true });
  try {
    return database
      .prepare('SELECT k FROM t ORDER BY k')
      .all()
      .map((row) => (row as { k: number }).k);
  } finally {
    database.close();
  }
}

function seqsOf(lines: readonly string[]): number[] {
  return lines.map((line) => (JSON.parse(line) as { seq: number }).seq);
}

/** Waits, within bounds, for a stream's connection to answer again after the server came back. */
async function reachable(stream: JournalStream): Promise<void> {
  await waitFor(
    async () => {
      await stream.lastStreamSeq();
      return true;
    },
    { what: 'the stream to answer again', timeoutMs: 20_000, everyMs: 50 },
  );
}

const CREATE = [
  eventEntry('createdb', 'a.db', null, { sql: null }),
  exec('a.db', 'CREATE TABLE t (k INTEGER PRIMARY KEY)'),
];

t.test('the replica copies the journal line for line and applies every entry', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'COPY');
  await primary.write(...CREATE);
  for (let k = 1; k <= 5; k++)
    await primary.write(
      exec('a.db', `INSERT INTO t VALUES (${2 * k - 1})`),
      exec('a.db', `INSERT INTO t VALUES (${2 * k})`),
    );
  const replica = await startReplica(t, dir, 'COPY');
  t.ok(await replica.follower.waitFor(12, 10_000), 'applied through the last seq');
  t.same(rows(replica, 'a.db'), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.same(entryLines(replica.journalFile), primary.lines(), "the local journal holds the primary's very lines");
  t.equal(replica.follower.settledThrough(), 12);

  const [seq] = await primary.write(exec('a.db', 'INSERT INTO t VALUES (11)'));
  t.ok(await replica.follower.waitFor(seq as number, 10_000), 'a chunk written while it follows');
  t.same(rows(replica, 'a.db').at(-1), 11);
  t.equal(await replica.follower.waitFor(1000, 50), false, 'waitFor times out on a seq never written');
  await waitFor(() => replica.follower.lag().primaryLastSeq === 13, { what: 'the lag poll', everyMs: 10 });
  t.same(replica.follower.lag(), { seqBehind: 0, secondsBehind: 0, primaryLastSeq: 13 });
  t.equal(replica.follower.epoch, 1);
  t.equal(replica.follower.halted, null);
});

t.test('stopped mid-stream and started again on the same directory: nothing lost, nothing twice', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'RESUME');
  await primary.write(...CREATE);
  for (let k = 1; k <= 30; k++) await primary.write(exec('a.db', `INSERT INTO t VALUES (${k})`));
  const first = await startReplica(t, dir, 'RESUME');
  t.ok(await first.follower.waitFor(12, 10_000));
  await first.stop();
  const stoppedAt = first.follower.applied;
  t.ok(stoppedAt >= 12 && stoppedAt <= 32, `stopped at ${stoppedAt}`);
  t.equal(await first.follower.waitFor(1000, 10), false, 'a stopped follower waits for nothing');
  for (let k = 31; k <= 50; k++) await primary.write(exec('a.db', `INSERT INTO t VALUES (${k})`));

  // As if it had crashed after applying the last three messages but before storing their position.
  const position = readPosition(path.join(first.dir, 'replica-position.json'), () => undefined);
  t.ok(position !== null && position.streamSeq > 3);
  if (position !== null)
    writePosition(path.join(first.dir, 'replica-position.json'), {
      streamSeq: position.streamSeq - 3,
      journalSeq: position.journalSeq - 3,
      settledThrough: position.settledThrough - 3,
    });

  const second = await startReplica(t, dir, 'RESUME');
  t.ok(await second.follower.waitFor(52, 10_000));
  const keys = rows(second, 'a.db');
  t.equal(keys.length, 50, 'every row once');
  t.equal(new Set(keys).size, 50);
  const lines = entryLines(second.journalFile);
  t.same(
    seqsOf(lines),
    Array.from({ length: 52 }, (_, i) => i + 1),
    'local journal seqs 1..52, none twice',
  );
  t.same(lines, primary.lines());
  t.equal(second.follower.halted, null);
});

t.test('a session spread over several chunks commits, across a restart too', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'SESSION');
  await primary.write(...CREATE);
  const [begin] = await primary.write(eventEntry('begin', 'a.db', 'S1'));
  await primary.write(exec('a.db', 'INSERT INTO t VALUES (1)', 'S1'));
  const [inSession] = await primary.write(exec('a.db', 'INSERT INTO t VALUES (2)', 'S1'));
  await primary.write(exec('b.db', 'CREATE TABLE t (k INTEGER PRIMARY KEY)'));

  const first = await startReplica(t, dir, 'SESSION');
  t.ok(await first.follower.waitFor(inSession as number, 10_000));
  await waitFor(() => first.follower.applied === 6, { what: "the other database's chunk", everyMs: 10 });
  t.same(rows(first, 'a.db'), [], 'the open session is not in the database');
  t.equal(first.follower.settledThrough(), (begin as number) - 1, "settled before the open session's begin");
  t.equal(first.follower.applied, 6);
  await first.stop();

  const second = await startReplica(t, dir, 'SESSION');
  t.equal(second.follower.settledThrough(), (begin as number) - 1, 'the session is open again after the restart');
  const [commit] = await primary.write(eventEntry('commit', 'a.db', 'S1'));
  t.ok(await second.follower.waitFor(commit as number, 10_000));
  t.match(first.logs, [/consumer replica-1 made to deliver from stream seq 1/]);
  t.same(second.logs, [], 'stopped with every message acked: the consumer agrees with the position and is kept');
  t.same(rows(second, 'a.db'), [1, 2], 'committed whole');
  t.equal(second.follower.settledThrough(), commit);
  t.same(entryLines(second.journalFile), primary.lines());
});

t.test('lag: behind at start, by the seqs and the seconds, then 0', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'LAG');
  await primary.write(...CREATE);
  for (let k = 1; k <= 10; k++) await primary.write(exec('a.db', `INSERT INTO t VALUES (${k})`));
  let now = Date.parse('2030-01-01T00:00:00Z');
  const replica = await startReplica(t, dir, 'LAG', { clock: () => now });
  now += 7000;
  t.same(
    replica.follower.lag(),
    { seqBehind: 12, secondsBehind: 7, primaryLastSeq: 12 },
    'behind by everything, since it started 7 s ago',
  );
  t.ok(await replica.follower.waitFor(12, 10_000));
  t.same(replica.follower.lag(), { seqBehind: 0, secondsBehind: 0, primaryLastSeq: 12 });
});

/** An entries message made by hand from whole entries. */
function chunk(entries: readonly JournalEntry[], epoch: number, node = 'primary-1') {
  return {
    kind: 'entries' as const,
    firstSeq: (entries[0] as JournalEntry).seq,
    lastSeq: (entries.at(-1) as JournalEntry).seq,
    epoch,
    node,
    lines: entries.map((e) => encodeLine(e)).join(''),
  };
}

t.test('a fence gives the new primary; a chunk of the old epoch after it is skipped', async (t) => {
  const dir = scratchDir(t);
  const stream = await connectStream(t, 'FENCE', 'publisher');
  let last = 0;
  last = await stream.publish(
    chunk(
      [
        entryAt(1, CREATE[0] as NewEntry),
        entryAt(2, CREATE[1] as NewEntry),
        entryAt(3, { ...exec('a.db', 'INSERT INTO t VALUES (1)'), epoch: 1 }),
      ],
      1,
    ),
    last,
    5000,
  );
  last = await stream.publish({ kind: 'fence', epoch: 2, node: 'primary-2', url: 'http://primary-2:8080' }, last, 5000);
  last = await stream.publish(
    chunk([entryAt(4, { ...exec('a.db', 'INSERT INTO t VALUES (99)'), epoch: 1 })], 1),
    last,
    5000,
  );
  last = await stream.publish(
    chunk([entryAt(4, { ...exec('a.db', 'INSERT INTO t VALUES (2)'), epoch: 2 })], 2, 'primary-2'),
    last,
    5000,
  );

  const replica = await startReplica(t, dir, 'FENCE');
  t.ok(await replica.follower.waitFor(4, 10_000));
  t.same(rows(replica, 'a.db'), [1, 2], 'the stale chunk is not applied');
  t.same(replica.follower.fence, { epoch: 2, node: 'primary-2', url: 'http://primary-2:8080' });
  t.equal(replica.follower.epoch, 2);
  t.match(replica.logs.join('\n'), /skipping chunk 4\.\.4 of epoch 1/);
  t.same(seqsOf(entryLines(replica.journalFile)), [1, 2, 3, 4]);
});

t.test('a void naming entries applied from an earlier chunk rebuilds their database without them', async (t) => {
  const dir = scratchDir(t);
  const stream = await connectStream(t, 'VOID', 'publisher');
  let last = 0;
  last = await stream.publish(
    chunk(
      [
        entryAt(1, CREATE[0] as NewEntry),
        entryAt(2, CREATE[1] as NewEntry),
        entryAt(3, exec('a.db', 'INSERT INTO t VALUES (1)')),
        entryAt(4, exec('a.db', 'INSERT INTO t VALUES (2)')),
      ],
      1,
    ),
    last,
    5000,
  );
  const replica = await startReplica(t, dir, 'VOID');
  t.ok(await replica.follower.waitFor(4, 10_000));
  t.same(rows(replica, 'a.db'), [1, 2]);
  const voidEntry: NewEntry = {
    db: 'a.db',
    session: null,
    kind: 'void',
    sql: null,
    ok: false,
    ms: 0,
    voids: [4],
    code: 8001,
    error: 'disk full',
  };
  last = await stream.publish(
    chunk([entryAt(5, voidEntry), entryAt(6, exec('a.db', 'INSERT INTO t VALUES (3)'))], 1),
    last,
    5000,
  );
  t.ok(await replica.follower.waitFor(6, 10_000));
  t.same(rows(replica, 'a.db'), [1, 3], 'the voided entry is gone, the later one applied');
  t.match(replica.logs.join('\n'), /rebuilt a\.db/);
});

t.test('a gap in the journal seqs halts the follower, loudly, without applying', async (t) => {
  const dir = scratchDir(t);
  const stream = await connectStream(t, 'GAP', 'publisher');
  let last = 0;
  last = await stream.publish(
    chunk([entryAt(1, CREATE[0] as NewEntry), entryAt(2, CREATE[1] as NewEntry)], 1),
    last,
    5000,
  );
  last = await stream.publish(chunk([entryAt(5, exec('a.db', 'INSERT INTO t VALUES (5)'))], 1), last, 5000);
  const replica = await startReplica(t, dir, 'GAP');
  await waitFor(() => replica.follower.halted !== null, { what: 'the halt', everyMs: 10 });
  t.equal(replica.follower.applied, 2);
  t.same(rows(replica, 'a.db'), []);
  t.match(replica.logs.join('\n'), /REPLICA HALTED at journal seq 2/);
  t.equal(await replica.follower.waitFor(5, 1000), false, 'a halted follower waits for nothing');
});

t.test('catchUpAndStop applies the stream as it stands, then nothing more', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'PROMOTE');
  await primary.write(...CREATE);
  for (let k = 1; k <= 20; k++) await primary.write(exec('a.db', `INSERT INTO t VALUES (${k})`));
  const replica = await startReplica(t, dir, 'PROMOTE');
  await replica.follower.catchUpAndStop();
  t.equal(replica.follower.applied, 22);
  await primary.write(exec('a.db', 'INSERT INTO t VALUES (21)'));
  t.equal(replica.journal.lastSeq, 22, 'nothing copied after it stopped');
  t.equal(rows(replica, 'a.db').length, 20);
});

t.test('the NATS server going away and coming back: the follower resumes', async (t) => {
  const dir = scratchDir(t);
  const primary = await startPrimary(t, dir, 'OUTAGE');
  await primary.write(...CREATE);
  await primary.write(exec('a.db', 'INSERT INTO t VALUES (1)'));
  const replica = await startReplica(t, dir, 'OUTAGE');
  t.ok(await replica.follower.waitFor(3, 10_000));
  await nats.kill(); // a crash: the follower's pull and acks fail until it is back
  await nats.restart();
  await reachable(primary.stream);
  for (let k = 2; k <= 5; k++) await primary.write(exec('a.db', `INSERT INTO t VALUES (${k})`));
  t.ok(await replica.follower.waitFor(7, 30_000), 'caught up after the outage');
  t.same(rows(replica, 'a.db'), [1, 2, 3, 4, 5]);
  t.same(entryLines(replica.journalFile), primary.lines());
});
