/** POST /dbs/{db}/import and GET /dbs/{db}/export. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import type { ImportOutcome, ImportSource, ImportUpload } from '../bus/commands';
import { EngineError } from '../errors';
import { parseCsvTypes } from '../engine/transfer/csv-import';
import type { ExportFormat } from '../engine/transfer/database-export';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { readUploadText, saveUpload } from '../http/upload-body';
import { queryValue, requiredQueryValue } from './request/query';

/** The paths whose requests are transfers: their bodies are not JSON, and their deadline is -import-timeout. */
export const TRANSFER_PATH = /^\/dbs\/[^/]+\/(import|export)$/;

const FORMATS: Readonly<Record<string, ImportSource['format']>> = {
  'application/sql': 'sql',
  'application/x-sql': 'sql',
  'text/x-sql': 'sql',
  'text/csv': 'csv',
  'application/vnd.sqlite3': 'sqlite',
  'application/x-sqlite3': 'sqlite',
};

function formatOf(ctx: Context): ImportSource['format'] {
  const format = FORMATS[ctx.request.type];
  if (format === undefined)
    throw new EngineError('IMPORT_MEDIA_TYPE', {
      type: ctx.request.type === '' ? 'no Content-Type' : ctx.request.type,
    });
  return format;
}

/** Runs `work` with the upload saved to a temporary file, removed afterwards whatever happens. */
async function withUploadFile<T>(ctx: Context, max: number, work: (file: string) => Promise<T>): Promise<T> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sqlscribe-import-'));
  try {
    const file = path.join(dir, 'upload.sqlite');
    await saveUpload(ctx, max, file);
    return await work(file);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

function exportFormat(ctx: Context): ExportFormat {
  const format = queryValue(ctx, 'format') ?? 'sql';
  if (format !== 'sql' && format !== 'sqlite' && format !== 'csv')
    throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'format', detail: 'expected sql, sqlite or csv' });
  return format;
}

/**
 * With `Accept: application/x-ndjson` an import answers with 200 once its
 * body is read and parsed (the first progress line) and then one JSON line
 * now and then while it runs, `{"progress":{"statements":n,"of":total}}`,
 * then a last line: the result, or the error body an answer without progress
 * would have had (its status is then only in the line: the 200 is sent
 * already). What fails before the first line (a refused token, a refused
 * upload: 403, 413, 415, bad UTF-8, a malformed CSV) keeps its own status.
 */
async function withProgressLines(
  ctx: Context,
  work: (onProgress: (statements: number, of: number) => void) => Promise<ImportOutcome>,
): Promise<void> {
  let started = false;
  let last = -1;
  const line = (value: unknown): void => {
    if (!started) {
      started = true;
      ctx.status = 200; // for the request log and metrics: the response itself is written here
      ctx.respond = false;
      ctx.res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-store' });
    }
    ctx.res.write(`${JSON.stringify(value)}\n`);
  };
  try {
    const outcome = await work((statements, of) => {
      if (statements === last) return;
      last = statements;
      line({ progress: { statements, of } });
    });
    line({ ok: true, ...outcome });
  } catch (error) {
    if (!started) throw error;
    line((error instanceof EngineError ? error : new EngineError('INTERNAL', {}, { cause: error })).toBody());
  }
  ctx.res.end();
}

/** Reads the upload as its format needs it and runs `work` on it; an uploaded file is removed afterwards. */
async function withSource<T>(
  ctx: Context,
  format: ImportSource['format'],
  max: number,
  work: (source: ImportSource) => Promise<T>,
): Promise<T> {
  if (format === 'sqlite') return withUploadFile(ctx, max, (file) => work({ format, file }));
  if (format === 'sql') return work({ format, text: await readUploadText(ctx, max) });
  const table = requiredQueryValue(ctx, 'table');
  const types = queryValue(ctx, 'types');
  const parsed = types === undefined ? undefined : parseCsvTypes(types);
  const text = await readUploadText(ctx, max);
  return work(parsed === undefined ? { format, text, table } : { format, text, table, types: parsed });
}

export function importRoutes(router: Router, bus: CommandBus, maxImportBytes: number): void {
  router.post('/dbs/:db/import', async (ctx) => {
    const db = ctx.params.db;
    const format = formatOf(ctx);
    const call = callOf(ctx);
    const streamed = ctx.accepts('application/json', 'application/x-ndjson') === 'application/x-ndjson';
    // The body is read by the handler, after the bus has checked the token: see ImportUpload.
    const upload: ImportUpload = (work) => withSource(ctx, format, maxImportBytes, work);
    if (streamed)
      await withProgressLines(ctx, (onProgress) => bus.dispatch({ type: 'import', db, upload, onProgress }, call));
    else sendJson(ctx, 200, { ok: true, ...(await bus.dispatch({ type: 'import', db, upload }, call)) });
  });

  router.get('/dbs/:db/export', async (ctx) => {
    const format = exportFormat(ctx);
    const table = queryValue(ctx, 'table') ?? null;
    const copy = await bus.dispatch({ type: 'export', db: ctx.params.db, format, table }, callOf(ctx));
    const remove = (): void => void fs.promises.rm(path.dirname(copy.file), { recursive: true, force: true });
    const stream = fs.createReadStream(copy.file);
    stream.once('close', remove);
    ctx.status = 200;
    ctx.type = copy.contentType;
    ctx.length = (await fs.promises.stat(copy.file)).size;
    ctx.set('Content-Disposition', `attachment; filename="${copy.filename}"`);
    ctx.body = stream;
  });
}
