/**
 * Building blocks of the paths of the OpenAPI document: one operation from
 * its success responses and its error set, the shared parameters, and the
 * error sets that the middleware of src/app.ts adds to every operation.
 */
import type { ErrorName } from '../errors';
import { DECISIONS } from '../pilots/pilot-schema';
import { errorResponses, mergeErrors, namesWithStatus, type ErrorSet, type JsonObject } from './error-responses';

export interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  parameters?: readonly string[];
  requestBody?: JsonObject;
  /** Success responses by status. */
  success: Record<string, JsonObject>;
  errors: ErrorSet;
  /** Overrides the document's security (e.g. `[]` for no token). */
  security?: JsonObject[];
}

export function operation(spec: OperationSpec): JsonObject {
  const responses = { ...spec.success, ...errorResponses(spec.errors) };
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  const op: JsonObject = { operationId: spec.operationId, summary: spec.summary, tags: [spec.tag] };
  if (spec.description !== undefined) op.description = spec.description;
  if (spec.parameters !== undefined)
    op.parameters = spec.parameters.map((name) => ({ $ref: `#/components/parameters/${name}` }));
  if (spec.requestBody !== undefined) op.requestBody = spec.requestBody;
  op.responses = sorted;
  if (spec.security !== undefined) op.security = spec.security;
  return op;
}

/** A JSON success response with a component schema (or a schema object). */
export function json(description: string, schema: string | JsonObject, headers?: JsonObject): JsonObject {
  const response: JsonObject = {
    description,
    content: {
      'application/json': { schema: typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema },
    },
  };
  return headers === undefined ? response : { ...response, headers };
}

/** A JSON request body. */
export function jsonBody(schema: string, required: boolean, description?: string): JsonObject {
  const body: JsonObject = {
    required,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
  return description === undefined ? body : { description, ...body };
}

/** Every request: the token (with -token), the connection ceiling, start-up recovery, a bug. */
export const SERVED: ErrorSet = {
  401: ['UNAUTHORIZED'],
  409: ['REPLICA_BEHIND'],
  500: ['INTERNAL'],
  503: ['TOO_MANY_CONNECTIONS', 'NOT_READY'],
};
/** /health answers during start-up recovery too (with `ready: false`). */
export const SERVED_EVEN_STARTING: ErrorSet = {
  401: ['UNAUTHORIZED'],
  500: ['INTERNAL'],
  503: ['TOO_MANY_CONNECTIONS'],
};
/** A request with a JSON body. */
export const WITH_BODY: ErrorSet = {
  400: ['MALFORMED_JSON', 'BAD_REQUEST', 'INVALID_UTF8'],
  413: ['BODY_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
};
/** A query parameter given twice, or not of its form. */
export const QUERY: ErrorSet = { 400: ['INVALID_QUERY_PARAMETER'] };
/** The refusals of /rows?after=…: a cursor that cannot be followed there. No SQL leads to them. */
const ROWS_CURSOR_400: readonly ErrorName[] = [
  'ROWS_CURSOR_INVALID',
  'ROWS_CURSOR_MISMATCH',
  'ROWS_AFTER_WITH_OFFSET',
  'ROWS_NO_KEY',
];
export const ROWS_CURSOR: ErrorSet = { 400: ROWS_CURSOR_400 };
/** A request that names one database (`db`): with tokens, the token's role and databases must allow it. */
export const ONE_DATABASE: ErrorSet = {
  400: ['DATABASE_REQUIRED', 'INVALID_DATABASE_NAME'],
  403: ['ROLE_FORBIDDEN', 'DATABASE_FORBIDDEN'],
  404: ['NO_SUCH_DATABASE'],
};
/** Endpoints only an admin token may use (on a server with tokens). */
export const ADMIN_ONLY: ErrorSet = { 403: ['ROLE_FORBIDDEN'] };
const sessionOnly: readonly ErrorName[] = ['SESSION_ENGINE_CRASHED'];
/** Work done by an engine process: stopped at -query-timeout, lost, or failed by storage. */
export const ENGINE: ErrorSet = {
  400: ['QUERY_TIMEOUT'],
  500: namesWithStatus(500).filter((name) => !sessionOnly.includes(name)),
};
/** A write waits for its database's write lock. */
/** A command that changes something: a replica (and a replaced primary) refuses it, naming the primary. */
export const OFF_PRIMARY: ErrorSet = { 409: ['READ_ONLY_REPLICA', 'NOT_PRIMARY'] };

export const WRITE: ErrorSet = { 409: ['DATABASE_LOCKED', ...(OFF_PRIMARY[409] ?? [])], 503: ['WRITE_LOCK_TIMEOUT'] };

/** The 400s only an import can cause: what it was sent, not SQL. */
export const IMPORT_400: readonly ErrorName[] = [
  'IMPORT_CSV_INVALID',
  'IMPORT_NOT_SQLITE',
  'IMPORT_SQLITE_CORRUPT',
  'IMPORT_INTERNAL_NAME',
  'IMPORT_TRANSACTION_CONTROL',
  'IMPORT_CSV_COLUMNS',
];
/** Every 400 that SQL can cause: all of the catalog's 400s except those of the pilot records, of /tx/*, of /tokens and of imports. */
export const SQL_400: readonly ErrorName[] = namesWithStatus(400).filter(
  (name) =>
    ![
      'PILOT_INVALID',
      'PILOT_PERSONAL_DATA',
      'SESSION_REQUIRED',
      'TOKEN_REQUEST_INVALID',
      'TOKEN_CLASS_TOO_LARGE',
      'RESTORE_TIMEOUT',
      'RESTORE_OUT_OF_MEMORY',
      ...ROWS_CURSOR_400,
      ...IMPORT_400,
    ].includes(name),
);

export { mergeErrors };

const query = (name: string, description: string, schema: JsonObject, required = false): JsonObject => ({
  name,
  in: 'query',
  description,
  required,
  schema,
});

/** The shared parameters (components.parameters). */
export function componentParameters(): Record<string, JsonObject> {
  const count = (fallback: number): JsonObject => ({ type: 'integer', minimum: 0, default: fallback });
  return {
    Db: query(
      'db',
      'The database (`school` or `school.db`). Required in multi-DB mode (400 `[SQ7003]` without it, 404 `[SQ2001]` when unknown); in single-DB mode it may be left out, and if sent must name the file served.',
      { type: 'string' },
    ),
    Table: query(
      'table',
      'The table or view (found without regard to case). 400 `[SQ1008]` without it.',
      { type: 'string', minLength: 1 },
      true,
    ),
    Limit: query(
      'limit',
      'Rows per page, a non-negative integer (400 `[SQ1008]` otherwise); above 1000 it is clamped to 1000.',
      count(25),
    ),
    Offset: query('offset', 'Rows to skip, a non-negative integer (400 `[SQ1008]` otherwise).', count(0)),
    After: query(
      'after',
      'A cursor: the `next` of an earlier /rows answer for the same table, sent back unchanged; the page starts after the row it names, in the same order as offset pages. Not with `offset` (400 `[SQ1020]`); a cursor that is not one (400 `[SQ1018]`), made for another table or an older key of this one (400 `[SQ1019]`), or a table with no key a cursor can follow, and every view (400 `[SQ1021]`).',
      { type: 'string' },
    ),
    SessionQuery: query(
      'session',
      'A transaction session id (or send the X-Service-Session header; both must then agree).',
      { type: 'string' },
    ),
    SessionRequired: query(
      'session',
      'The transaction session id. 400 `[SQ5009]` without it; 404 when it is not the active session.',
      { type: 'string' },
      true,
    ),
    SessionHeader: {
      name: 'X-Service-Session',
      in: 'header',
      description: 'A transaction session id: the statements run in its transaction, without committing.',
      required: false,
      schema: { type: 'string' },
    },
    MetricsFormat: query(
      'format',
      '`prometheus` for the Prometheus text format; anything else, or nothing, for JSON.',
      { type: 'string', examples: ['prometheus'] },
    ),
    PilotId: {
      name: 'id',
      in: 'path',
      description: "The pilot record's id (404 `[SQ2012]` for anything that is not a stored id).",
      required: true,
      schema: { type: 'integer', minimum: 1 },
    },
    PilotDecision: query('decision', 'Only records with this decision.', { enum: [...DECISIONS] }),
    PilotCommit: query('commit', 'Only records of this commit.', { type: 'string' }),
    PilotSubject: query('subject', 'Only records of this subject (scope.subject).', { type: 'string' }),
    PilotLevel: query('level', 'Only records of this level (scope.level).', { type: 'string' }),
    PilotFrom: query('from', 'Only records dated on or after this day (YYYY-MM-DD).', {
      type: 'string',
      format: 'date',
    }),
    PilotTo: query('to', 'Only records dated on or before this day (YYYY-MM-DD).', { type: 'string', format: 'date' }),
    ConsoleFile: {
      name: 'file',
      in: 'path',
      description: 'A file name of the console (e.g. `console.css`).',
      required: true,
      schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$' },
    },
    TokenFormat: query('format', '`csv` for a CSV answer (as `Accept: text/csv`).', { enum: ['csv', 'json'] }),
    TokenId: {
      name: 'id',
      in: 'path',
      description: "The token's id (`tok_…`, or `file:<name>`).",
      required: true,
      schema: { type: 'string' },
    },
    DbPath: {
      name: 'db',
      in: 'path',
      description:
        'The database (`school` or `school.db`); it must exist (404 `[SQ2001]`). In single-DB mode, the name of the file served.',
      required: true,
      schema: { type: 'string' },
    },
    ImportTable: query(
      'table',
      'text/csv: the table to load (created when it does not exist, appended to when it does). 400 `[SQ1008]` without it.',
      { type: 'string', minLength: 1 },
    ),
    ImportTypes: query(
      'types',
      'text/csv, for a table the import creates: one type (or alias) per column, comma-separated (`INT,TEXT,FLOAT`). Without it the types are inferred: INT when every value is an integer, else FLOAT when every value is a number, else TEXT.',
      { type: 'string' },
    ),
    ExportFormat: query(
      'format',
      "`sql` (the default): a script that sqlscribe's import and SQLite both load; `sqlite`: a database file; `csv`: one table (`table` required).",
      { enum: ['sql', 'sqlite', 'csv'], default: 'sql' },
    ),
    ExportTable: query('table', 'format=csv: the table to export (400 `[SQ1008]` without it).', { type: 'string' }),
    GroupBy: query('group_by', 'Also give the figures per commit or per subject (`groups`).', {
      enum: ['commit', 'subject'],
    }),
  };
}
