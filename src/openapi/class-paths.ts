/** GET /class (src/routes/class-routes.ts), the teacher's view of the class, in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { ADMIN_ONLY, json, mergeErrors, operation, SERVED } from './operation';

export function classPaths(): Record<string, JsonObject> {
  return {
    '/class': {
      get: operation({
        operationId: 'classActivity',
        summary: 'The class: activity and recent errors by database',
        description: [
          'Each database with the time of its last journal entry, the entries seen, its last errors (newest first, at most 20:',
          'who sent them, the code and the statement that failed) and, for a copy of a template, that template (it can be reset',
          "with POST /dbs/{db}/reset). Kept from the journal as entries become durable; the journal's tail seeds it after a restart.",
          '`refused`: the last 50 requests refused for who sent them or what they asked for (401, 403, [SQ1003]), newest first,',
          "with the token's name, the client's address, the database asked for and the code; kept since the server started",
          "(and, at -log-level all, from the journal's tail).",
          'Admin only; a server without tokens serves it only with -journal-feed (else 403 `[SQ1090]`).',
        ].join(' '),
        tag: 'databases',
        success: { 200: json('The class.', 'ClassView') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, { 403: ['CLASS_VIEW_FORBIDDEN'] }),
      }),
    },
  };
}

const FORMER: JsonObject = {
  type: 'boolean',
  description:
    "The token is the server's no longer (revoked): a later token of the same name (a class prefix reused next term) is someone else.",
};

export function classSchemas(): Record<string, JsonObject> {
  const text = { type: 'string' };
  const recentError: JsonObject = {
    type: 'object',
    additionalProperties: false,
    required: ['seq', 'ts', 'class', 'code', 'error', 'tokenId', 'tokenName', 'former', 'statement'],
    properties: {
      seq: { type: 'integer', minimum: 1 },
      ts: { type: 'string', format: 'date-time' },
      class: { type: 'integer', minimum: 1, maximum: 9 },
      code: { type: 'integer' },
      error: text,
      tokenId: { type: ['string', 'null'] },
      tokenName: { type: ['string', 'null'] },
      former: FORMER,
      statement: { type: ['string', 'null'] },
    },
  };
  const refusal: JsonObject = {
    type: 'object',
    additionalProperties: false,
    required: ['ts', 'tokenId', 'tokenName', 'former', 'client', 'db', 'code', 'error', 'request'],
    properties: {
      ts: { type: 'string', format: 'date-time' },
      tokenId: { type: ['string', 'null'] },
      tokenName: { type: ['string', 'null'] },
      former: FORMER,
      client: text,
      db: { type: ['string', 'null'] },
      code: { type: 'integer' },
      error: text,
      request: text,
    },
  };
  return {
    ClassView: {
      type: 'object',
      additionalProperties: false,
      required: ['ok', 'databases', 'refused'],
      properties: {
        ok: { const: true },
        refused: { type: 'array', maxItems: 50, items: refusal },
        databases: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['db', 'lastActivity', 'entries', 'recentErrors'],
            properties: {
              db: text,
              template: text,
              lastActivity: { type: ['string', 'null'], format: 'date-time' },
              entries: { type: 'integer', minimum: 0 },
              recentErrors: { type: 'array', maxItems: 20, items: recentError },
            },
          },
        },
      },
    },
  };
}
