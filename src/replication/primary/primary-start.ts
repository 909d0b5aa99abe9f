/**
 * A primary's start with -journal-nats: connect, make sure the stream
 * exists, bring the local journal and the stream to the same end, take (or
 * keep) the primary lease, and from then on ship every chunk.
 *
 * - The stream lacks local entries (shipping newly turned on, or the server
 *   died after its own sync but before JetStream's acknowledgement): they are
 *   published now. Their clients were never answered, so either end is honest.
 * - The stream has entries the local journal lacks (a chunk given up on that
 *   landed after all): they are copied into the local journal, and start-up
 *   recovery applies them, so this server agrees with its replicas.
 * - Another server holds the lease: this one was replaced, and it refuses to
 *   start as primary rather than fork the journal.
 */
import { readJournal, JournalError } from '../../../journal/reader';
import { encodeLine, type JournalEntry } from '../../../journal/record';
import type { Journal } from '../../../journal/journal';
import type { ReplicationConfig } from '../../config/options';
import { entriesOf, type EntriesMessage, type FenceMessage } from '../stream/chunk-message';
import { JournalStream } from '../stream/journal-stream';
import { JournalShipper } from './journal-shipper';
import { PrimaryLease, type LeaseHolder } from '../stream/primary-lease';

/** Why this server cannot be the primary; the server stops with it. */
export class PrimaryStartError extends Error {}

/** The stream ran ahead of the journal while the server was serving: only a restart can take those entries in. */
export class StreamAheadError extends Error {}

export interface Primary {
  readonly stream: JournalStream;
  readonly lease: PrimaryLease;
  readonly shipper: JournalShipper;
  readonly holder: LeaseHolder;
  close(): Promise<void>;
}

export interface PrimaryStartOptions {
  readonly config: ReplicationConfig;
  readonly journal: Journal;
  readonly journalFile: string;
  /** Where clients reach this server: the lease says it. */
  readonly url: string;
  readonly log: (message: string) => void;
  /**
   * Whether the server serves yet. Before it does, entries the stream has
   * and the journal lacks are copied (recovery applies them next); once it
   * serves, they could not be applied in order with the writes going on, so
   * the start is refused until a restart.
   */
  readonly serving: boolean;
  /** Told when a newer epoch took over and this server stopped shipping for good. */
  readonly onFenced?: (fence: FenceMessage) => void;
}

/** Local entries are published in chunks of about this many bytes. */
const CATCH_UP_BYTES = 512 * 1024;

export async function startPrimary(options: PrimaryStartOptions): Promise<Primary> {
  const { config, journal } = options;
  const stream = await JournalStream.connect(
    { servers: config.servers, auth: config.auth, stream: config.stream, replicas: config.streamReplicas },
    config.timeoutMs,
    `sqlscribe primary ${config.node}`,
  );
  try {
    await stream.ensure();
    const lease = await PrimaryLease.open(stream);
    const state = await lease.read();
    if (state !== null && state.holder.node !== config.node) {
      throw new PrimaryStartError(
        `${state.holder.node} holds the primary lease of stream ${config.stream} (epoch ${state.holder.epoch}, at ${state.holder.url}): this server was replaced. Start it as a replica (-follow) on an empty data directory`,
      );
    }
    const holder =
      state === null ? await lease.take(null, config.node, options.url) : await lease.renew(state, options.url);
    const streamLast = await alignWithStream(stream, options, holder.epoch);
    const shipper = new JournalShipper(stream, holder.epoch, config.node, streamLast, {
      timeoutMs: config.timeoutMs,
      log: options.log,
      ...(options.onFenced === undefined ? {} : { onFenced: options.onFenced }),
    });
    journal.shipThrough(shipper);
    return { stream, lease, shipper, holder, close: () => stream.close() };
  } catch (error) {
    await stream.close();
    throw error;
  }
}

/** Makes the stream and the local journal end at the same seq; gives the stream seq they end at. */
async function alignWithStream(stream: JournalStream, options: PrimaryStartOptions, epoch: number): Promise<number> {
  const { journal, journalFile, config, log } = options;
  const tail = await stream.tail(false);
  const streamSeq = tail.lastEntries?.message.lastSeq ?? 0;
  if (streamSeq > journal.lastSeq) {
    if (options.serving)
      throw new StreamAheadError(
        `the stream holds journal entries up to seq ${streamSeq}, past this server's ${journal.lastSeq}: restart the server to take them in`,
      );
    // Nothing writes before the server serves: the stand-in shipper is set aside while the stream's own entries are copied.
    journal.shipThrough(null);
    const copied = await copyFromStream(stream, journal, tail.lastEntries?.streamSeq ?? 0);
    log(
      `the stream held ${copied} journal entries the local journal lacked (a write given up on that reached JetStream): copied; start-up applies them`,
    );
    return tail.lastStreamSeq;
  }
  if (streamSeq < journal.lastSeq) {
    const shipped = await publishLocal(
      stream,
      await localEntriesAfter(journalFile, streamSeq),
      tail.lastStreamSeq,
      epoch,
      config.node,
      config.timeoutMs,
    );
    log(`published ${journal.lastSeq - streamSeq} local journal entries the stream lacked`);
    return shipped;
  }
  return tail.lastStreamSeq;
}

/** Copies into the local journal the entries of the stream after its last seq, reading back from `lastMessage`. */
async function copyFromStream(stream: JournalStream, journal: Journal, lastMessage: number): Promise<number> {
  const messages: EntriesMessage[] = [];
  for (let seq = lastMessage; seq >= 1; seq--) {
    const stored = await stream.message(seq);
    if (stored === null || stored.message.kind !== 'entries') continue;
    messages.unshift(stored.message);
    if (stored.message.firstSeq <= journal.lastSeq + 1) break;
  }
  const entries = messages.flatMap((message) => entriesOf(message)).filter((entry) => entry.seq > journal.lastSeq);
  await journal.appendCopied(entries);
  return entries.length;
}

async function localEntriesAfter(journalFile: string, seq: number): Promise<JournalEntry[]> {
  try {
    return (await readJournal(journalFile, { fromSeq: seq + 1 })).entries;
  } catch (error) {
    if (error instanceof JournalError && error.kind === 'missing') return [];
    throw error;
  }
}

async function publishLocal(
  stream: JournalStream,
  entries: readonly JournalEntry[],
  streamLast: number,
  epoch: number,
  node: string,
  timeoutMs: number,
): Promise<number> {
  let last = streamLast;
  let lines: string[] = [];
  let bytes = 0;
  let first = 0;
  const flush = async (lastSeq: number): Promise<void> => {
    if (lines.length === 0) return;
    last = await stream.publish(
      { kind: 'entries', firstSeq: first, lastSeq, epoch, node, lines: lines.join('') },
      last,
      timeoutMs,
    );
    lines = [];
    bytes = 0;
  };
  for (const [index, entry] of entries.entries()) {
    if (lines.length === 0) first = entry.seq;
    const line = encodeLine(entry);
    lines.push(line);
    bytes += line.length;
    if (bytes >= CATCH_UP_BYTES || index === entries.length - 1) await flush(entry.seq);
  }
  return last;
}
