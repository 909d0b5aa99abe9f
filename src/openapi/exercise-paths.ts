/** The paths of the exercises (src/routes/exercise-routes.ts) and their records, in the OpenAPI document. */
import { EVIDENCE_LEVELS } from '../pilots/pilot-schema';
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
import { record } from './schemas';

const NAME = { type: 'string', pattern: '^[a-z0-9_-]{1,64}$' };
const TRUE = { const: true };
const TIME = { type: 'string', format: 'date-time' };
const VALUE = { type: ['number', 'string', 'boolean', 'null'] };

const query = (name: string, description: string, schema: JsonObject, required = false): JsonObject => ({
  name,
  in: 'query',
  description,
  required,
  schema,
});

const definitionFields = {
  id: { ...NAME, description: 'Named like a database: 1 to 64 of a-z 0-9 _ - (trimmed, lower-cased)' },
  set: { ...NAME, description: 'The lesson it belongs to, named the same way' },
  position: { type: 'integer', minimum: 0, description: "Its place in the set; by default after the set's last" },
  title: { type: 'string', minLength: 1, maxLength: 200 },
  prompt: { type: 'string', maxLength: 20000, description: 'The task, Markdown allowed' },
  template: {
    type: 'string',
    description: 'The database answers run on (a copy of it): it must exist. Answers give it as `name.db`',
  },
  solution: {
    type: 'string',
    minLength: 1,
    maxLength: 20000,
    description: 'SQL. It must run on the template; without `check` it must only read',
  },
  order: {
    enum: ['any', 'exact'],
    default: 'any',
    description: "`exact`: the rows must come in the solution's order (say so in the prompt: ORDER BY)",
  },
  columns: {
    enum: ['position', 'name'],
    default: 'position',
    description: '`position`: names ignored; `name`: matched by name (any case), in any order',
  },
  tolerance: { type: 'number', minimum: 0, default: 1e-9, description: 'Two numbers this close are equal' },
  check: {
    type: ['string', 'null'],
    maxLength: 20000,
    default: null,
    description:
      'For a task that changes data: a query run after the answer and after the solution, whose results are compared instead',
  },
  showRows: {
    type: 'boolean',
    default: false,
    description: 'Feedback may quote the first missing and the first extra row',
  },
};
const stored = {
  updated: { ...TIME, description: 'When it was last written' },
  revision: { type: 'integer', minimum: 1, description: '1 when made, one more with every PUT' },
};

function exerciseSchemas(): Record<string, JsonObject> {
  const publicFields = Object.fromEntries(
    Object.entries(definitionFields).filter(([key]) => key !== 'solution' && key !== 'check'),
  );
  const cell = record('One student and one exercise.', {
    exercise: NAME,
    attempts: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0 },
    solved: { type: 'boolean' },
    solvedAt: { type: ['string', 'null'], format: 'date-time', description: 'The first right answer' },
    lastAttemptAt: { type: ['string', 'null'], format: 'date-time' },
    lastErrorClass: {
      type: ['integer', 'null'],
      description: 'The class of the last answer that failed with an error',
    },
    stuck: {
      type: 'boolean',
      description: 'Not solved, with `stuck.attempts` wrong answers or more in the last `stuck.minutes` minutes',
    },
    state: { enum: ['solved', 'stuck', 'tried', 'not-tried'] },
  });
  return {
    ExerciseDefinition: {
      type: 'object',
      description: 'An exercise as a teacher writes it.',
      required: ['set', 'title', 'template', 'solution'],
      additionalProperties: false,
      properties: definitionFields,
    },
    Exercise: record('An exercise as an admin sees it.', {
      ...definitionFields,
      check: { type: ['string', 'null'] },
      ...stored,
    }),
    PublicExercise: record('An exercise as a write or read token sees it: no solution, no check.', {
      ...publicFields,
      ...stored,
    }),
    ExerciseAnswer: record('One exercise.', {
      ok: TRUE,
      exercise: { oneOf: [{ $ref: '#/components/schemas/Exercise' }, { $ref: '#/components/schemas/PublicExercise' }] },
    }),
    ExerciseList: record('Exercises in lesson order (set, position, id).', {
      ok: TRUE,
      exercises: {
        type: 'array',
        items: { oneOf: [{ $ref: '#/components/schemas/Exercise' }, { $ref: '#/components/schemas/PublicExercise' }] },
      },
    }),
    ExerciseDeleted: record('Deleted.', { ok: TRUE, id: NAME }),
    ExerciseTables: record("The tables of an exercise's template.", {
      ok: TRUE,
      id: NAME,
      template: { type: 'string' },
      tables: { type: 'array', items: { $ref: '#/components/schemas/TableSchema' } },
    }),
    CheckRequest: record('An answer.', {
      sql: { type: 'string', minLength: 1, description: 'SQL, one statement or several' },
    }),
    CheckResult: record(
      'The verdict on an answer.',
      {
        ok: TRUE,
        exercise: NAME,
        correct: { type: 'boolean' },
        feedback: record(
          'What helps without giving the solution away.',
          {
            columns: record(
              'Columns the answer lacks, or has too many of (by name, or by place: the expected name of a place missing).',
              {
                missing: { type: 'array', items: { type: 'string' } },
                extra: { type: 'array', items: { type: 'string' } },
              },
            ),
            rows: record('Rows expected and rows the answer gave.', {
              expected: { type: 'integer', minimum: 0 },
              got: { type: 'integer', minimum: 0 },
            }),
            missingRow: {
              type: 'array',
              items: VALUE,
              description: 'With showRows: the first expected row the answer lacks',
            },
            extraRow: {
              type: 'array',
              items: VALUE,
              description: 'With showRows: the first row of the answer the expected result lacks',
            },
            order: {
              type: 'string',
              description: 'The rows are right and only their order is wrong, where the order matters',
            },
            truncated: {
              const: true,
              description: "The answer's result was cut at -max-result-rows or -max-result-bytes",
            },
          },
          ['columns', 'missingRow', 'extraRow', 'order', 'truncated'],
        ),
        error: record(
          'The answer failed: its engine error, as /exec gives it.',
          {
            code: { type: 'integer' },
            class: { type: 'integer', minimum: 1, maximum: 9 },
            message: { type: 'string', pattern: '^\\[SQ\\d{4}\\] ' },
            statement: { type: 'integer', minimum: 0 },
          },
          ['statement'],
        ),
      },
      ['error'],
    ),
    ExerciseProgress: record('Every student by every exercise.', {
      ok: TRUE,
      set: { type: ['string', 'null'] },
      at: { ...TIME, description: 'The time "stuck" was judged at' },
      stuck: record('The stuck rule.', {
        attempts: { type: 'integer', minimum: 1 },
        minutes: { type: 'integer', minimum: 1 },
      }),
      exercises: {
        type: 'array',
        items: record('An exercise, in lesson order.', {
          id: NAME,
          set: NAME,
          position: { type: 'integer' },
          title: { type: 'string' },
        }),
      },
      students: {
        type: 'array',
        items: record('A student (a token other than an admin), by its token.', {
          token: { type: 'string', description: "The token's name" },
          tokenId: {
            type: ['string', 'null'],
            description: "The token's id (null for attempts that carry none): a reused name is another student",
          },
          former: {
            type: 'boolean',
            description: 'A token the server has no longer (revoked); only with `students=all`, after the current ones',
          },
          solved: { type: 'integer', minimum: 0 },
          attempts: { type: 'integer', minimum: 0 },
          stuck: { type: 'integer', minimum: 0 },
          exercises: { type: 'array', items: cell },
        }),
      },
    }),
    OwnProgress: record("The asking token's own row: its attempts at each exercise.", {
      ok: TRUE,
      set: { type: ['string', 'null'] },
      token: { type: 'string' },
      tokenId: { type: ['string', 'null'] },
      solved: { type: 'integer', minimum: 0 },
      attempts: { type: 'integer', minimum: 0 },
      stuck: { type: 'integer', minimum: 0 },
      exercises: { type: 'array', items: cell },
    }),
    ExerciseEvidence: record("Students per evidence level, for a pilot record's aggregate_evidence.", {
      ok: TRUE,
      set: NAME,
      exercises: { type: 'integer', minimum: 1 },
      students: { type: 'integer', minimum: 0 },
      thresholds: record('The fewest exercises solved for each level.', {
        en_desarrollo: { type: 'integer', minimum: 0 },
        logrado: { type: 'integer', minimum: 0 },
        profundizado: { type: 'integer', minimum: 0 },
      }),
      aggregate_evidence: record(
        "Students per level, as a pilot record's aggregate_evidence.",
        Object.fromEntries(EVIDENCE_LEVELS.map((level) => [level, { type: 'integer', minimum: 0 }])),
      ),
    }),
  };
}

const ID = {
  name: 'id',
  in: 'path',
  required: true,
  description: "The exercise's id (404 `[SQ2080]` when there is none).",
  schema: { type: 'string' },
};
const SET = query('set', 'Only the exercises of this set (lesson).', NAME);
const CLASS_PARAMETERS = [
  query('token', 'Only the students whose token names match this glob (`clase-*`).', {
    type: 'string',
    pattern: '^[A-Za-z0-9_*.-]{1,64}$',
  }),
  query(
    'students',
    '`current` (default): the tokens the server has now. `all`: also former students (revoked tokens, whose names may be reused), marked `former`, after the current ones.',
    { enum: ['current', 'all'] },
  ),
  query('stuck_attempts', 'Stuck: at least this many wrong answers (default 3)…', { type: 'integer', minimum: 1 }),
  query('stuck_minutes', '…in this many minutes before `at` (default 10).', { type: 'integer', minimum: 1 }),
  query('at', 'The time "stuck" is judged at (default: now).', TIME),
];
const EXERCISE_WRITE: ErrorSet = mergeErrors(SERVED, WITH_BODY, ADMIN_ONLY, ENGINE, WRITE, OFF_PRIMARY, {
  400: ['EXERCISE_INVALID'],
  409: ['EXERCISE_TEMPLATE_GONE'],
});

export function exercisePaths(): Record<string, JsonObject> {
  return {
    '/exercises': {
      get: operation({
        operationId: 'listExercises',
        summary: 'List exercises',
        description:
          'Every token. An admin sees each whole; a write or read token never sees `solution` or `check`, nor does anyone on a server without tokens unless it runs with -journal-feed.',
        tag: 'exercises',
        success: { 200: json('The exercises.', 'ExerciseList') },
        parameters: ['ExerciseSet'],
        errors: mergeErrors(SERVED, QUERY, ENGINE),
      }),
      post: operation({
        operationId: 'createExercise',
        summary: 'Write an exercise',
        description:
          'Admin only. The solution (and the check) run on a copy of the template before anything is stored: one that fails is 400 `[SQ1080]` with its error. An id taken is 409 `[SQ2081]`; a template that does not exist, 409 `[SQ2082]`.',
        tag: 'exercises',
        requestBody: jsonBody('ExerciseDefinition', true),
        success: {
          201: json(
            'Stored.',
            record('The exercise stored.', { ok: TRUE, exercise: { $ref: '#/components/schemas/Exercise' } }),
          ),
        },
        errors: mergeErrors(EXERCISE_WRITE, { 409: ['EXERCISE_EXISTS'] }),
      }),
    },
    '/exercises/progress': {
      get: operation({
        operationId: 'exerciseProgress',
        summary: "The class's progress",
        description:
          "Admin only. For every student (every token the server has that is not an admin, told by its id, not its name; with `students=all` also former students, revoked tokens, apart) and every exercise: attempts, solved and when, the last error's class, stuck. From the journal's `attempt` entries, so a restart forgets nothing the journal keeps. `?format=csv` (or `Accept: text/csv`): a gradebook, one line per student, a column per exercise (1 solved, 0 tried, empty not tried).",
        tag: 'exercises',
        parameters: [
          'ExerciseSet',
          'ExerciseToken',
          'ExerciseStudents',
          'StuckAttempts',
          'StuckMinutes',
          'ExerciseAt',
          'TokenFormat',
        ],
        success: {
          200: {
            description: 'The grid (JSON), or the gradebook (CSV).',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/ExerciseProgress' } },
              'text/csv': { schema: { type: 'string', pattern: '^token,solved,attempts' } },
            },
          },
        },
        errors: mergeErrors(SERVED, QUERY, ADMIN_ONLY, ENGINE),
      }),
    },
    '/exercises/mine': {
      get: operation({
        operationId: 'ownProgress',
        summary: 'My progress',
        description:
          "Every token: its own attempts at each exercise (of `set`, or all), as one row of the class's progress: what a student's console marks as solved. The token's own, by its id: a revoked token's attempts are never a later token's of the same name.",
        tag: 'exercises',
        parameters: ['ExerciseSet'],
        success: { 200: json('The row.', 'OwnProgress') },
        errors: mergeErrors(SERVED, QUERY, ENGINE),
      }),
    },
    '/exercises/evidence': {
      get: operation({
        operationId: 'exerciseEvidence',
        summary: 'Pilot evidence from a lesson',
        description:
          'Admin only. Students per evidence level by exercises of the set solved: `en_desarrollo`, `logrado` and `profundizado` give the fewest for each (a number, or a share such as `50%`, rounded up); by default 1, half (rounded up) and all. `aggregate_evidence` goes into a pilot record as it is.',
        tag: 'exercises',
        parameters: [
          'ExerciseSetRequired',
          'ExerciseToken',
          'ExerciseStudents',
          'EvidenceEnDesarrollo',
          'EvidenceLogrado',
          'EvidenceProfundizado',
        ],
        success: { 200: json('The counts.', 'ExerciseEvidence') },
        errors: mergeErrors(SERVED, QUERY, ADMIN_ONLY, ENGINE),
      }),
    },
    '/exercises/{id}': {
      get: operation({
        operationId: 'getExercise',
        summary: 'One exercise',
        description:
          'Every token; without `solution` and `check` for a write or read token, and on a server without tokens unless it runs with -journal-feed.',
        tag: 'exercises',
        parameters: ['ExerciseId'],
        success: { 200: json('The exercise.', 'ExerciseAnswer') },
        errors: mergeErrors(SERVED, ENGINE, { 404: ['EXERCISE_NOT_FOUND'] }),
      }),
      put: operation({
        operationId: 'replaceExercise',
        summary: 'Change an exercise',
        description:
          "Admin only: the whole definition again (the body's `id`, if any, must be the path's), checked as when it was made. Cached solution results of the old definition are no longer used.",
        tag: 'exercises',
        parameters: ['ExerciseId'],
        requestBody: jsonBody('ExerciseDefinition', true),
        success: {
          200: json(
            'Stored.',
            record('The exercise stored.', { ok: TRUE, exercise: { $ref: '#/components/schemas/Exercise' } }),
          ),
        },
        errors: mergeErrors(EXERCISE_WRITE, { 404: ['EXERCISE_NOT_FOUND'] }),
      }),
      delete: operation({
        operationId: 'deleteExercise',
        summary: 'Delete an exercise',
        description: 'Admin only. Its attempts stay in the journal.',
        tag: 'exercises',
        parameters: ['ExerciseId'],
        success: { 200: json('Deleted.', 'ExerciseDeleted') },
        errors: mergeErrors(SERVED, ADMIN_ONLY, ENGINE, WRITE, OFF_PRIMARY, { 404: ['EXERCISE_NOT_FOUND'] }),
      }),
    },
    '/exercises/{id}/tables': {
      get: operation({
        operationId: 'exerciseTables',
        summary: "The tables of an exercise's template",
        description: "Every token, for an editor's completion: a student's token may not read the template itself.",
        tag: 'exercises',
        parameters: ['ExerciseId'],
        success: { 200: json('The tables.', 'ExerciseTables') },
        errors: mergeErrors(SERVED, ENGINE, { 404: ['EXERCISE_NOT_FOUND'], 409: ['EXERCISE_TEMPLATE_GONE'] }),
      }),
    },
    '/exercises/{id}/check': {
      post: operation({
        operationId: 'checkAnswer',
        summary: 'Check an answer',
        description: [
          "Every token. The answer runs on a scratch copy of the template (never the template, never a database of the token's), under the bounds of /exec",
          "(its refusals, -max-statements, -query-timeout, -max-result-rows, -max-result-bytes), and its result is compared with the solution's",
          "(for a task with `check`, the check's results after each). An answer that fails is still a 200, `correct: false`, with its `error`.",
          "Each check is an `attempt` entry in the journal (token, exercise, SQL as sent, correct, code and class when it failed). A replica refuses it (409 `[SQ7010]`): the attempt belongs in the primary's journal.",
        ].join(' '),
        tag: 'exercises',
        parameters: ['ExerciseId'],
        requestBody: jsonBody('CheckRequest', true),
        success: { 200: json('The verdict.', 'CheckResult') },
        errors: mergeErrors(SERVED, WITH_BODY, ENGINE, OFF_PRIMARY, {
          400: ['EXERCISE_CHECK_INVALID'],
          404: ['EXERCISE_NOT_FOUND'],
          409: ['EXERCISE_TEMPLATE_GONE', 'EXERCISE_SOLUTION_FAILED'],
          503: ['ENGINES_BUSY'],
        }),
      }),
    },
  };
}

export function exerciseParameters(): Record<string, JsonObject> {
  const threshold = (name: string, fallback: string): JsonObject =>
    query(name, `The fewest exercises solved for ${name} (default ${fallback}): a number, or a share such as 50%.`, {
      type: 'string',
      pattern: '^(\\d{1,6}|\\d{1,3}(\\.\\d+)?%)$',
    });
  const [token, students, stuckAttempts, stuckMinutes, at] = CLASS_PARAMETERS as [
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
    JsonObject,
  ];
  return {
    ExerciseId: ID,
    ExerciseSet: SET,
    ExerciseSetRequired: query(
      'set',
      'The set (lesson). 400 `[SQ1008]` without it, or when it has no exercise.',
      NAME,
      true,
    ),
    ExerciseToken: token,
    ExerciseStudents: students,
    StuckAttempts: stuckAttempts,
    StuckMinutes: stuckMinutes,
    ExerciseAt: at,
    EvidenceEnDesarrollo: threshold('en_desarrollo', '1'),
    EvidenceLogrado: threshold('logrado', 'half, rounded up'),
    EvidenceProfundizado: threshold('profundizado', 'all'),
  };
}

export { exerciseSchemas };
