/**
 * One place decides what a client sees of an error: catalog errors are
 * shown as they are; anything else becomes a 500 whose details go to stderr,
 * never to the client (no stack traces in responses). Client errors and 503s
 * are answered without a word on stderr: they are not faults to page about.
 */
import type { Context, Next } from 'koa';
import { EngineError } from '../../errors';
import { noteAnswered } from './refusal-trace';
import { sendJson } from '../respond';
import { isServerFault } from '../server-fault';

interface HttpLikeError {
  status?: number;
  type?: string;
  expose?: boolean;
}

/** Errors of HTTP libraries (http-errors, as Koa and body readers throw them) carry a status and a type. */
function fromHttpError(error: HttpLikeError, ctx: Context, maxBodyBytes: number): EngineError | undefined {
  if (error.status === 413 || error.type === 'entity.too.large')
    return new EngineError('BODY_TOO_LARGE', { max: maxBodyBytes });
  if (error.type === 'entity.parse.failed' || (error.status === 400 && /json/i.test(String((error as Error).message))))
    return new EngineError('MALFORMED_JSON');
  if (error.status === 415 || error.type === 'encoding.unsupported' || error.type === 'charset.unsupported')
    return new EngineError('UNSUPPORTED_MEDIA_TYPE');
  // A parser error is the client's JSON, even when the parser did not mark it as safe to show.
  if (error.status === 400 && error instanceof SyntaxError) return new EngineError('MALFORMED_JSON');
  if (error.status === 400 && error.expose)
    return new EngineError('BAD_REQUEST', { detail: String((error as Error).message) });
  void ctx;
  return undefined;
}

export function toClientError(error: unknown, ctx: Context, maxBodyBytes: number): EngineError {
  if (error instanceof EngineError) return error;
  const mapped = typeof error === 'object' && error !== null ? fromHttpError(error, ctx, maxBodyBytes) : undefined;
  return mapped ?? new EngineError('INTERNAL', {}, { cause: error });
}

/** A server fault goes to stderr with its stack, for the operator; the client sees only the catalog message. */
function logFault(ctx: Context, clientError: EngineError, thrown: unknown): void {
  const cause = clientError.errorName === 'INTERNAL' ? thrown : (clientError.cause ?? clientError);
  process.stderr.write(
    `sqlscribe: ${ctx.method} ${ctx.path} failed: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}\n`,
  );
}

/** Answers a request that failed with `error`: the client sees the catalog error, the operator the fault. */
export function answerError(ctx: Context, error: unknown, maxBodyBytes: number): void {
  const clientError = toClientError(error, ctx, maxBodyBytes);
  noteAnswered(ctx, clientError); // the request log finds refusals from it
  if (isServerFault(clientError.status)) logFault(ctx, clientError, error);
  if (clientError.retryAfter !== undefined) ctx.set('Retry-After', String(clientError.retryAfter));
  // The unread rest of a refused body would stall the next request on this connection.
  if (clientError.status === 413) ctx.set('Connection', 'close');
  sendJson(ctx, clientError.status, clientError.toBody());
}

/** answerError as a middleware of its own around `next` (the application calls it from its bookkeeping middleware). */
export function errorHandler(maxBodyBytes: number) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      answerError(ctx, error, maxBodyBytes);
    }
  };
}
