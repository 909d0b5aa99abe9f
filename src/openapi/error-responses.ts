/**
 * The errors of the OpenAPI document, generated from the catalog of
 * src/errors.ts so that the two never drift: the `ErrorBody` schema, the
 * `x-error-codes` extension (the whole catalog), and one response object per
 * status of an operation that lists, and only admits, the codes that
 * operation can answer with under that status.
 */
import { catalog, errorClass, formatCode, type ErrorName } from '../errors';

export type JsonObject = Record<string, unknown>;

/** The statuses an error can have in this service. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 500 | 503;

/** For each status, the catalog names an operation can answer with. */
export type ErrorSet = Partial<Record<ErrorStatus, readonly ErrorName[]>>;

const STATUS_TEXT: Record<ErrorStatus, string> = {
  400: 'Bad request',
  401: 'Missing or wrong token',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Request body too large',
  415: 'Unsupported media type',
  500: 'Internal or storage error',
  503: 'Service unavailable',
};

/** What `kinds` of PILOT_PERSONAL_DATA can name (src/pilots/personal-data.ts). */
export const PERSONAL_DATA_KINDS = ['e-mail address', 'phone number', 'national identity number'] as const;

const names = Object.keys(catalog) as ErrorName[];

/** The `x-error-codes` extension: every entry of the catalog. */
export function errorCatalog(): JsonObject[] {
  return names.map((name) => {
    const { code, status, message } = catalog[name];
    return { code, tag: formatCode(code), name, class: `${errorClass(code)}xxx`, status, message };
  });
}

/** Every catalog name whose status is `status` (e.g. every 500). */
export function namesWithStatus(status: ErrorStatus): ErrorName[] {
  return names.filter((name) => catalog[name].status === status);
}

/** Sets merged status by status, names in catalog order and without repeats. */
export function mergeErrors(...sets: readonly ErrorSet[]): ErrorSet {
  const merged: ErrorSet = {};
  for (const set of sets) {
    for (const [status, list] of Object.entries(set) as Array<[string, readonly ErrorName[]]>) {
      const key = Number(status) as ErrorStatus;
      const all = new Set([...(merged[key] ?? []), ...list]);
      merged[key] = names.filter((name) => all.has(name));
    }
  }
  return merged;
}

function catalogTable(): string {
  const rows = names.map((name) => {
    const { code, status, message } = catalog[name];
    return `| \`${formatCode(code)}\` | ${name} | ${status} | ${message.replace(/\|/g, '\\|')} |`;
  });
  return ['| code | name | HTTP | message |', '|---|---|---|---|', ...rows].join('\n');
}

export function errorBodySchema(): JsonObject {
  return {
    type: 'object',
    description: [
      'Every error of the service. `error` starts with the bracketed code (`[SQ2002] no such table: pupils`);',
      'the first digit of `code` is its class: 1 request and SQL shape, 2 catalog, 3 constraints, 4 types and values,',
      '5 transactions and sessions, 6 limits, 7 mode, 9 internal and storage. `statement` is the 0-based index of the',
      "failing statement of an /exec batch; `sqliteCode` is SQLite's extended code name when SQLite raised the error;",
      '`violations` comes with `[SQ1016]` and `kinds` with `[SQ1017]`. A constraint error names what it is about where it can:',
      '`table` and `columns` (NOT NULL, UNIQUE, PRIMARY KEY, and the foreign key that failed, whose parent is `references`),',
      '`constraint` (CHECK: its name or expression). Replication refusals name the primary in `primary` (`[SQ7010]`, `[SQ7011]`,',
      '`[SQ7012]`, with the lease `epoch` in `[SQ7012]`) and `[SQ7011]` gives `applied` and `wanted` seqs. The catalog (also in `x-error-codes`):',
      '',
      catalogTable(),
    ].join('\n'),
    required: ['ok', 'error', 'code'],
    additionalProperties: false,
    properties: {
      ok: { const: false },
      error: { type: 'string', pattern: '^\\[SQ[0-9]{4}\\] ', description: 'The bracketed code, then the message.' },
      code: { type: 'integer', enum: names.map((name) => catalog[name].code) },
      statement: { type: 'integer', minimum: 0, description: '0-based index of the failing statement (/exec).' },
      sqliteCode: { type: 'string', pattern: '^SQLITE_[A-Z_]+$', examples: ['SQLITE_CONSTRAINT_UNIQUE'] },
      violations: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Violation' } },
      kinds: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...PERSONAL_DATA_KINDS] } },
      table: {
        type: 'string',
        description: 'Constraint errors: the table whose constraint failed (for a foreign key: the referencing table).',
      },
      columns: {
        type: 'array',
        minItems: 1,
        items: { type: 'string' },
        description: 'Constraint errors: the columns of that constraint.',
      },
      references: {
        type: 'object',
        additionalProperties: false,
        required: ['table', 'columns'],
        description: 'A failed foreign key: the parent table and columns it refers to.',
        properties: { table: { type: 'string' }, columns: { type: 'array', minItems: 1, items: { type: 'string' } } },
      },
      constraint: { type: 'string', description: 'A failed CHECK: its name, or its expression when unnamed.' },
      primary: {
        type: 'string',
        description: 'Replication refusals: the address of the primary, where writes go (empty while not known).',
      },
      epoch: {
        type: 'integer',
        minimum: 0,
        description: '[SQ7012]: the primary lease epoch of the server that took over.',
      },
      applied: { type: 'integer', minimum: 0, description: '[SQ7011]: the journal seq this replica has applied.' },
      wanted: { type: 'integer', minimum: 0, description: '[SQ7011]: the X-Min-Seq asked for.' },
    },
    allOf: [
      {
        if: { properties: { code: { const: catalog.PILOT_INVALID.code } } },
        then: { required: ['violations'] },
        else: { not: { required: ['violations'] } },
      },
      {
        if: { properties: { code: { const: catalog.PILOT_PERSONAL_DATA.code } } },
        then: { required: ['kinds'] },
        else: { not: { required: ['kinds'] } },
      },
    ],
  };
}

export function violationSchema(): JsonObject {
  return {
    type: 'object',
    description: 'One problem of a pilot record: the JSON Pointer of the offending value and what is wrong with it.',
    required: ['path', 'message'],
    additionalProperties: false,
    properties: {
      path: { type: 'string', pattern: '^/', examples: ['/scope/class_codes'] },
      message: { type: 'string', examples: ['must have at least 1 item'] },
    },
  };
}

const header = (description: string, required: boolean): JsonObject => ({
  description,
  required,
  schema: { type: 'string' },
});

/** Headers that come with some errors (src/http/*.ts, src/sessions/session-manager.ts). */
function errorHeaders(status: ErrorStatus, list: readonly ErrorName[]): JsonObject | undefined {
  switch (status) {
    case 401:
      return { 'WWW-Authenticate': header('`Bearer realm="sqlscribe"`', true) };
    case 405:
      return { Allow: header('The methods the path accepts.', true) };
    case 409:
      return list.some((name) => name === 'SESSION_ACTIVE' || name === 'DATABASE_LOCKED')
        ? { 'Retry-After': header('Seconds after which a retry may succeed (with `[SQ5004]` and `[SQ5005]`).', false) }
        : undefined;
    case 413:
      return { Connection: header('`close`: the unread rest of the body is not read.', true) };
    case 503:
      return { 'Retry-After': header('Seconds after which a retry may succeed.', true) };
    default:
      return undefined;
  }
}

/**
 * The response of one status of one operation: its schema is ErrorBody with
 * `code` narrowed to `list`. Throws when a name's catalog status is not
 * `status`, so that a change to the catalog cannot leave the document wrong.
 */
export function errorResponse(status: ErrorStatus, list: readonly ErrorName[]): JsonObject {
  for (const name of list) {
    if (catalog[name].status !== status)
      throw new Error(`openapi: ${name} is answered with ${catalog[name].status}, not ${status}`);
  }
  const codes = list.map((name) => catalog[name].code);
  const response: JsonObject = {
    description: `${STATUS_TEXT[status]}: ${list.map((name) => `\`${formatCode(catalog[name].code)}\` ${name}`).join(', ')}.`,
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/ErrorBody' },
            { type: 'object', properties: { code: { enum: codes } } },
          ],
        },
      },
    },
    'x-error-codes': codes,
  };
  const headers = errorHeaders(status, list);
  return headers === undefined ? response : { ...response, headers };
}

/** The responses object part of an operation's error set, by status. */
export function errorResponses(set: ErrorSet): JsonObject {
  const statuses = (Object.keys(set).map(Number) as ErrorStatus[]).sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((status) => [String(status), errorResponse(status, set[status] ?? [])]));
}
