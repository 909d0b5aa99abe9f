/** GET /health and GET /metrics. */
import type Router from '@koa/router';
import type { Config } from '../config/options';
import type { Metrics } from '../http/metrics';
import { sendJson } from '../http/respond';
import { queryValue } from './request/query';
import { version } from '../version';
import type { Readiness } from '../http/bookkeeping/readiness';
import type { ReplicationControl } from '../services/server-role';

export function serviceRoutes(
  router: Router,
  config: Config,
  metrics: Metrics,
  readiness: Readiness,
  replication: ReplicationControl | null = null,
): void {
  router.get('/health', (ctx) => {
    sendJson(ctx, 200, {
      ok: true,
      name: 'sqlscribe',
      version,
      single: config.mode === 'single',
      dir: config.dir,
      timeUnix: Math.floor(Date.now() / 1000),
      ready: readiness.ready,
      ...(replication === null ? {} : { replication: replication.status() }),
    });
  });

  router.get('/metrics', async (ctx) => {
    if (queryValue(ctx, 'format') === 'prometheus') {
      ctx.type = metrics.prometheusContentType;
      ctx.body = await metrics.prometheus();
      return;
    }
    sendJson(ctx, 200, metrics.snapshot());
  });
}
