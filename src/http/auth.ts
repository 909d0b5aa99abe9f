/**
 * Token authentication: with -token, every
 * request carries X-Service-Token or Authorization: Bearer. The comparison is
 * constant-time; a token in the query string is not a credential.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function presentedToken(ctx: Context): string | undefined {
  const header = ctx.get('X-Service-Token');
  if (header !== '') return header;
  const match = /^Bearer[ ]+(.+)$/i.exec(ctx.get('Authorization'));
  return match?.[1]?.trim();
}

export function requireToken(token: string) {
  // Comparing digests keeps the comparison constant-time whatever the lengths.
  const expected = digest(token);
  return async function authenticate(ctx: Context, next: Next): Promise<void> {
    const presented = presentedToken(ctx);
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="sqlscribe"');
      throw new EngineError('UNAUTHORIZED');
    }
    await next();
  };
}
