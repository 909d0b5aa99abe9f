/**
 * A server-sent event stream on a raw response: each journal entry an event
 * whose id is its seq, comments as heartbeats so that proxies see traffic.
 *
 * The stream never buffers without end: a follower whose connection has not
 * taken more than `maxBufferedBytes` is cut (it resumes with Last-Event-ID
 * and misses nothing), so a client that stops reading costs at most that
 * much memory plus one event.
 */
import type { ServerResponse } from 'node:http';
import type { FollowerCut, FollowerSink } from '../services/journal-feed';

const REVOKED = 'the token of this feed was revoked or has expired';
/** How long a revoked follower's connection may take to take its last event before it is cut. */
const REVOKED_CLOSE_MS = 250;

export interface EventStreamOptions {
  heartbeatMs: number;
  maxBufferedBytes: number;
  /** Told when a follower is cut for falling behind. */
  onBehind(): void;
}

export class EventStream implements FollowerSink {
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Reverse proxies that buffer responses would hold events back.
      'X-Accel-Buffering': 'no',
    });
    this.heartbeat = setInterval(() => this.comment('heartbeat'), options.heartbeatMs);
    this.heartbeat.unref();
    res.once('close', () => clearInterval(this.heartbeat));
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** A comment line: clients ignore it; the first one tells the client the stream is open. */
  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  send(seq: number, json: string): void {
    // JSON.stringify escapes newlines, so the entry is one data line.
    this.write(`id: ${seq}\ndata: ${json}\n\n`);
  }

  room(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  cut(reason: FollowerCut): void {
    if (this.closed) return;
    if (reason === 'behind') this.options.onBehind();
    if (reason === 'revoked') {
      // The client hears why (and that resuming with this token is pointless) when its connection
      // takes the last event; one that does not read is cut anyway, soon after.
      this.res.end(`event: error\ndata: ${JSON.stringify({ ok: false, error: REVOKED })}\n\n`);
      const force = setTimeout(() => this.res.destroy(), REVOKED_CLOSE_MS);
      force.unref();
      this.res.once('close', () => clearTimeout(force));
      return;
    }
    this.res.destroy();
  }

  fail(message: string): void {
    if (this.closed) return;
    this.res.end(`event: error\ndata: ${JSON.stringify({ ok: false, error: message })}\n\n`);
  }

  onClose(listener: () => void): void {
    if (this.res.destroyed) listener();
    else this.res.once('close', listener);
  }

  /** Checked before writing: what is buffered is at most the bound plus the one event written last. */
  private write(text: string): void {
    if (this.closed) return;
    if (this.res.writableLength > this.options.maxBufferedBytes) {
      this.cut('behind');
      return;
    }
    this.res.write(text);
  }
}
