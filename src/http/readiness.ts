/**
 * While the server brings its databases in line with the journal, /health
 * answers with ready: false and every other endpoint with 503.
 */
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

export class Readiness {
  ready = false;

  middleware() {
    return async (ctx: Context, next: Next): Promise<void> => {
      if (!this.ready && ctx.path !== '/health') throw new EngineError('NOT_READY', {}, { retryAfter: 1 });
      await next();
    };
  }
}
