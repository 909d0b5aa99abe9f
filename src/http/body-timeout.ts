/**
 * -body-timeout: the request body must arrive within this after the end of
 * the headers, else 408 and the connection closes. Node's own requestTimeout
 * counts from the start of the request, so the limit in force was the header
 * and body timeouts added together; it stays as a backstop only.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { EngineError } from '../errors';

function answerTimeout(req: IncomingMessage, res: ServerResponse, ms: number): void {
  if (req.complete) return;
  // The answer already went out (an early 413, say): only the rest of the body is late.
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  const body = JSON.stringify(new EngineError('BODY_TIMEOUT', { ms }).toBody());
  res.writeHead(408, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * Starts each request's body clock when its headers have been read
 * ('request'). Most bodies come in the same read as their headers, and are
 * whole once that read is parsed: the clock is only armed, with a timer and a
 * listener, for a body still incomplete then.
 */
export function bodyDeadline(server: Server, ms: number): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const startedMs = Date.now();
    setImmediate(() => {
      if (req.complete || req.socket.destroyed) return;
      const timer = setTimeout(() => answerTimeout(req, res, ms), Math.max(0, ms - (Date.now() - startedMs)));
      res.once('close', () => clearTimeout(timer));
    });
  });
}
