/**
 * The paths of the classroom pilot records (src/routes/pilot-routes.ts), of
 * this document itself, and of the web console, in the OpenAPI document.
 */
import type { ErrorSet, JsonObject } from './error-responses';
import {
  ADMIN_ONLY,
  ENGINE,
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

function pilotPaths(): Record<string, JsonObject> {
  return {
    '/pilots': {
      get: operation({
        operationId: 'listPilots',
        summary: 'List pilot records',
        description: 'By id, filtered by every filter given; `limit`/`offset` as /rows.',
        tag: 'pilots',
        parameters: [
          'PilotDecision',
          'PilotCommit',
          'PilotSubject',
          'PilotLevel',
          'PilotFrom',
          'PilotTo',
          'Limit',
          'Offset',
        ],
        success: { 200: json('A page of pilot records.', 'PilotList') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, QUERY, ENGINE),
      }),
      post: operation({
        operationId: 'createPilot',
        summary: 'Record a classroom pilot',
        description: [
          'Validated against the `PilotRecord` schema (every violation at once, each with its JSON path: 400 `[SQ1016]` with `violations`);',
          '`incidents` and `notes_without_personal_data` must hold no e-mail address, phone number or national identity number',
          '(400 `[SQ1017]` naming the `kinds` found, never the data). Decisions form a sequence per scope (level, subject, objective):',
          'after `retirar` nothing more is accepted (409 `[SQ2013]`); after `corregir` the next pilot must carry another commit (409 `[SQ2014]`).',
          'Records are immutable: there is no update or delete.',
        ].join(' '),
        tag: 'pilots',
        requestBody: jsonBody('PilotRecord', true),
        success: { 201: json('Stored.', 'StoredPilot') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, WITH_BODY, ENGINE, OFF_PRIMARY, {
          400: ['PILOT_INVALID', 'PILOT_PERSONAL_DATA'],
          409: ['PILOT_SCOPE_RETIRED', 'PILOT_SAME_COMMIT'],
          503: WRITE[503] ?? [],
        }),
      }),
    },
    '/pilots/schema': {
      get: operation({
        operationId: 'getPilotSchema',
        summary: 'The JSON Schema of the pilot record',
        tag: 'pilots',
        success: { 200: json('The schema (draft 2020-12).', 'PilotSchemaDocument') },
        errors: mergeErrors(SERVED, ADMIN_ONLY),
      }),
    },
    '/pilots/summary': {
      get: operation({
        operationId: 'summarizePilots',
        summary: 'What the pilot records say',
        description:
          "Counts by decision, evidence totals and shares (overall and per level), planned against actual minutes, and each scope's current decision; with `group_by` the same figures per commit or subject.",
        tag: 'pilots',
        parameters: ['GroupBy'],
        success: { 200: json('The summary.', 'PilotSummary') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, QUERY, ENGINE),
      }),
    },
    '/pilots/{id}': {
      get: operation({
        operationId: 'getPilot',
        summary: 'One pilot record',
        tag: 'pilots',
        parameters: ['PilotId'],
        success: { 200: json('The record.', 'StoredPilot') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, ENGINE, { 404: ['PILOT_NOT_FOUND'] }),
      }),
    },
  };
}

/** The console is served before authentication and readiness (src/app.ts). */
const CONSOLE_ERRORS: ErrorSet = { 404: ['ENDPOINT_NOT_FOUND'], 500: ['INTERNAL'], 503: ['TOO_MANY_CONNECTIONS'] };

/** The console's page, at `/` and `/index.html`. */
function consolePage(operationId: string, summary: string): JsonObject {
  return operation({
    operationId,
    summary,
    description: [
      'The classroom console (HTML): databases, tables, rows, an SQL editor, transaction controls and pilot records.',
      'The page and its assets hold no data and are served without a token (and during start-up recovery); the console asks for the token',
      "once and sends it with every API request. 404 `[SQ2010]` when the console's files are missing; another method is 405 `[SQ1013]`.",
    ].join(' '),
    tag: 'console',
    success: { 200: { description: 'The console page.', content: { 'text/html': { schema: { type: 'string' } } } } },
    errors: CONSOLE_ERRORS,
    security: [],
  });
}

function documentPaths(): Record<string, JsonObject> {
  return {
    '/openapi.json': {
      get: operation({
        operationId: 'getOpenApi',
        summary: 'This document',
        description:
          'The OpenAPI 3.1 description of the service, kept honest by test/openapi.test.ts. Needs the token like every endpoint.',
        tag: 'service',
        success: {
          200: json('The OpenAPI document.', {
            type: 'object',
            required: ['openapi', 'info', 'paths', 'components'],
            properties: { openapi: { type: 'string', pattern: '^3\\.1\\.[0-9]+$' } },
          }),
        },
        errors: SERVED,
      }),
    },
    '/': { get: consolePage('getConsole', 'The web console') },
    '/index.html': { get: consolePage('getConsoleIndex', 'The web console (another name of `/`)') },
    '/console/{file}': {
      get: operation({
        operationId: 'getConsoleAsset',
        summary: 'A file of the web console',
        description: 'Its stylesheet, scripts and icons, served as they are, by exact name.',
        tag: 'console',
        parameters: ['ConsoleFile'],
        success: {
          200: {
            description: 'The file.',
            content: Object.fromEntries(
              ['text/css', 'text/javascript', 'image/svg+xml', 'image/png'].map((type) => [
                type,
                { schema: { type: 'string' } },
              ]),
            ),
          },
        },
        errors: CONSOLE_ERRORS,
        security: [],
      }),
    },
  };
}

export function otherPaths(): Record<string, JsonObject> {
  return { ...pilotPaths(), ...documentPaths() };
}
