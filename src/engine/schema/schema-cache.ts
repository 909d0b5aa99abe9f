/**
 * Facts drawn from a database's schema, kept until its schema version changes
 * (no schema reads on every request). PRAGMA schema_version changes
 * with every schema change, by any connection, and inside a transaction it
 * includes the transaction's own (https://sqlite.org/pragma.html#pragma_schema_version).
 *
 * Several processes each keep a connection on the same file, so a fact kept
 * here may have been read before another process changed the schema. The
 * version is therefore read inside the transaction that will use the facts:
 * read outside one, it could change before the next statement runs.
 *
 * SQLite keeps a parsed schema of its own per connection, and reading
 * PRAGMA schema_version does not refresh it: it is re-read only when a
 * statement that depends on the schema starts and finds the version on disk
 * changed. Until then a statement is prepared against the old one (CREATE
 * INDEX finds an index dropped elsewhere "already exists", SELECT * reports
 * the old columns). So when the version moved, a statement that depends on
 * the schema is run first, which makes SQLite re-read it.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../../errors';
import { boolColumns, readTableSchema, type TableSchema } from './schema';
import { canonicalType, resultColumnType, type ResultType } from '../types';

/** The columns of a statement's result: names, which hold BOOL values, and each one's declared type. */
export interface ResultShape {
  names: string[];
  bools: boolean[];
  /**
   * The type of the table column each result column reads (resultColumnType:
   * in a table that is not STRICT, its affinity), null for an expression
   * (what SQLite's decltype gives); undefined when no column has one.
   */
  types: (ResultType | null)[] | undefined;
}

export class SchemaCache {
  private readonly versionQuery: Database.Statement;
  /** Depends on the schema, so that running it makes SQLite re-read a schema changed on disk. */
  private readonly refreshQuery: Database.Statement;
  private readonly deferredQuery: Database.Statement;
  private readonly generatedQuery: Database.Statement;
  private readonly strictQuery: Database.Statement;
  private currentVersion = -1n;
  private tables = new Map<string, TableSchema | undefined>();
  private generated = new Map<string, boolean>();
  private bools = new Map<string, Set<string>>();
  private strictTables = new Map<string, boolean>();
  private deferred: boolean | undefined;
  private shapes = new WeakMap<Database.Statement, ResultShape>();
  /** Set while a read-only transaction that already checked the version runs: it cannot move. */
  private pinned = false;

  /** The schema version the facts kept here were read under (the last sync). */
  get version(): bigint {
    return this.currentVersion;
  }

  constructor(private readonly db: Database.Database) {
    this.versionQuery = db.prepare('PRAGMA schema_version').pluck();
    this.refreshQuery = db.prepare('SELECT 1 FROM sqlite_schema LIMIT 0').pluck();
    this.deferredQuery = db
      .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%DEFERRED%' LIMIT 1")
      .pluck();
    this.generatedQuery = db.prepare("SELECT 1 FROM pragma_table_xinfo(?, 'main') WHERE hidden IN (2, 3)").pluck();
    this.strictQuery = db
      .prepare("SELECT strict FROM pragma_table_list(?) WHERE schema = 'main'")
      .pluck()
      .safeIntegers(false);
  }

  /**
   * Reads the schema version, inside the caller's transaction; true when it
   * changed, and then everything kept was dropped and SQLite's own schema is
   * the one this transaction sees.
   */
  sync(): boolean {
    if (this.pinned) return false;
    if (!this.db.inTransaction)
      throw new EngineError('INTERNAL', {}, { cause: new Error('schema facts checked outside a transaction') });
    const version = this.versionQuery.get() as bigint;
    if (version === this.currentVersion) return false;
    this.refreshQuery.get();
    this.currentVersion = version;
    this.tables = new Map();
    this.generated = new Map();
    this.bools = new Map();
    this.strictTables = new Map();
    this.deferred = undefined;
    this.shapes = new WeakMap();
    return true;
  }

  /**
   * Runs `read` without checking the version again. Only for a transaction
   * that checked it once and then only reads: its snapshot fixed the schema,
   * so every further check (one per fact asked for) would read the same number.
   */
  pinnedFor<T>(read: () => T): T {
    if (!this.db.inTransaction)
      throw new EngineError('INTERNAL', {}, { cause: new Error('schema pinned outside a transaction') });
    // Pins nest (a pinned batch's statements pin the rest of the batch again): the outer one stays.
    const was = this.pinned;
    this.pinned = true;
    try {
      return read();
    } finally {
      this.pinned = was;
    }
  }

  /** The schema record of a table (readTableSchema), found without regard to case. */
  table(name: string): TableSchema | undefined {
    this.sync();
    const key = name.toLowerCase();
    if (!this.tables.has(key)) this.tables.set(key, readTableSchema(this.db, name));
    return this.tables.get(key);
  }

  /** Whether a table has generated columns (hidden 2 or 3 in table_xinfo). */
  hasGeneratedColumns(table: string): boolean {
    this.sync();
    const key = table.toLowerCase();
    let generated = this.generated.get(key);
    if (generated === undefined) {
      generated = this.generatedQuery.get(table) !== undefined;
      this.generated.set(key, generated);
    }
    return generated;
  }

  /** Whether any table may declare a deferred foreign key; errs on the side of yes. */
  hasDeferredForeignKeys(): boolean {
    this.sync();
    this.deferred ??= this.deferredQuery.get() !== undefined;
    return this.deferred;
  }

  /** Whether table.column is a BOOL column. */
  isBool(table: string, column: string): boolean {
    this.sync();
    return this.boolsOf(table).has(column.toLowerCase());
  }

  private boolsOf(table: string): Set<string> {
    const key = table.toLowerCase();
    let columns = this.bools.get(key);
    if (!columns) {
      columns = boolColumns(this.db, table);
      this.bools.set(key, columns);
    }
    return columns;
  }

  /**
   * The result columns of a statement prepared at the current schema version
   * (Connection.prepare makes sure of that: a statement prepared before a
   * schema change still reports its old columns until it runs).
   */
  shape(statement: Database.Statement): ResultShape {
    let shape = this.shapes.get(statement);
    if (shape === undefined) {
      const columns = statement.columns();
      const bools = columns.map((column) => this.isBoolColumn(column));
      // Kept with the statement, so the hot path pays for the types once per prepared statement.
      const types = columns.map((column, i) =>
        bools[i] === true ? 'BOOL' : resultColumnType(column.type, this.isStrict(column.table)),
      );
      shape = {
        names: columns.map((column) => column.name),
        bools,
        types: types.some((type) => type !== null) ? types : undefined,
      };
      this.shapes.set(statement, shape);
    }
    return shape;
  }

  /** Whether the table a result column comes from is STRICT (true for none: an expression's type is null anyway). */
  private isStrict(table: string | null): boolean {
    if (table === null) return true;
    const key = table.toLowerCase();
    let strict = this.strictTables.get(key);
    if (strict === undefined) {
      strict = this.strictQuery.get(table) !== 0;
      this.strictTables.set(key, strict);
    }
    return strict;
  }

  private isBoolColumn(column: Database.ColumnDefinition): boolean {
    if (column.table === null || column.column === null) return false;
    if (column.type !== null && canonicalType(column.type) === 'BOOL') return true;
    return this.boolsOf(column.table).has(column.column.toLowerCase());
  }
}
