/** POST /dbs/{db}/import and GET /dbs/{db}/export. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import type { ImportSource } from '../bus/commands';
import { EngineError } from '../errors';
import { parseCsvTypes } from '../engine/csv-import';
import type { ExportFormat } from '../engine/database-export';
import { callOf } from '../http/request-deadline';
import { sendJson } from '../http/respond';
import { readUploadText, saveUpload } from '../http/upload-body';
import { queryValue, requiredQueryValue } from './query';

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
  if (format === undefined) throw new EngineError('IMPORT_MEDIA_TYPE', { type: ctx.request.type === '' ? 'no Content-Type' : ctx.request.type });
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
  if (format !== 'sql' && format !== 'sqlite' && format !== 'csv') throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'format', detail: 'expected sql, sqlite or csv' });
  return format;
}

export function importRoutes(router: Router, bus: CommandBus, maxImportBytes: number): void {
  router.post('/dbs/:db/import', async (ctx) => {
    const db = ctx.params.db;
    const format = formatOf(ctx);
    const call = callOf(ctx);
    const run = (source: ImportSource) => bus.dispatch({ type: 'import', db, source }, call);
    let outcome;
    if (format === 'sqlite') {
      outcome = await withUploadFile(ctx, maxImportBytes, (file) => run({ format, file }));
    } else if (format === 'csv') {
      const table = requiredQueryValue(ctx, 'table');
      const types = queryValue(ctx, 'types');
      const text = await readUploadText(ctx, maxImportBytes);
      outcome = await run(types === undefined ? { format, text, table } : { format, text, table, types: parseCsvTypes(types) });
    } else {
      outcome = await run({ format, text: await readUploadText(ctx, maxImportBytes) });
    }
    sendJson(ctx, 200, { ok: true, ...outcome });
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
