/**
 * Finds a request's route once. @koa/router tests every route's pattern on
 * every request and builds the matched route's chain anew each time; most
 * requests are to a fixed path (POST /exec, GET /health), so those are found
 * in a table by method and path, and only the rest, and paths the table does
 * not hold exactly (a trailing slash, other letter case), go to the router.
 * What the router does not match at all goes to `unmatched` (404 or 405).
 */
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';

type Handler = (ctx: Context, next: Next) => unknown;

/** A fixed path: no parameters, nothing the router's patterns treat specially. */
const FIXED_PATH = /^\/[A-Za-z0-9/_.-]*$/;

/** The layers' middleware run in order, as the router runs one route's. */
function chain(stack: readonly Handler[]): Handler {
  if (stack.length === 1) return stack[0] as Handler;
  return (ctx, next) => {
    const run = (index: number): Promise<unknown> =>
      Promise.resolve(index === stack.length ? next() : (stack[index] as Handler)(ctx, () => run(index + 1)));
    return run(0);
  };
}

/** `METHOD path` → the one route the router would run for it, for every fixed path only one route matches. */
function fixedRoutes(router: Router): Map<string, Handler> {
  const table = new Map<string, Handler>();
  // A router-wide middleware (router.use) runs before routes: then the router decides every request.
  if (router.stack.some((layer) => layer.methods.length === 0)) return table;
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string' || !FIXED_PATH.test(layer.path) || layer.paramNames.length > 0) continue;
    for (const method of layer.methods) {
      const matched = router.match(layer.path, method).pathAndMethod;
      if (matched.length === 1 && matched[0] === layer)
        table.set(`${method} ${layer.path}`, chain(layer.stack as Handler[]));
    }
  }
  return table;
}

/** The routes of `router` as one middleware; `unmatched` answers what no route matches. */
export function routeTable(router: Router, unmatched: Middleware): Middleware & { router: Router } {
  const routes = router.routes() as unknown as Handler;
  const otherwise = unmatched as Handler;
  let table: Map<string, Handler> | undefined;
  const route = function route(ctx: Context, next: Next): unknown {
    // Built on the first request: every route is registered by then.
    table ??= fixedRoutes(router);
    const fixed = table.get(`${ctx.method} ${ctx.path}`);
    if (fixed !== undefined) {
      ctx.params = {};
      return fixed(ctx, next);
    }
    return routes(ctx, () => Promise.resolve(otherwise(ctx, next)));
  };
  // Tests (and tools) find the router of the application through its middleware, as they found @koa/router's own.
  return Object.assign(route as Middleware, { router });
}
