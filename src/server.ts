/**
 * A running sqlscribe: the HTTP server, its command bus and its engine,
 * started and stopped together.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { CommandBus } from './bus/command-bus';
import { ProcessEngineHost } from './engine/host/process-engine-host';
import { trackConnections } from './http/connection-limit';
import type { Config } from './options';

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  fs.mkdirSync(config.dir, { recursive: true });
  const bus = new CommandBus(config, new ProcessEngineHost({ queryTimeoutMs: config.queryTimeoutMs }));
  const { koa } = createApp(config, bus);
  const server = http.createServer(koa.callback());
  trackConnections(server, config.maxConnections);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    async close(): Promise<void> {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await bus.close();
    },
  };
}
