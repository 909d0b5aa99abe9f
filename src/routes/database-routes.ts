/** GET /dbs, POST /dbs, GET /tables, GET /schema, GET /rows. */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import { EngineError } from '../errors';
import { RawJson } from '../json-text';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { countQueryValue, queryValue, requiredQueryValue } from './request/query';
import { copyNames, isCopyBody } from './request/copy-body';

/** /rows pages: 25 rows unless asked, at most 1000. */
export const ROWS_DEFAULT_LIMIT = 25;
export const ROWS_MAX_LIMIT = 1000;

/** `single`: single-DB mode, where POST /dbs is not allowed. */
export function databaseRoutes(router: Router, bus: CommandBus, single: boolean): void {
  router.get('/dbs', async (ctx) => {
    const list = await bus.dispatch({ type: 'list-databases' }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...list });
  });

  router.post('/dbs', async (ctx) => {
    // The 405 of single-DB mode says what the path still allows (RFC 9110: a 405 carries Allow).
    if (single) ctx.set('Allow', 'GET, HEAD');
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (body !== undefined && isCopyBody(body)) {
      const copied = await bus.dispatch(
        { type: 'copy-databases', names: copyNames(body), from: body.from },
        callOf(ctx),
      );
      const one = body.db !== undefined ? { db: copied.dbs[0] } : {};
      return sendJson(ctx, 201, { ok: true, ...one, ...copied });
    }
    const created = await bus.dispatch({ type: 'create-database', db: body?.db }, callOf(ctx));
    sendJson(ctx, 201, { ok: true, ...created });
  });

  router.post('/dbs/:db/reset', async (ctx) => {
    if (single) ctx.set('Allow', 'GET, HEAD');
    const reset = await bus.dispatch({ type: 'reset-database', db: ctx.params.db }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...reset });
  });

  router.post('/dbs/:db/restore', async (ctx) => {
    if (single) ctx.set('Allow', 'GET, HEAD');
    const restored = await bus.dispatch(
      { type: 'restore-database', db: ctx.params.db, body: ctx.request.body },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, ...restored });
  });

  router.get('/tables', async (ctx) => {
    const listed = await bus.dispatch({ type: 'list-tables', db: queryValue(ctx, 'db') }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...listed });
  });

  router.get('/schema', async (ctx) => {
    const table = requiredQueryValue(ctx, 'table');
    const shown = await bus.dispatch({ type: 'show-schema', db: queryValue(ctx, 'db'), table }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...shown });
  });

  router.get('/rows', async (ctx) => {
    const table = requiredQueryValue(ctx, 'table');
    // A limit above the maximum is clamped, and the response says so.
    const limit = Math.min(countQueryValue(ctx, 'limit', ROWS_DEFAULT_LIMIT), ROWS_MAX_LIMIT);
    const { offset, after } = rowsPosition(ctx);
    const page = await bus.dispatch(
      { type: 'read-rows', db: queryValue(ctx, 'db'), table, limit, offset, after },
      callOf(ctx),
    );
    // A page says where it started in the terms it was asked in: offset, or the cursor it came after.
    const position = after === null ? { offset } : { after };
    const next = page.next === null ? {} : { next: page.next };
    sendJson(ctx, 200, {
      ok: true,
      db: page.db,
      table: page.table,
      total: page.total,
      limit,
      ...position,
      columns: page.columns,
      rows: new RawJson(page.rowsJson),
      ...next,
    });
  });
}

/**
 * Where a page starts: an offset or a cursor, never both. Both at once would
 * have to mean either "skip rows after the cursor" or "ignore one of them";
 * refusing them leaves no client guessing which. An empty `after` is a
 * cursor, a malformed one, which the engine refuses.
 */
function rowsPosition(ctx: Context): { offset: number; after: string | null } {
  const after = queryValue(ctx, 'after') ?? null;
  if (after !== null && queryValue(ctx, 'offset') !== undefined) throw new EngineError('ROWS_AFTER_WITH_OFFSET');
  return { offset: countQueryValue(ctx, 'offset', 0), after };
}
