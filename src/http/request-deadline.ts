/**
 * Every request's work has a deadline, -request-timeout, and stops when its
 * client goes away: the route hands this CallContext to the command bus,
 * which passes it down to the engine host (a signal aborted with a
 * RequestStop, and the client's address for its fair share of the engines).
 */
import type { Context, Next } from 'koa';
import type { CallContext, RequestStop } from '../engine/protocol';

export function requestDeadline(timeoutMs: number) {
  return async function withDeadline(ctx: Context, next: Next): Promise<void> {
    const controller = new AbortController();
    const startedMs = Date.now();
    const stop = (reason: RequestStop['reason']): void => controller.abort({ reason, ms: reason === 'deadline' ? timeoutMs : Date.now() - startedMs } satisfies RequestStop);
    const timer = setTimeout(() => stop('deadline'), timeoutMs);
    // 'close' before the response was sent: the client hung up while its work ran.
    const onClose = (): void => {
      if (!ctx.res.writableFinished) stop('gone');
    };
    ctx.res.once('close', onClose);
    const call: CallContext = { signal: controller.signal, client: ctx.request.ip };
    ctx.state.call = call;
    try {
      await next();
    } finally {
      clearTimeout(timer);
      ctx.res.off('close', onClose);
    }
  };
}

/** The CallContext requestDeadline set for this request (none outside it, e.g. in unit tests of routes). */
export function callOf(ctx: Context): CallContext {
  return (ctx.state.call as CallContext | undefined) ?? {};
}
