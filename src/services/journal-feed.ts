/**
 * The journal feed: pages of entries already written, and followers that get
 * every entry after a seq, first from the files and then live, each exactly
 * once and in seq order.
 *
 * A follower subscribes to the journal's appends before it reads the files:
 * the journal tells a listener of every entry above the last durable seq at
 * subscription, so the files are read up to that seq and the entries the
 * listener queued meanwhile follow. Nothing falls between the two and nothing
 * is sent twice (a seq at or below the last one sent is dropped anyway).
 */
import type { AppendedEntry, Journal } from '../../journal/journal';
import { readPage, type Page } from '../../journal/page-reader';
import type { JournalEntry } from '../../journal/record';

export interface FeedFilter {
  /** Error classes (the first digit of the code); empty: any. */
  readonly classes: ReadonlySet<number>;
  /** Error codes; empty: any. */
  readonly codes: ReadonlySet<number>;
  /** The names a database may be written as (normalized and as given); null: any. */
  readonly dbs: ReadonlySet<string> | null;
  /** Only entries of failed statements. */
  readonly failedOnly: boolean;
  /** The names of the tokens whose entries pass, lower-cased (names are unique regardless of case); null: any. */
  readonly tokens: ReadonlySet<string> | null;
  /** Entry kinds (`attempt` for a live progress grid); absent or null: any. */
  readonly kinds?: ReadonlySet<string> | null;
}

export function matches(filter: FeedFilter, entry: JournalEntry): boolean {
  if (filter.failedOnly && entry.ok) return false;
  if (filter.dbs !== null && (entry.db === null || !filter.dbs.has(entry.db))) return false;
  if (filter.classes.size > 0 && (entry.class === undefined || !filter.classes.has(entry.class))) return false;
  if (filter.codes.size > 0 && (entry.code === undefined || !filter.codes.has(entry.code))) return false;
  if (filter.tokens !== null && (entry.tokenName === undefined || !filter.tokens.has(entry.tokenName.toLowerCase())))
    return false;
  if (filter.kinds != null && !filter.kinds.has(entry.kind)) return false;
  return true;
}

/** Why a follower is cut. */
export type FollowerCut = 'behind' | 'shutdown' | 'revoked';

/** Where a follower's events go: the HTTP layer writes them, and cuts a follower that does not keep up. */
export interface FollowerSink {
  readonly closed: boolean;
  send(seq: number, json: string): void;
  /** Settles when the connection has taken what was sent (or closed): the backlog is read no faster. */
  room(): Promise<void>;
  /**
   * The follower cannot be served on (it fell too far behind, the server stops, or its token was
   * revoked or expired): the connection goes.
   */
  cut(reason: FollowerCut): void;
  /** Reading the files failed: tell the client and end. */
  fail(message: string): void;
  onClose(listener: () => void): void;
}

export interface FeedLimits {
  /** Concurrent followers at most. */
  maxFollowers: number;
  /** Entries of live appends a follower may hold back while it still reads the files, in bytes of JSON. */
  maxQueuedBytes: number;
  /** Bytes of JSON per page a follower reads from the files before it waits for the connection. */
  backlogPageBytes: number;
}

export const DEFAULT_FEED_LIMITS: FeedLimits = {
  maxFollowers: 16,
  maxQueuedBytes: 1024 * 1024,
  backlogPageBytes: 256 * 1024,
};

export class JournalFeed {
  /** Each follower, with the id of the token that opened it (undefined on a server without tokens). */
  private readonly followers = new Map<FollowerSink, { owner: string | undefined; stop: () => void }>();

  constructor(
    private readonly journal: Journal,
    /** The active journal file, null without a journal. */
    private readonly file: string | null,
    readonly limits: FeedLimits = DEFAULT_FEED_LIMITS,
  ) {}

  /** Whether there is a journal to read: none with -log-level none. */
  get available(): boolean {
    return this.file !== null && this.journal.enabled;
  }

  /** The last durable seq. */
  get head(): number {
    return this.journal.lastSeq;
  }

  get followerCount(): number {
    return this.followers.size;
  }

  /** Up to `limit` matching entries after `after`, as far as they are durable now. */
  page(after: number, filter: FeedFilter, limit: number, maxBytes: number): Promise<Page> {
    return readPage(this.activeFile(), {
      after,
      through: this.journal.lastSeq,
      limit,
      maxBytes,
      accept: (entry) => matches(filter, entry),
    });
  }

  /** Whether another follower may start: the caller answers 503 when not. */
  hasRoom(): boolean {
    return this.followers.size < this.limits.maxFollowers;
  }

  /**
   * Follows the journal after `after` into `sink` until the sink closes, or until `owner` (the id of
   * the token that asked) ends (endOwnedBy); resolves once live.
   */
  async follow(after: number, filter: FeedFilter, sink: FollowerSink, owner?: string): Promise<void> {
    const state = { cursor: after, live: false, queue: [] as AppendedEntry[], queuedBytes: 0 };
    const unsubscribe = this.journal.onAppended((entries) => {
      for (const appended of entries) {
        if (!matches(filter, appended.entry)) continue;
        if (state.live) {
          if (appended.entry.seq > state.cursor) this.sendLive(sink, state, appended);
          continue;
        }
        state.queue.push(appended);
        state.queuedBytes += appended.json.length;
        if (state.queuedBytes > this.limits.maxQueuedBytes) sink.cut('behind');
      }
    });
    const stop = (): void => {
      unsubscribe();
      this.followers.delete(sink);
      state.queue = [];
    };
    this.followers.set(sink, { owner, stop });
    sink.onClose(stop);
    // Read after subscribing: every entry above this seq reaches the listener.
    const through = this.journal.lastSeq;
    try {
      await this.sendBacklog(sink, state, filter, through);
    } catch (err) {
      sink.fail(`the journal could not be read: ${(err as Error).message}`);
      return;
    }
    for (const appended of state.queue)
      if (!sink.closed && appended.entry.seq > state.cursor) this.sendLive(sink, state, appended);
    state.queue = [];
    state.live = true;
  }

  private async sendBacklog(
    sink: FollowerSink,
    state: { cursor: number },
    filter: FeedFilter,
    through: number,
  ): Promise<void> {
    while (state.cursor < through && !sink.closed) {
      const page = await readPage(this.activeFile(), {
        after: state.cursor,
        through,
        limit: 1000,
        maxBytes: this.limits.backlogPageBytes,
        accept: (entry) => matches(filter, entry),
      });
      for (const entry of page.entries) if (!sink.closed) sink.send(entry.seq, entry.json);
      state.cursor = page.scannedThrough;
      await sink.room();
    }
  }

  private sendLive(sink: FollowerSink, state: { cursor: number }, appended: AppendedEntry): void {
    state.cursor = appended.entry.seq;
    sink.send(appended.entry.seq, appended.json);
  }

  /** Ends every follower: the server is stopping, and would wait for their connections otherwise. */
  close(): void {
    for (const sink of [...this.followers.keys()]) sink.cut('shutdown');
  }

  /**
   * Ends the followers of a token that was revoked or has expired: what it opened while it was valid
   * must not go on reading what is written after (the journal holds every statement, an exercise's
   * solution among them). The listener goes first, so that no entry appended from now on reaches
   * the connection, whatever the connection still takes to close.
   */
  endOwnedBy(tokenId: string): number {
    let ended = 0;
    for (const [sink, follower] of [...this.followers]) {
      if (follower.owner !== tokenId) continue;
      follower.stop();
      sink.cut('revoked');
      ended++;
    }
    return ended;
  }

  private activeFile(): string {
    if (this.file === null) throw new Error('the server keeps no journal');
    return this.file;
  }
}
