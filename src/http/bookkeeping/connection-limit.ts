/**
 * The -max-connections ceiling. The server counts open client connections; a
 * connection opened over the ceiling is marked, and each request on it gets a
 * 503 with a JSON body, then the connection is closed.
 *
 * Kept-alive connections would otherwise keep their slots for as long as their
 * clients keep asking, and the clients turned away would never get one (80
 * clients against 8 slots: 8 served 144 times each, 72 never, in 15 s). So
 * while connections are being refused, an admitted connection gives its slot
 * back after the answer in flight (`Connection: close`); without that pressure
 * keep-alive works as usual.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'koa';
import { EngineError } from '../../errors';

/** A refusal this recent means clients are waiting for a slot. */
export const PRESSURE_MS = 1000;

/** One server's count of admitted connections, and when it last turned one away. */
class Ceiling {
  admitted = 0;
  private lastRefusalMs = Number.NEGATIVE_INFINITY;

  refused(): void {
    this.lastRefusalMs = Date.now();
  }

  get underPressure(): boolean {
    return Date.now() - this.lastRefusalMs < PRESSURE_MS;
  }
}

const overLimit = new WeakSet<Socket>();
const admittedBy = new WeakMap<Socket, Ceiling>();

export function trackConnections(server: Server, max: number): void {
  const ceiling = new Ceiling();
  server.on('connection', (socket: Socket) => {
    if (ceiling.admitted >= max) {
      overLimit.add(socket);
      ceiling.refused();
      return;
    }
    ceiling.admitted++;
    admittedBy.set(socket, ceiling);
    socket.once('close', () => ceiling.admitted--);
  });
}

/** Refuses a request on a connection opened over the ceiling. */
export function refuseOverCeiling(ctx: Context, max: number): void {
  if (!overLimit.has(ctx.req.socket)) return;
  ctx.set('Connection', 'close');
  ctx.set('Retry-After', '1');
  throw new EngineError('TOO_MANY_CONNECTIONS', { max });
}

/**
 * Called when an admitted request's answer is ready (or it failed), so that a
 * slow request sees refusals that happened while it ran: under pressure the
 * connection gives its slot back after this answer.
 */
export function releaseUnderPressure(ctx: Context): void {
  if (admittedBy.get(ctx.req.socket)?.underPressure === true) ctx.set('Connection', 'close');
}
