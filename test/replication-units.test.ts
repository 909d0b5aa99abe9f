/**
 * The pure parts of replication and the primary's shipping rules, without
 * NATS: the chunk message, the shipper against a stream that misbehaves on
 * purpose, the writer's wait for its shipper, the server's role, and the
 * replication flags. The same rules against real nats-server processes are
 * in replication.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { encodeLine, type JournalEntry } from '../journal/record';
import { JournalWriter, type NewEntry, type ShippedChunk } from '../journal/writer';
import { EngineError } from '../src/errors';
import { OptionsError, parseCommandLine, type Config } from '../src/config/options';
import {
  entriesOf,
  headersOf,
  messageIdOf,
  parseMessage,
  type EntriesMessage,
  type StreamMessage,
} from '../src/replication/stream/chunk-message';
import { JetStreamUnavailableError, JournalShipper } from '../src/replication/primary/journal-shipper';
import { WrongLastSequenceError, type JournalStream, type StreamTail } from '../src/replication/stream/journal-stream';
import { ServerRoleState } from '../src/services/server-role';
import { scratchDir } from './helpers/scratch-dir';

function entry(seq: number, epoch?: number): JournalEntry {
  const sql = `INSERT INTO t VALUES (${seq})`;
  const base: JournalEntry = {
    seq,
    ts: '2026-11-25T10:00:00.000Z',
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
  return epoch === undefined ? base : { ...base, epoch };
}

function chunk(first: number, last: number, epoch = 1): EntriesMessage {
  const lines = Array.from({ length: last - first + 1 }, (_, i) => encodeLine(entry(first + i, epoch))).join('');
  return { kind: 'entries', firstSeq: first, lastSeq: last, epoch, node: 'p1', lines };
}

const headerReader = (message: StreamMessage) => {
  const pairs = new Map(headersOf(message));
  return (name: string): string => pairs.get(name) ?? '';
};

t.test('a chunk message reads back as it was sent, and a damaged one is refused', async (tt) => {
  const message = chunk(5, 7);
  const read = parseMessage(headerReader(message), message.lines);
  tt.same(read, message, 'headers and body give the message back');
  tt.same(
    entriesOf(message).map((e) => e.seq),
    [5, 6, 7],
  );
  tt.throws(
    () => entriesOf({ ...message, lines: message.lines.replace('VALUES (6)', 'VALUES (9)') }),
    { name: 'StreamMessageError' },
    'a changed line fails its checksum',
  );
  tt.throws(
    () => entriesOf({ ...message, firstSeq: 4 }),
    { name: 'StreamMessageError' },
    'seqs that do not follow the header',
  );
  tt.throws(
    () => entriesOf({ ...message, lastSeq: 8 }),
    { name: 'StreamMessageError' },
    'fewer entries than the header says',
  );
  tt.throws(() => parseMessage(() => 'x', ''), { name: 'StreamMessageError' }, 'a message that is not ours');
  const fence = { kind: 'fence', epoch: 3, node: 's1', url: 'http://s1:8080' } as const;
  tt.same(parseMessage(headerReader(fence), ''), fence, 'a fence reads back');
  tt.equal(messageIdOf(chunk(5, 7)), messageIdOf(chunk(5, 7)), 'a retry of a chunk has its message id');
  tt.not(
    messageIdOf(chunk(5, 7)),
    messageIdOf({ ...chunk(5, 7), lines: chunk(5, 7).lines.replace('(6)', '(60)') }),
    'other entries under the same seqs are another message',
  );
  tt.not(messageIdOf(chunk(5, 7, 1)), messageIdOf(chunk(5, 7, 2)), 'and so is another epoch');
});

/** A stream that answers publishes from a script. */
class ScriptedStream {
  readonly published: Array<{ id: string; expected: number }> = [];
  tailAnswer: StreamTail = { lastStreamSeq: 0, lastEntries: null, fence: null };
  constructor(private readonly answers: Array<number | Error>) {}

  publish(message: StreamMessage, expected: number): Promise<number> {
    this.published.push({ id: messageIdOf(message), expected });
    const answer = this.answers.length > 1 ? this.answers.shift() : this.answers[0];
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as number);
  }

  tail(): Promise<StreamTail> {
    return Promise.resolve(this.tailAnswer);
  }
}

function shipperOn(stream: ScriptedStream, timeoutMs = 2000): { shipper: JournalShipper; logs: string[] } {
  const logs: string[] = [];
  const shipper = new JournalShipper(stream as unknown as JournalStream, 1, 'p1', 10, {
    timeoutMs,
    retryPauseMs: 5,
    log: (m) => logs.push(m),
  });
  return { shipper, logs };
}

const shipped = (message: EntriesMessage): ShippedChunk => ({
  firstSeq: message.firstSeq,
  lastSeq: message.lastSeq,
  lines: message.lines,
});

t.test(
  'the shipper publishes where the stream ends and retries the same message until JetStream answers',
  async (tt) => {
    const stream = new ScriptedStream([new Error('TimeoutError'), new Error('TimeoutError'), 11]);
    const { shipper } = shipperOn(stream);
    await shipper.ship(shipped(chunk(1, 3)));
    tt.equal(stream.published.length, 3, 'two failed attempts, then the acknowledgement');
    tt.equal(
      new Set(stream.published.map((p) => p.id)).size,
      1,
      'every attempt is the same message, so JetStream de-duplicates a retry that had landed',
    );
    tt.same(
      stream.published.map((p) => p.expected),
      [10, 10, 10],
      'each expects the stream to end where this primary left it',
    );
    tt.equal(shipper.lastStreamSeq, 11);
    stream.published.length = 0;
    await shipper.ship(shipped(chunk(4, 4)));
    tt.equal(stream.published[0]?.expected, 11, 'the next chunk expects the last one');
  },
);

t.test('JetStream that never answers: the chunk fails within -journal-timeout with EJETSTREAM', async (tt) => {
  const stream = new ScriptedStream([new Error('connection refused')]);
  const { shipper } = shipperOn(stream, 150);
  const started = Date.now();
  const error = await shipper.ship(shipped(chunk(1, 1))).catch((e: unknown) => e);
  tt.type(error, JetStreamUnavailableError);
  tt.equal((error as JetStreamUnavailableError).code, 'EJETSTREAM');
  tt.match((error as Error).message, /connection refused/, 'it says why');
  tt.ok(Date.now() - started < 2000, 'it gave up at its timeout');
  tt.ok(stream.published.length > 1, 'after retrying');
});

t.test('a newer epoch at the end of the stream fences the shipper for good', async (tt) => {
  const stream = new ScriptedStream([new WrongLastSequenceError(10, null)]);
  stream.tailAnswer = {
    lastStreamSeq: 12,
    lastEntries: null,
    fence: { streamSeq: 12, message: { kind: 'fence', epoch: 2, node: 's1', url: 'http://s1:8080' } },
  };
  const fenced: number[] = [];
  const shipper = new JournalShipper(stream as unknown as JournalStream, 1, 'p1', 10, {
    timeoutMs: 500,
    log: () => undefined,
    onFenced: (f) => fenced.push(f.epoch),
  });
  const error = await shipper.ship(shipped(chunk(1, 1))).catch((e: unknown) => e);
  tt.type(error, EngineError);
  tt.equal((error as EngineError).errorName, 'NOT_PRIMARY');
  tt.match((error as Error).message, /s1 took over \(lease epoch 2\); send writes to http:\/\/s1:8080/);
  tt.same(fenced, [2], 'told once');
  const published = stream.published.length;
  const again = await shipper.ship(shipped(chunk(1, 1))).catch((e: unknown) => e);
  tt.equal((again as EngineError).errorName, 'NOT_PRIMARY', 'every later chunk is refused');
  tt.equal(stream.published.length, published, 'without trying the stream again');
});

t.test(
  'its own chunk at the end of the stream is a retry that landed; another of its epoch stops shipping',
  async (tt) => {
    const mine = chunk(1, 2);
    const landed = new ScriptedStream([new WrongLastSequenceError(10, null)]);
    landed.tailAnswer = { lastStreamSeq: 11, lastEntries: { streamSeq: 11, message: mine }, fence: null };
    const { shipper } = shipperOn(landed);
    await shipper.ship(shipped(mine));
    tt.equal(shipper.lastStreamSeq, 11, 'taken as acknowledged, at the seq where it landed');

    const other = new ScriptedStream([new WrongLastSequenceError(10, null)]);
    other.tailAnswer = { lastStreamSeq: 11, lastEntries: { streamSeq: 11, message: chunk(1, 3) }, fence: null };
    const diverged = shipperOn(other);
    const error = await diverged.shipper.ship(shipped(mine)).catch((e: unknown) => e);
    tt.type(error, JetStreamUnavailableError, 'a chunk it had given up on landed: the journals differ');
    tt.match(diverged.logs.join('\n'), /restart the server/);
    const next = await diverged.shipper.ship(shipped(chunk(1, 1))).catch((e: unknown) => e);
    tt.type(next, JetStreamUnavailableError, 'and it refuses until a restart reconciles them');
  },
);

t.test(
  'the writer waits for its shipper: a refused chunk is cut off the file, and entries carry the epoch',
  async (tt) => {
    const file = path.join(scratchDir(tt), 'statements.jsonl');
    const writer = await JournalWriter.open({
      file,
      maxSize: 1 << 20,
      fsync: true,
      compress: false,
      header: {
        service: 'sqlscribe',
        version: '0',
        level: 'mod',
        betterSqlite3: '12',
        sqlite: '3',
        node: 'v20',
        tz: 'UTC',
      },
    });
    tt.teardown(() => writer.close());
    const newEntry = (n: number): NewEntry => {
      const { seq: _seq, ts: _ts, ...rest } = entry(n);
      return rest;
    };
    let refuse = true;
    const seen: ShippedChunk[] = [];
    writer.shipThrough({
      epoch: 4,
      ship: (c) => (seen.push(c), refuse ? Promise.reject(new Error('no JetStream')) : Promise.resolve()),
    });
    const refused = writer.append(newEntry(1));
    await tt.rejects(
      refused.written,
      { name: 'JournalUnavailableError' },
      'a chunk the shipper refuses is not written',
    );
    tt.notMatch(fs.readFileSync(file, 'utf8'), /"kind":"exec"/, 'and nothing of it stays in the file');
    tt.equal(writer.lastSeq, 0);
    refuse = false;
    const accepted = writer.append(newEntry(2));
    await accepted.written;
    tt.equal(accepted.seq, 1, 'the seq is given again');
    const line =
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .find((l) => l.includes('"kind":"exec"')) ?? '';
    tt.match(line, /"epoch":4/, "the entry carries the shipper's epoch");
    tt.equal(seen.at(-1)?.lines, `${line}\n`, 'the shipper got the very line the file holds');
    writer.shipThrough(null);
    await tt.rejects(writer.appendCopied([entry(5)]), /does not follow/, 'a copied entry must continue the journal');
    await writer.appendCopied([entry(2)]);
    tt.equal(writer.lastSeq, 2, "a replica's copied entry keeps its seq");
  },
);

t.test('the role decides who may write, and the refusal names the primary', async (tt) => {
  const role = new ServerRoleState('standalone');
  tt.doesNotThrow(() => role.assertWritable('x'));
  role.becomeReplica();
  role.following('http://p:8080');
  tt.throws(() => role.assertWritable('an import'), {
    errorName: 'READ_ONLY_REPLICA',
    message: /an import must go to the primary, http:\/\/p:8080/,
  });
  role.becomePrimary('http://me:8080');
  tt.doesNotThrow(() => role.assertWritable('x'));
  role.fenced({ node: 's1', epoch: 3, url: 'http://s1:8080' });
  tt.throws(() => role.assertWritable('x'), { errorName: 'NOT_PRIMARY', message: /s1 took over \(lease epoch 3\)/ });
});

t.test('replication flags', async (tt) => {
  const config = (...argv: string[]): Config => {
    const parsed = parseCommandLine(argv, '/srv');
    if (parsed.kind !== 'config') throw new Error('help');
    return parsed.config;
  };
  tt.equal(config().replication, null, 'off by default');
  const primary = config('-journal-nats', 'nats://a:4222, b:4222', '-node', 'p1', '-journal-replicas', '3');
  tt.same(primary.replication, {
    role: 'primary',
    servers: ['nats://a:4222', 'nats://b:4222'],
    auth: null,
    stream: 'sqlscribe',
    streamReplicas: 3,
    timeoutMs: 5000,
    node: 'p1',
    advertise: null,
    promote: false,
    minSeqWaitMs: 5000,
  });
  const replica = config(
    '-follow',
    'nats://a:4222',
    '-promote',
    '-min-seq-wait',
    '2s',
    '-journal-stream',
    'school_1',
    '-advertise',
    'http://r:8081/',
  );
  tt.match(replica.replication, {
    role: 'replica',
    stream: 'school_1',
    promote: true,
    minSeqWaitMs: 2000,
    advertise: 'http://r:8081',
  });
  tt.match(replica.replication?.node, /:\/srv\/data$/, 'the node defaults to host and data directory');
  const withUser = config('-journal-nats', 'nats://school:p%40ss@a:4222,nats://b:4222');
  tt.same(withUser.replication?.servers, ['nats://a:4222', 'nats://b:4222'], 'credentials are taken out of the URLs');
  tt.same(withUser.replication?.auth, { user: 'school', pass: 'p@ss' }, 'and kept apart, decoded');
  tt.same(
    config('-follow', 'tls://s3cr3t-token@a:4443').replication?.auth,
    { token: 's3cr3t-token' },
    'a lone user part is a token',
  );
  try {
    parseCommandLine(['-journal-nats', 'nats://school:secretword@:4222'], '/srv');
    tt.fail('a URL without a host is refused');
  } catch (error) {
    tt.notMatch((error as Error).message, /secretword/, 'the refusal does not repeat the password');
  }
  for (const [argv, pattern] of [
    [['-journal-nats', 'nats://u:one@a,nats://u:two@b'], /different credentials/],
    [['-journal-nats', 'nats://a', '-follow', 'nats://b'], /cannot be used together/],
    [['-promote'], /needs -journal-nats .* or -follow/],
    [['-journal-nats', 'nats://a', '-promote'], /only a replica/],
    [['-journal-nats', 'nats://a', '-log-level', 'error'], /records every change/],
    [['-follow', 'nats://a', '-log-level', 'none'], /records every change/],
    [['-journal-nats', 'http://a'], /expected nats:\/\/host:port/],
    [['-journal-nats', 'nats://a', '-journal-stream', 'a.b'], /A-Z, a-z/],
    [['-journal-nats', 'nats://a', '-journal-replicas', '7'], /1 to 5/],
  ] as const) {
    tt.throws(() => parseCommandLine([...argv], '/srv'), OptionsError, argv.join(' '));
    try {
      parseCommandLine([...argv], '/srv');
    } catch (error) {
      tt.match((error as Error).message, pattern, argv.join(' '));
    }
  }
});
