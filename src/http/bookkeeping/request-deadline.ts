/**
 * Every request's work has a deadline, -request-timeout, and stops when its
 * client goes away: the route hands this CallContext to the command bus,
 * which passes it down to the engine host (a signal aborted with a
 * RequestStop, and the client's address for its fair share of the engines).
 *
 * The signal, its timer and the connection listener are made only when
 * something asks for the signal — work queued for, or running in, an engine
 * process. A point read answered in this process, or /health, never needs
 * them, and on this machine each timer and listener per request shows.
 */
import type { Context, Next } from 'koa';
import type { CallContext, RequestStop } from '../../engine/protocol';
import type { Principal } from '../../access/principal';
import { principalOf } from './principal-state';

class RequestCall implements CallContext {
  readonly client: string;
  readonly principal: Principal | undefined;
  private controller: AbortController | undefined;
  private disarm: (() => void) | undefined;

  constructor(
    private readonly ctx: Context,
    private readonly timeoutMs: number,
    private readonly startedMs: number,
  ) {
    // A token is one client wherever it connects from; a class behind one school address is thirty.
    this.principal = principalOf(ctx);
    this.client = this.principal === undefined ? ctx.request.ip : `token:${this.principal.id}`;
  }

  get signal(): AbortSignal {
    this.controller ??= this.arm();
    return this.controller.signal;
  }

  /** Whether the request has already stopped, without making a signal for it. */
  stopped(): boolean {
    return this.controller?.signal.aborted === true || this.gone() || Date.now() - this.startedMs >= this.timeoutMs;
  }

  /** The request is over: its timer and listener go. */
  end(): void {
    this.disarm?.();
  }

  /** 'close' before the response was sent: the client hung up while its work ran. */
  private gone(): boolean {
    return this.ctx.res.destroyed && !this.ctx.res.writableFinished;
  }

  private arm(): AbortController {
    const controller = new AbortController();
    const stop = (reason: RequestStop['reason']): void => {
      if (!controller.signal.aborted)
        controller.abort({
          reason,
          ms: reason === 'deadline' ? this.timeoutMs : Date.now() - this.startedMs,
        } satisfies RequestStop);
    };
    const left = this.timeoutMs - (Date.now() - this.startedMs);
    if (this.gone()) stop('gone');
    else if (left <= 0) stop('deadline');
    if (controller.signal.aborted) return controller;
    const timer = setTimeout(() => stop('deadline'), left);
    const onClose = (): void => {
      if (!this.ctx.res.writableFinished) stop('gone');
    };
    this.ctx.res.once('close', onClose);
    this.disarm = () => {
      clearTimeout(timer);
      this.ctx.res.off('close', onClose);
    };
    return controller;
  }
}

/** Starts the request's CallContext (callOf finds it); its end() is called when the request is over. */
export function startCall(ctx: Context, timeoutMs: number): { end(): void } {
  const call = new RequestCall(ctx, timeoutMs, Date.now());
  ctx.state.call = call;
  return call;
}

/** startCall as a middleware of its own; `timeoutMs`: one deadline for every request, or a deadline chosen per request (imports have their own). */
export function requestDeadline(timeoutMs: number | ((ctx: Context) => number)) {
  return async function withDeadline(ctx: Context, next: Next): Promise<void> {
    const call = startCall(ctx, typeof timeoutMs === 'number' ? timeoutMs : timeoutMs(ctx));
    try {
      await next();
    } finally {
      call.end();
    }
  };
}

/** The CallContext startCall set for this request (none outside it, e.g. in unit tests of routes). */
export function callOf(ctx: Context): CallContext {
  return (ctx.state.call as CallContext | undefined) ?? {};
}
