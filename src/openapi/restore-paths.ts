/** POST /dbs/{db}/restore (src/services/databases/database-restores.ts), time travel for one database, in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { ENGINE, json, jsonBody, mergeErrors, ONE_DATABASE, operation, SERVED, WITH_BODY, WRITE } from './operation';

export function restorePaths(): Record<string, JsonObject> {
  return {
    '/dbs/{db}/restore': {
      post: operation({
        operationId: 'restoreDatabase',
        summary: 'Give a database back an earlier state of its own (multi-DB mode)',
        description: [
          '`{"to": seq}`: the database as it was right after journal entry `seq`; `{"to": "<ISO time>"}`: as it was at that moment (after the last',
          'entry written at or before it); `{"undo": "last"}`: as it was just before the last successful write by the calling token on it (by anyone',
          "on a server without tokens), refused with 409 `[SQ2084]` while another token's write (or restore) stands after it, so an undo never takes",
          'a classmate\'s work; undoing a restore the same way brings back what it undid. With `"dryRun": true` nothing changes and the',
          'answer lists the writes the restore would undo, newest first (at most 500; `count` is exact). Otherwise a `restoredb` entry is journaled',
          'and the database is replaced online, as by a reset: readers see the old contents or the new, other databases are untouched. A session',
          'open on the database makes it wait up to -lock-timeout, then 409 `[SQ5005]`. A target before the database existed (before the latest',
          'createdb or copydb of its name: an earlier database of the same name is another database) is 409 `[SQ2076]`, and an undo looks no further back;',
          'one older than what the journal and the snapshot rounds keep 409 `[SQ2075]`; a seq beyond the journal or a time in the future 400',
          "`[SQ1075]`. The target is found and the state rebuilt in a process of its own, never on the server's thread: past -restore-timeout",
          '400 `[SQ6055]`, past -restore-memory 400 `[SQ6056]`; at most two run at once, the rest wait within -request-timeout (503 `[SQ6058]`).',
          'Needs a `write` token on the database (`admin` with -restore-role admin).',
        ].join(' '),
        tag: 'databases',
        parameters: ['DbPath'],
        requestBody: jsonBody('RestoreRequest', true),
        success: {
          200: json('Restored, or (dryRun) what a restore would undo.', {
            oneOf: [{ $ref: '#/components/schemas/DatabaseRestored' }, { $ref: '#/components/schemas/RestorePlan' }],
          }),
        },
        errors: mergeErrors(SERVED, WITH_BODY, ONE_DATABASE, ENGINE, WRITE, {
          400: ['RESTORE_TARGET_INVALID', 'RESTORE_TIMEOUT', 'RESTORE_OUT_OF_MEMORY'],
          405: ['DATABASE_STATEMENT_IN_SINGLE_MODE'],
          409: [
            'RESTORE_TOO_OLD',
            'RESTORE_BEFORE_CREATION',
            'NOTHING_TO_UNDO',
            'UNDO_OVER_OTHERS_WRITES',
            'RESTORE_NEEDS_JOURNAL',
          ],
          500: ['RESTORE_FAILED'],
          503: ['RESTORES_BUSY'],
        }),
      }),
    },
  };
}

export function restoreSchemas(): Record<string, JsonObject> {
  const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
  const point = (description: string): JsonObject => ({
    type: 'object',
    description,
    required: ['seq', 'time'],
    additionalProperties: false,
    properties: {
      seq: { type: 'integer', minimum: 0 },
      time: { type: 'string', format: 'date-time', description: 'When entry `seq` was written' },
    },
  });
  return {
    RestoreRequest: {
      type: 'object',
      description: 'Exactly one of `to` and `undo`.',
      additionalProperties: false,
      properties: {
        to: {
          oneOf: [
            { type: 'integer', minimum: 0, description: 'A journal seq' },
            { type: 'string', format: 'date-time', description: 'An ISO time' },
          ],
          examples: [1042, '2026-11-26T10:15:00Z'],
        },
        undo: { const: 'last' },
        dryRun: { type: 'boolean', default: false },
      },
      oneOf: [{ required: ['to'] }, { required: ['undo'] }],
    },
    UndoneEntry: {
      type: 'object',
      description: 'A write the restore undoes.',
      required: ['seq', 'time', 'token', 'kind', 'sql', 'changes'],
      additionalProperties: false,
      properties: {
        seq: { type: 'integer', minimum: 1 },
        time: { type: 'string', format: 'date-time' },
        token: { type: ['string', 'null'], description: 'The name of the token that made it (null without tokens)' },
        kind: { enum: ['exec', 'commit', 'createdb', 'copydb', 'resetdb', 'restoredb'] },
        sql: { type: ['string', 'null'] },
        changes: { type: ['integer', 'null'], minimum: 0 },
      },
    },
    RestorePlan: {
      type: 'object',
      description: 'A dry run: nothing changed.',
      required: ['ok', 'db', 'dryRun', 'target', 'undone'],
      additionalProperties: false,
      properties: {
        ok: { const: true },
        db: { type: 'string' },
        dryRun: { const: true },
        target: point('The point the database would be given back'),
        undone: {
          type: 'object',
          required: ['count', 'entries'],
          additionalProperties: false,
          properties: {
            count: { type: 'integer', minimum: 0 },
            entries: { type: 'array', maxItems: 500, items: ref('UndoneEntry') },
          },
        },
      },
    },
    DatabaseRestored: {
      type: 'object',
      description: 'The database holds the state it had at `restored`.',
      required: ['ok', 'db', 'restored', 'undone', 'seq'],
      additionalProperties: false,
      properties: {
        ok: { const: true },
        db: { type: 'string' },
        restored: point('The point the database was given back'),
        undone: {
          type: 'object',
          required: ['count'],
          additionalProperties: false,
          properties: { count: { type: 'integer', minimum: 0 } },
        },
        seq: { type: ['integer', 'null'], minimum: 1, description: 'The seq of the restoredb entry' },
      },
    },
  };
}
