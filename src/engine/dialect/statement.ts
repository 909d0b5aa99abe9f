/**
 * What the classifier tells the rest of the engine about one statement:
 * which of the accepted statements it is, whether it acts on
 * the server's databases or inside one, and whether it only reads.
 */

export type StatementKind =
  | 'select'
  | 'insert'
  | 'update'
  | 'delete'
  | 'create-table'
  | 'drop-table'
  | 'alter-table'
  | 'create-index'
  | 'drop-index'
  | 'create-view'
  | 'drop-view'
  | 'create-trigger'
  | 'drop-trigger'
  | 'savepoint'
  | 'release'
  | 'rollback-to'
  | 'integrity-check'
  | 'pragma'
  | 'explain'
  | 'create-database'
  | 'drop-database'
  | 'show-databases';

export type StatementLevel = 'database' | 'table';

export interface ClassifiedStatement {
  /** The statement text as given. */
  readonly sql: string;
  readonly kind: StatementKind;
  /** create-/drop-/show-database are 'database'; everything else runs inside one database. */
  readonly level: StatementLevel;
  /**
   * True for select, integrity-check, pragma and explain only: a SELECT is never a write, WITH … INSERT
   * is an insert, and EXPLAIN of a write only compiles it.
   */
  readonly readonly: boolean;
  /** create-/drop-database: the name as written, unquoted. Not yet validated or normalized. */
  readonly database?: string;
  /** drop-database, drop-view, drop-trigger: IF EXISTS was written. */
  readonly ifExists?: boolean;
  /** create-database, create-view, create-trigger: IF NOT EXISTS was written. */
  readonly ifNotExists?: boolean;
  /** savepoint, release, rollback-to: the savepoint's name, unquoted. */
  readonly savepoint?: string;
}

/** Names the service uses for itself (tables, savepoints of sessions); clients may not use them. */
export const RESERVED_SAVEPOINT_PREFIX = '_sqlscribe';

const DATABASE_KINDS: ReadonlySet<StatementKind> = new Set(['create-database', 'drop-database', 'show-databases']);
/** A PRAGMA is accepted only when it reads (pragmas.ts); EXPLAIN never runs the statement it explains. */
const READONLY_KINDS: ReadonlySet<StatementKind> = new Set(['select', 'integrity-check', 'pragma', 'explain']);

/** The level of a kind: database-level statements may not be mixed with the others in one request. */
export function levelOf(kind: StatementKind): StatementLevel {
  return DATABASE_KINDS.has(kind) ? 'database' : 'table';
}

/**
 * Kinds whose text SQLite keeps in the schema and runs later, on its own:
 * a view's SELECT runs whenever the view is read, a trigger's body whenever
 * it fires. What they name is checked once, when they are made, so the rules
 * for names are stricter for them (internal-names.ts).
 */
export const STORED_KINDS: ReadonlySet<StatementKind> = new Set(['create-view', 'create-trigger']);

/** Whether a kind only reads (select, integrity-check, pragma, explain). */
export function isReadonlyKind(kind: StatementKind): boolean {
  return READONLY_KINDS.has(kind);
}
