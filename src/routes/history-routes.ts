/**
 * GET /dbs/{db}/history: the database's journal entries, newest first, a
 * page at a time (`limit`, `before`), with filters (`failed`, `token`,
 * `since`, `until`), of the database's current life unless `lives=all`.
 * Who may read it is the bus's rule (a read of the database; every life,
 * an admin's); a server without tokens serves it only with -journal-feed,
 * as it serves the journal.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import { servesJournalContents, type Config } from '../config/options';
import { EngineError } from '../errors';
import { ISO_TIME_EXPECTED, parseIsoTime } from '../iso-time';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import type { HistoryBound, HistoryLives, HistoryRequest } from '../services/history';
import { queryValue } from './request/query';

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

const KNOWN = new Set(['limit', 'before', 'failed', 'token', 'since', 'until', 'lives']);
const LIVES: readonly HistoryLives[] = ['current', 'all'];
const TOKEN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function historyRoutes(router: Router, bus: CommandBus, config: Config): void {
  router.get('/dbs/:db/history', async (ctx) => {
    // Every statement's SQL, as the journal holds it: closed like the journal on a server without tokens.
    if (!servesJournalContents(config)) throw new EngineError('HISTORY_FORBIDDEN');
    const request = historyRequest(ctx);
    const page = await bus.dispatch({ type: 'history', db: ctx.params.db, request }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, db: page.db, entries: page.entries, next: page.next });
  });
}

function refuse(name: string, detail: string): never {
  throw new EngineError('HISTORY_PARAMETER', { name, detail });
}

function historyRequest(ctx: Context): HistoryRequest {
  for (const name of Object.keys(ctx.query))
    if (!KNOWN.has(name)) refuse(name, `unknown; expected one of ${[...KNOWN].join(', ')}`);
  const limit = integer(ctx, 'limit') ?? HISTORY_DEFAULT_LIMIT;
  if (limit < 1 || limit > HISTORY_MAX_LIMIT) refuse('limit', `expected 1 to ${HISTORY_MAX_LIMIT}`);
  const failed = queryValue(ctx, 'failed');
  if (failed !== undefined && failed !== 'true' && failed !== 'false') refuse('failed', 'expected true or false');
  const token = queryValue(ctx, 'token') ?? null;
  if (token !== null && !TOKEN_NAME.test(token))
    refuse('token', 'expected a token name (1 to 64 characters of A-Z a-z 0-9 _ . -)');
  const before = integer(ctx, 'before');
  if (before === 0) refuse('before', 'expected a seq of 1 or more');
  const lives = queryValue(ctx, 'lives') ?? 'current';
  if (!LIVES.includes(lives as HistoryLives)) refuse('lives', `expected ${LIVES.join(' or ')}`);
  return {
    limit,
    before: before ?? null,
    lives: lives as HistoryLives,
    failed: failed === 'true',
    token,
    since: bound(ctx, 'since'),
    until: bound(ctx, 'until'),
  };
}

function integer(ctx: Context, name: string): number | undefined {
  const value = queryValue(ctx, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) refuse(name, 'expected a non-negative integer');
  return Number(value);
}

/** A seq (digits) or an ISO 8601 time with its zone (iso-time.ts, the reader restore's "to" shares). */
function bound(ctx: Context, name: string): HistoryBound | null {
  const value = queryValue(ctx, name);
  if (value === undefined) return null;
  if (/^\d{1,15}$/.test(value)) return { seq: Number(value) };
  const ms = parseIsoTime(value);
  if (typeof ms !== 'number') refuse(name, `expected a seq or ${ISO_TIME_EXPECTED}: ${ms.refused}`);
  return { timeMs: ms };
}
