/** GET /class: the teacher's view of the class (admin only, by the bus's rule). */
import type Router from '@koa/router';
import type { CommandBus } from '../bus/command-bus';
import { callOf } from '../http/request-deadline';
import { sendJson } from '../http/respond';

export function classRoutes(router: Router, bus: CommandBus): void {
  router.get('/class', async (ctx) => {
    const view = await bus.dispatch({ type: 'class-activity' }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...view });
  });
}
