/**
 * The OpenAPI 3.1 description of sqlscribe, served at GET /openapi.json: every
 * endpoint, parameter, request body, response and error. A plain object built
 * once; its schemas are JSON Schema draft 2020-12, its errors are generated
 * from the catalog (src/errors.ts), and test/openapi.test.ts checks real
 * responses of the real server against it.
 */
import { version } from '../version';
import { errorCatalog, errorResponse, type JsonObject } from './error-responses';
import { componentParameters } from './operation';
import { corePaths } from './paths';
import { journalPaths } from './journal-paths';
import { importPaths } from './import-paths';
import { otherPaths } from './pilot-paths';
import { componentSchemas } from './schemas';
import { tokenPaths, tokenSchemas } from './token-paths';
import { classPaths, classSchemas } from './class-paths';
import { restorePaths, restoreSchemas } from './restore-paths';
import { historyParameters, historyPaths, historySchemas } from './history-paths';
import { replicationPaths, replicationSchemas } from './replication-paths';
import { exerciseParameters, exercisePaths, exerciseSchemas } from './exercise-paths';

const DESCRIPTION = [
  'HTTP/JSON service over embedded SQLite database files: list, create and inspect databases and tables, read rows page by page,',
  'run SQL (all or nothing per request), hold a transaction open across requests, and keep classroom pilot records.',
  '',
  '**Modes.** Started with `-db <file>` it serves one database (single-DB mode: `db` may be left out; `POST /dbs` and',
  'database-level SQL answer 405). Started with `-dir <directory>` it serves every `<name>.db` there (multi-DB mode: `db` is',
  'required on the endpoints that act on one database).',
  '',
  '**Authentication.** With `-token` or `-tokens-file`, every request to every endpoint (`/health`, `/metrics` and this document',
  'included; the console at `/` and `/console/*` excepted) must carry `X-Service-Token: <token>` or `Authorization: Bearer <token>`,',
  'else 401 `[SQ1012]` (an expired or revoked token too). The -token value is the admin token; personal tokens (POST /tokens) have a',
  'role, `admin`, `write` or `read`, and the databases they may use: a request beyond them is 403 `[SQ1030]` (role), `[SQ1031]`',
  "(database) or `[SQ1032]` (a read token's batch writes). Without either flag no credential is needed: hence the empty alternative in `security`.",
  '',
  '**Errors.** Every error body is `ErrorBody`: `{ ok: false, error: "[SQnnnn] …", code }`, plus `statement`, `sqliteCode`,',
  '`violations` or `kinds` where they apply. Each error response below lists the codes it can carry (`x-error-codes`); the whole',
  'catalog is in the top-level `x-error-codes`. Any other path is 404 `[SQ2010]`; a known path with another method is 405',
  '`[SQ1013]` with `Allow` (`x-unmatched-responses`). HEAD is answered wherever GET is.',
  '',
  '**Bodies.** Request bodies must be JSON objects sent as `application/json` (415 `[SQ1010]` otherwise, 413 `[SQ6002]` above',
  '-max-body-bytes, 400 `[SQ1009]` when malformed); the one exception is `POST /dbs/{db}/import`, which takes the file itself.',
  'A body sent with a GET is ignored.',
  '',
  '**Replication.** A server started with -journal-nats (primary) or -follow (replica) sends `X-Journal-Seq` on every answer: the',
  'journal seq its databases hold. Any request may send `X-Min-Seq`: a replica waits until it holds that seq (up to -min-seq-wait),',
  'else 409 `[SQ7011]`. A replica refuses every operation that writes with 409 `[SQ7010]`; a primary another server took over from,',
  'with 409 `[SQ7012]`. `/health` and `/metrics` add a `replication` record.',
  '',
  '**Changes are additive.** Records may gain fields in later versions; this document lists every field the service sends today.',
].join('\n');

const TAGS = [
  { name: 'service', description: 'Health, metrics and this document' },
  { name: 'databases', description: 'Databases, tables, schemas and rows' },
  { name: 'sql', description: 'Running SQL' },
  { name: 'sessions', description: 'Transaction sessions across requests (one at a time)' },
  { name: 'pilots', description: 'Classroom pilot records' },
  { name: 'journal', description: 'The statement journal, read in pages or followed live' },
  { name: 'tokens', description: 'Personal tokens with roles (admin only)' },
  { name: 'exercises', description: "Exercises that check themselves, and the class's progress" },
  { name: 'console', description: 'The web console' },
];

function securitySchemes(): JsonObject {
  return {
    serviceToken: {
      type: 'apiKey',
      in: 'header',
      name: 'X-Service-Token',
      description: 'The -token value (only when the server runs with -token).',
    },
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description: 'The -token value as a bearer token (only when the server runs with -token).',
    },
  };
}

export function buildOpenApiDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'sqlscribe',
      version,
      summary: 'HTTP/JSON service over embedded SQLite databases, with a replayable statement journal',
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags: TAGS,
    security: [{ serviceToken: [] }, { bearerAuth: [] }, {}],
    paths: {
      ...corePaths(),
      ...importPaths(),
      ...journalPaths(),
      ...tokenPaths(),
      ...restorePaths(),
      ...classPaths(),
      ...historyPaths(),
      ...replicationPaths(),
      ...exercisePaths(),
      ...otherPaths(),
    },
    components: {
      schemas: {
        ...componentSchemas(),
        ...tokenSchemas(),
        ...restoreSchemas(),
        ...classSchemas(),
        ...historySchemas(),
        ...replicationSchemas(),
        ...exerciseSchemas(),
      },
      parameters: { ...componentParameters(), ...historyParameters(), ...exerciseParameters() },
      responses: {
        EndpointNotFound: errorResponse(404, ['ENDPOINT_NOT_FOUND']),
        MethodNotAllowed: errorResponse(405, ['METHOD_NOT_ALLOWED']),
      },
      securitySchemes: securitySchemes(),
    },
    'x-unmatched-responses': {
      unknownPath: { $ref: '#/components/responses/EndpointNotFound' },
      otherMethod: { $ref: '#/components/responses/MethodNotAllowed' },
    },
    'x-error-codes': errorCatalog(),
  };
}

let built: JsonObject | undefined;

/** The document, built on first use and then kept. */
export function openApiDocument(): JsonObject {
  built ??= buildOpenApiDocument();
  return built;
}
