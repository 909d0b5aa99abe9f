/** POST /exec, with or without a transaction session. */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import { EngineError } from '../errors';
import type { StatementResult } from '../engine/protocol';
import { RawJson } from '../json-text';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { parseOrRefuse } from '../engine/batch';
import { readExecBody } from './request/exec-body';
import { queryValue } from './request/query';

/** The session id of a request: the X-Service-Session header or ?session=. */
export function sessionIdOf(ctx: Context): string | undefined {
  const header = ctx.get('X-Service-Session').trim();
  const query = queryValue(ctx, 'session')?.trim() ?? '';
  if (header !== '' && query !== '' && header !== query) {
    throw new EngineError('BAD_REQUEST', {
      detail: 'the X-Service-Session header and ?session= name different sessions',
    });
  }
  const id = header !== '' ? header : query;
  return id === '' ? undefined : id;
}

/** Rows the engine already wrote as JSON go into the response as they are; `rows` keeps its place among the keys. */
function withRawRows(
  result: StatementResult,
): Omit<StatementResult, 'rows'> & { rows: StatementResult['rows'] | RawJson } {
  const { rowsJson, ...rest } = result;
  return rowsJson === undefined ? rest : { ...rest, rows: new RawJson(rowsJson) };
}

/** `maxStatements`: -max-statements, the most one batch may hold. */
export function execRoutes(router: Router, bus: CommandBus, maxStatements: number): void {
  router.post('/exec', async (ctx) => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    const sources = readExecBody(body);
    const session = sessionIdOf(ctx);
    // Parsed once, here: the bus's middleware and the handler all read this one batch.
    const batch = parseOrRefuse(sources, maxStatements);
    // Database-level SQL in single-DB mode is a 405; a 405 carries Allow (RFC 9110), and POST is all /exec has.
    ctx.set('Allow', 'POST');
    const command =
      session === undefined
        ? ({ type: 'exec', db: body?.db, sources, batch } as const)
        : ({ type: 'exec', db: body?.db, sources, batch, session } as const);
    const outcome = await bus.dispatch(command, callOf(ctx));
    const results = outcome.results.map(withRawRows);
    if (outcome.session !== undefined) {
      sendJson(ctx, 200, {
        ok: true,
        db: outcome.db,
        results,
        session: outcome.session.session,
        expires_unix: outcome.session.expires_unix,
      });
    } else {
      sendJson(ctx, 200, outcome.db === null ? { ok: true, results } : { ok: true, db: outcome.db, results });
    }
  });
}
