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
  res.writeHead(408, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  res.end(body);
}

/** Starts each request's body clock when its headers have been read ('request'). */
export function bodyDeadline(server: Server, ms: number): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const timer = setTimeout(() => answerTimeout(req, res, ms), ms);
    res.once('close', () => clearTimeout(timer));
  });
}
