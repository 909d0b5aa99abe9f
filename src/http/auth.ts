/**
 * Token authentication: with -token, every
 * request carries X-Service-Token or Authorization: Bearer. The comparison is
 * constant-time; a token in the query string is not a credential.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

/**
 * Whether `presented` is the token, in time that depends on the token's
 * length only: the presented text is copied into a buffer of that length
 * (cut or zero-filled) and compared whole, and the lengths are compared as
 * numbers. No hash per request.
 */
function isToken(presented: string, expected: Buffer): boolean {
  const candidate = Buffer.alloc(expected.length);
  const written = candidate.write(presented, 'utf8');
  const sameLength = Buffer.byteLength(presented, 'utf8') === expected.length && written === expected.length;
  return timingSafeEqual(candidate, expected) && sameLength;
}

function presentedToken(ctx: Context): string | undefined {
  const header = ctx.get('X-Service-Token');
  if (header !== '') return header;
  const match = /^Bearer[ ]+(.+)$/i.exec(ctx.get('Authorization'));
  return match?.[1]?.trim();
}

export function requireToken(token: string) {
  const expected = Buffer.from(token, 'utf8');
  return async function authenticate(ctx: Context, next: Next): Promise<void> {
    const presented = presentedToken(ctx);
    if (presented === undefined || !isToken(presented, expected)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="sqlscribe"');
      throw new EngineError('UNAUTHORIZED');
    }
    await next();
  };
}
