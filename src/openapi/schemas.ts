/**
 * The component schemas of the OpenAPI document (JSON Schema draft 2020-12,
 * as OpenAPI 3.1 uses it): every record the service sends or accepts. The
 * pilot record is the very schema POST /pilots validates with
 * (src/pilots/pilot-schema.ts), not a copy of it.
 *
 * Records are closed (`additionalProperties: false`) so that the conformance
 * test notices a field this document does not describe; clients should still
 * accept new fields, since changes to the API are additive.
 */
import { DECISIONS, EVIDENCE_LEVELS, pilotSchema } from '../pilots/pilot-schema';
import { LATENCY_SAMPLE_RING } from '../http/metrics';
import { errorBodySchema, violationSchema, type JsonObject } from './error-responses';

/** The foreign-key actions the schema record reports (src/engine/schema/schema-record.ts' ReferenceAction). */
const REFERENCE_ACTIONS = ['RESTRICT', 'CASCADE', 'SET NULL', 'SET DEFAULT'];

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const TRUE = { const: true } as const;
const integer = (description?: string, minimum = 0): JsonObject =>
  description === undefined ? { type: 'integer', minimum } : { type: 'integer', minimum, description };
const string = (description: string): JsonObject => ({ type: 'string', description });
const strings = { type: 'array', items: { type: 'string' } } as const;

/** A closed object: every listed property, all required unless named in `optional`. */
export function record(
  description: string,
  properties: Record<string, unknown>,
  optional: readonly string[] = [],
): JsonObject {
  return {
    type: 'object',
    description,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
    properties,
  };
}

/** An object with one number per key, e.g. one count per decision. */
const countsBy = (keys: readonly string[], value: JsonObject): JsonObject => ({
  type: 'object',
  required: [...keys],
  additionalProperties: false,
  properties: Object.fromEntries(keys.map((key) => [key, value])),
});

function tableSchemas(): Record<string, JsonObject> {
  return {
    ColumnReference: record('The foreign key of a column.', {
      table: string('Parent table'),
      column: string('Parent column'),
      onDelete: {
        enum: REFERENCE_ACTIONS,
        description:
          'What deleting the parent row does, as declared; `RESTRICT` for NO ACTION and when the SQL omits it.',
      },
      onUpdate: {
        enum: REFERENCE_ACTIONS,
        description:
          "What changing the parent's key does, as declared; `RESTRICT` for NO ACTION and when the SQL omits it.",
      },
    }),
    Column: record(
      'One column of a table.',
      {
        name: string('Column name'),
        type: {
          type: ['string', 'null'],
          enum: ['INT', 'TEXT', 'FLOAT', 'BOOL', 'BLOB', 'NUMERIC', null],
          description:
            "`INT`, `TEXT`, `FLOAT`, `BOOL` or `BLOB` (aliases are reported under these names). A table that is not STRICT (made outside sqlscribe) reports its column's affinity by SQLite's rules (INT, TEXT, BLOB, FLOAT, or `NUMERIC`), `BOOL` where it declares BOOL or BOOLEAN. A view's column has the type of the table column it comes straight from, and null when it is computed.",
          examples: ['INT', 'TEXT', 'FLOAT', 'BOOL', 'BLOB', 'NUMERIC'],
        },
        declaredType: {
          type: 'string',
          description:
            'The type as the CREATE TABLE spelled it: normalized in a table sqlscribe made (`NVARCHAR(160)`, `DATETIME`, `INTEGER`), as SQLite keeps it in any other (`varchar ( 20 )`, `BLOB SUB_TYPE TEXT`, `""` for a column declared without a type); absent when it was `type` itself.',
          examples: ['NVARCHAR(160)', 'DATETIME', 'BLOB SUB_TYPE TEXT', ''],
        },
        pk: { type: 'boolean', description: 'Part of the primary key' },
        notNull: { type: 'boolean' },
        unique: { type: 'boolean', description: 'A UNIQUE constraint covers this column alone' },
        hasDefault: { type: 'boolean' },
        default: {
          type: ['number', 'string', 'boolean', 'null'],
          description:
            '`hasDefault: false, default: null`: no DEFAULT; `hasDefault: true, default: null`: DEFAULT NULL; otherwise the literal in its native type, or the SQL text of a non-literal default.',
        },
        defaultSql: {
          type: ['string', 'null'],
          description: 'The DEFAULT as declared, so that a client can rebuild the CREATE TABLE.',
        },
        references: {
          oneOf: [{ type: 'null' }, ref('ColumnReference')],
          description: 'Always present: null or the foreign key.',
        },
      },
      ['declaredType'],
    ),
    Index: record('An index made with CREATE INDEX.', {
      name: string('Index name'),
      column: string('The indexed columns (or expressions) joined by ","'),
      rootPage: integer('Root page number'),
      unique: { type: 'boolean' },
      columns: { ...strings, description: 'The indexed columns (or expressions), in order' },
    }),
    Trigger: record('A trigger on a table or view.', {
      name: string('Trigger name'),
      sql: string('The CREATE TRIGGER as SQLite keeps it'),
    }),
    TableSchema: record(
      'The table schema record: enough to rebuild the CREATE TABLE. A view has the same shape: no key (""), root page 0, no indexes, and its CREATE VIEW in `sql`.',
      {
        name: string('Table or view name'),
        kind: { enum: ['table', 'view'], description: 'A table or a view' },
        primaryKey: string('The primary-key columns joined by ","; "" without a key (always for a view)'),
        rootPage: integer('Root page number of the table; 0 for a view'),
        strict: {
          type: 'boolean',
          description:
            'A STRICT table (every table sqlscribe creates), whose types are enforced; false for a table made elsewhere, whose columns report their affinity, and for a view',
        },
        withoutRowid: { type: 'boolean' },
        columns: { type: 'array', items: ref('Column') },
        indexes: { type: 'array', items: ref('Index') },
        triggers: { type: 'array', items: ref('Trigger'), description: 'The triggers on this table or view, by name' },
        sql: string("A view's CREATE VIEW as SQLite keeps it (views only)"),
      },
      ['sql'],
    ),
    Value: {
      type: ['integer', 'number', 'string', 'boolean', 'null'],
      description:
        'A value read from a database: INT → integer (exact for all 64-bit values: beyond 2^53 the number literal has all its digits), FLOAT → number (±Infinity → the number 9e999 or -9e999, never null), TEXT → string, BOOL → true/false, NULL → null (SQLite has no NaN: it is NULL), BLOB → base64 string.',
    },
    Row: { type: 'array', items: ref('Value'), description: 'One row: values in column order.' },
  };
}

function serviceSchemas(): Record<string, JsonObject> {
  return {
    Health: record(
      'The health record.',
      {
        ok: TRUE,
        name: { const: 'sqlscribe' },
        version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+', description: 'The package version (semver)' },
        single: { type: 'boolean', description: 'true in single-DB mode' },
        dir: string("The data directory (the single database's directory in single-DB mode)"),
        timeUnix: integer('Current time, Unix seconds'),
        ready: {
          type: 'boolean',
          description:
            'false while the databases are brought in line with the journal at start-up; every other endpoint answers 503 meanwhile',
        },
        replication: { $ref: '#/components/schemas/ReplicationStatus' },
      },
      ['replication'],
    ),
    Metrics: record(
      'Operational metrics since start-up.',
      {
        ok: TRUE,
        started_unix: integer('Start time, Unix seconds'),
        uptime_s: integer('Seconds since start'),
        requests_total: integer('All requests observed'),
        requests_by_status: {
          type: 'object',
          description: 'Count of responses by HTTP status',
          propertyNames: { pattern: '^[1-5][0-9]{2}$' },
          additionalProperties: integer(),
        },
        errors_total: integer('Responses with status >= 500, 503 included'),
        faults_total: integer(
          'Server faults: responses with status >= 500 other than 503 (a 503 is overload or not ready, not a fault)',
        ),
        latency_ms: record('Latency over a ring of the last requests.', {
          p50: integer('50th percentile, milliseconds'),
          p95: integer('95th percentile, milliseconds'),
          samples: { const: LATENCY_SAMPLE_RING, description: 'Size of the ring (LATENCY_SAMPLE_RING)' },
          count: integer('Requests observed since start'),
        }),
        replication: { $ref: '#/components/schemas/ReplicationStatus' },
      },
      ['replication'],
    ),
    DatabaseList: {
      ...record(
        'The databases served.',
        {
          ok: TRUE,
          mode: { enum: ['single-db', 'multi-db'] },
          dbs: { ...strings, description: 'Database file names (`<name>.db`)' },
          single: string('Single-DB mode only: the file served'),
        },
        ['single'],
      ),
      if: { properties: { mode: { const: 'single-db' } } },
      then: { required: ['single'] },
      else: { not: { required: ['single'] } },
    },
    CreateDatabase: {
      type: 'object',
      description: 'The database to create.',
      required: ['db'],
      properties: { db: { type: 'string', examples: ['School'], description: 'Trimmed, lower-cased and given `.db`' } },
    },
    CopyDatabases: {
      type: 'object',
      description:
        'Copies of the database `from` (a template): one (`db`), a list (`dbs`), or `count` numbered copies `prefix-01 … prefix-NN`. All or nothing.',
      required: ['from'],
      properties: {
        from: {
          type: 'string',
          examples: ['class'],
          description: 'The database copied, as it stands when the copies are made (committed state only)',
        },
        db: { type: 'string', examples: ['ana'] },
        dbs: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100, examples: [['ana', 'ben']] },
        prefix: { type: 'string', examples: ['student'] },
        count: { type: 'integer', minimum: 1, maximum: 100, examples: [30] },
      },
      oneOf: [{ required: ['db'] }, { required: ['dbs'] }, { required: ['prefix', 'count'] }],
    },
    DatabasesCopied: record(
      'Every copy was made.',
      {
        ok: TRUE,
        db: { type: 'string', description: 'Present when the request named one copy with `db`' },
        dbs: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9_-]{1,64}\\.db$' } },
        from: string('The template copied'),
      },
      ['db'],
    ),
    DatabaseReset: record("The database holds its template's current state again.", {
      ok: TRUE,
      db: string('Database file name'),
      template: string('The template it was reset to'),
    }),
    DatabaseCreated: record('A database was created.', {
      ok: TRUE,
      db: { type: 'string', pattern: '^[a-z0-9_-]{1,64}\\.db$' },
    }),
    TableList: record('Every table and view of a database, with its schema.', {
      ok: TRUE,
      db: string('Database file name'),
      tables: { type: 'array', items: ref('TableSchema') },
    }),
    TableSchemaResponse: record('The schema of one table or view.', {
      ok: TRUE,
      db: string('Database file name'),
      table: ref('TableSchema'),
    }),
    RowPage: {
      ...rowPage(),
      // A page starts at an offset or after a cursor: it says which, and never both.
      oneOf: [{ required: ['offset'] }, { required: ['after'] }],
    },
  };
}

function rowPage(): JsonObject {
  return record(
    'A page of rows, in primary-key order (rowid order without one; a primary key that may hold NULL is followed by the rowid); page and total are read in one transaction.',
    {
      ok: TRUE,
      db: string('Database file name'),
      table: string('Table name as stored'),
      total: integer('Rows in the table'),
      limit: {
        type: 'integer',
        minimum: 0,
        maximum: 1000,
        description: 'Limit applied (a larger one asked is clamped to 1000)',
      },
      offset: integer('Offset applied; absent from a page asked for with `after`'),
      after: string('The cursor this page came after, as sent; present only on a page asked for with `after`'),
      columns: { ...strings, description: 'Column names in order' },
      rows: { type: 'array', items: ref('Row') },
      next: string(
        'Opaque cursor for the next page: send it back as `after`. Absent when no row follows, when `limit` is 0, or when the table has no key a cursor can follow',
      ),
    },
    ['offset', 'after', 'next'],
  );
}

function execSchemas(): Record<string, JsonObject> {
  const db = {
    type: 'string',
    description: 'The database (required in multi-DB mode, except for database-level statements and inside a session).',
  };
  const sql = { type: 'string', minLength: 1 };
  const scalar = { type: ['string', 'number', 'boolean', 'null'] };
  return {
    SqlParams: {
      description:
        'Bound parameters: an array binds `?` in order; an object binds `:name`, `@name` and `$name` (keys with or without the sigil). JSON scalars only; `true`/`false` bind as 1/0.',
      oneOf: [
        { type: 'array', items: scalar },
        { type: 'object', additionalProperties: scalar },
      ],
    },
    ExecSql: {
      type: 'object',
      title: 'sql',
      description: 'One or more statements separated by semicolons.',
      required: ['sql'],
      properties: { db, sql: { ...sql, examples: ['INSERT INTO t VALUES (1); SELECT * FROM t'] } },
      not: { anyOf: [{ required: ['params'] }, { required: ['statements'] }] },
    },
    ExecSqlParams: {
      type: 'object',
      title: 'sql + params',
      description: 'Exactly one statement, with bound parameters.',
      required: ['sql', 'params'],
      properties: { db, sql: { ...sql, examples: ['SELECT * FROM t WHERE id = ?'] }, params: ref('SqlParams') },
      not: { required: ['statements'] },
    },
    ExecStatements: {
      type: 'object',
      title: 'statements',
      description: 'A batch: one statement per item, each with its own parameters.',
      required: ['statements'],
      properties: {
        db,
        statements: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', required: ['sql'], properties: { sql, params: ref('SqlParams') } },
        },
      },
      not: { required: ['sql'] },
    },
    ExecRequest: { oneOf: [ref('ExecSql'), ref('ExecSqlParams'), ref('ExecStatements')] },
    StatementResult: record(
      'The result of one statement.',
      {
        columns: { ...strings, description: 'Empty for statements that return no rows' },
        types: {
          type: 'array',
          items: { enum: ['INT', 'TEXT', 'FLOAT', 'BOOL', 'BLOB', null] },
          description:
            'Declared type of each result column (null for an expression); present when a column has one, so that FLOAT 7.0 (JSON: 7) can be shown as 7.0',
        },
        rows: { type: 'array', items: ref('Row'), description: 'Empty for statements that return no rows' },
        message: {
          type: 'string',
          pattern: '^(OK|INSERT [0-9]+|UPDATE [0-9]+|DELETE [0-9]+|[0-9]+ problems)$',
          description:
            'Non-SELECT statements: `INSERT n`, `UPDATE n`, `DELETE n` (n affected rows) or `OK`; INTEGRITY CHECK: `OK` or `n problems`',
        },
        changes: integer('Non-SELECT statements: rows affected'),
        truncated: { const: true, description: 'The result was cut at -max-result-rows' },
      },
      ['types', 'message', 'changes', 'truncated'],
    ),
    ExecResult: record(
      'Every statement ran and the batch committed.',
      {
        ok: TRUE,
        db: string('The database; absent for database-level statements'),
        results: { type: 'array', items: ref('StatementResult') },
      },
      ['db'],
    ),
    ExecSessionResult: record("The statements ran in the session's transaction, not committed.", {
      ok: TRUE,
      db: string("The session's database"),
      results: { type: 'array', items: ref('StatementResult') },
      session: ref('SessionId'),
      expires_unix: integer('When the session expires if left idle, Unix seconds'),
    }),
    SessionId: { type: 'string', pattern: '^[0-9a-f]{16}$', description: '16 lowercase hexadecimal characters' },
    SessionBegin: {
      type: 'object',
      properties: { db },
      description: 'The database the session holds; `{}` or no body in single-DB mode.',
    },
    SessionInfo: record('A session is open.', {
      ok: TRUE,
      session: ref('SessionId'),
      db: string('The database it holds'),
      expires_unix: integer('When it expires if left idle, Unix seconds'),
    }),
    SessionEnded: record('The session was committed or rolled back, and closed.', {
      ok: TRUE,
      message: { enum: ['COMMIT', 'ROLLBACK'] },
      db: string("The session's database"),
    }),
  };
}

function pilotSchemas(): Record<string, JsonObject> {
  const evidence = record("Evidence by level: totals and each level's share (0 to 1) of all.", {
    totals: countsBy(EVIDENCE_LEVELS, integer()),
    shares: countsBy(EVIDENCE_LEVELS, { type: 'number', minimum: 0, maximum: 1 }),
  });
  const figures = {
    count: integer('Pilot records'),
    by_decision: countsBy(DECISIONS, integer()),
    evidence: {
      ...evidence,
      required: ['totals', 'shares', 'by_level'],
      properties: {
        ...(evidence.properties as JsonObject),
        by_level: {
          type: 'object',
          description: 'By school level (scope.level)',
          additionalProperties: ref('Evidence'),
        },
      },
    },
    minutes: record('Planned against actual minutes.', {
      planned: integer(),
      actual: integer(),
      overrun: { type: 'integer', description: 'actual − planned' },
      overrun_share: { type: 'number', description: '(actual − planned) / planned' },
    }),
  };
  return {
    PilotRecord: pilotSchema,
    PilotSchemaDocument: {
      type: 'object',
      description:
        'The JSON Schema (draft 2020-12) of the pilot record, exactly as POST /pilots validates with it (the `PilotRecord` schema of this document).',
      required: ['$schema', '$id', 'type', 'required', 'properties'],
      properties: {
        $schema: { const: pilotSchema.$schema },
        $id: { const: pilotSchema.$id },
        type: { const: 'object' },
      },
    },
    StoredPilot: record('A stored pilot record.', {
      ok: TRUE,
      id: integer('Its id', 1),
      created: { type: 'string', format: 'date-time', description: 'When it was stored (UTC)' },
      pilot: ref('PilotRecord'),
    }),
    PilotEntry: record('A stored pilot record in a list.', {
      id: integer('Its id', 1),
      created: { type: 'string', format: 'date-time' },
      pilot: ref('PilotRecord'),
    }),
    PilotList: record('A page of pilot records, by id.', {
      ok: TRUE,
      total: integer('Records that match the filters'),
      limit: { type: 'integer', minimum: 0, maximum: 1000 },
      offset: integer(),
      pilots: { type: 'array', items: ref('PilotEntry') },
    }),
    Evidence: evidence,
    PilotScope: record('A scope (level, subject, objective) and its current decision.', {
      level: { type: 'string' },
      subject: { type: 'string' },
      objective: { type: 'string' },
      current_decision: { enum: [...DECISIONS] },
      last_pilot: integer('Id of its last pilot', 1),
      last_commit: { type: 'string' },
      last_date: { type: 'string', format: 'date' },
      pilots: integer('Pilot records of the scope', 1),
    }),
    PilotSummary: record(
      'What the pilot records say.',
      {
        ok: TRUE,
        ...figures,
        scopes: { type: 'array', items: ref('PilotScope') },
        groups: {
          type: 'array',
          description: 'With ?group_by= only: the same figures per commit or subject',
          items: record('One group.', { key: string('The commit or subject'), ...figures }),
        },
      },
      ['groups'],
    ),
  };
}

export function componentSchemas(): Record<string, JsonObject> {
  return {
    ErrorBody: errorBodySchema(),
    Violation: violationSchema(),
    ...serviceSchemas(),
    ...tableSchemas(),
    ...execSchemas(),
    ...pilotSchemas(),
    ImportResult: record(
      'The whole import ran and committed, as one transaction.',
      {
        ok: TRUE,
        db: string('The database'),
        format: { enum: ['sql', 'csv', 'sqlite'], description: 'What was imported (from the Content-Type)' },
        statements: integer(
          "Statements run (a script's own leading BEGIN and closing COMMIT are skipped, not counted)",
        ),
        changes: integer('Rows inserted, updated or deleted, all statements together'),
        table: string('csv: the table loaded'),
        created: { type: 'boolean', description: 'csv: the import created the table (else it appended to it)' },
        foreignKeys: {
          enum: ['on', 'off'],
          description:
            'How the import treated foreign keys: `off` for an uploaded .sqlite file and for a script with `PRAGMA foreign_keys=OFF` (the rows came in as they are), else `on` (enforced, as every write)',
        },
        foreignKeyViolations: {
          type: 'array',
          description:
            'With `foreignKeys: off`: the rows whose foreign keys point nowhere after the import, counted by table as `PRAGMA foreign_key_check` lists them (empty: none)',
          items: record('One table with rows whose keys point nowhere.', {
            table: string('The table holding the rows'),
            rows: integer('How many of its rows `PRAGMA foreign_key_check` lists'),
          }),
        },
        settings: {
          type: 'array',
          items: { type: 'string' },
          description:
            "The script's PRAGMA statements taken as settings (foreign_keys, or a connection setting that is a no-op here) rather than run",
        },
        rewritten: {
          type: 'array',
          description:
            "Triggers and views whose double-quoted string literals were single-quoted, so that they run as SQLite's CLI runs them",
          items: record('A trigger or view rewritten.', {
            type: { enum: ['trigger', 'view'] },
            name: string('Its name'),
            literals: integer('How many literals were single-quoted'),
          }),
        },
      },
      ['table', 'created', 'foreignKeyViolations', 'settings', 'rewritten'],
    ),
  };
}
