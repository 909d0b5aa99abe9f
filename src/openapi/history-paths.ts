/** GET /dbs/{db}/history (src/routes/history-routes.ts), a database's journal entries, in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { json, mergeErrors, operation, SERVED } from './operation';

const query = (name: string, description: string, schema: JsonObject): JsonObject => ({
  name,
  in: 'query',
  description,
  required: false,
  schema,
});
const SEQ_OR_TIME = { type: 'string', pattern: '^(\\d{1,15}|\\d{4}-\\d{2}-\\d{2}(T.*)?)$' };

export function historyParameters(): Record<string, JsonObject> {
  return {
    HistoryDb: {
      name: 'db',
      in: 'path',
      description:
        'The database (`school` or `school.db`). A dropped database keeps its history; a name the journal never saw and no file holds is 404 `[SQ2001]`.',
      required: true,
      schema: { type: 'string' },
    },
    HistoryLimit: query('limit', 'Entries per page: 1 to 500 (400 `[SQ1070]` otherwise).', {
      type: 'integer',
      minimum: 1,
      maximum: 500,
      default: 50,
    }),
    HistoryBefore: query('before', 'Only entries below this seq: the `next` of the previous page.', {
      type: 'integer',
      minimum: 1,
    }),
    HistoryFailed: query('failed', '`true`: only failed entries.', { enum: ['true', 'false'] }),
    HistoryToken: query('token', 'Only entries caused by the token of this name (any case).', { type: 'string' }),
    HistorySince: query('since', 'Only entries at or after this seq, or this ISO 8601 time.', SEQ_OR_TIME),
    HistoryUntil: query('until', 'Only entries at or before this seq, or this ISO 8601 time.', SEQ_OR_TIME),
    HistoryLives: query(
      'lives',
      "`current` (the default): only the entries since the latest createdb or copydb of the name, the database's own life (a dropped database: its last life, through its drop). `all`: every earlier database of the same name too, an admin's to read (403 `[SQ1030]` for another token).",
      { enum: ['current', 'all'], default: 'current' },
    ),
  };
}

export function historyPaths(): Record<string, JsonObject> {
  return {
    '/dbs/{db}/history': {
      get: operation({
        operationId: 'databaseHistory',
        summary: "A database's journal entries, newest first",
        description: [
          'The entries of the statement journal that concern the database (its batches, failed or not, with the SQL exactly as sent;',
          'sessions; its creation, copy, reset and drop), newest first, a page at a time: send `next` as `before` for the next page',
          "(null at the end). Only the database's current life: from the latest creation (createdb or copydb) of its name, so a name",
          "dropped and made again never shows the earlier database's entries unless an admin asks for `lives=all`. Read through",
          'the journal index, so a page costs the same however long the journal. A read of the',
          'database: a token whose databases include it, or an admin token (403 `[SQ1031]` otherwise); a server without tokens',
          'serves it only with -journal-feed, as it serves the journal (403 `[SQ1095]` otherwise). 409 `[SQ2070]` on a server',
          'without a journal or with -history-index=false.',
        ].join(' '),
        tag: 'databases',
        parameters: [
          'HistoryDb',
          'HistoryLimit',
          'HistoryBefore',
          'HistoryFailed',
          'HistoryToken',
          'HistorySince',
          'HistoryUntil',
          'HistoryLives',
        ],
        success: { 200: json('A page of history.', 'HistoryPage') },
        errors: mergeErrors(SERVED, {
          400: ['HISTORY_PARAMETER', 'INVALID_DATABASE_NAME', 'INVALID_QUERY_PARAMETER'],
          403: ['ROLE_FORBIDDEN', 'DATABASE_FORBIDDEN', 'HISTORY_FORBIDDEN'],
          404: ['NO_SUCH_DATABASE'],
          409: ['NO_HISTORY'],
        }),
      }),
    },
  };
}

export function historySchemas(): Record<string, JsonObject> {
  const entry: JsonObject = {
    type: 'object',
    required: ['seq', 'time', 'token', 'kind', 'sql', 'ok'],
    description:
      'One journal entry. exec: `changes` when it succeeded; `code`, `class`, `error` and `statement` (0-based, when one statement failed) when not; `session` when it ran in one. Other kinds carry the fields that describe them (`from` of a copy or reset, `reason` of a rollback, `voids` of a void, `session`).',
    properties: {
      seq: { type: 'integer', minimum: 1 },
      time: { type: 'string', format: 'date-time' },
      token: { type: ['string', 'null'] },
      kind: {
        type: 'string',
        examples: ['exec', 'begin', 'commit', 'rollback', 'createdb', 'dropdb', 'copydb', 'resetdb', 'void'],
      },
      sql: {
        type: ['string', 'null'],
        description: 'exec: the SQL exactly as sent (a `statements` batch: its pieces, one per line).',
      },
      ok: { type: 'boolean' },
      changes: { type: 'integer', minimum: 0 },
      code: { type: 'integer' },
      class: { type: 'integer', minimum: 1, maximum: 9 },
      error: { type: 'string' },
      statement: { type: 'integer', minimum: 0 },
      session: { type: 'string' },
      from: { type: 'string' },
      reason: { type: 'string' },
      voids: { type: 'array', items: { type: 'integer' } },
    },
  };
  return {
    HistoryPage: {
      type: 'object',
      additionalProperties: false,
      required: ['ok', 'db', 'entries', 'next'],
      properties: {
        ok: { const: true },
        db: { type: 'string' },
        entries: { type: 'array', maxItems: 500, items: entry },
        next: { type: ['integer', 'null'], minimum: 1 },
      },
    },
  };
}
