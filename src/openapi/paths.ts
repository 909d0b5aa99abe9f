/**
 * The paths of the service, database and SQL endpoints (src/routes/service-routes.ts,
 * database-routes.ts, exec-routes.ts, tx-routes.ts) in the OpenAPI document.
 */
import type { JsonObject } from './error-responses';
import {
  ADMIN_ONLY,
  ENGINE,
  json,
  jsonBody,
  mergeErrors,
  OFF_PRIMARY,
  ONE_DATABASE,
  operation,
  QUERY,
  ROWS_CURSOR,
  SERVED,
  SERVED_EVEN_STARTING,
  SQL_400,
  WITH_BODY,
  WRITE,
} from './operation';

function servicePaths(): Record<string, JsonObject> {
  return {
    '/health': {
      get: operation({
        operationId: 'getHealth',
        summary: 'Health check',
        description:
          'Answers during start-up recovery too, with `ready: false` (every other endpoint answers 503 `[SQ6006]` meanwhile). Needs the token like every endpoint.',
        tag: 'service',
        success: { 200: json('The health record.', 'Health') },
        errors: SERVED_EVEN_STARTING,
      }),
    },
    '/metrics': {
      get: operation({
        operationId: 'getMetrics',
        summary: 'Operational metrics since start-up',
        description:
          'JSON by default; `?format=prometheus` gives the same counters, a latency histogram and the process metrics in the Prometheus text format.',
        tag: 'service',
        parameters: ['MetricsFormat'],
        success: {
          200: {
            description:
              'The metrics record (JSON), or the Prometheus exposition (text/plain; version=0.0.4) with `?format=prometheus`.',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Metrics' } },
              'text/plain': { schema: { type: 'string', pattern: 'sqlscribe_http_requests_total' } },
            },
          },
        },
        errors: mergeErrors(SERVED, QUERY, ADMIN_ONLY),
      }),
    },
  };
}

function databasePaths(): Record<string, JsonObject> {
  return {
    '/dbs': {
      get: operation({
        operationId: 'listDatabases',
        summary: 'List databases',
        tag: 'databases',
        success: { 200: json('The databases served.', 'DatabaseList') },
        errors: SERVED,
      }),
      post: operation({
        operationId: 'createDatabase',
        summary: 'Create a database, empty or as copies of a template (multi-DB mode)',
        description: [
          'The name is trimmed, lower-cased and given `.db`; a valid name is 1–64 characters of `a-z 0-9 _ -` before `.db`.',
          "With `from`, the new databases are copies of that database's committed state (schema and rows), made while no write to it can land:",
          'a session open on it makes the request wait up to -lock-timeout, then 409 `[SQ5005]`. At most 100 copies per request (400 `[SQ1040]`);',
          'all or nothing: one name taken (409 `[SQ2007]`) and none is made. Each copy remembers its template for POST /dbs/{db}/reset.',
        ].join(' '),
        tag: 'databases',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                anyOf: [
                  { $ref: '#/components/schemas/CreateDatabase' },
                  { $ref: '#/components/schemas/CopyDatabases' },
                ],
              },
            },
          },
        },
        success: {
          201: json(
            'Created: `{ ok, db }` for an empty database, `{ ok, dbs, from }` (and `db` when one was named with `db`) for copies.',
            {
              oneOf: [
                { $ref: '#/components/schemas/DatabaseCreated' },
                { $ref: '#/components/schemas/DatabasesCopied' },
              ],
            },
          ),
        },
        errors: mergeErrors(SERVED, WITH_BODY, ENGINE, WRITE, ADMIN_ONLY, {
          400: ['INVALID_DATABASE_NAME', 'TOO_MANY_COPIES'],
          404: ['NO_SUCH_DATABASE'],
          405: ['DATABASE_STATEMENT_IN_SINGLE_MODE'],
          409: ['DATABASE_EXISTS'],
        }),
      }),
    },
    '/dbs/{db}/reset': {
      post: operation({
        operationId: 'resetDatabase',
        summary: 'Return a copy to its template (multi-DB mode)',
        description: [
          "Replaces the database with a copy of its template's current committed state, journaled like the copy itself. No body is needed.",
          'A database not made from a template is 409 `[SQ2040]`; one whose template was dropped is 409 `[SQ2041]`. A session open on the',
          'database (or on its template) makes the reset wait up to -lock-timeout, then 409 `[SQ5005]`: the session is left as it was.',
        ].join(' '),
        tag: 'databases',
        parameters: ['DbPath'],
        success: { 200: json('Reset.', 'DatabaseReset') },
        errors: mergeErrors(SERVED, ONE_DATABASE, ENGINE, WRITE, {
          400: ['INVALID_DATABASE_NAME'],
          404: ['NO_SUCH_DATABASE'],
          405: ['DATABASE_STATEMENT_IN_SINGLE_MODE'],
          409: ['NO_TEMPLATE', 'TEMPLATE_GONE'],
        }),
      }),
    },
    '/tables': {
      get: operation({
        operationId: 'listTables',
        summary: 'List tables and views with their schema',
        tag: 'databases',
        parameters: ['Db'],
        success: {
          200: json('Every table and view of the database, ordered by name; `kind` tells them apart.', 'TableList'),
        },
        errors: mergeErrors(SERVED, QUERY, ONE_DATABASE, ENGINE),
      }),
    },
    '/schema': {
      get: operation({
        operationId: 'showSchema',
        summary: 'Schema of one table or view',
        tag: 'databases',
        parameters: ['Db', 'Table'],
        success: { 200: json("The table schema record (a view's too, with its SQL).", 'TableSchemaResponse') },
        errors: mergeErrors(SERVED, QUERY, ONE_DATABASE, ENGINE, { 404: ['TABLE_NOT_FOUND'] }),
      }),
    },
    '/rows': {
      get: operation({
        operationId: 'readRows',
        summary: 'A page of rows',
        tag: 'databases',
        parameters: ['Db', 'Table', 'Limit', 'Offset', 'After'],
        success: {
          200: json(
            "A page of rows in primary-key order, by offset or after a cursor; a view's rows in its own order, by offset only (no `next`).",
            'RowPage',
          ),
        },
        errors: mergeErrors(SERVED, QUERY, ROWS_CURSOR, ONE_DATABASE, ENGINE, { 404: ['TABLE_NOT_FOUND'] }),
      }),
    },
  };
}

const EXEC_DESCRIPTION = [
  'Runs SQL. Three body forms: `{ sql }` (several statements separated by semicolons), `{ sql, params }` (one statement with bound parameters),',
  'and `{ statements: [{ sql, params? }, …] }`; each may name `db`. Without a session all statements run in one transaction that commits at the',
  "end (all or nothing; the error names the failing statement's index). With a session (header `X-Service-Session` or `?session=`) they run in",
  "the session's open transaction without committing, and the response adds `session` and `expires_unix`. At most -max-statements (1000)",
  'statements per request; results are cut at -max-result-rows (`truncated: true`).',
].join(' ');

function sqlPaths(): Record<string, JsonObject> {
  const sessionEnd = (commit: boolean): JsonObject => ({
    post: operation({
      operationId: commit ? 'commitSession' : 'rollbackSession',
      summary: commit ? 'Commit and close a session' : 'Roll back and close a session',
      description:
        'No body is needed. An id that is not the active session is 404 (`[SQ5002]` unknown or closed, `[SQ5003]` expired) and changes nothing.',
      tag: 'sessions',
      parameters: ['SessionRequired'],
      success: {
        200: json(
          commit ? 'Committed: `message` is `COMMIT`.' : 'Rolled back: `message` is `ROLLBACK`.',
          'SessionEnded',
        ),
      },
      errors: mergeErrors(SERVED, WITH_BODY, QUERY, ENGINE, OFF_PRIMARY, {
        400: ['SESSION_REQUIRED'],
        403: ['ROLE_FORBIDDEN'],
        404: ['NO_SUCH_SESSION', 'SESSION_EXPIRED'],
      }),
    }),
  });
  return {
    '/exec': {
      post: operation({
        operationId: 'execSql',
        summary: 'Execute SQL',
        description: EXEC_DESCRIPTION,
        tag: 'sql',
        parameters: ['SessionQuery', 'SessionHeader'],
        requestBody: jsonBody('ExecRequest', true),
        success: {
          200: json('Every statement ran: one result per statement.', {
            oneOf: [{ $ref: '#/components/schemas/ExecResult' }, { $ref: '#/components/schemas/ExecSessionResult' }],
          }),
        },
        errors: mergeErrors(SERVED, WITH_BODY, ONE_DATABASE, ENGINE, WRITE, {
          400: SQL_400,
          403: ['READ_TOKEN_WRITES'],
          404: ['NO_SUCH_SESSION', 'SESSION_EXPIRED'],
          405: ['DATABASE_STATEMENT_IN_SINGLE_MODE'],
          409: ['DATABASE_EXISTS'],
          500: ['SESSION_ENGINE_CRASHED'],
        }),
      }),
    },
    '/tx/begin': {
      post: operation({
        operationId: 'beginSession',
        summary: 'Open a transaction session',
        description:
          "One session at a time for the whole server; it holds its database's write lock until commit, rollback or the idle timeout (300 s, -session-timeout).",
        tag: 'sessions',
        requestBody: jsonBody('SessionBegin', false),
        success: { 200: json('The session is open.', 'SessionInfo') },
        errors: mergeErrors(SERVED, WITH_BODY, ONE_DATABASE, ENGINE, OFF_PRIMARY, {
          409: ['SESSION_ACTIVE'],
          503: ['WRITE_LOCK_TIMEOUT'],
        }),
      }),
    },
    '/tx/commit': sessionEnd(true),
    '/tx/rollback': sessionEnd(false),
  };
}

export function corePaths(): Record<string, JsonObject> {
  return { ...servicePaths(), ...databasePaths(), ...sqlPaths() };
}
