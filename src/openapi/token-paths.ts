/** The paths of the personal tokens (src/routes/token-routes.ts) and their records, in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import {
  ADMIN_ONLY,
  json,
  jsonBody,
  mergeErrors,
  OFF_PRIMARY,
  operation,
  QUERY,
  SERVED,
  WITH_BODY,
  WRITE,
} from './operation';

const TOKENS_OFF = { 403: ['TOKENS_NOT_CONFIGURED'] } as const;

export function tokenPaths(): Record<string, JsonObject> {
  return {
    '/tokens': {
      get: operation({
        operationId: 'listTokens',
        summary: 'List the tokens',
        description:
          'Every token the server knows (from -tokens-file and from POST /tokens), without secrets or hashes. The -token admin token is not listed. Admin only.',
        tag: 'tokens',
        success: { 200: json('The tokens, by name.', 'TokenList') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, TOKENS_OFF),
      }),
      post: operation({
        operationId: 'createTokens',
        summary: 'Make a token, or a class of tokens',
        description: [
          'One token: `{name, role, databases, expires?}`. A class: `{prefix, count, role, expires?}` makes `count` (1–500, else 400 `[SQ1035]`)',
          'tokens named `prefix-01` … `prefix-NN`, each bound to the database of its own name, and creates those databases (multi-DB mode): empty, or with `from` as copies of that template (in groups of 100).',
          'Each secret is in this answer only; the server keeps its SHA-256. With `Accept: text/csv` or `?format=csv` the answer is CSV',
          '(`name,database,secret`), ready to print as cards. A name already taken is 409 `[SQ2031]`. Admin only.',
        ].join(' '),
        tag: 'tokens',
        parameters: ['TokenFormat'],
        requestBody: jsonBody('TokenRequest', true),
        success: {
          201: {
            description: 'The tokens made, with their secrets (shown once).',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/CreatedTokens' } },
              'text/csv': { schema: { type: 'string', pattern: '^name,database,secret\\n' } },
            },
          },
        },
        errors: mergeErrors(SERVED, WITH_BODY, QUERY, ADMIN_ONLY, TOKENS_OFF, WRITE, {
          400: ['TOKEN_REQUEST_INVALID', 'TOKEN_CLASS_TOO_LARGE'],
          409: ['TOKEN_NAME_EXISTS'],
        }),
      }),
    },
    '/tokens/{id}': {
      delete: operation({
        operationId: 'revokeToken',
        summary: 'Revoke a token',
        description:
          'At once: the next request with its secret is 401. Tokens of -tokens-file are removed there (409 `[SQ2032]`). Admin only.',
        tag: 'tokens',
        parameters: ['TokenId'],
        success: { 200: json('The token revoked.', 'RevokedToken') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, TOKENS_OFF, OFF_PRIMARY, {
          404: ['TOKEN_NOT_FOUND'],
          409: ['TOKEN_IN_FILE'],
        }),
      }),
    },
  };
}

const nullableTime = (description: string): JsonObject => ({
  type: ['string', 'null'],
  format: 'date-time',
  description,
});

/** A token's own bound on each database it writes (-max-database-mb for the rest). */
const maxDatabaseMb = (): JsonObject => ({
  type: 'integer',
  minimum: 1,
  maximum: 1_048_576,
  description:
    'MiB: the largest a database may grow through this token, in place of -max-database-mb (413 `[SQ6060]` past it)',
});

function tokenFields(): Record<string, JsonObject> {
  return {
    id: { type: 'string', description: 'Stable and not secret: journal entries name it (`tokenId`)' },
    name: { type: 'string' },
    role: { enum: ['admin', 'write', 'read'] },
    databases: {
      type: 'array',
      items: { type: 'string' },
      description: 'Database names or `*` patterns, without `.db`',
    },
    created: nullableTime('null for tokens of -tokens-file'),
    expires: nullableTime('null: never'),
    source: { enum: ['api', 'file'] },
    maxDatabaseMb: maxDatabaseMb(),
  };
}

const closed = (
  description: string,
  properties: Record<string, unknown>,
  optional: readonly string[] = [],
): JsonObject => ({
  type: 'object',
  description,
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  additionalProperties: false,
  properties,
});

export function tokenSchemas(): Record<string, JsonObject> {
  const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
  return {
    Token: closed('A token, without its secret.', tokenFields(), ['maxDatabaseMb']),
    CreatedToken: closed(
      'A token just made, with its secret (shown once).',
      { ...tokenFields(), secret: { type: 'string', pattern: '^sqs_[A-Za-z0-9_-]{43}$' } },
      ['maxDatabaseMb'],
    ),
    TokenList: closed('The tokens.', { ok: { const: true }, tokens: { type: 'array', items: ref('Token') } }),
    CreatedTokens: closed('The tokens made.', {
      ok: { const: true },
      tokens: { type: 'array', items: ref('CreatedToken') },
      databases: { type: 'array', items: { type: 'string' }, description: 'A class: the databases it created' },
    }),
    RevokedToken: closed('The token revoked.', { ok: { const: true }, revoked: ref('Token') }),
    TokenRequest: {
      oneOf: [
        closed(
          'One token.',
          {
            name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
            role: { enum: ['admin', 'write', 'read'] },
            databases: { type: 'array', minItems: 1, items: { type: 'string' }, description: 'Optional for admin' },
            expires: { type: 'string', format: 'date-time' },
            maxDatabaseMb: maxDatabaseMb(),
          },
          ['databases', 'expires', 'maxDatabaseMb'],
        ),
        closed(
          'A class of tokens.',
          {
            prefix: { type: 'string', pattern: '^[a-z0-9_-]{1,58}$' },
            count: { type: 'integer', minimum: 1, maximum: 500 },
            role: { enum: ['admin', 'write', 'read'] },
            expires: { type: 'string', format: 'date-time' },
            from: {
              type: 'string',
              description: 'A template: the databases the class lacks are made as copies of it instead of empty.',
            },
            maxDatabaseMb: maxDatabaseMb(),
          },
          ['expires', 'from', 'maxDatabaseMb'],
        ),
      ],
    },
  };
}
