/**
 * Sets the request's client address once, first thing: `ctx.ip` is the peer
 * address, or behind a proxy named by -trust-proxy the client that proxy
 * names (forwarded-hops.ts). Everything that asks who the client is — the
 * request log's `addr`, the fair share of the engines (request-deadline.ts),
 * the refusal trace and the class view — reads `ctx.ip`, so all of them agree.
 */
import type { Context, Next } from 'koa';
import type { ProxyRange } from '../options-values';
import { clientAddress, TrustedProxies } from './forwarded-hops';

/** The scheme a trusted proxy said the client used; null when none said. */
export function clientProtoOf(ctx: Context): string | null {
  return (ctx.state.clientProto as string | null | undefined) ?? null;
}

export function clientAddressFrom(ranges: readonly ProxyRange[]) {
  const trusted = new TrustedProxies(ranges);
  return async function setClientAddress(ctx: Context, next: Next): Promise<void> {
    const client = clientAddress(ctx.req.socket.remoteAddress ?? '', {
      forwarded: ctx.get('forwarded') || undefined,
      'x-forwarded-for': ctx.get('x-forwarded-for') || undefined,
      'x-forwarded-proto': ctx.get('x-forwarded-proto') || undefined,
    }, trusted);
    ctx.request.ip = client.address;
    ctx.state.clientProto = client.proto;
    await next();
  };
}
