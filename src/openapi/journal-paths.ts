/** The path of the statement journal feed (src/routes/journal-routes.ts) in the OpenAPI document. */
import type { JsonObject } from './error-responses';
import { ADMIN_ONLY, mergeErrors, operation, QUERY, SERVED } from './operation';

const query = (name: string, description: string, schema: JsonObject): JsonObject => ({
  name,
  in: 'query',
  description,
  required: false,
  schema,
});

const PARAMETERS: JsonObject[] = [
  query(
    'since',
    'Entries after this seq (exclusive). Default: from the first entry the journal keeps. Past the head: from now on (new entries only).',
    { type: 'integer', minimum: 0 },
  ),
  query('limit', 'NDJSON: entries per page, 1–1000 (default 1000).', { type: 'integer', minimum: 1, maximum: 1000 }),
  query('class', 'Only failed entries of these error classes, e.g. `3` or `3,5`.', {
    type: 'string',
    pattern: '^[1-9](,[1-9])*$',
  }),
  query('code', 'Only failed entries with these codes, e.g. `3002` or `3002,6007`.', {
    type: 'string',
    pattern: '^\\d{4}(,\\d{4})*$',
  }),
  query('db', 'Only entries of this database: its name, with or without `.db` (`school` or `school.db`).', {
    type: 'string',
    minLength: 1,
  }),
  query('failed', '`true`: only entries of failed statements.', { enum: ['true', 'false'] }),
  query(
    'token',
    'Only entries caused by these tokens, by name (`alumno-05` or `alumno-05,alumno-06`; any case). A name, never a secret.',
    { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}(,[A-Za-z0-9_.-]{1,64})*$' },
  ),
  query(
    'kind',
    'Only entries of these kinds, e.g. `attempt` (the answers checked against exercises, for a live progress grid) or `attempt,refused`.',
    { type: 'string', pattern: '^[a-z]+(,[a-z]+)*$' },
  ),
  {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    description:
      'Event stream: the id (seq) of the last event received; the stream resumes after it and wins over `since`.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
];

const SEQ_HEADER = (description: string): JsonObject => ({
  description,
  required: false,
  schema: { type: 'string', pattern: '^\\d+$' },
});

export function journalPaths(): Record<string, JsonObject> {
  return {
    '/journal': {
      get: withParameters(
        operation({
          operationId: 'readJournal',
          summary: 'Read or follow the statement journal',
          description: [
            'Journal entries (as in the journal files, without `crc`) after `since`, filtered. By default one bounded NDJSON page:',
            'continue with `since` = `Journal-Next-Since` until it reaches `Journal-Head`. With `Accept: text/event-stream` the entries',
            'follow as server-sent events (`id` = seq, `data` = the entry), first those already written, then each new one as it is',
            'written, with a comment as heartbeat; resume with `Last-Event-ID`. A follower that does not read fast enough is disconnected',
            '(it resumes without loss); at most 16 follow at once (503 `[SQ6014]`). On a server with tokens it needs an admin token',
            '(403 `[SQ1030]` for the others); without tokens it is refused (403 `[SQ1022]`) unless the server runs with -journal-feed.',
            'Without a journal (-log-level none): 409 `[SQ7004]`.',
          ].join(' '),
          tag: 'journal',
          success: {
            200: {
              description: 'An NDJSON page (one entry a line), or the event stream.',
              headers: {
                'Journal-Next-Since': SEQ_HEADER('NDJSON: the last seq looked at; the next page starts after it.'),
                'Journal-Head': SEQ_HEADER('NDJSON: the last seq written when the page was read.'),
              },
              content: {
                'application/x-ndjson': { schema: { type: 'string', pattern: '^(\\{[^\\n]*\\}\\n)*$' } },
                'text/event-stream': { schema: { type: 'string' } },
              },
            },
          },
          errors: mergeErrors(SERVED, QUERY, ADMIN_ONLY, {
            400: ['BAD_REQUEST'],
            403: ['JOURNAL_FEED_FORBIDDEN'],
            409: ['NO_JOURNAL'],
            500: ['JOURNAL_UNREADABLE'],
            503: ['TOO_MANY_FOLLOWERS'],
          }),
        }),
      ),
    },
  };
}

/** The parameters belong to this path only, so they are written inline rather than as shared components. */
function withParameters(op: JsonObject): JsonObject {
  const { responses, ...head } = op;
  return { ...head, parameters: PARAMETERS, responses };
}
