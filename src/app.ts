/**
 * The Koa application, in the order every request passes through it:
 * client address → request log and metrics → lingering close → error handler → connection ceiling → console → auth (token, then admin-only paths) → readiness → journal seq (replication) → body → deadline → routes.
 * All but the routes are one middleware (src/http/bookkeeping/bookkeeping.ts), the routes
 * another (src/http/route-table.ts).
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { CommandBus } from './bus/command-bus';
import { EngineError } from './errors';
import { bookkeeping } from './http/bookkeeping/bookkeeping';
import { jsonBody } from './http/body';
import { LINGER_BYTES } from './http/bookkeeping/lingering-close';
import { Metrics } from './http/metrics';
import type { Readiness } from './http/bookkeeping/readiness';
import { routeTable } from './http/route-table';
import type { Config } from './config/options';
import { databaseRoutes } from './routes/database-routes';
import { execRoutes } from './routes/exec-routes';
import { importRoutes, TRANSFER_PATH } from './routes/import-routes';
import { serviceRoutes } from './routes/service-routes';
import { txRoutes } from './routes/tx-routes';
import { journalRoutes } from './routes/journal-routes';
import { JournalFeed } from './services/journal-feed';
import { Journal } from '../journal/journal';
import { pilotRoutes } from './routes/pilot-routes';
import { openapiRoutes } from './routes/openapi-routes';
import { consoleRoutes, isConsolePath } from './console/serve';
import { tokenRoutes } from './routes/token-routes';
import { classRoutes } from './routes/class-routes';
import { historyRoutes } from './routes/history-routes';
import { exerciseRoutes } from './routes/exercise-routes';
import { TokenRegistry } from './tokens/token-registry';
import { replicationRoutes } from './routes/replication-routes';
import type { ReplicationControl } from './services/server-role';
import type { Refusals } from './services/refusals';

export interface App {
  koa: Koa;
  metrics: Metrics;
}

/** 404 for unknown paths, 405 (with Allow) for a known path and another method. */
function unmatched(router: Router): Middleware {
  return async function answerUnmatched(ctx: Context): Promise<void> {
    const allowed = new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods));
    if (allowed.size > 0) {
      ctx.set('Allow', [...allowed].join(', '));
      throw new EngineError('METHOD_NOT_ALLOWED', { method: ctx.method, path: ctx.path });
    }
    throw new EngineError('ENDPOINT_NOT_FOUND', { method: ctx.method, path: ctx.path });
  };
}

/** Paths whose every method needs an admin token: they are not per-database (see src/bus/access.ts for the rest). */
const ADMIN_PATHS = ['/metrics', '/journal', '/pilots', '/tokens', '/admin'];

export function createApp(
  config: Config,
  bus: CommandBus,
  readiness: Readiness,
  metrics: Metrics = new Metrics(),
  feed: JournalFeed = new JournalFeed(Journal.disabled(), null),
  tokens: TokenRegistry = new TokenRegistry({ adminToken: config.token, fileTokens: config.fileTokens, state: null }),
  replication: ReplicationControl | null = null,
  refusals: Refusals | null = null,
): App {
  const koa = new Koa();
  const router = new Router();
  serviceRoutes(router, config, metrics, readiness, replication);
  replicationRoutes(router, replication);
  databaseRoutes(router, bus, config.mode === 'single');
  execRoutes(router, bus, config.maxStatements);
  txRoutes(router, bus);
  pilotRoutes(router, bus);
  openapiRoutes(router);
  journalRoutes(router, config, feed, metrics);
  tokenRoutes(router, bus);
  classRoutes(router, bus, config);
  historyRoutes(router, bus, config);
  exerciseRoutes(router, bus);
  importRoutes(router, bus, config.maxImportBytes);

  const isTransfer = (ctx: Context): boolean => TRANSFER_PATH.test(ctx.path);
  koa.use(
    bookkeeping({
      trustProxy: config.trustProxy,
      metrics,
      logJson: config.logJson,
      refusals,
      lingerBytes: Math.max(LINGER_BYTES, 4 * config.maxBodyBytes),
      maxBodyBytes: config.maxBodyBytes,
      maxConnections: config.maxConnections,
      console: { serves: isConsolePath, serve: consoleRoutes() },
      tokens: tokens.enabled ? tokens : null,
      adminPaths: ADMIN_PATHS,
      readiness,
      journalSeq: replication === null ? null : { source: replication, waitMs: config.replication?.minSeqWaitMs ?? 0 },
      body: jsonBody(config.maxBodyBytes, isTransfer),
      timeoutMs: (ctx) => (isTransfer(ctx) ? config.importTimeoutMs : config.requestTimeoutMs),
    }),
  );
  koa.use(routeTable(router, unmatched(router)));
  // Errors are answered by the bookkeeping's error handler; Koa's default handler would print them again.
  koa.silent = true;
  return { koa, metrics };
}
