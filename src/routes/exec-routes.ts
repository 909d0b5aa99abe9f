/** POST /exec. */
import type Router from '@koa/router';
import type { CommandBus } from '../bus/command-bus';
import { sendJson } from '../http/respond';
import { readExecBody } from './exec-body';

export function execRoutes(router: Router, bus: CommandBus): void {
  router.post('/exec', async (ctx) => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    const sources = readExecBody(body);
    const outcome = await bus.dispatch({ type: 'exec', db: body?.db, sources });
    sendJson(ctx, 200, outcome.db === null ? { ok: true, results: outcome.results } : { ok: true, db: outcome.db, results: outcome.results });
  });
}
