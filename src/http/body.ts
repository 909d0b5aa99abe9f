/**
 * Request bodies: JSON objects only, at most -max-body-bytes. Wrong content
 * types are refused rather than silently read as an empty body.
 */
import bodyParser from 'koa-bodyparser';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

function hasBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

export function jsonBody(maxBodyBytes: number) {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: String(maxBodyBytes), strict: true });
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    if (hasBody(ctx) && !ctx.is('application/json', '+json')) throw new EngineError('UNSUPPORTED_MEDIA_TYPE');
    await parse(ctx, async () => {
      const body: unknown = ctx.request.body;
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
        throw new EngineError('BAD_REQUEST', { detail: 'the body must be a JSON object' });
      }
      await next();
    });
  };
}
