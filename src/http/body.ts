/**
 * Request bodies: JSON objects only, at most -max-body-bytes, valid UTF-8.
 * Wrong content types are refused rather than silently read as an empty body,
 * and invalid UTF-8 is refused rather than silently turned into U+FFFD (which
 * would change what a student wrote before it reaches the database).
 * What JSON itself can carry but the service refuses is in json-guard.
 */
import type { IncomingMessage } from 'node:http';
import bodyParser from 'koa-bodyparser';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';
import { checkJsonBody } from './json-guard';

function hasBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/**
 * Checks the bytes as the parser reads them. It must be attached in the same
 * tick as the parser's own listener (streams emit data asynchronously), so
 * both see every chunk; it keeps no copy of the body.
 */
function watchUtf8(req: IncomingMessage): () => boolean {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let valid = true;
  req.on('data', (chunk: Buffer) => {
    if (!valid) return;
    try {
      decoder.decode(chunk, { stream: true });
    } catch {
      valid = false;
    }
  });
  return () => {
    if (!valid) return false;
    try {
      decoder.decode();
      return true;
    } catch {
      return false;
    }
  };
}

function checkObject(body: unknown): void {
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw new EngineError('BAD_REQUEST', { detail: 'the body must be a JSON object' });
  }
}

/** `raw`: requests whose bodies are not JSON (imports), left for their route to read. */
export function jsonBody(maxBodyBytes: number, raw: (ctx: Context) => boolean = () => false) {
  // The parser's own prototype check throws an unmarked error (a 500); json-guard refuses those keys with a 400 instead.
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: String(maxBodyBytes), strict: true, onProtoPoisoning: 'ignore' } as bodyParser.Options);
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    // No endpoint reads the body of a GET: it is ignored, not judged.
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || raw(ctx)) {
      await next();
      return;
    }
    if (!hasBody(ctx)) {
      await parse(ctx, next);
      return;
    }
    if (!ctx.is('application/json', '+json')) throw new EngineError('UNSUPPORTED_MEDIA_TYPE');
    // Compressed bodies are refused: their bytes cannot be checked, and they can hide a bomb.
    if (!['', 'identity'].includes(ctx.get('Content-Encoding').toLowerCase())) throw new EngineError('UNSUPPORTED_MEDIA_TYPE');
    const isValidUtf8 = watchUtf8(ctx.req);
    let parsed = false;
    try {
      await parse(ctx, async () => {
        parsed = true;
        if (!isValidUtf8()) throw new EngineError('INVALID_UTF8');
        checkObject(ctx.request.body);
        checkJsonBody(ctx.request.body, ctx.request.rawBody ?? '');
        await next();
      });
    } catch (error) {
      // Bad bytes can also break the JSON itself (outside a string): they are the cause to report.
      if (!parsed && (error as { status?: number }).status === 400 && !isValidUtf8()) throw new EngineError('INVALID_UTF8');
      throw error;
    }
  };
}
