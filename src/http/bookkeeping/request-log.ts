/**
 * Measures every request: metrics always, and with -log-json one JSON line on
 * stdout per request (transport only: no SQL, no query string, no token).
 *
 * A refused request (refusal-trace.ts) also leaves a line on stderr, always:
 * who (the token's name), from where, what it asked for and the code; as JSON
 * with -log-json, as text otherwise. Not on stdout: the request line is
 * promised to be transport only, without an error code, so the trace is a
 * line of its own. It is counted in sqlscribe_refused_total and handed to the
 * audit trail (the journal at level all, the class view).
 */
import type { Context, Next } from 'koa';
import type { Refusal, Refusals } from '../../services/refusals';
import type { Metrics } from '../metrics';
import { refusalOf } from './refusal-trace';
import { clientProtoOf } from './client-address';

/** The refusal's line on stderr. Names and paths are JSON-quoted in the text form too: a path must not forge a line. */
export function refusalLine(refusal: Refusal, json: boolean): string {
  const [method, path] = refusal.request.split(' ') as [string, string];
  if (json) {
    const line = {
      ts_unix: Math.floor(Date.parse(refusal.ts) / 1000),
      event: 'refused',
      method,
      path,
      status: refusal.status,
      code: refusal.code,
      token: refusal.tokenName,
      client: refusal.client,
      db: refusal.db,
    };
    return `${JSON.stringify(line)}\n`;
  }
  const token = refusal.tokenName === null ? 'no token' : `token ${JSON.stringify(refusal.tokenName)}`;
  const db = refusal.db === null ? '' : ` db ${refusal.db}`;
  return `sqlscribe: ${refusal.ts} refused ${refusal.status} [SQ${refusal.code}] ${method} ${JSON.stringify(path)} ${token} from ${refusal.client}${db}\n`;
}

/** Logs, counts and records a refused request; never throws, so the answer goes out whatever happens here. */
function traceRefusal(ctx: Context, metrics: Metrics, logJson: boolean, refusals: Refusals | null): void {
  try {
    const refusal = refusalOf(ctx);
    if (refusal === null) return;
    metrics.refused(refusal.code);
    process.stderr.write(refusalLine(refusal, logJson));
    refusals?.record(refusal);
  } catch (error) {
    process.stderr.write(
      `sqlscribe: a refused request could not be traced: ${String((error as Error)?.message ?? error)}\n`,
    );
  }
}

/** Counts, times and (with -log-json) logs one answered request; `startedMs` is performance.now() when it came in. */
export function requestLogger(
  metrics: Metrics,
  logJson: boolean,
  refusals: Refusals | null = null,
): (ctx: Context, startedMs: number) => void {
  return function logRequest(ctx: Context, startedMs: number): void {
    const latencyMs = performance.now() - startedMs;
    metrics.observe(ctx.status, latencyMs);
    if (logJson) {
      const line = {
        ts_unix: Math.floor(Date.now() / 1000),
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        latency_ms: Math.round(latencyMs * 1000) / 1000,
        addr: ctx.ip,
        proto: clientProtoOf(ctx) ?? 'http',
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    traceRefusal(ctx, metrics, logJson, refusals);
  };
}

/** requestLogger as a middleware of its own (the application calls it from its one bookkeeping middleware). */
export function requestLog(metrics: Metrics, logJson: boolean, refusals: Refusals | null = null) {
  const log = requestLogger(metrics, logJson, refusals);
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      log(ctx, started);
    }
  };
}
