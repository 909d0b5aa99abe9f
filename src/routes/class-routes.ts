/**
 * GET /class: the teacher's view of the class. An admin token only (the
 * bus's rule); a server without tokens shows it, like the journal it comes
 * from, only when started with -journal-feed: it holds every student's
 * failed statements, which whoever reaches the port should not read by
 * default.
 */
import type Router from '@koa/router';
import type { CommandBus } from '../bus/command-bus';
import { EngineError } from '../errors';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { servesJournalContents, type Config } from '../config/options';

export function classRoutes(router: Router, bus: CommandBus, config: Config): void {
  router.get('/class', async (ctx) => {
    if (!servesJournalContents(config)) throw new EngineError('CLASS_VIEW_FORBIDDEN');
    const view = await bus.dispatch({ type: 'class-activity' }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...view });
  });
}
