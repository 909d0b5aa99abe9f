/**
 * The primary's half of shipping: every chunk the journal writer has
 * written and synced is published to the stream, and only JetStream's
 * acknowledgement lets the writer call it written (journal/writer.ts waits
 * for `ship`).
 *
 * - A chunk is published where the stream is expected to end, with a message
 *   id JetStream de-duplicates on: a retry after a lost acknowledgement is
 *   answered as a duplicate, never stored twice.
 * - While JetStream does not answer, the chunk is retried until
 *   -journal-timeout; then it fails, the writer cuts it back, and the client
 *   hears JOURNAL_UNAVAILABLE. The next write tries again: writes resume when
 *   JetStream is back.
 * - When the stream no longer ends where this primary left it, someone else
 *   published: if a newer epoch did (a standby took over), this server is
 *   fenced and refuses every later write with NOT_PRIMARY, naming the new
 *   primary. A chunk of its own that it had given up on but that landed late
 *   makes the local journal and the stream differ: writes are refused until a
 *   restart reconciles them (primary-start.ts copies it from the stream).
 */
import { notPrimary } from '../../services/server-role';
import type { ChunkShipper, ShippedChunk } from '../../../journal/writer';
import { messageIdOf, type EntriesMessage, type FenceMessage } from '../stream/chunk-message';
import { WrongLastSequenceError, type JournalStream } from '../stream/journal-stream';

export interface ShipperOptions {
  /** How long one chunk may wait for JetStream in all (-journal-timeout). */
  readonly timeoutMs: number;
  /** Told of what reaches no client: a fence, a divergence. */
  readonly log: (message: string) => void;
  /** Told once, when a newer epoch took over. */
  readonly onFenced?: (fence: FenceMessage) => void;
  /** A pause between attempts while JetStream does not answer (tests shorten it). */
  readonly retryPauseMs?: number;
}

/** A shipping failure that is not the stream's refusal: JetStream unreachable or slow. */
export class JetStreamUnavailableError extends Error {
  /** Errno-like, so the client's JOURNAL_UNAVAILABLE names it as it names ENOSPC. */
  readonly code = 'EJETSTREAM';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class JournalShipper implements ChunkShipper {
  private fence: FenceMessage | null = null;
  private diverged: string | null = null;

  /**
   * `streamLast`: the stream seq this primary's journal ends at in the
   * stream (its last chunk, or the fence that made it primary).
   */
  constructor(
    private readonly stream: JournalStream,
    readonly epoch: number,
    readonly node: string,
    private streamLast: number,
    private readonly options: ShipperOptions,
  ) {}

  /** The newer primary that fenced this one, if any. */
  get fencedBy(): FenceMessage | null {
    return this.fence;
  }

  /** The stream seq of this primary's last message. */
  get lastStreamSeq(): number {
    return this.streamLast;
  }

  async ship(chunk: ShippedChunk): Promise<void> {
    this.refuseWhenFenced();
    const message: EntriesMessage = {
      kind: 'entries',
      firstSeq: chunk.firstSeq,
      lastSeq: chunk.lastSeq,
      epoch: this.epoch,
      node: this.node,
      lines: chunk.lines,
    };
    const deadline = performance.now() + this.options.timeoutMs;
    let lastError: unknown;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      try {
        this.streamLast = await this.stream.publish(message, this.streamLast, Math.max(100, Math.min(left, 2000)));
        return;
      } catch (error) {
        if (error instanceof WrongLastSequenceError) return this.settle(message);
        lastError = error;
      }
      await sleep(Math.min(this.options.retryPauseMs ?? 200, Math.max(0, deadline - performance.now())));
    }
    throw new JetStreamUnavailableError(
      `JetStream did not acknowledge seqs ${chunk.firstSeq}..${chunk.lastSeq} within ${this.options.timeoutMs} ms: ${describe(lastError)}`,
      { cause: lastError },
    );
  }

  private refuseWhenFenced(): void {
    if (this.fence !== null) throw notPrimary(this.fence);
    if (this.diverged !== null) throw new JetStreamUnavailableError(this.diverged);
  }

  /**
   * The stream does not end where this primary left it. Its own chunk at the
   * end is a retry that landed; a newer epoch means it was replaced.
   */
  private async settle(message: EntriesMessage): Promise<void> {
    const tail = await this.stream.tail();
    if (tail.fence !== null && tail.fence.message.epoch > this.epoch) return this.fenced(tail.fence.message);
    const last = tail.lastEntries;
    if (last !== null && last.message.epoch > this.epoch) {
      return this.fenced({ kind: 'fence', epoch: last.message.epoch, node: last.message.node, url: '' });
    }
    if (last !== null && tail.fence === null && messageIdOf(last.message) === messageIdOf(message)) {
      this.streamLast = last.streamSeq;
      return;
    }
    this.diverged =
      'the stream holds a chunk of this primary that it had given up on: restart the server to take it into the local journal';
    this.options.log(`journal shipping stopped: ${this.diverged}`);
    throw new JetStreamUnavailableError(this.diverged);
  }

  private fenced(fence: FenceMessage): never {
    if (this.fence === null) {
      this.fence = fence;
      this.options.log(
        `journal shipping stopped: ${fence.node} took over as primary (epoch ${fence.epoch}); this server refuses writes from now on`,
      );
      this.options.onFenced?.(fence);
    }
    throw notPrimary(fence);
  }
}

function describe(error: unknown): string {
  if (error === undefined) return 'no attempt finished';
  return error instanceof Error ? `${error.name}: ${error.message}` : JSON.stringify(error);
}
