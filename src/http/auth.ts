/**
 * Token authentication: on a server with -token or -tokens-file, every
 * request carries X-Service-Token or Authorization: Bearer, and the token
 * registry says whose it is. A token in the query string is not a credential.
 * What each role may do is decided by the bus (per command) and by
 * adminOnly below (per path, for endpoints that are not commands).
 */
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';
import { hasRole } from '../access/principal';
import type { TokenRegistry } from '../tokens/token-registry';
import { principalOf, setPrincipal } from './principal-state';

function presentedToken(ctx: Context): string | undefined {
  const header = ctx.get('X-Service-Token');
  if (header !== '') return header;
  const match = /^Bearer[ ]+(.+)$/i.exec(ctx.get('Authorization'));
  return match?.[1]?.trim();
}

export function authenticate(registry: TokenRegistry) {
  return async function authenticateRequest(ctx: Context, next: Next): Promise<void> {
    const presented = presentedToken(ctx);
    const principal = presented === undefined ? null : registry.authenticate(presented);
    if (principal === null) {
      ctx.set('WWW-Authenticate', 'Bearer realm="sqlscribe"');
      throw new EngineError('UNAUTHORIZED');
    }
    setPrincipal(ctx, principal);
    await next();
  };
}

/**
 * Paths only an admin token may use: the metrics, the journal (every
 * statement of every database), the pilot records and the tokens. A server
 * without tokens has no principal and is not checked here.
 */
export function adminOnly(prefixes: readonly string[]) {
  return async function requireAdmin(ctx: Context, next: Next): Promise<void> {
    const principal = principalOf(ctx);
    if (principal !== undefined && !hasRole(principal, 'admin') && prefixes.some((prefix) => ctx.path === prefix || ctx.path.startsWith(`${prefix}/`))) {
      throw new EngineError('ROLE_FORBIDDEN', { token: principal.name, role: principal.role, action: `${ctx.method} ${prefixes.find((p) => ctx.path.startsWith(p))}`, needed: 'admin' });
    }
    await next();
  };
}
