/**
 * A request's bookkeeping, in one Koa middleware: every request passes
 * through the same steps, and a chain of a dozen middleware cost a promise,
 * a closure and a dispatch each. Each concern keeps its code in its own file
 * as a plain function; this file only says their order:
 *
 * client address → (request log and metrics → (lingering close → (error
 * handler → (connection ceiling → console → auth (token, then admin-only
 * paths) → readiness → journal seq (replication) → body → deadline → routes))))
 *
 * Each arrow into parentheses is a step that also acts after the inner ones
 * have finished or failed: the log measures the answer, the lingering close
 * looks at it, the error handler answers a failure, the ceiling decides on
 * Connection: close when the answer is ready.
 */
import type { Context, Middleware, Next } from 'koa';
import type { ProxyRange } from '../../config/options-values';
import type { Refusals } from '../../services/refusals';
import type { TokenRegistry } from '../../tokens/token-registry';
import { authenticateRequest, requireAdminPath } from './auth';
import { clientAddressReader } from './client-address';
import { refuseOverCeiling, releaseUnderPressure } from './connection-limit';
import { answerError } from './error-handler';
import { awaitMinSeq, stampJournalSeq, type SeqSource } from './journal-seq';
import { lingerIfAnsweredEarly } from './lingering-close';
import type { Metrics } from '../metrics';
import type { Readiness } from './readiness';
import { requestLogger } from './request-log';
import { requestDeadline } from './request-deadline';

export interface BookkeepingOptions {
  readonly trustProxy: readonly ProxyRange[];
  readonly metrics: Metrics;
  readonly logJson: boolean;
  readonly refusals: Refusals | null;
  /** How much of a refused body is read at most before the connection closes (lingering-close.ts). */
  readonly lingerBytes: number;
  readonly maxBodyBytes: number;
  readonly maxConnections: number;
  /** The web console: it holds no data, so it is served before authentication. */
  readonly console: { readonly serves: (path: string) => boolean; readonly serve: Middleware };
  /** null on a server that requires no tokens. */
  readonly tokens: TokenRegistry | null;
  /** Paths whose every method needs an admin token. */
  readonly adminPaths: readonly string[];
  readonly readiness: Readiness;
  /** With replication: X-Min-Seq and X-Journal-Seq. */
  readonly journalSeq: { readonly source: SeqSource; readonly waitMs: number } | null;
  /** Reads the request's JSON body, then calls `next`. */
  readonly body: Middleware;
  /** The request's deadline (-request-timeout, or -import-timeout for transfers). */
  readonly timeoutMs: (ctx: Context) => number;
}

/** The one bookkeeping middleware; `next` is the routes. */
export function bookkeeping(options: BookkeepingOptions): Middleware {
  const setClient = clientAddressReader(options.trustProxy);
  const log = requestLogger(options.metrics, options.logJson, options.refusals);
  const { tokens, journalSeq } = options;

  /** From the deadline on: the routes run with the request's CallContext. */
  const withDeadline = requestDeadline(options.timeoutMs);

  /** After the ceiling: everything a request needs before its route runs. */
  async function admitted(ctx: Context, next: Next): Promise<void> {
    if (options.console.serves(ctx.path)) {
      await options.console.serve(ctx, next);
      return;
    }
    if (tokens !== null) {
      authenticateRequest(ctx, tokens);
      requireAdminPath(ctx, options.adminPaths);
    }
    options.readiness.check(ctx);
    if (journalSeq !== null) {
      const waiting = awaitMinSeq(ctx, journalSeq.source, journalSeq.waitMs);
      if (waiting !== undefined) await waiting;
      stampJournalSeq(ctx, journalSeq.source);
    }
    await options.body(ctx, () => withDeadline(ctx, next));
    if (journalSeq !== null) stampJournalSeq(ctx, journalSeq.source);
  }

  async function answered(ctx: Context, next: Next): Promise<void> {
    try {
      refuseOverCeiling(ctx, options.maxConnections);
      try {
        await admitted(ctx, next);
      } finally {
        releaseUnderPressure(ctx);
      }
    } catch (error) {
      answerError(ctx, error, options.maxBodyBytes);
    }
  }

  const keepBooks = async function keepBooks(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    setClient(ctx);
    try {
      await answered(ctx, next);
      lingerIfAnsweredEarly(ctx, options.lingerBytes);
    } finally {
      log(ctx, started);
    }
  };
  return keepBooks;
}
