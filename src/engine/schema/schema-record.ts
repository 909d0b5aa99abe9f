/**
 * The table schema record that GET /tables and GET /schema answer with, for
 * tables and views alike (schema.ts reads it, view-schema.ts builds a view's).
 */

/** What a foreign key does to the child rows when its parent row is deleted or its key changed; NO ACTION reads RESTRICT. */
export type ReferenceAction = 'RESTRICT' | 'CASCADE' | 'SET NULL' | 'SET DEFAULT';

export interface ColumnReference {
  table: string;
  column: string;
  onDelete: ReferenceAction;
  onUpdate: ReferenceAction;
}

export interface ColumnSchema {
  name: string;
  /**
   * INT, TEXT, FLOAT, BOOL or BLOB; in a table that is not STRICT (made outside
   * sqlscribe), its affinity by SQLite's rules, which may also be NUMERIC.
   * A view's column has the type of the table column it comes straight from,
   * and null when it is computed (view-schema.ts).
   */
  type: string | null;
  /**
   * The type as the CREATE TABLE spelled it: normalized (`NVARCHAR(160)`) in a
   * table sqlscribe made, as written (`varchar ( 20 )`, `BLOB SUB_TYPE TEXT`,
   * `""` for none) in any other; absent when it was `type` itself, in any case.
   */
  declaredType?: string;
  /** Part of the primary key (every column of a composite key). */
  pk: boolean;
  notNull: boolean;
  /** The column alone is covered by a UNIQUE constraint. */
  unique: boolean;
  hasDefault: boolean;
  default: number | string | boolean | null;
  /** The DEFAULT's SQL text as SQLite keeps it, so that a rebuild is exact. */
  defaultSql: string | null;
  references: ColumnReference | null;
}

export interface IndexSchema {
  name: string;
  /** The indexed columns (or expressions) joined by ','. */
  column: string;
  rootPage: number;
  unique: boolean;
  columns: string[];
}

/** A trigger, listed with the table (or view) it is on. */
export interface TriggerSchema {
  name: string;
  /** The CREATE TRIGGER as SQLite keeps it. */
  sql: string;
}

export interface TableSchema {
  name: string;
  /** A table, or a view (which has no key, root page, indexes or declared types). */
  kind: 'table' | 'view';
  /** The primary-key columns in key order joined by ',', or '' when there is none. */
  primaryKey: string;
  rootPage: number;
  strict: boolean;
  withoutRowid: boolean;
  columns: ColumnSchema[];
  indexes: IndexSchema[];
  /** The triggers on it, by name. */
  triggers: TriggerSchema[];
  /** A view's CREATE VIEW as SQLite keeps it; absent for a table. */
  sql?: string;
}
