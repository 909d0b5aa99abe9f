/**
 * Lingering close. An answer sent before the request body was read (a 413, a
 * refusal at the connection ceiling) on a connection that then closes must
 * not close the socket while the client is still sending: the kernel answers
 * the unread bytes with a reset, and the client reads ECONNRESET or EPIPE
 * instead of the answer. So the socket ends its side after the answer, reads
 * and throws away what still comes, and closes when the client has finished,
 * or after LINGER_MS, or once `bytes` more have come, whichever is first.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'koa';

/** Long enough for a client on a slow link to finish a refused body and read the answer. */
export const LINGER_MS = 5000;

/** At least this much of a refused body is read and thrown away before the socket is closed anyway. */
export const LINGER_BYTES = 16 * 1024 * 1024;

function drainThenClose(socket: Socket, bytes: number): void {
  socket.end();
  const from = socket.bytesRead;
  const close = (): void => void socket.destroy();
  const timer = setTimeout(close, LINGER_MS);
  const watch = setInterval(() => {
    if (socket.bytesRead - from > bytes) close();
  }, 50);
  socket.once('end', close);
  socket.once('close', () => {
    clearTimeout(timer);
    clearInterval(watch);
  });
}

function linger(req: IncomingMessage, bytes: number): void {
  // Nothing reads the rest of the body any more: it is thrown away as it comes.
  req.resume();
  // Node closes a Connection: close socket with destroySoon() once the answer is written.
  req.socket.destroySoon = () => drainThenClose(req.socket, bytes);
}

/**
 * Called once the answer is set: an answer sent before its request's body was
 * read, on a connection that closes after it, lingers. `bytes`: how much of
 * the refused body to read at most (LINGER_BYTES, or more with a larger
 * -max-body-bytes).
 */
export function lingerIfAnsweredEarly(ctx: Context, bytes: number): void {
  if (!ctx.req.complete && /\bclose\b/i.test(ctx.response.get('Connection'))) linger(ctx.req, bytes);
}
