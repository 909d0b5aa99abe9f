/** Where a request's principal is kept between the auth middleware and the routes. */
import type { Context } from 'koa';
import type { Principal } from '../../access/principal';

export function setPrincipal(ctx: Context, principal: Principal): void {
  ctx.state.principal = principal;
}

/** The request's principal; undefined on a server that requires no tokens. */
export function principalOf(ctx: Context): Principal | undefined {
  return ctx.state.principal as Principal | undefined;
}
