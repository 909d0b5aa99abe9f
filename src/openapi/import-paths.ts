/** POST /dbs/{db}/import and GET /dbs/{db}/export (src/routes/import-routes.ts) in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { ENGINE, IMPORT_400, mergeErrors, operation, QUERY, SERVED, SQL_400, WRITE } from './operation';

const IMPORT_DESCRIPTION = [
  'Loads a whole file into an existing database in one request, all or nothing (one transaction), journaled as one `exec` entry so that replay rebuilds it.',
  'The Content-Type says what the body is: `application/sql` (a script: no 1,000-statement cap; a BOM is ignored; a leading BEGIN and a closing COMMIT are skipped,',
  'other transaction control is 400 `[SQ1055]`), `text/csv` with `?table=` (RFC 4180 with a header row; empty unquoted fields are NULL, `""` the empty string),',
  'or `application/vnd.sqlite3` (a database file: integrity-checked, its types mapped to ours or refused naming table and column, turned into SQL).',
  'A failing statement answers its engine error with `statement`, the index of the failing statement in the script; nothing is applied.',
  "Bodies up to -max-import-bytes (413 `[SQ6050]` beyond); the request's deadline is -import-timeout instead of -request-timeout; each statement runs under -query-timeout.",
].join(' ');

const EXPORT_DESCRIPTION = [
  'A copy of the database from one read snapshot, sent as a download (`Content-Disposition: attachment`).',
  "The service's own objects are never part of it. `sql` lists tables, rows (parents before the tables that reference them), indexes, views and triggers.",
].join(' ');

const DOWNLOAD = {
  description: 'The copy, as a file to save.',
  headers: {
    'Content-Disposition': {
      required: true,
      description: '`attachment; filename="<db>.<format>"`',
      schema: { type: 'string' },
    },
  },
  content: {
    'application/sql': { schema: { type: 'string' } },
    'text/csv': { schema: { type: 'string' } },
    'application/vnd.sqlite3': { schema: { type: 'string' } },
  },
};

export function importPaths(): Record<string, JsonObject> {
  return {
    '/dbs/{db}/import': {
      post: operation({
        operationId: 'importIntoDatabase',
        summary: 'Import a .sql script, a CSV file or a .sqlite file',
        description: IMPORT_DESCRIPTION,
        tag: 'databases',
        parameters: ['DbPath', 'ImportTable', 'ImportTypes'],
        requestBody: {
          description: 'The file, as it is (not JSON).',
          content: {
            'application/sql': { schema: { type: 'string' } },
            'text/csv': { schema: { type: 'string' } },
            'application/vnd.sqlite3': { schema: { type: 'string', contentMediaType: 'application/vnd.sqlite3' } },
          },
        },
        success: {
          200: {
            description:
              'Imported and committed. With `Accept: application/x-ndjson`: answered at once, one line `{"progress":{"statements":n,"of":total}}` about twice a second while it runs, then a last line, the ImportResult or the error body (whose status is then only in the line).',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/ImportResult' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
        },
        errors: mergeErrors(SERVED, QUERY, ENGINE, WRITE, {
          400: [...SQL_400, ...IMPORT_400, 'INVALID_DATABASE_NAME', 'DATABASE_REQUIRED'],
          404: ['NO_SUCH_DATABASE'],
          413: ['IMPORT_TOO_LARGE'],
          415: ['IMPORT_MEDIA_TYPE'],
        }),
      }),
    },
    '/dbs/{db}/export': {
      get: operation({
        operationId: 'exportDatabase',
        summary: 'Export a database as .sql, .sqlite or one table as CSV',
        description: EXPORT_DESCRIPTION,
        tag: 'databases',
        parameters: ['DbPath', 'ExportFormat', 'ExportTable'],
        success: { 200: DOWNLOAD },
        errors: mergeErrors(SERVED, QUERY, ENGINE, {
          400: ['INVALID_DATABASE_NAME', 'DATABASE_REQUIRED', 'REQUEST_TIMEOUT'],
          404: ['NO_SUCH_DATABASE', 'TABLE_NOT_FOUND'],
        }),
      }),
    },
  };
}
