/** Writing JSON bodies: every response of the service goes through here. */
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { jsonParts } from '../json-text';

/** A long part is written in slices this long, each only when the connection has taken the one before. */
const SLICE_CHARS = 256 * 1024;

export function sendJson(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  const parts = jsonParts(body);
  if (parts.length === 1) {
    ctx.body = parts[0];
    return;
  }
  // A big result (up to -max-result-bytes) goes out as it is, slice by slice: never copied whole.
  ctx.length = parts.reduce((bytes, part) => bytes + Buffer.byteLength(part), 0);
  ctx.body = Readable.from(slices(parts), { objectMode: false, highWaterMark: SLICE_CHARS });
}

function* slices(parts: readonly string[]): Generator<string> {
  for (const part of parts) {
    for (let at = 0; at < part.length;) {
      let end = Math.min(part.length, at + SLICE_CHARS);
      // A surrogate pair cut in two would be sent as two replacement characters.
      if (isHighSurrogate(part.charCodeAt(end - 1)) && end < part.length) end++;
      yield part.slice(at, end);
      at = end;
    }
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
