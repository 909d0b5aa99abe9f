/**
 * Token authentication: on a server with -token or -tokens-file, every
 * request carries X-Service-Token or Authorization: Bearer, and the token
 * registry says whose it is. A token in the query string is not a credential.
 * What each role may do is decided by the bus (per command) and by
 * requireAdminPath below (per path, for endpoints that are not commands).
 */
import type { Context, Next } from 'koa';
import { EngineError } from '../../errors';
import { hasRole } from '../../access/principal';
import type { TokenRegistry } from '../../tokens/token-registry';
import { principalOf, setPrincipal } from './principal-state';

function presentedToken(ctx: Context): string | undefined {
  const header = ctx.get('X-Service-Token');
  if (header !== '') return header;
  const match = /^Bearer[ ]+(.+)$/i.exec(ctx.get('Authorization'));
  return match?.[1]?.trim();
}

/** Sets the request's principal from its token, or refuses it with a 401. */
export function authenticateRequest(ctx: Context, registry: TokenRegistry): void {
  const presented = presentedToken(ctx);
  const principal = presented === undefined ? null : registry.authenticate(presented);
  if (principal === null) {
    ctx.set('WWW-Authenticate', 'Bearer realm="sqlscribe"');
    throw new EngineError('UNAUTHORIZED');
  }
  setPrincipal(ctx, principal);
}

/** authenticateRequest as a middleware of its own (the application calls it from its bookkeeping middleware). */
export function authenticate(registry: TokenRegistry) {
  return async function authenticateThenNext(ctx: Context, next: Next): Promise<void> {
    authenticateRequest(ctx, registry);
    await next();
  };
}

/** The prefix of `prefixes` that `path` is, or is under; undefined when none. */
function prefixOf(path: string, prefixes: readonly string[]): string | undefined {
  return prefixes.find((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/**
 * Paths only an admin token may use: the metrics, the journal (every
 * statement of every database), the pilot records and the tokens. A server
 * without tokens has no principal and is not checked here.
 */
export function requireAdminPath(ctx: Context, prefixes: readonly string[]): void {
  const principal = principalOf(ctx);
  if (principal === undefined || hasRole(principal, 'admin')) return;
  const prefix = prefixOf(ctx.path, prefixes);
  if (prefix !== undefined)
    throw new EngineError('ROLE_FORBIDDEN', {
      token: principal.name,
      role: principal.role,
      action: `${ctx.method} ${prefix}`,
      needed: 'admin',
    });
}
