/**
 * The engine error catalog: every error a client can receive, in one place.
 *
 * A code is `[SQ` + four digits + `]`; its first digit is the class, so that
 * operators tailing the journal can alert on a class. The README
 * publishes this table, and `test/errors.test.ts` keeps the two equal.
 */

export interface CatalogEntry {
  readonly code: number;
  readonly status: number;
  /** Template: `{name}` is replaced by the parameter of that name. */
  readonly message: string;
}

export const catalog = {
  // 1xxx — syntax, unsupported or forbidden statement, bad request shape
  SYNTAX_ERROR: { code: 1001, status: 400, message: 'syntax error: {detail}' },
  UNSUPPORTED_STATEMENT: { code: 1002, status: 400, message: 'statement not supported: {detail}' },
  FORBIDDEN_STATEMENT: {
    code: 1003,
    status: 400,
    message: '{detail} is not allowed: it would reach outside the database',
  },
  TRANSACTION_CONTROL: {
    code: 1004,
    status: 400,
    message:
      '{detail} is not accepted in /exec: open a session with POST /tx/begin, then POST /tx/commit or /tx/rollback',
  },
  EMPTY_SQL: { code: 1005, status: 400, message: 'no SQL statement to execute' },
  BAD_REQUEST: { code: 1006, status: 400, message: 'bad request: {detail}' },
  PARAMETER_MISMATCH: { code: 1007, status: 400, message: 'parameters do not match the statement: {detail}' },
  INVALID_QUERY_PARAMETER: { code: 1008, status: 400, message: 'invalid query parameter {name}: {detail}' },
  MALFORMED_JSON: { code: 1009, status: 400, message: 'request body is not valid JSON' },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 1010,
    status: 415,
    message: 'request body must be JSON (Content-Type: application/json)',
  },
  INVALID_DATABASE_NAME: {
    code: 1011,
    status: 400,
    message: 'invalid database name: use 1 to 64 characters of a-z, 0-9, _ and -',
  },
  UNAUTHORIZED: {
    code: 1012,
    status: 401,
    message: 'missing or wrong token: send X-Service-Token or Authorization: Bearer',
  },
  METHOD_NOT_ALLOWED: { code: 1013, status: 405, message: 'method {method} is not allowed on {path}' },
  SQL_ERROR: { code: 1014, status: 400, message: 'SQL error: {detail}' },
  INVALID_UTF8: { code: 1015, status: 400, message: 'request body is not valid UTF-8' },
  PILOT_INVALID: {
    code: 1016,
    status: 400,
    message: 'the pilot record is not valid: {count} problem(s), listed in "violations"',
  },
  PILOT_PERSONAL_DATA: {
    code: 1017,
    status: 400,
    message: 'notes_without_personal_data and incidents must not contain personal data: found {kinds}',
  },
  ROWS_CURSOR_INVALID: {
    code: 1018,
    status: 400,
    message: 'invalid cursor in after: {detail}; send back the next value of a /rows answer unchanged',
  },
  ROWS_CURSOR_MISMATCH: {
    code: 1019,
    status: 400,
    message: 'the cursor in after does not belong to table {table}: {detail}',
  },
  ROWS_AFTER_WITH_OFFSET: {
    code: 1020,
    status: 400,
    message: 'after and offset cannot be used together: page by cursor or by offset',
  },
  ROWS_NO_KEY: {
    code: 1021,
    status: 400,
    message: 'table {table} has no key that a cursor can follow ({detail}): page it with offset',
  },
  ROLE_FORBIDDEN: { code: 1030, status: 403, message: 'token {token} has the role {role}; {action} needs {needed}' },
  DATABASE_FORBIDDEN: { code: 1031, status: 403, message: 'token {token} may not use database {db}' },
  READ_TOKEN_WRITES: {
    code: 1032,
    status: 403,
    message: 'token {token} may only read, and statement {index} of the batch writes',
  },
  TOKENS_NOT_CONFIGURED: {
    code: 1033,
    status: 403,
    message: 'tokens are managed only on a server started with -token or -tokens-file',
  },
  TOKEN_REQUEST_INVALID: { code: 1034, status: 400, message: 'invalid token request: {detail}' },
  TOKEN_CLASS_TOO_LARGE: { code: 1035, status: 400, message: 'a class of tokens has 1 to {max} tokens; {count} asked' },
  IMPORT_CSV_INVALID: { code: 1050, status: 400, message: 'CSV line {line}: {detail}' },
  IMPORT_MEDIA_TYPE: {
    code: 1051,
    status: 415,
    message: 'an import body must be application/sql, text/csv or application/vnd.sqlite3, not {type}',
  },
  IMPORT_NOT_SQLITE: { code: 1052, status: 400, message: 'the uploaded file is not a SQLite database: {detail}' },
  IMPORT_SQLITE_CORRUPT: {
    code: 1053,
    status: 400,
    message: 'the uploaded SQLite file fails its integrity check: {detail}',
  },
  IMPORT_INTERNAL_NAME: {
    code: 1054,
    status: 400,
    message:
      "the uploaded file holds {name}: names beginning with _sqlscribe or sqlite_ are the service's and SQLite's own",
  },
  IMPORT_TRANSACTION_CONTROL: {
    code: 1055,
    status: 400,
    message:
      '{detail} inside an import: an import is one transaction already, so only a BEGIN as its first statement and a COMMIT as its last are accepted (and skipped)',
  },
  HEADER_CHARACTER: {
    code: 1060,
    status: 400,
    message: 'a request header holds a character HTTP does not allow: {detail}',
  },
  MALFORMED_HTTP: { code: 1061, status: 400, message: 'the request is not valid HTTP/1.1: {detail}' },
  HEADERS_TOO_LARGE: {
    code: 1092,
    status: 431,
    message: 'the request headers are too large: at most {max} bytes together',
  },
  CHUNK_EXTENSIONS_TOO_LARGE: {
    code: 1093,
    status: 413,
    message: 'the chunk extensions of the request body are too large: at most 16 KiB together',
  },
  HEADERS_TIMEOUT: {
    code: 1094,
    status: 408,
    message: 'the request headers did not arrive within {ms} ms (-header-timeout)',
  },
  BODY_TIMEOUT: {
    code: 1062,
    status: 408,
    message: 'the request body did not arrive within {ms} ms of its headers (-body-timeout)',
  },
  JOURNAL_FEED_FORBIDDEN: {
    code: 1022,
    status: 403,
    message:
      'GET /journal needs -token (send it as for every endpoint); a server without a token serves it only when started with -journal-feed',
  },
  CLASS_VIEW_FORBIDDEN: {
    code: 1090,
    status: 403,
    message:
      "GET /class needs -token and an admin token; a server without a token serves it only when started with -journal-feed, as it shows every student's failed statements",
  },
  HISTORY_FORBIDDEN: {
    code: 1095,
    status: 403,
    message:
      "a database's history needs -token (send it as for every endpoint); a server without a token serves it only when started with -journal-feed, as it shows every statement's SQL",
  },
  RESTORE_TARGET_INVALID: { code: 1075, status: 400, message: 'cannot restore {db}: {detail}' },
  HISTORY_PARAMETER: { code: 1070, status: 400, message: 'invalid history parameter {name}: {detail}' },
  EXERCISE_INVALID: { code: 1080, status: 400, message: 'the exercise is not valid: {detail}' },
  EXERCISE_CHECK_INVALID: { code: 1081, status: 400, message: 'invalid check request: {detail}' },
  EXERCISE_CHECK_FAILED: {
    code: 1091,
    status: 400,
    message:
      "the exercise's check could not run on your result: keep the tables and columns the task works on, as they were, and change only what it asks",
  },
  TOO_MANY_COPIES: {
    code: 1040,
    status: 400,
    message: 'too many databases in one copy request: {count} (at most {max})',
  },
  // Introspection (dialect/pragmas.ts): what SQLite answers of a database's own schema, and what stays refused.
  PRAGMA_NOT_ANSWERED: {
    code: 1100,
    status: 400,
    message: 'PRAGMA {name} is not answered: the read-only introspection pragmas are {answered}',
  },
  PRAGMA_SETTING: { code: 1101, status: 400, message: 'PRAGMA {name} cannot be set: {reason}' },
  INTROSPECTION_SCHEMA: {
    code: 1102,
    status: 400,
    message: '{detail} reads the schema {schema}: introspection reads only main, the database the request names',
  },
  INTROSPECTION_FORM: { code: 1103, status: 400, message: '{detail}' },
  EXPLAIN_NOT_SQLITE: {
    code: 1104,
    status: 400,
    message: 'EXPLAIN {detail}: only statements SQLite runs inside the database can be explained',
  },

  // 2xxx — catalog: no such database/table/column/index, already exists
  NO_SUCH_DATABASE: { code: 2001, status: 404, message: 'no such database: {db}' },
  TABLE_NOT_FOUND: { code: 2002, status: 404, message: 'no such table: {table}' },
  NO_SUCH_TABLE: { code: 2003, status: 400, message: 'no such table: {table}' },
  NO_SUCH_COLUMN: { code: 2004, status: 400, message: 'no such column: {column}' },
  NO_SUCH_INDEX: { code: 2005, status: 400, message: 'no such index: {index}' },
  NO_SUCH_FUNCTION: { code: 2006, status: 400, message: 'no such function: {function}' },
  DATABASE_EXISTS: { code: 2007, status: 409, message: 'database already exists: {db}' },
  TABLE_EXISTS: { code: 2008, status: 400, message: 'table already exists: {table}' },
  INDEX_EXISTS: { code: 2009, status: 400, message: 'index already exists: {index}' },
  ENDPOINT_NOT_FOUND: { code: 2010, status: 404, message: 'no such endpoint: {method} {path}' },
  NAME_ERROR: { code: 2011, status: 400, message: '{detail}' },
  PILOT_NOT_FOUND: { code: 2012, status: 404, message: 'no such pilot: {id}' },
  TOKEN_NOT_FOUND: { code: 2030, status: 404, message: 'no such token: {id}' },
  TOKEN_NAME_EXISTS: { code: 2031, status: 409, message: 'a token is already named {name}' },
  TOKEN_IN_FILE: {
    code: 2032,
    status: 409,
    message: 'token {id} comes from -tokens-file: remove it there and restart',
  },
  PILOT_SCOPE_RETIRED: {
    code: 2013,
    status: 409,
    message: 'pilot {id} retired this scope ({scope}): no further pilot is accepted for it',
  },
  IMPORT_CSV_COLUMNS: { code: 2050, status: 400, message: 'the CSV header does not match table {table}: {detail}' },
  PILOT_SAME_COMMIT: {
    code: 2014,
    status: 409,
    message: 'pilot {id} of this scope decided to correct commit {commit}: the next pilot must carry another commit',
  },
  NO_HISTORY: { code: 2070, status: 409, message: 'no history to serve: {detail}' },
  NO_TEMPLATE: {
    code: 2040,
    status: 409,
    message: 'database {db} was not made from a template: there is nothing to reset it to',
  },
  TEMPLATE_GONE: {
    code: 2041,
    status: 409,
    message: 'the template {template} of database {db} no longer exists: there is nothing to reset it to',
  },
  EXERCISE_NOT_FOUND: { code: 2080, status: 404, message: 'no such exercise: {id}' },
  EXERCISE_EXISTS: {
    code: 2081,
    status: 409,
    message: 'an exercise is already named {id}: change it with PUT /exercises/{id}',
  },
  EXERCISE_TEMPLATE_GONE: {
    code: 2082,
    status: 409,
    message:
      'the template {template} of exercise {id} does not exist: the teacher must make it again or change the exercise',
  },
  EXERCISE_SOLUTION_FAILED: {
    code: 2083,
    status: 409,
    message:
      'the solution of exercise {id} no longer runs on its template {template}: the teacher must fix the exercise',
  },
  RESTORE_TOO_OLD: { code: 2075, status: 409, message: 'cannot restore {db} to {target}: {detail}' },
  RESTORE_BEFORE_CREATION: {
    code: 2076,
    status: 409,
    message: 'database {db} did not exist at {target}: the oldest point it can be restored to is seq {oldest}',
  },
  NOTHING_TO_UNDO: {
    code: 2077,
    status: 409,
    message: 'there is no successful write by {who} on {db} in the journal to undo',
  },
  UNDO_OVER_OTHERS_WRITES: {
    code: 2084,
    status: 409,
    message:
      "cannot undo the last write by {who} on {db} (seq {own}): {other} wrote on it since (seq {after}), and an undo takes back its caller's own writes only; they may undo theirs first, or a restore to a seq does it (its dry run lists every write it would undo)",
  },
  RESTORE_NEEDS_JOURNAL: {
    code: 2078,
    status: 409,
    message: 'restoring a database needs the journal, which records every change: this server runs {detail}',
  },

  // 3xxx — constraints
  CONSTRAINT_NOT_NULL: { code: 3001, status: 400, message: 'NOT NULL constraint failed: {detail}' },
  CONSTRAINT_UNIQUE: { code: 3002, status: 400, message: 'UNIQUE constraint failed: {detail}' },
  CONSTRAINT_PRIMARY_KEY: { code: 3003, status: 400, message: 'PRIMARY KEY constraint failed: {detail}' },
  CONSTRAINT_FOREIGN_KEY: { code: 3004, status: 400, message: 'FOREIGN KEY constraint failed{detail}' },
  CONSTRAINT_CHECK: { code: 3005, status: 400, message: 'CHECK constraint failed: {detail}' },
  CONSTRAINT_OTHER: { code: 3006, status: 400, message: 'constraint failed: {detail}' },

  // 4xxx — types and values
  TYPE_MISMATCH: {
    code: 4001,
    status: 400,
    message: 'type mismatch: column {column} is {expected}, the value is {actual}',
  },
  UNKNOWN_TYPE: {
    code: 4002,
    status: 400,
    message:
      'unknown column type {type} for column {column}: use INT, TEXT, FLOAT, BOOL or BLOB, or one of their aliases',
  },
  INVALID_VALUE: { code: 4003, status: 400, message: 'invalid value: {detail}' },

  // 5xxx — transactions and sessions
  NO_SUCH_SAVEPOINT: { code: 5001, status: 400, message: 'no such savepoint: {savepoint}' },
  NO_SUCH_SESSION: {
    code: 5002,
    status: 404,
    message: 'no such session: {session} (it was committed, rolled back, or never existed)',
  },
  SESSION_EXPIRED: {
    code: 5003,
    status: 404,
    message: 'session {session} expired after {seconds} s idle and was rolled back',
  },
  SESSION_ACTIVE: {
    code: 5004,
    status: 409,
    message: 'a session is already active on {db}: only one is allowed; it expires in {seconds} s unless used',
  },
  DATABASE_LOCKED: {
    code: 5005,
    status: 409,
    message: 'database {db} is held by an open transaction session: retry after it commits or rolls back',
  },
  SESSION_OTHER_DATABASE: { code: 5006, status: 400, message: 'session {session} is bound to {db}' },
  SESSION_ABORTED: {
    code: 5007,
    status: 400,
    message: "the statement ended the session's transaction: the session was rolled back and closed",
  },
  SESSION_STATEMENT: { code: 5008, status: 400, message: 'database-level statements cannot run inside a session' },
  SESSION_REQUIRED: { code: 5009, status: 400, message: 'the session query parameter is required' },

  // 6xxx — limits
  TOO_MANY_STATEMENTS: {
    code: 6001,
    status: 400,
    message: 'too many statements in one request: {count} (at most {max})',
  },
  BODY_TOO_LARGE: { code: 6002, status: 413, message: 'request body too large: at most {max} bytes' },
  TOO_MANY_CONNECTIONS: { code: 6003, status: 503, message: 'too many simultaneous connections: at most {max}' },
  VALUE_TOO_LARGE: { code: 6004, status: 400, message: 'value or statement too large: {detail}' },
  SQL_TOO_COMPLEX: { code: 6005, status: 400, message: 'statement too complex: {detail}' },
  NOT_READY: { code: 6006, status: 503, message: 'the service is starting: retry shortly' },
  QUERY_TIMEOUT: {
    code: 6007,
    status: 400,
    message: 'statement stopped after {ms} ms (-query-timeout): its batch was rolled back',
  },
  SESSION_QUERY_TIMEOUT: {
    code: 6008,
    status: 400,
    message: 'statement stopped after {ms} ms (-query-timeout): the session was rolled back and closed',
  },
  WRITE_LOCK_TIMEOUT: {
    code: 6009,
    status: 503,
    message: 'database {db} is busy with other writes: waited {ms} ms (-lock-timeout)',
  },
  REQUEST_TIMEOUT: {
    code: 6010,
    status: 400,
    message: 'request stopped after {ms} ms (-request-timeout): its batch was rolled back',
  },
  ENGINES_BUSY: {
    code: 6011,
    status: 503,
    message: 'no engine was free for this request within {ms} ms (-request-timeout): retry shortly',
  },
  SESSION_REQUEST_TIMEOUT: {
    code: 6012,
    status: 400,
    message: 'request stopped after {ms} ms (-request-timeout): the session was rolled back and closed',
  },
  CLIENT_CLOSED: {
    code: 6013,
    status: 499,
    message: 'the client closed the connection before the answer: its request was stopped and rolled back',
  },
  IMPORT_TOO_LARGE: { code: 6050, status: 413, message: 'import too large: at most {max} bytes (-max-import-bytes)' },
  RESTORE_TIMEOUT: {
    code: 6055,
    status: 400,
    message:
      'cannot restore {db}: rebuilding its state took longer than {ms} ms (-restore-timeout); the rebuild was stopped and nothing changed',
  },
  RESTORE_OUT_OF_MEMORY: {
    code: 6056,
    status: 400,
    message:
      'cannot restore {db}: rebuilding its state needed more than {max} of memory (-restore-memory); the rebuild was stopped and nothing changed',
  },
  RESTORE_FAILED: {
    code: 6057,
    status: 500,
    message: 'cannot restore {db}: the rebuild process ended without an answer ({detail}); nothing changed',
  },
  RESTORES_BUSY: {
    code: 6058,
    status: 503,
    message:
      'cannot restore {db}: waited {ms} ms (-request-timeout) while other restores ran (at most {max} at once); retry shortly',
  },
  REPLICA_RESTORE_STOPPED: {
    code: 6059,
    status: 503,
    message:
      'this replica stopped applying the journal at seq {seq}: it could not rebuild the restore of {db} there ({detail}); it serves what it holds through seq {applied} and applies nothing more. Start it again: its crash recovery rebuilds the restore before it serves; raise its -restore-timeout or -restore-memory for the next one',
  },
  TOO_MANY_FOLLOWERS: {
    code: 6014,
    status: 503,
    message: 'too many clients follow the journal: at most {max}; retry shortly',
  },
  // 413, not 507: the request is what is too large for this database's bound, the server's disk is fine,
  // and the client (not an operator) must act: write less, delete rows, or ask for a token that allows more.
  DATABASE_TOO_LARGE: {
    code: 6060,
    status: 413,
    message:
      "{db} may not grow past {mb} MiB (-max-database-mb, or the token's maxDatabaseMb): the write was rolled back and nothing of it kept; delete rows or ask your teacher for more room",
  },
  // A statement past the bound inside a session: SQLite rolled the whole transaction back (as SESSION_QUERY_TIMEOUT's does).
  SESSION_DATABASE_TOO_LARGE: {
    code: 6062,
    status: 413,
    message:
      "{db} may not grow past {mb} MiB (-max-database-mb, or the token's maxDatabaseMb): SQLite rolled the session's transaction back, and the session was closed",
  },
  // 507 Insufficient Storage: the server's own disk is short, whatever the request; the operator must act, and it may pass.
  DISK_HEADROOM: {
    code: 6061,
    status: 507,
    message:
      "the server's disk is almost full ({free} MiB free, below -min-free-disk-mb {min}): writes of non-admin tokens are refused until there is room again; retry later",
  },

  // 7xxx — mode
  DATABASE_STATEMENT_IN_SINGLE_MODE: {
    code: 7001,
    status: 405,
    message: '{detail} is not available: the server serves a single database',
  },
  MIXED_BATCH: {
    code: 7002,
    status: 400,
    message: 'database-level statements cannot be mixed with table statements in one request',
  },
  DATABASE_REQUIRED: { code: 7003, status: 400, message: 'this server holds several databases: name one with "db"' },
  NO_JOURNAL: {
    code: 7004,
    status: 409,
    message: 'the server keeps no statement journal (-log-level none): GET /journal has nothing to serve',
  },
  READ_ONLY_REPLICA: {
    code: 7010,
    status: 409,
    message: 'this server is a read-only replica: {action} must go to the primary, {primary}',
  },
  REPLICA_BEHIND: {
    code: 7011,
    status: 409,
    message:
      'this replica has applied the journal through seq {applied}; seq {wanted} (X-Min-Seq) did not arrive within {ms} ms: retry, or read from the primary, {primary}',
  },
  NOT_PRIMARY: {
    code: 7012,
    status: 409,
    message:
      'this server is no longer the primary: {node} took over (lease epoch {epoch}); send writes to {primary}. Nothing of this request was applied',
  },
  PROMOTION_REFUSED: { code: 7013, status: 409, message: 'this server cannot take over as primary: {detail}' },

  // 9xxx — internal and storage
  INTERNAL: { code: 9001, status: 500, message: 'internal error' },
  STORAGE_IO: { code: 9002, status: 500, message: 'storage I/O error' },
  STORAGE_FULL: { code: 9003, status: 507, message: 'storage is full' },
  STORAGE_CORRUPT: { code: 9004, status: 500, message: 'database file is corrupt or not a database' },
  STORAGE_READONLY: { code: 9005, status: 500, message: 'database file is read-only' },
  STORAGE_BUSY: { code: 9006, status: 500, message: 'database file is locked by another process' },
  ENGINE_CRASHED: {
    code: 9007,
    status: 500,
    message: 'the engine process running this request stopped unexpectedly: nothing of the request was committed',
  },
  SESSION_ENGINE_CRASHED: {
    code: 9008,
    status: 500,
    message: 'the engine process holding the session stopped unexpectedly: the session was rolled back and closed',
  },
  JOURNAL_UNAVAILABLE: {
    code: 9009,
    status: 503,
    message: 'the statement journal cannot be written ({reason}): {outcome}; retry shortly',
  },
  DATABASE_BEHIND: {
    code: 9010,
    status: 503,
    message:
      'database {db} could not apply a journaled write ({reason}): writes to it are refused until it catches up; reads go on',
  },
  JOURNAL_UNREADABLE: { code: 9011, status: 500, message: 'the statement journal could not be read: {detail}' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorName = keyof typeof catalog;
export type ErrorParams = Readonly<Record<string, string | number>>;

/** The class of a code: its first digit, e.g. 3 for 3002. */
export function errorClass(code: number): number {
  return Math.floor(code / 1000);
}

/** `[SQ2003]` for 2003. */
export function formatCode(code: number): string {
  return `[SQ${String(code).padStart(4, '0')}]`;
}

function fill(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => String(params[key] ?? ''));
}

export interface EngineErrorOptions {
  /** 0-based index of the failing statement of an /exec batch. */
  statement?: number;
  /** SQLite's extended result code name, when SQLite raised the error. */
  sqliteCode?: string;
  /** Seconds after which a retry may succeed: sent as Retry-After. */
  retryAfter?: number;
  /** Further fields of the response body, e.g. the violations of a pilot record. */
  details?: Readonly<Record<string, unknown>>;
  cause?: unknown;
}

/** The plain-data form of an EngineError: what crosses process boundaries and goes into the journal. */
export interface EngineErrorData {
  name: ErrorName;
  params: ErrorParams;
  statement?: number;
  sqliteCode?: string;
  /** Further fields of the body (a constraint error's table and columns): they cross from the engine process too. */
  details?: Readonly<Record<string, unknown>>;
}

export class EngineError extends Error {
  readonly errorName: ErrorName;
  readonly params: ErrorParams;
  readonly code: number;
  readonly status: number;
  statement: number | undefined;
  readonly sqliteCode: string | undefined;
  readonly retryAfter: number | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(name: ErrorName, params: ErrorParams = {}, options: EngineErrorOptions = {}) {
    const entry: CatalogEntry = catalog[name];
    super(`${formatCode(entry.code)} ${fill(entry.message, params)}`, { cause: options.cause });
    this.errorName = name;
    this.params = params;
    this.code = entry.code;
    this.status = entry.status;
    this.statement = options.statement;
    this.sqliteCode = options.sqliteCode;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
  }

  /** The response body of this error. */
  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { ok: false, error: this.message, code: this.code };
    if (this.statement !== undefined) body.statement = this.statement;
    if (this.sqliteCode !== undefined) body.sqliteCode = this.sqliteCode;
    return this.details === undefined ? body : { ...body, ...this.details };
  }

  toData(): EngineErrorData {
    const data: EngineErrorData = { name: this.errorName, params: this.params };
    if (this.statement !== undefined) data.statement = this.statement;
    if (this.sqliteCode !== undefined) data.sqliteCode = this.sqliteCode;
    if (this.details !== undefined) data.details = this.details;
    return data;
  }

  static fromData(data: EngineErrorData): EngineError {
    const options: EngineErrorOptions = {};
    if (data.statement !== undefined) options.statement = data.statement;
    if (data.sqliteCode !== undefined) options.sqliteCode = data.sqliteCode;
    if (data.details !== undefined) options.details = data.details;
    return new EngineError(data.name, data.params, options);
  }
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
