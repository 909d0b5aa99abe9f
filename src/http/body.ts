/**
 * Request bodies: JSON objects only, at most -max-body-bytes, valid UTF-8.
 * Wrong content types are refused rather than silently read as an empty body,
 * and invalid UTF-8 is refused rather than silently turned into U+FFFD (which
 * would change what a student wrote before it reaches the database).
 * What JSON itself can carry but the service refuses is in json-guard.
 *
 * The body is read here directly: its bytes gathered up to the limit, checked
 * and decoded as UTF-8 in one step, parsed once. A general body parser's
 * layers (content negotiation, inflation, charset tables) cost more per
 * request than everything else the service does around a point read.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';
import { checkJsonBody } from './json-guard';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body; `{}` for a request without one; undefined for GET, HEAD and raw uploads. */
    body?: unknown;
    /** The body's text as it was parsed. */
    rawBody?: string;
  }
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

/** application/json, or any type that says it is JSON (`+json`), whatever its parameters. */
function isJson(ctx: Context): boolean {
  const header = ctx.get('Content-Type');
  const semicolon = header.indexOf(';');
  const type = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return type === 'application/json' || ctx.is('application/json', '+json') !== false;
}

function tooLarge(maxBodyBytes: number): EngineError {
  return new EngineError('BODY_TOO_LARGE', { max: maxBodyBytes });
}

/** Stops reading a body that will not be used; the lingering close reads off the rest if the connection closes. */
function halt(req: IncomingMessage): void {
  req.unpipe();
  req.pause();
}

/** The body's bytes, at most `limit` of them. */
function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? null : Number(declared);
  if (length !== null && length > limit) {
    halt(req);
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (error: Error | null): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', done);
      req.off('close', onClose);
      if (error !== null) reject(error);
      else if (length !== null && received !== length)
        reject(new EngineError('BAD_REQUEST', { detail: 'request size did not match content length' }));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= limit) {
        chunks.push(chunk);
        return;
      }
      halt(req);
      done(tooLarge(limit));
    };
    const onEnd = (): void => done(null);
    // The client went away before the body was whole.
    const onClose = (): void => {
      if (!req.complete) done(new EngineError('BAD_REQUEST', { detail: 'request aborted' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', done);
    req.on('close', onClose);
  });
}

/** Fatal: a byte that is not UTF-8 throws instead of becoming U+FFFD. A leading byte-order mark is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new EngineError('INVALID_UTF8');
  }
}

/** Whether the text opens an object or an array, after JSON's whitespace (space, tab, line feed, carriage return). */
function opensObjectOrArray(text: string): boolean {
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) continue;
    return code === 0x7b || code === 0x5b;
  }
  return false;
}

/** A body must open with an object or an array; nothing at all is `{}`. */
function parseJson(text: string): unknown {
  if (text === '') return {};
  if (!opensObjectOrArray(text)) throw new EngineError('MALFORMED_JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EngineError('MALFORMED_JSON');
  }
}

function checkObject(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new EngineError('BAD_REQUEST', { detail: 'the body must be a JSON object' });
  }
}

/** Reads, checks and parses the request's JSON body into ctx.request.body. */
async function readJson(ctx: Context, maxBodyBytes: number): Promise<void> {
  if (!isJson(ctx)) throw new EngineError('UNSUPPORTED_MEDIA_TYPE');
  // Compressed bodies are refused: their bytes cannot be checked, and they can hide a bomb.
  const encoding = ctx.get('Content-Encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') throw new EngineError('UNSUPPORTED_MEDIA_TYPE');
  const text = decodeUtf8(await readBytes(ctx.req, maxBodyBytes));
  const body = parseJson(text);
  checkObject(body);
  checkJsonBody(body, text);
  ctx.request.body = body;
  ctx.request.rawBody = text;
}

/** `raw`: requests whose bodies are not JSON (imports), left for their route to read. */
export function jsonBody(maxBodyBytes: number, raw: (ctx: Context) => boolean = () => false) {
  return async function readJsonBody(ctx: Context, next: Next): Promise<void> {
    // No endpoint reads the body of a GET: it is ignored, not judged.
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || raw(ctx)) {
      await next();
      return;
    }
    if (hasBody(ctx)) await readJson(ctx, maxBodyBytes);
    else ctx.request.body = {};
    await next();
  };
}
