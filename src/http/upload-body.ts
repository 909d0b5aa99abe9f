/**
 * Bodies that are not JSON: the uploads of POST /dbs/{db}/import, read as
 * they arrive, counted against -max-import-bytes as they come (a body that
 * announces more is refused before it is read), and never held twice: a
 * text is decoded chunk by chunk, a file goes straight to disk.
 */
import fs from 'node:fs';
import type { Context } from 'koa';
import { EngineError } from '../errors';

function tooLarge(ctx: Context, max: number): EngineError {
  // The rest of the body is not read for this request (lingering-close throws it away): the connection cannot carry another.
  ctx.set('Connection', 'close');
  return new EngineError('IMPORT_TOO_LARGE', { max });
}

function checkHeaders(ctx: Context, max: number): void {
  if (!['', 'identity'].includes(ctx.get('Content-Encoding').toLowerCase()))
    throw new EngineError('IMPORT_MEDIA_TYPE', { type: `Content-Encoding ${ctx.get('Content-Encoding')}` });
  const length = Number(ctx.get('Content-Length') || '0');
  if (length > max) throw tooLarge(ctx, max);
}

async function eachChunk(ctx: Context, max: number, take: (chunk: Buffer) => void | Promise<void>): Promise<void> {
  checkHeaders(ctx, max);
  let bytes = 0;
  // Leaving the loop must not destroy the request: the socket would be reset before the 413 reaches the client.
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > max) throw tooLarge(ctx, max);
    await take(chunk);
  }
}

/** The body as UTF-8 text; invalid UTF-8 is refused rather than turned into U+FFFD. */
export async function readUploadText(ctx: Context, max: number): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const parts: string[] = [];
  try {
    await eachChunk(ctx, max, (chunk) => {
      parts.push(decoder.decode(chunk, { stream: true }));
    });
    parts.push(decoder.decode());
  } catch (error) {
    if (error instanceof TypeError) throw new EngineError('INVALID_UTF8');
    throw error;
  }
  return parts.join('');
}

/** The body written to `file` (a new file). */
export async function saveUpload(ctx: Context, max: number, file: string): Promise<void> {
  const handle = await fs.promises.open(file, 'wx');
  try {
    await eachChunk(ctx, max, async (chunk) => {
      await handle.write(chunk);
    });
  } finally {
    await handle.close();
  }
}
