/** POST /tx/begin, /tx/commit, /tx/rollback: cross-request transaction sessions. */
import type Router from '@koa/router';
import type { CommandBus } from '../bus/command-bus';
import { EngineError } from '../errors';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { queryValue } from './request/query';

export function txRoutes(router: Router, bus: CommandBus): void {
  router.post('/tx/begin', async (ctx) => {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    const info = await bus.dispatch({ type: 'begin-session', db: body?.db }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...info });
  });

  for (const [path, commit] of [
    ['/tx/commit', true],
    ['/tx/rollback', false],
  ] as const) {
    router.post(path, async (ctx) => {
      const session = queryValue(ctx, 'session');
      if (session === undefined || session === '') throw new EngineError('SESSION_REQUIRED');
      const ended = await bus.dispatch({ type: 'end-session', session, commit }, callOf(ctx));
      sendJson(ctx, 200, { ok: true, message: ended.message, db: ended.db });
    });
  }
}
