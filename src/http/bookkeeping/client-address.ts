/**
 * Sets the request's client address once, first thing: `ctx.ip` is the peer
 * address, or behind a proxy named by -trust-proxy the client that proxy
 * names (forwarded-hops.ts). Everything that asks who the client is — the
 * request log's `addr`, the fair share of the engines (request-deadline.ts),
 * the refusal trace and the class view — reads `ctx.ip`, so all of them agree.
 */
import type { Context } from 'koa';
import type { ProxyRange } from '../../config/options-values';
import { clientAddress, plainAddress, TrustedProxies } from './forwarded-hops';

/** The scheme a trusted proxy said the client used; null when none said. */
export function clientProtoOf(ctx: Context): string | null {
  return (ctx.state.clientProto as string | null | undefined) ?? null;
}

/** Sets `ctx.ip` (and the scheme a trusted proxy named) for each request it is given. */
export function clientAddressReader(ranges: readonly ProxyRange[]): (ctx: Context) => void {
  const trusted = new TrustedProxies(ranges);
  // Without trusted proxies no header is read: the peer is the client.
  if (trusted.empty) return (ctx) => void (ctx.request.ip = plainAddress(ctx.req.socket.remoteAddress ?? ''));
  return function setClientAddress(ctx: Context): void {
    const client = clientAddress(
      ctx.req.socket.remoteAddress ?? '',
      {
        forwarded: ctx.get('forwarded') || undefined,
        'x-forwarded-for': ctx.get('x-forwarded-for') || undefined,
        'x-forwarded-proto': ctx.get('x-forwarded-proto') || undefined,
      },
      trusted,
    );
    ctx.request.ip = client.address;
    ctx.state.clientProto = client.proto;
  };
}
