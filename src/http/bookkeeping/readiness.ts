/**
 * While the server brings its databases in line with the journal, /health
 * answers with ready: false and every other endpoint with 503.
 */
import type { Context } from 'koa';
import { EngineError } from '../../errors';

export class Readiness {
  ready = false;

  /** Refuses every request but /health until the server is ready. */
  check(ctx: Context): void {
    if (!this.ready && ctx.path !== '/health') throw new EngineError('NOT_READY', {}, { retryAfter: 1 });
  }
}
