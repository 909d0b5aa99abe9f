/**
 * Which answers are refusals, and what the audit trail keeps of them. A
 * refusal is an answer that says "not you" or "not that": every 401 and 403,
 * and a statement refused as hostile ([SQ1003], a 400 that reaches for
 * outside the database); and a write refused because the disk is short
 * ([SQ6061], "not now"), which the journal keeps room for. Found at the HTTP edge, from the error the client
 * was answered with, so that no path that refuses can be missed: the auth
 * middleware, the admin-only paths, the bus's access rules and the routes
 * that refuse for want of -journal-feed all end in the error handler.
 */
import type { Context } from 'koa';
import { EngineError } from '../../errors';
import { normalizeDatabaseName } from '../../database-names';
import type { Refusal } from '../../services/refusals';
import { principalOf } from './principal-state';

/** Kept by the error handler: the error this request was answered with. */
export function noteAnswered(ctx: Context, error: EngineError): void {
  ctx.state.answeredError = error;
}

function isRefusal(error: EngineError): boolean {
  return (
    error.status === 401 ||
    error.status === 403 ||
    error.errorName === 'FORBIDDEN_STATEMENT' ||
    // Not "not you" but "not now": the disk is short and the class's writes wait (the teacher's view shows who).
    error.errorName === 'DISK_HEADROOM'
  );
}

/** A database name as the journal writes it; null for anything that is not one (it is not written anywhere as sent). */
function databaseName(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw === '') return null;
  try {
    return normalizeDatabaseName(raw);
  } catch {
    return null;
  }
}

/** The database the request asked for: the refusal's own (SQ1031 names it), else the query's, the body's or the path's. */
function databaseOf(ctx: Context, error: EngineError): string | null {
  const body = (ctx.request as { body?: unknown }).body;
  const fromBody =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)['db']
      : undefined;
  const fromPath = /^\/dbs\/([^/]+)/.exec(ctx.path)?.[1];
  for (const candidate of [error.params['db'], ctx.query['db'], fromBody, fromPath]) {
    const name = databaseName(candidate);
    if (name !== null) return name;
  }
  return null;
}

/** The refusal this request was answered with; null when it was not refused. */
export function refusalOf(ctx: Context): Refusal | null {
  const error = ctx.state.answeredError as unknown;
  if (!(error instanceof EngineError) || !isRefusal(error)) return null;
  const principal = principalOf(ctx);
  return {
    ts: new Date().toISOString(),
    status: error.status,
    code: error.code,
    error: error.message,
    tokenId: principal?.id ?? null,
    tokenName: principal?.name ?? null,
    client: ctx.ip,
    db: databaseOf(ctx, error),
    request: `${ctx.method} ${ctx.path}`,
  };
}
