/**
 * Requests Node's HTTP parser refuses never reach Koa, and Node answers them
 * with a bare 400 and no body. The commonest cause is a header value with a
 * stray carriage return: a token cut from a file with CRLF line ends. They
 * get the engine's JSON error body here, saying what was wrong and in which
 * header; the header's value is never repeated (it may be a secret).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { EngineError } from '../errors';

interface ParseError extends Error {
  code?: string;
  /** Where in rawPacket the parser stopped. */
  bytesParsed?: number;
  rawPacket?: Buffer;
}

/** What Node answers itself, bodiless, for errors that are not about the request's characters. */
const PLAIN: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

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

function toEngineError(error: ParseError): EngineError {
  return (
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

export function answerParseErrors(server: Server): void {
  server.on('clientError', (error: ParseError, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || answering(socket)) {
      socket.destroy();
      return;
    }
    const plain = PLAIN[error.code ?? ''];
    if (plain !== undefined) {
      socket.write(`HTTP/1.1 ${plain}\r\nConnection: close\r\n\r\n`);
    } else {
      const body = JSON.stringify(toEngineError(error).toBody());
      socket.write(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    // As Node does: the parser cannot go on, and a half-open socket would hold a connection slot.
    socket.destroySoon();
  });
}
