/**
 * A read-only replica's follower: it keeps a local copy of the primary's
 * journal (same seqs, same bytes) and its databases in line with it, from
 * the JetStream stream the primary ships its journal chunks to.
 *
 * For each message, in stream order: the entries are written to the local
 * journal first (so the copy is durable before anything depends on it), then
 * applied to the databases with replay's rebuild, then the position is
 * stored with the data, and only then is the message acked. A crash anywhere
 * in between is made good at the next start: the local journal is fed to
 * rebuild again from where the databases are known to stand, and the
 * consumer is made to agree with the stored position.
 *
 * The follower never throws out of its loop: NATS failures and failures to
 * write or apply are retried after bounded sleeps. It halts only on what no
 * retry can mend (a gap in the journal seqs, a damaged message, a restore
 * whose state cannot be rebuilt here within the replica's restore bounds:
 * REPLICA_RESTORE_STOPPED, replica-restorer.ts), loudly; a halted replica
 * serves what it holds and says why in its status.
 */
import type { JsMsg, Consumer, ConsumerMessages } from '@nats-io/jetstream';
import { EngineError } from '../../errors';
import type { Journal } from '../../../journal/journal';
import type { JournalEntry } from '../../../journal/record';
import { JournalError, readJournal } from '../../../journal/reader';
import {
  entriesOf,
  parseMessage,
  StreamMessageError,
  type EntriesMessage,
  type StreamMessage,
} from '../stream/chunk-message';
import type { JournalStream } from '../stream/journal-stream';
import { openConsumer } from './replica-consumer';
import { readPosition, writePosition, type FollowerPosition } from './replica-position';
import { SessionWindow } from './replica-session-window';
import { voidedEarlier } from './replica-voids';
import { InThreadApplier, type DatabaseApplier } from './replica-applier';

/** Entries that make a database's file anew or remove it. */
const REPLACES_FILE: ReadonlySet<JournalEntry['kind']> = new Set([
  'createdb',
  'dropdb',
  'copydb',
  'resetdb',
  'restoredb',
]);

export interface FollowerDeps {
  /** Connected; the stream exists. Not closed by the follower. */
  readonly stream: JournalStream;
  /** The replica's own journal, opened by the server; the follower appends the primary's entries to it. */
  readonly journal: Journal;
  /** The journal's active file: the follower reads its copy back at start, and to rebuild a database. */
  readonly journalFile: string;
  /** A database's file, by its name in the journal (databaseFileIn in database-names.ts). */
  readonly fileOf: (db: string) => string;
  /** Where the follower keeps its stream position: beside the data, which it describes. */
  readonly positionFile: string;
  /** The durable consumer's name, unique per replica. */
  readonly consumer: string;
  readonly log: (message: string) => void;
  /**
   * Told of each database whose file the follower created, removed or
   * replaced (a drop, a copy, a reset, a rebuild after a void): the server's
   * engine processes must let go of the old file, or they would go on
   * reading it.
   */
  readonly replaced?: (db: string) => Promise<void>;
  /** What applies entries to the databases. @default an InThreadApplier (the server gives a WorkerApplier) */
  readonly applier?: DatabaseApplier;
  /**
   * Makes the journal index's file hold every entry written so far, for a
   * restore's rebuild process to read; called before entries with a
   * `restoredb` among them are applied. Absent: the replica keeps no index.
   */
  readonly settleIndex?: () => Promise<void>;
  /** ms since the epoch; injectable for the lag in seconds. */
  readonly clock?: () => number;
  /** How often the stream's end is read for the lag, in ms (default 1000). */
  lagPollMs?: number;
  /** How long one pull waits for messages, in ms (at least 1000, JetStream's minimum; default 2000: a pull left on a node that died ends soon). */
  pullWaitMs?: number;
  /** Bounds of the sleep between retries after a failure, in ms (default 100 and 1000: after a JetStream node is lost, the stream is back within seconds). */
  retryMinMs?: number;
  retryMaxMs?: number;
}

export interface FollowerLag {
  /** Journal seqs the primary has shipped that are not applied here yet. */
  readonly seqBehind: number;
  /** 0 when caught up; else how long ago the last entry applied here was written by the primary. */
  readonly secondsBehind: number;
  /** The last journal seq in the stream, as last read. */
  readonly primaryLastSeq: number;
}

export interface FenceSeen {
  readonly epoch: number;
  readonly node: string;
  /** Where the primary that took over serves. */
  readonly url: string;
}

/** A chunk that does not follow the local journal: applying it would apply out of order. */
class JournalGapError extends Error {
  constructor(
    readonly localLastSeq: number,
    message: EntriesMessage,
  ) {
    super(
      `chunk ${message.firstSeq}..${message.lastSeq} does not follow the local journal, which ends at ${localLastSeq}`,
    );
  }
}

const PULL_BATCH = 100;
/** How long start() waits for its first read of the stream's end. */
const FIRST_LAG_READ_MS = 1000;
const DECODER = new TextDecoder();

/** The headers' type comes from a module path the client's typings do not resolve here: only `get` is used. */
interface HeaderReader {
  get(name: string): string;
}

function streamMessageOf(msg: JsMsg): StreamMessage {
  const headers = msg.headers as HeaderReader | undefined;
  return parseMessage((name) => headers?.get(name) ?? '', DECODER.decode(msg.data));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The local journal from `fromSeq` on; none when there is no journal file yet. */
async function localEntries(journalFile: string, fromSeq: number): Promise<JournalEntry[]> {
  try {
    return (await readJournal(journalFile, { fromSeq })).entries;
  } catch (error) {
    if (error instanceof JournalError && error.kind === 'missing') return [];
    throw error;
  }
}

/** A restore that cannot be rebuilt here however often it is tried (replica-restorer.ts). */
function isRestoreStop(error: unknown): error is EngineError {
  return error instanceof EngineError && error.errorName === 'REPLICA_RESTORE_STOPPED';
}

interface Waiter {
  readonly seq: number;
  resolve(reached: boolean): void;
}

/** How long a pull may bring nothing while the stream holds more, before it is taken up again. */
const STALL_MS = 3000;

export class ReplicaFollower {
  private readonly clock: () => number;
  private readonly applier: DatabaseApplier;
  private readonly window = new SessionWindow();
  private streamSeq: number;
  private appliedSeq: number;
  /** ms since the epoch of the last entry applied (the primary's clock). */
  private appliedAt: number;
  private primaryLastSeq = 0;
  private newestFence: FenceSeen | null = null;
  private highestEpoch = 0;
  private haltedBy: Error | null = null;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private pull: ConsumerMessages | null = null;
  /** When the current pull started or last delivered a message (this process's clock). */
  private lastProgressAt = Date.now();
  /** The watchdog stopped the current pull: it is made again, from the stored position. */
  private stalled = false;
  private lagTimer: NodeJS.Timeout | null = null;
  private lagPolling = false;
  private lagFailing = false;
  private wakeSleep: (() => void) | null = null;
  private waiters: Waiter[] = [];
  /** Told after every message handled, and when the follower halts or stops. */
  private readonly progressListeners = new Set<() => void>();
  /** The local journal's last seq when a gap was met: met again from a fresh consumer, it is believed. */
  private gapAt: number | null = null;
  private remakeConsumer = false;

  private constructor(
    private readonly deps: FollowerDeps,
    position: FollowerPosition,
    appliedAt: number,
  ) {
    this.clock = deps.clock ?? Date.now;
    this.applier = deps.applier ?? new InThreadApplier(deps.fileOf, deps.journalFile, deps.log);
    this.streamSeq = position.streamSeq;
    this.appliedSeq = position.journalSeq;
    this.appliedAt = appliedAt;
  }

  /**
   * Brings the databases in line with the local journal (from where they
   * are known to stand: a crash may have cut the last message short), then
   * consumes the stream after the stored position. Throws only when the
   * local journal cannot be read or applied.
   */
  static async start(deps: FollowerDeps): Promise<ReplicaFollower> {
    const position = ReplicaFollower.startingPosition(deps);
    const follower = new ReplicaFollower(deps, position, (deps.clock ?? Date.now)());
    try {
      await follower.catchUpLocally(position.settledThrough);
    } catch (error) {
      if (!isRestoreStop(error)) {
        await follower.applier.close();
        throw error;
      }
      // Tried again at every start, never in a loop: it halts here, and serves what it holds.
      follower.halt(follower.stopAt(error));
    }
    // Read once before following, within bounds, so that lag() means something from the start.
    await Promise.race([follower.pollLag(), new Promise((resolve) => setTimeout(resolve, FIRST_LAG_READ_MS).unref())]);
    follower.lagTimer = setInterval(() => void follower.pollLag(), deps.lagPollMs ?? 1000);
    follower.lagTimer.unref();
    if (follower.haltedBy === null) follower.loop = follower.run();
    return follower;
  }

  /** The stored position, unless the local journal ends before it (the data is the truth: the stream is read again from its start). */
  private static startingPosition(deps: FollowerDeps): FollowerPosition {
    const stored = readPosition(deps.positionFile, deps.log);
    const localLast = deps.journal.lastSeq;
    if (stored !== null && stored.journalSeq <= localLast) return stored;
    if (stored !== null)
      deps.log(
        `replica: the position says seq ${stored.journalSeq} but the local journal ends at ${localLast}: reading the stream from its start`,
      );
    return { streamSeq: 0, journalSeq: 0, settledThrough: 0 };
  }

  private async catchUpLocally(settledThrough: number): Promise<void> {
    const localLast = this.deps.journal.lastSeq;
    if (localLast === 0) return;
    // From the last entry at least, for its time (the lag in seconds).
    const entries = await localEntries(this.deps.journalFile, Math.min(settledThrough + 1, localLast));
    await this.settleIndexFor(entries);
    await this.applier.rebuild(entries);
    this.window.observe(entries);
    this.appliedSeq = localLast;
    const last = entries.at(-1);
    if (last !== undefined) this.appliedAt = Date.parse(last.ts);
  }

  /** The journal seq through which the databases are applied. */
  get applied(): number {
    return this.appliedSeq;
  }

  /** What the applied checkpoint may say: before an open session's begin (it is rolled back in the databases), else `applied`. */
  settledThrough(): number {
    const begin = this.window.beginSeq;
    return begin === null ? this.appliedSeq : Math.min(begin - 1, this.appliedSeq);
  }

  lag(): FollowerLag {
    const primaryLastSeq = Math.max(this.primaryLastSeq, this.appliedSeq);
    const seqBehind = primaryLastSeq - this.appliedSeq;
    const secondsBehind = seqBehind === 0 ? 0 : Math.max(0, (this.clock() - this.appliedAt) / 1000);
    return { seqBehind, secondsBehind, primaryLastSeq };
  }

  /** The newest fence seen: the epoch, node and address of the primary that took over last. */
  get fence(): FenceSeen | null {
    return this.newestFence;
  }

  /** The highest lease epoch seen, on entries or on a fence. */
  get epoch(): number {
    return this.highestEpoch;
  }

  /** Why the follower halted (a gap, a damaged message); null while it follows. */
  get halted(): Error | null {
    return this.haltedBy;
  }

  /** Read-your-writes: true once `seq` is applied here; false after `timeoutMs`, or when the follower stops or halts first. */
  waitFor(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.appliedSeq >= seq) return Promise.resolve(true);
    if (this.stopping || this.haltedBy !== null) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      const waiter: Waiter = { seq, resolve: (reached) => settle(reached) };
      const settle = (reached: boolean): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((other) => other !== waiter);
        resolve(reached);
      };
      this.waiters.push(waiter);
    });
  }

  /** Stops consuming; once it resolves, nothing more is applied. The stream stays open (it is the caller's). */
  async stop(): Promise<void> {
    this.stopping = true;
    // A restore's rebuild process would hold the loop up for as long as -restore-timeout; the entry is applied at the next start.
    this.applier.stopRestores();
    if (this.lagTimer !== null) clearInterval(this.lagTimer);
    this.lagTimer = null;
    this.pull?.stop();
    this.wakeSleep?.();
    await this.loop;
    await this.applier.close();
    for (const waiter of [...this.waiters]) waiter.resolve(false);
    this.tellProgress();
  }

  /**
   * For promotion: applies everything in the stream as it stands now, then
   * stops. Rejects when the follower halts (or is stopped) before that.
   */
  async catchUpAndStop(): Promise<void> {
    const end = await this.deps.stream.lastStreamSeq();
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.streamSeq < end && !this.stopping && this.haltedBy === null) return;
        this.progressListeners.delete(check);
        resolve();
      };
      this.progressListeners.add(check);
      check();
    });
    const reached = this.streamSeq >= end;
    await this.stop();
    if (this.haltedBy !== null) throw this.haltedBy;
    if (!reached) throw new Error(`the follower stopped at stream seq ${this.streamSeq}, before the end at ${end}`);
  }

  private tellProgress(): void {
    for (const listener of [...this.progressListeners]) listener();
  }

  private async run(): Promise<void> {
    const minMs = this.deps.retryMinMs ?? 100;
    const maxMs = this.deps.retryMaxMs ?? 1000;
    let delay = minMs;
    let consumer: Consumer | null = null;
    while (!this.stopping && this.haltedBy === null) {
      try {
        consumer ??= await openConsumer(
          this.deps.stream,
          this.deps.consumer,
          this.streamSeq,
          this.takeRemake(),
          this.deps.log,
        );
        await this.pullOnce(consumer);
        delay = minMs;
      } catch (error) {
        if (this.stopping) break;
        consumer = null; // made to agree with the position again before the next pull
        this.failed(error);
        if (this.haltedBy !== null) break;
        await this.sleep(delay);
        delay = Math.min(delay * 2, maxMs);
      }
    }
    this.pull = null;
  }

  private takeRemake(): boolean {
    const remake = this.remakeConsumer;
    this.remakeConsumer = false;
    return remake;
  }

  private async pullOnce(consumer: Consumer): Promise<void> {
    const pull = await consumer.fetch({
      max_messages: PULL_BATCH,
      expires: Math.max(1000, this.deps.pullWaitMs ?? 2000),
    });
    this.pull = pull;
    this.lastProgressAt = Date.now();
    try {
      for await (const msg of pull) {
        // Left unacked: the next start finds them pending and makes the consumer again.
        if (this.stopping) break;
        await this.handle(msg);
        this.lastProgressAt = Date.now();
      }
    } finally {
      this.pull = null;
    }
    if (this.stalled) {
      this.stalled = false;
      throw new Error(`no message for ${STALL_MS / 1000} s while the stream holds more`);
    }
  }

  /**
   * A pull left on a JetStream node that died (its consumer's leader moved)
   * can go quiet for longer than its own expiry: when the stream holds more
   * than the replica applied and nothing arrived for a while, the pull is
   * stopped and the consumer taken up again from the stored position.
   */
  private watchPull(): void {
    if (this.pull === null || this.stalled || this.appliedSeq >= this.primaryLastSeq) return;
    if (Date.now() - this.lastProgressAt < STALL_MS) return;
    this.stalled = true;
    this.pull.stop();
  }

  /** What to do about a failed pull or message: halt on what no retry mends, else log and retry. */
  private failed(error: unknown): void {
    if (error instanceof StreamMessageError) return this.halt(error);
    if (isRestoreStop(error)) return this.halt(this.stopAt(error));
    if (error instanceof JournalGapError) {
      if (this.gapAt === error.localLastSeq) return this.halt(error);
      // Once, read the stream afresh: a message delivered out of order looks the same.
      this.gapAt = error.localLastSeq;
      this.remakeConsumer = true;
    }
    // A rebuild cut short may leave a session or a batch open in the engine; the next request waits behind this one.
    this.applier
      .reset()
      .catch((resetError: unknown) =>
        this.deps.log(`replica: the applying engine could not be made afresh (${describe(resetError)})`),
      );
    this.deps.log(`replica: following failed at stream seq ${this.streamSeq + 1} (${describe(error)}); retrying`);
  }

  /** REPLICA_RESTORE_STOPPED saying how far this replica applied. */
  private stopAt(error: EngineError): EngineError {
    return new EngineError('REPLICA_RESTORE_STOPPED', { ...error.params, applied: this.appliedSeq }, { cause: error });
  }

  /** Settles the journal index before entries with a `restoredb` among them are applied: the rebuild process reads it. */
  private async settleIndexFor(entries: readonly JournalEntry[]): Promise<void> {
    if (this.deps.settleIndex === undefined || !entries.some((entry) => entry.kind === 'restoredb')) return;
    await this.deps.settleIndex();
  }

  private halt(error: Error): void {
    this.haltedBy = error;
    this.deps.log(
      `REPLICA HALTED at journal seq ${this.appliedSeq} (stream seq ${this.streamSeq}): ${error.message}. Nothing more is applied; the replica needs repair.`,
    );
    for (const waiter of [...this.waiters]) waiter.resolve(false);
    this.tellProgress();
  }

  private async handle(msg: JsMsg): Promise<void> {
    // A redelivery of a message handled already.
    if (msg.seq <= this.streamSeq) return this.ack(msg);
    const message = await this.deps.stream.withLines(streamMessageOf(msg));
    if (message.kind === 'fence') this.takeFence(message.epoch, message.node, message.url);
    else await this.takeEntries(message);
    this.storePosition(msg.seq);
    await this.ack(msg);
    this.tellProgress();
  }

  private takeFence(epoch: number, node: string, url: string): void {
    if (epoch >= (this.newestFence?.epoch ?? -1)) this.newestFence = { epoch, node, url };
    this.highestEpoch = Math.max(this.highestEpoch, epoch);
    // The old primary's open session can never end now; the databases have it rolled back.
    this.window.clear();
    this.deps.log(`replica: primary ${node} (${url}) holds epoch ${epoch} from here on`);
  }

  private async takeEntries(message: EntriesMessage): Promise<void> {
    const fence = this.newestFence;
    if (fence !== null && message.epoch < fence.epoch) {
      this.deps.log(
        `replica: skipping chunk ${message.firstSeq}..${message.lastSeq} of epoch ${message.epoch}, written after epoch ${fence.epoch}'s fence by a primary that was replaced`,
      );
      return;
    }
    this.highestEpoch = Math.max(this.highestEpoch, message.epoch);
    this.primaryLastSeq = Math.max(this.primaryLastSeq, message.lastSeq);
    // Applied once: every entry is in the local journal and the databases already.
    if (message.lastSeq <= this.appliedSeq) return;
    const localLast = this.deps.journal.lastSeq;
    if (message.firstSeq > localLast + 1) throw new JournalGapError(localLast, message);
    const entries = entriesOf(message);
    const copied = entries.filter((entry) => entry.seq > localLast);
    if (copied.length > 0) await this.deps.journal.appendCopied(copied);
    await this.apply(entries.filter((entry) => entry.seq > this.appliedSeq));
    this.gapAt = null;
  }

  /** Applies entries after the open session's, so that a session spread over chunks is applied whole when it commits. */
  private async apply(entries: readonly JournalEntry[]): Promise<void> {
    const fed = [...this.window.entries, ...entries];
    await this.settleIndexFor(fed);
    await this.applier.rebuild(fed);
    const voided = voidedEarlier(entries, new Set(fed.map((entry) => entry.seq)));
    if (voided.length > 0) await this.applier.redoVoided(voided);
    await this.tellReplaced(entries, voided);
    this.window.observe(entries);
    const last = entries.at(-1);
    if (last === undefined) return;
    this.appliedSeq = last.seq;
    this.appliedAt = Date.parse(last.ts);
    for (const waiter of this.waiters.filter((w) => w.seq <= this.appliedSeq)) waiter.resolve(true);
  }

  private async tellReplaced(entries: readonly JournalEntry[], voided: readonly number[]): Promise<void> {
    const replaced = this.deps.replaced;
    if (replaced === undefined) return;
    const voidedSet = new Set(voided);
    const dbs = new Set<string>();
    for (const entry of entries) {
      if (entry.db === null) continue;
      if (REPLACES_FILE.has(entry.kind) || voidedSet.has(entry.seq)) dbs.add(entry.db);
      if (entry.kind === 'void') dbs.add(entry.db);
    }
    for (const db of dbs) {
      try {
        await replaced(db);
      } catch (error) {
        this.deps.log(`replica: the engine processes could not let go of ${db} (${(error as Error).message})`);
      }
    }
  }

  private storePosition(streamSeq: number): void {
    this.streamSeq = streamSeq;
    writePosition(this.deps.positionFile, {
      streamSeq,
      journalSeq: this.appliedSeq,
      settledThrough: this.settledThrough(),
    });
  }

  /** Acked with the server's answer awaited: an ack lost unnoticed would leave the consumer out of order. */
  private async ack(msg: JsMsg): Promise<void> {
    if (!(await msg.ackAck())) throw new Error(`the ack of stream seq ${msg.seq} was not confirmed`);
  }

  /** Reads the stream's end for the lag; a failure is told once, until a read succeeds again. */
  private pollLag(): Promise<void> {
    if (this.lagPolling || this.stopping) return Promise.resolve();
    this.lagPolling = true;
    return this.deps.stream
      .tail(false)
      .then((tail) => {
        this.primaryLastSeq = Math.max(this.primaryLastSeq, tail.lastEntries?.message.lastSeq ?? 0);
        this.lagFailing = false;
        this.watchPull();
      })
      .catch((error: unknown) => {
        if (!this.lagFailing) this.deps.log(`replica: cannot read the stream's end for the lag (${describe(error)})`);
        this.lagFailing = true;
      })
      .finally(() => {
        this.lagPolling = false;
      });
  }

  /** A retry's sleep, cut short by stop(). */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleep = done;
    });
  }
}
