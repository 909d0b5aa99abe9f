/**
 * The journal's home in NATS JetStream: one stream, one subject, and the
 * few operations sqlscribe needs of it — make sure the stream exists, publish
 * a chunk only where the stream is expected to end, read a message back, and
 * find where the journal ends in the stream. Everything NATS-specific about
 * the stream itself is here; the lease is in primary-lease.ts.
 */
import { connect } from '@nats-io/transport-node';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { Objm, type ObjectStore } from '@nats-io/obj';
import type { NatsAuth } from '../../config/options';
import {
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StoredMsg,
} from '@nats-io/jetstream';
import {
  bodyOf,
  headersOf,
  messageIdOf,
  parseMessage,
  type EntriesMessage,
  type FenceMessage,
  type StreamMessage,
} from './chunk-message';

/** JetStream's code for "the stream does not end where the publish expected". */
const WRONG_LAST_SEQUENCE = 10071;

/** A publish was refused because the stream ended elsewhere: another publisher got there first. */
export class WrongLastSequenceError extends Error {
  constructor(
    readonly expected: number,
    cause: unknown,
  ) {
    super(`the stream no longer ends at ${expected}`, { cause });
  }
}

export interface StreamSettings {
  /** Client URLs of the JetStream servers (any of a cluster's nodes). */
  readonly servers: readonly string[];
  /** Credentials, when the servers need them. */
  readonly auth?: NatsAuth | null;
  /** The stream's name; its subject and lease bucket are named after it. */
  readonly stream: string;
  /** Copies JetStream keeps of each message (3 on a three-node cluster). */
  readonly replicas: number;
}

/** A message as stored: its place in the stream and what it says. */
export interface StoredMessage {
  readonly streamSeq: number;
  readonly message: StreamMessage;
}

/** Where the journal ends in the stream. */
export interface StreamTail {
  /** The stream's last message seq (0 when empty): what the next publish expects. */
  readonly lastStreamSeq: number;
  /** The last chunk of entries, if any. */
  readonly lastEntries: (StoredMessage & { readonly message: EntriesMessage }) | null;
  /** The newest fence at or after the last chunk: the epoch the stream is in now. */
  readonly fence: (StoredMessage & { readonly message: FenceMessage }) | null;
}

export function subjectOf(stream: string): string {
  return `${stream}.journal`;
}

const decoder = new TextDecoder();

const encoder = new TextEncoder();

/**
 * NATS refuses a message larger than the server's max_payload (1 MB unless
 * configured): a chunk whose lines are larger (an import, a busy group
 * commit) goes into the chunks object store, which splits it, and the stream
 * message names it. A little room is kept for the headers.
 */
const HEADER_ROOM = 8 * 1024;

export function chunksBucketOf(stream: string): string {
  return `${stream}_chunks`;
}

export class JournalStream {
  private chunks: ObjectStore | null = null;

  private constructor(
    readonly settings: StreamSettings,
    readonly connection: NatsConnection,
    private readonly manager: JetStreamManager,
    private readonly client: JetStreamClient,
  ) {}

  /** The largest body one stream message may carry here. */
  private get inlineLimit(): number {
    return Math.max(64 * 1024, (this.connection.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM);
  }

  private async chunkStore(): Promise<ObjectStore> {
    this.chunks ??= await new Objm(this.client).create(chunksBucketOf(this.settings.stream), {
      replicas: this.settings.replicas,
    });
    return this.chunks;
  }

  /** A message as read from the stream; with `lines`, those of a large chunk are fetched from the object store. */
  private async storedOf(stored: StoredMsg, lines: boolean): Promise<StoredMessage> {
    const message = parseMessage((name) => stored.header?.get(name) ?? '', decoder.decode(stored.data));
    return { streamSeq: stored.seq, message: lines ? await this.withLines(message) : message };
  }

  /** The message with its lines: those of a large chunk are read from the object store it names. */
  async withLines(message: StreamMessage): Promise<StreamMessage> {
    if (message.kind !== 'entries' || message.object === undefined) return message;
    const blob = await (await this.chunkStore()).getBlob(message.object);
    if (blob === null || blob === undefined)
      throw new Error(
        `chunk ${message.firstSeq}..${message.lastSeq} names object ${message.object}, which the bucket ${chunksBucketOf(this.settings.stream)} lacks`,
      );
    return {
      kind: 'entries',
      firstSeq: message.firstSeq,
      lastSeq: message.lastSeq,
      epoch: message.epoch,
      node: message.node,
      lines: decoder.decode(blob),
    };
  }

  /**
   * A chunk too large for one message is put in the object store first
   * (named by its message id, so a retry puts the same object), then
   * published as a message that names it: the stream still takes the chunk
   * whole or not at all, and an object whose message never landed is only an
   * unused object.
   */
  private async asPublished(message: StreamMessage): Promise<StreamMessage> {
    if (message.kind !== 'entries') return message;
    // Counted without encoding: most chunks are small and go as they are.
    if (Buffer.byteLength(message.lines) <= this.inlineLimit) return message;
    const name = messageIdOf(message);
    const store = await this.chunkStore();
    if ((await store.info(name)) === null) await store.putBlob({ name }, encoder.encode(message.lines));
    return { ...message, object: name };
  }

  /**
   * Connects (and keeps reconnecting for ever: JetStream coming back is what
   * resumes writes). Throws when no server answers within `timeoutMs`.
   */
  static async connect(settings: StreamSettings, timeoutMs: number, name: string): Promise<JournalStream> {
    // Typed here: the client's typings reach NatsConnection through a module path
    // (@nats-io/nats-core/internal) that node10 resolution does not follow.
    const connection = (await connect({
      servers: [...settings.servers],
      ...(settings.auth ?? {}),
      name,
      timeout: timeoutMs,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 5000,
    })) as NatsConnection;
    try {
      const manager = await jetstreamManager(connection, { timeout: timeoutMs });
      return new JournalStream(settings, connection, manager, jetstream(connection, { timeout: timeoutMs }));
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  get subject(): string {
    return subjectOf(this.settings.stream);
  }

  /** Creates the stream when it does not exist yet: keep everything, file storage, `replicas` copies. */
  async ensure(): Promise<void> {
    try {
      await this.manager.streams.info(this.settings.stream);
      return;
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.code !== 10059) throw error;
    }
    await this.manager.streams.add({
      name: this.settings.stream,
      subjects: [this.subject],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: this.settings.replicas,
      // Long enough for a publish retried across a leader election to be known for a retry.
      duplicate_window: 120 * 1_000_000_000,
    });
  }

  /**
   * Publishes `message` only if the stream ends at `expectedLast`, and gives
   * the message's stream seq. A retry of a message that landed already is
   * answered with its first seq (JetStream de-duplicates on the message id).
   */
  async publish(message: StreamMessage, expectedLast: number, timeoutMs: number): Promise<number> {
    const published = await this.asPublished(message);
    const pairs = headers();
    for (const [name, value] of headersOf(published)) pairs.set(name, value);
    try {
      const ack = await this.client.publish(this.subject, bodyOf(published), {
        msgID: messageIdOf(message),
        expect: { lastSequence: expectedLast },
        headers: pairs,
        timeout: timeoutMs,
      });
      return ack.seq;
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === WRONG_LAST_SEQUENCE)
        throw new WrongLastSequenceError(expectedLast, error);
      throw error;
    }
  }

  /**
   * The message at `streamSeq`, or null when there is none (deleted, or past
   * the end). Without `lines`, a large chunk's lines are left in the object
   * store (its `object` names them): enough for its seqs and epoch.
   */
  async message(streamSeq: number, lines = true): Promise<StoredMessage | null> {
    const stored = await this.manager.streams.getMessage(this.settings.stream, { seq: streamSeq });
    return stored === null ? null : this.storedOf(stored, lines);
  }

  async lastStreamSeq(): Promise<number> {
    const info = await this.manager.streams.info(this.settings.stream);
    return info.state.last_seq;
  }

  /** Reads back from the end to the last chunk of entries, noting the newest fence on the way; `lines` as for message(). */
  async tail(lines = true): Promise<StreamTail> {
    const info = await this.manager.streams.info(this.settings.stream);
    const lastStreamSeq = info.state.last_seq;
    let fence: StreamTail['fence'] = null;
    for (let seq = lastStreamSeq; seq >= Math.max(1, info.state.first_seq); seq--) {
      const stored = await this.message(seq, lines);
      if (stored === null) continue;
      if (stored.message.kind === 'entries')
        return { lastStreamSeq, lastEntries: { streamSeq: stored.streamSeq, message: stored.message }, fence };
      fence ??= { streamSeq: stored.streamSeq, message: stored.message };
    }
    return { lastStreamSeq, lastEntries: null, fence };
  }

  /**
   * The chunk that holds journal seq `seq`, found by halving the stream
   * (chunks are in seq order; a fence in between is stepped over), or null.
   */
  async chunkHolding(seq: number): Promise<(StoredMessage & { readonly message: EntriesMessage }) | null> {
    const info = await this.manager.streams.info(this.settings.stream);
    let low = info.state.first_seq;
    let high = info.state.last_seq;
    while (low <= high) {
      const middle = Math.floor((low + high) / 2);
      const found = await this.entriesAtOrBefore(middle, low);
      if (found === null) {
        low = middle + 1;
        continue;
      }
      const { message } = found;
      if (seq < message.firstSeq) high = found.streamSeq - 1;
      else if (seq > message.lastSeq) low = middle + 1;
      else return { streamSeq: found.streamSeq, message: (await this.withLines(message)) as EntriesMessage };
    }
    return null;
  }

  /** The last chunk of entries at or before `streamSeq`, not before `floor`. */
  private async entriesAtOrBefore(
    streamSeq: number,
    floor: number,
  ): Promise<(StoredMessage & { readonly message: EntriesMessage }) | null> {
    for (let at = streamSeq; at >= floor; at--) {
      const stored = await this.message(at, false);
      if (stored !== null && stored.message.kind === 'entries')
        return { streamSeq: stored.streamSeq, message: stored.message };
    }
    return null;
  }

  /** The stream's manager, for the consumers a replica keeps. */
  get jetStreamManager(): JetStreamManager {
    return this.manager;
  }

  get jetStream(): JetStreamClient {
    return this.client;
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}
