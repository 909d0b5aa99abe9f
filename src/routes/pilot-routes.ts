/** The classroom pilot records: POST/GET /pilots, /pilots/:id, /pilots/schema, /pilots/summary. */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { EngineError } from '../errors';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { DECISIONS, pilotSchema } from '../pilots/pilot-schema';
import type { CommandBus } from '../bus/command-bus';
import type { PilotFilter, StoredPilot } from '../pilots/pilot-store';
import { ROWS_DEFAULT_LIMIT, ROWS_MAX_LIMIT } from './database-routes';
import { countQueryValue, queryValue } from './request/query';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function readFilter(ctx: Context): PilotFilter {
  const filter: PilotFilter = {};
  for (const name of ['decision', 'commit', 'subject', 'level', 'from', 'to'] as const) {
    const value = queryValue(ctx, name);
    if (value === undefined) continue;
    if (name === 'decision' && !(DECISIONS as readonly string[]).includes(value))
      throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: `expected one of ${DECISIONS.join(', ')}` });
    if ((name === 'from' || name === 'to') && !DATE.test(value))
      throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: 'expected a date, YYYY-MM-DD' });
    filter[name] = value;
  }
  return filter;
}

function view({ id, created, pilot }: StoredPilot): Record<string, unknown> {
  return { id, created, pilot };
}

export function pilotRoutes(router: Router, bus: CommandBus): void {
  router.get('/pilots/schema', (ctx) => sendJson(ctx, 200, pilotSchema));

  router.get('/pilots/summary', async (ctx) => {
    const groupBy = queryValue(ctx, 'group_by');
    if (groupBy !== undefined && groupBy !== 'commit' && groupBy !== 'subject')
      throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'group_by', detail: 'expected commit or subject' });
    const summary = await bus.dispatch(
      groupBy === undefined ? { type: 'summarize-pilots' } : { type: 'summarize-pilots', groupBy },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, ...summary });
  });

  router.get('/pilots/:id', async (ctx) => {
    const id = /^\d{1,15}$/.test(ctx.params.id ?? '') ? Number(ctx.params.id) : NaN;
    if (!Number.isSafeInteger(id)) throw new EngineError('PILOT_NOT_FOUND', { id: String(ctx.params.id) });
    sendJson(ctx, 200, { ok: true, ...view(await bus.dispatch({ type: 'get-pilot', id }, callOf(ctx))) });
  });

  router.get('/pilots', async (ctx) => {
    const limit = Math.min(countQueryValue(ctx, 'limit', ROWS_DEFAULT_LIMIT), ROWS_MAX_LIMIT);
    const offset = countQueryValue(ctx, 'offset', 0);
    const { total, pilots: page } = await bus.dispatch(
      { type: 'list-pilots', filter: readFilter(ctx), limit, offset },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, total, limit, offset, pilots: page.map(view) });
  });

  router.post('/pilots', async (ctx) => {
    const stored = await bus.dispatch({ type: 'create-pilot', record: ctx.request.body }, callOf(ctx));
    sendJson(ctx, 201, { ok: true, ...view(stored) });
  });
}
