/**
 * The -max-connections ceiling. The server counts open client connections; a
 * connection opened over the ceiling is marked, and each request on it gets a
 * 503 with a JSON body, then the connection is closed.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';

const overLimit = new WeakSet<Socket>();

export function trackConnections(server: Server, max: number): void {
  let admitted = 0;
  server.on('connection', (socket: Socket) => {
    if (admitted >= max) {
      overLimit.add(socket);
      return;
    }
    admitted++;
    socket.once('close', () => admitted--);
  });
}

export function connectionCeiling(max: number) {
  return async function refuseOverLimit(ctx: Context, next: Next): Promise<void> {
    if (overLimit.has(ctx.req.socket)) {
      ctx.set('Connection', 'close');
      ctx.set('Retry-After', '1');
      throw new EngineError('TOO_MANY_CONNECTIONS', { max });
    }
    await next();
  };
}
