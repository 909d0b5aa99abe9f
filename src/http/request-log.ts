/**
 * Measures every request: metrics always, and with -log-json one JSON line on
 * stdout per request (transport only: no SQL, no query string, no token).
 */
import type { Context, Next } from 'koa';
import type { Metrics } from './metrics';

export function requestLog(metrics: Metrics, logJson: boolean) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      metrics.observe(ctx.status, latencyMs);
      if (logJson) {
        const line = { ts_unix: Math.floor(Date.now() / 1000), method: ctx.method, path: ctx.path, status: ctx.status, latency_ms: Math.round(latencyMs * 1000) / 1000 };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      }
    }
  };
}
