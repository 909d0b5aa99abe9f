/**
 * What goes into the JetStream stream, one message per journal chunk: the
 * chunk's lines exactly as in the local journal file (each with its crc), so
 * a chunk is in the stream whole or not at all, and a replica writes the very
 * bytes the primary wrote. Headers say what the message holds without
 * parsing it.
 *
 * A second kind of message, the fence, carries no entries: a standby that
 * takes over publishes one, and from then on a publish that expects the
 * stream to end where the old primary left it is refused.
 */
import { crcOf, decodeLine, isHeader, JournalLineError, type JournalEntry } from '../../../journal/record';

export const HEADERS = {
  kind: 'Sqlscribe-Kind',
  firstSeq: 'Sqlscribe-First-Seq',
  lastSeq: 'Sqlscribe-Last-Seq',
  epoch: 'Sqlscribe-Epoch',
  node: 'Sqlscribe-Node',
  url: 'Sqlscribe-Url',
  object: 'Sqlscribe-Object',
} as const;

/** A chunk of the journal: entries firstSeq..lastSeq, in order, no gap. */
export interface EntriesMessage {
  readonly kind: 'entries';
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The lease epoch of the primary that wrote it (its fencing token). */
  readonly epoch: number;
  readonly node: string;
  /** The JSONL lines, newline-terminated, crc included. */
  readonly lines: string;
  /**
   * Set on a chunk read from the stream whose lines are too large for one
   * NATS message: they are in the chunks object store under this name, and
   * `lines` is empty until journal-stream.ts has fetched them.
   */
  readonly object?: string;
}

/** A takeover: primary `node` (serving at `url`) holds epoch `epoch` from here on. */
export interface FenceMessage {
  readonly kind: 'fence';
  readonly epoch: number;
  readonly node: string;
  readonly url: string;
}

export type StreamMessage = EntriesMessage | FenceMessage;

/** A message's headers as plain pairs: the NATS headers object is built from these at publish. */
export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

export function headersOf(message: StreamMessage): HeaderPairs {
  if (message.kind === 'fence') {
    return [
      [HEADERS.kind, 'fence'],
      [HEADERS.epoch, String(message.epoch)],
      [HEADERS.node, message.node],
      [HEADERS.url, message.url],
    ];
  }
  const pairs: Array<readonly [string, string]> = [
    [HEADERS.kind, 'entries'],
    [HEADERS.firstSeq, String(message.firstSeq)],
    [HEADERS.lastSeq, String(message.lastSeq)],
    [HEADERS.epoch, String(message.epoch)],
    [HEADERS.node, message.node],
  ];
  if (message.object !== undefined) pairs.push([HEADERS.object, message.object]);
  return pairs;
}

/** The message's body: a chunk's lines, or nothing when they are in the object store (or it is a fence). */
export function bodyOf(message: StreamMessage): string {
  return message.kind === 'fence' || message.object !== undefined ? '' : message.lines;
}

/**
 * The message id JetStream de-duplicates on: a retry of the same chunk is
 * the same message, while a chunk that reuses seqs after a failed one (which
 * never landed) differs in its content, so it is not taken for a retry.
 */
export function messageIdOf(message: StreamMessage): string {
  if (message.kind === 'fence') return `fence-${message.epoch}`;
  return `seq-${message.firstSeq}-${message.lastSeq}-e${message.epoch}-${crcOf(message.lines)}`;
}

export class StreamMessageError extends Error {
  override readonly name = 'StreamMessageError';
}

function numberHeader(get: (name: string) => string, name: string): number {
  const text = get(name);
  const value = Number(text);
  if (text === '' || !Number.isSafeInteger(value) || value < 0)
    throw new StreamMessageError(`header ${name} is ${JSON.stringify(text)}`);
  return value;
}

/** Reads a message back from its headers and body; throws StreamMessageError on anything else. */
export function parseMessage(get: (name: string) => string, body: string): StreamMessage {
  const kind = get(HEADERS.kind);
  const epoch = numberHeader(get, HEADERS.epoch);
  const node = get(HEADERS.node);
  if (kind === 'fence') return { kind, epoch, node, url: get(HEADERS.url) };
  if (kind !== 'entries') throw new StreamMessageError(`unknown message kind ${JSON.stringify(kind)}`);
  const firstSeq = numberHeader(get, HEADERS.firstSeq);
  const lastSeq = numberHeader(get, HEADERS.lastSeq);
  if (lastSeq < firstSeq) throw new StreamMessageError(`seqs ${firstSeq}..${lastSeq} are out of order`);
  const object = get(HEADERS.object);
  return object === ''
    ? { kind, firstSeq, lastSeq, epoch, node, lines: body }
    : { kind, firstSeq, lastSeq, epoch, node, lines: '', object };
}

/**
 * The entries of a chunk, each line checked (crc, shape) and the seqs
 * checked against the headers: a replica never applies a damaged chunk.
 */
export function entriesOf(message: EntriesMessage): JournalEntry[] {
  const texts = message.lines.split('\n');
  if (texts.at(-1) === '') texts.pop();
  const entries: JournalEntry[] = [];
  for (const text of texts) {
    let line;
    try {
      line = decodeLine(text);
    } catch (error) {
      throw new StreamMessageError(
        `chunk ${message.firstSeq}..${message.lastSeq}: ${error instanceof JournalLineError ? error.message : String(error)}`,
      );
    }
    if (isHeader(line))
      throw new StreamMessageError(`chunk ${message.firstSeq}..${message.lastSeq} holds a journal header`);
    const expected = message.firstSeq + entries.length;
    if (line.seq !== expected)
      throw new StreamMessageError(
        `chunk ${message.firstSeq}..${message.lastSeq}: seq ${line.seq} where ${expected} belongs`,
      );
    entries.push(line);
  }
  if (message.firstSeq + entries.length - 1 !== message.lastSeq)
    throw new StreamMessageError(`chunk ${message.firstSeq}..${message.lastSeq} holds ${entries.length} entries`);
  return entries;
}
