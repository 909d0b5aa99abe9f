/**
 * GET /journal: the statement journal as NDJSON pages, or followed live as
 * server-sent events (Accept: text/event-stream).
 *
 * Who may read it: on a server with tokens, an admin token (the admin-only paths of
 * src/http/bookkeeping/auth.ts refuse the others before this route runs). A
 * server without a token serves it only when started with -journal-feed: the
 * journal holds every statement and its parameters, which a server without a
 * token should not hand to whoever can reach its port just because it serves
 * data that way.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { EngineError } from '../errors';
import { ENTRY_KINDS } from '../../journal/record';
import { EventStream } from '../http/event-stream';
import type { Metrics } from '../http/metrics';
import { normalizeDatabaseName } from '../database-names';
import { servesJournalContents, type Config } from '../config/options';
import type { FeedFilter, JournalFeed } from '../services/journal-feed';
import { JournalError } from '../../journal/reader';
import { countQueryValue, queryValue } from './request/query';
import { principalOf } from '../http/bookkeeping/principal-state';

/** Entries in one NDJSON page, by default and at most. */
export const MAX_PAGE_ENTRIES = 1000;
/** An NDJSON page also stops after the entry that brings it to this many bytes. */
const MAX_PAGE_BYTES = 4 * 1024 * 1024;
/** A follower whose connection holds more than this unsent is cut. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export function journalRoutes(router: Router, config: Config, feed: JournalFeed, metrics: Metrics): void {
  router.get('/journal', async (ctx) => {
    if (!servesJournalContents(config)) throw new EngineError('JOURNAL_FEED_FORBIDDEN');
    if (!feed.available) throw new EngineError('NO_JOURNAL');
    const filter = filterOf(ctx);
    // `since` past the head means "from now on": a cursor above every seq written would wait for one
    // that may never come (seqs are gapless), so it starts at the head and new entries follow.
    const since = Math.min(sinceOf(ctx), feed.head);
    if (wantsEvents(ctx))
      follow(ctx, feed, filter, since, {
        heartbeatMs: config.journalHeartbeatMs,
        maxBufferedBytes: MAX_BUFFERED_BYTES,
        onBehind: () => metrics.followerCut(),
      });
    else await sendPage(ctx, feed, filter, since);
  });
}

function wantsEvents(ctx: Context): boolean {
  return ctx.get('Accept').includes('text/event-stream');
}

async function sendPage(ctx: Context, feed: JournalFeed, filter: FeedFilter, since: number): Promise<void> {
  const limit = countQueryValue(ctx, 'limit', MAX_PAGE_ENTRIES);
  if (limit < 1 || limit > MAX_PAGE_ENTRIES)
    throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'limit', detail: `expected 1 to ${MAX_PAGE_ENTRIES}` });
  const head = feed.head;
  let page;
  try {
    page = await feed.page(since, filter, limit, MAX_PAGE_BYTES);
  } catch (err) {
    if (err instanceof JournalError)
      throw new EngineError('JOURNAL_UNREADABLE', { detail: err.message }, { cause: err });
    throw err;
  }
  ctx.status = 200;
  ctx.type = 'application/x-ndjson';
  // Where the next page starts, filters included: the last seq looked at, not only the last one returned.
  ctx.set('Journal-Next-Since', String(Math.max(since, page.scannedThrough)));
  ctx.set('Journal-Head', String(Math.max(head, feed.head)));
  ctx.body = page.entries.map((e) => `${e.json}\n`).join('');
}

function follow(
  ctx: Context,
  feed: JournalFeed,
  filter: FeedFilter,
  since: number,
  options: ConstructorParameters<typeof EventStream>[1],
): void {
  if (!feed.hasRoom()) {
    throw new EngineError('TOO_MANY_FOLLOWERS', { max: feed.limits.maxFollowers }, { retryAfter: 5 });
  }
  // The response is written here, for as long as the client stays: Koa neither sends a body nor ends it,
  // and no deadline applies (the request deadline only arms for work that asks for its signal).
  ctx.respond = false;
  ctx.status = 200;
  const stream = new EventStream(ctx.res, options);
  // The follower belongs to its token: revoking the token (or its expiry) ends it (JournalFeed.endOwnedBy).
  const following = feed.follow(since, filter, stream, principalOf(ctx)?.id);
  stream.comment(`following after seq ${since}`);
  following.catch((err: Error) => stream.fail(err.message));
}

/** `since`, or Last-Event-ID when a reconnecting client sends one: that is where it stopped. */
function sinceOf(ctx: Context): number {
  const lastEventId = ctx.get('Last-Event-ID');
  if (lastEventId !== '') {
    if (!/^\d{1,15}$/.test(lastEventId))
      throw new EngineError('BAD_REQUEST', { detail: 'Last-Event-ID must be a journal seq (a non-negative integer)' });
    return Number(lastEventId);
  }
  return countQueryValue(ctx, 'since', 0);
}

function filterOf(ctx: Context): FeedFilter {
  const failed = queryValue(ctx, 'failed');
  if (failed !== undefined && failed !== 'true' && failed !== 'false')
    throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'failed', detail: 'expected true or false' });
  const db = queryValue(ctx, 'db');
  if (db === '') throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'db', detail: 'must not be empty' });
  return {
    classes: numberList(ctx, 'class', 1, 9),
    codes: numberList(ctx, 'code', 1000, 9999),
    dbs: db === undefined ? null : namesOfDatabase(db),
    failedOnly: failed === 'true',
    tokens: tokenNames(ctx),
    kinds: kindNames(ctx),
  };
}

/** `kind=attempt` or `kind=attempt,refused`: entry kinds, as the follower's -kind. */
function kindNames(ctx: Context): ReadonlySet<string> | null {
  const value = queryValue(ctx, 'kind');
  if (value === undefined) return null;
  const kinds = value.split(',');
  if (!kinds.every((kind) => (ENTRY_KINDS as readonly string[]).includes(kind))) {
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'kind',
      detail: `expected entry kinds among ${ENTRY_KINDS.join(', ')}, separated by commas`,
    });
  }
  return new Set(kinds);
}

/** `token=alumno-05` or `token=alumno-05,alumno-06`: the names of tokens (never a secret: this is no credential). */
function tokenNames(ctx: Context): ReadonlySet<string> | null {
  const value = queryValue(ctx, 'token');
  if (value === undefined) return null;
  const names = value.split(',');
  if (!names.every((name) => /^[A-Za-z0-9_.-]{1,64}$/.test(name))) {
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'token',
      detail: 'expected token names (1 to 64 of A-Z a-z 0-9 _ . -), separated by commas',
    });
  }
  return new Set(names.map((name) => name.toLowerCase()));
}

/**
 * `alumno-05` and `alumno-05.db` (any case) name the same database, as everywhere else; the journal
 * holds the normalized name. The value as given is kept too: single-DB mode journals its file's own
 * name, which need not be one a client could choose.
 */
function namesOfDatabase(db: string): ReadonlySet<string> {
  try {
    return new Set([db, normalizeDatabaseName(db)]);
  } catch {
    return new Set([db]);
  }
}

/** `3` or `3,5`: whole numbers within [min, max]. */
function numberList(ctx: Context, name: string, min: number, max: number): ReadonlySet<number> {
  const value = queryValue(ctx, name);
  if (value === undefined) return new Set();
  const parts = value.split(',');
  if (!parts.every((part) => /^\d{1,4}$/.test(part) && Number(part) >= min && Number(part) <= max)) {
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name,
      detail: `expected numbers from ${min} to ${max}, separated by commas`,
    });
  }
  return new Set(parts.map(Number));
}
