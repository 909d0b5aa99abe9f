/**
 * A running sqlscribe's HTTP side: the Koa app and the Node HTTP server over
 * what compose.ts built. It listens at once, answers 503 while crash
 * recovery runs, then serves; it stops HTTP first, then the rest.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { composeServer } from './startup/compose';
import { trackConnections } from './http/bookkeeping/connection-limit';
import { bodyDeadline } from './http/body-timeout';
import { answerParseErrors } from './http/parse-errors';
import type { Config } from './config/options';

export interface RunningServer {
  readonly url: string;
  /** Settles when the databases are in line with the journal and every endpoint serves. */
  readonly ready: Promise<{ applied: number }>;
  close(): Promise<void>;
}

function listen(server: http.Server, config: Config): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${host}:${address.port}`);
    });
  });
}

/**
 * A client that sends its request slowly, or never (slowloris), holds one of
 * the -max-connections slots only this long: Node answers 408 and closes.
 * Node looks for expired requests every connectionsCheckingInterval, so that
 * is kept short, or a slot would stay taken up to 30 s longer. The body's own
 * limit, counted from the end of the headers, is bodyDeadline's; Node's
 * requestTimeout (from the start of the request) can only be later.
 */
function connectionTimeouts(config: Config): http.ServerOptions {
  return {
    headersTimeout: config.headerTimeoutMs,
    requestTimeout: config.headerTimeoutMs + config.bodyTimeoutMs,
    keepAliveTimeout: config.idleTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.headerTimeoutMs),
  };
}

export async function startServer(config: Config): Promise<RunningServer> {
  const services = await composeServer(config);
  const { koa } = createApp(
    config,
    services.bus,
    services.readiness,
    services.metrics,
    services.feed,
    services.tokens,
    services.replication,
    services.refusals,
  );
  const handle = koa.callback();
  // Koa answers every error itself (errorHandler): the promise is only awaited there.
  const server = http.createServer(connectionTimeouts(config), (req, res) => void handle(req, res));
  trackConnections(server, config.maxConnections);
  bodyDeadline(server, config.bodyTimeoutMs);
  answerParseErrors(server, { headerTimeoutMs: config.headerTimeoutMs, maxHeaderBytes: http.maxHeaderSize });
  const url = await listen(server, config);
  return {
    url,
    ready: services.start(url),
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Followers of GET /journal would hold the server open for ever.
        services.feed.close();
        server.closeIdleConnections();
      });
      await services.close();
    },
  };
}
