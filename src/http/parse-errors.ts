/**
 * Requests Node's HTTP parser refuses never reach Koa, and Node answers them
 * with a bare 400 (or 431, 413, 408) and no body. The commonest cause is a header value with a
 * stray carriage return: a token cut from a file with CRLF line ends. They
 * get the engine's JSON error body here, saying what was wrong and in which
 * header; the header's value is never repeated (it may be a secret). Headers
 * too large (431), chunk extensions too large (413) and headers that never
 * ended (408) get their own codes and the same body.
 */
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { EngineError } from '../errors';

interface ParseError extends Error {
  code?: string;
  /** Where in rawPacket the parser stopped. */
  bytesParsed?: number;
  rawPacket?: Buffer;
}

/** Which engine error each parser error that is not about the request's characters is (Node would answer them bodiless). */
function sizeOrTimeError(code: string | undefined, limits: ParseLimits): EngineError | undefined {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new EngineError('HEADERS_TOO_LARGE', { max: limits.maxHeaderBytes });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new EngineError('CHUNK_EXTENSIONS_TOO_LARGE');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Node's requestTimeout is -header-timeout plus -body-timeout, and the body's own deadline
      // (body-timeout.ts) answers first: only headers that never ended get here.
      return new EngineError('HEADERS_TIMEOUT', { ms: limits.headerTimeoutMs });
    default:
      return undefined;
  }
}

/** What the parser was held to, for the errors to say. */
export interface ParseLimits {
  readonly headerTimeoutMs: number;
  /** Node's own limit on the headers of a request (http.maxHeaderSize, --max-http-header-size). */
  readonly maxHeaderBytes: number;
}

/** A header name as far as it is printable: enough to find the header, never its value. */
function headerName(line: string): string {
  const name = line.split(':', 1)[0] ?? '';
  return name.replace(/[^\x21-\x7e]/g, '').slice(0, 64) || 'a header';
}

function describeByte(byte: number | undefined): string {
  if (byte === undefined) return 'a character';
  const hex = `0x${byte.toString(16).padStart(2, '0').toUpperCase()}`;
  return byte >= 0x80 ? `a byte outside ASCII (${hex})` : `a control character (${hex})`;
}

/** Which character of which header the parser stopped at, when the error is one of those. */
export function describeHeaderError(error: ParseError): EngineError | undefined {
  const packet = error.rawPacket;
  const at = error.bytesParsed;
  if (packet === undefined || at === undefined) return undefined;
  const lineStart = packet.lastIndexOf(0x0a, Math.max(0, at - 1)) + 1;
  const line = packet.subarray(lineStart, at).toString('latin1');
  const inValue = line.includes(':');
  const name = headerName(line);
  if (error.code === 'HPE_LF_EXPECTED' && packet[at - 1] === 0x0d) {
    const atEnd = packet[at] === 0x0d || packet[at] === 0x0a;
    const where = atEnd ? `at the end of ${name}` : `inside ${name}`;
    const hint = atEnd ? ' (a secret copied from a file with CRLF line ends?)' : '';
    return new EngineError('HEADER_CHARACTER', { detail: `a carriage return ${where}${hint}` });
  }
  if (error.code === 'HPE_INVALID_HEADER_TOKEN') {
    const where = inValue ? `in the value of ${name}` : `in a header name (after ${JSON.stringify(name)})`;
    return new EngineError('HEADER_CHARACTER', { detail: `${describeByte(packet[at])} ${where}` });
  }
  return undefined;
}

function toEngineError(error: ParseError, limits: ParseLimits): EngineError {
  return (
    sizeOrTimeError(error.code, limits) ??
    describeHeaderError(error) ??
    new EngineError('MALFORMED_HTTP', {
      detail: String((error as { reason?: string }).reason ?? error.code ?? 'unreadable request'),
    })
  );
}

/** True when part of a response already went out on the socket: anything written now would corrupt it. */
function answering(socket: Socket): boolean {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return inFlight?.headersSent === true;
}

export function answerParseErrors(server: Server, limits: ParseLimits): void {
  server.on('clientError', (error: ParseError, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || answering(socket)) {
      socket.destroy();
      return;
    }
    const refusal = toEngineError(error, limits);
    const body = JSON.stringify(refusal.toBody());
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // As Node does: the parser cannot go on, and a half-open socket would hold a connection slot.
    socket.destroySoon();
  });
}
