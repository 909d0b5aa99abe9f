/**
 * The CREATE TABLE (and CREATE INDEX) statements that rebuild a table from its
 * schema record, written in sqlscribe's user dialect (INT, TEXT, FLOAT, BOOL):
 * once rewritten for storage and executed they give back an equal record.
 */
import type { ColumnSchema, IndexSchema, ReferenceAction, TableSchema } from './schema';
import { defaultClauseSql } from './schema-defaults';
import { canonicalType, quoteIdentifier } from '../types';

/**
 * The pk columns in key order: `primaryKey` gives the order, unless a column
 * name with a comma in it makes it ambiguous; then the columns' own order.
 */
function pkColumns(schema: TableSchema): string[] {
  const flagged = schema.columns.filter((c) => c.pk).map((c) => c.name);
  const parts = schema.primaryKey === '' ? [] : schema.primaryKey.split(',');
  const byName = new Set(flagged);
  const exact = parts.length === flagged.length && parts.every((p) => byName.has(p));
  return exact ? parts : flagged;
}

/** ` ON DELETE SET NULL` and the like; nothing for RESTRICT, which is how the record reads an action left out. */
function actionSql(on: 'DELETE' | 'UPDATE', action: ReferenceAction): string {
  return action === 'RESTRICT' ? '' : ` ON ${on} ${action}`;
}

function referencesSql(column: ColumnSchema): string {
  const ref = column.references;
  if (ref === null) return '';
  // An empty column is a key whose parent was not found: let SQLite pick its pk again.
  const target = ref.column === '' ? '' : `(${quoteIdentifier(ref.column)})`;
  const actions = actionSql('DELETE', ref.onDelete) + actionSql('UPDATE', ref.onUpdate);
  return ` REFERENCES ${quoteIdentifier(ref.table)}${target}${actions}`;
}

/** The declared spelling when the user dialect takes it (`NVARCHAR(160)` is kept that way), else the type. */
function typeSql(column: ColumnSchema): string | null {
  const declared = column.declaredType;
  return declared !== undefined && canonicalType(declared) !== undefined ? declared : column.type;
}

function columnSql(column: ColumnSchema, singlePk: boolean): string {
  let sql = quoteIdentifier(column.name);
  const type = typeSql(column);
  if (type !== null && type !== '') sql += ` ${type}`;
  if (column.pk && singlePk) sql += ' PRIMARY KEY';
  if (column.notNull) sql += ' NOT NULL';
  if (column.unique) sql += ' UNIQUE';
  if (column.hasDefault) sql += ` DEFAULT ${defaultClauseSql(column)}`;
  return sql + referencesSql(column);
}

function indexSql(table: TableSchema, index: IndexSchema): string {
  const names = new Set(table.columns.map((c) => c.name.toLowerCase()));
  const terms = index.columns.length > 0 ? index.columns : index.column.split(',');
  // Column names are quoted; anything else is an expression kept as written.
  const list = terms.map((term) => (names.has(term.toLowerCase()) ? quoteIdentifier(term) : term));
  const unique = index.unique ? 'UNIQUE ' : '';
  return `CREATE ${unique}INDEX ${quoteIdentifier(index.name)} ON ${quoteIdentifier(table.name)} (${list.join(', ')})`;
}

/**
 * `CREATE TABLE …` for a schema record, followed by its CREATE [UNIQUE] INDEX
 * statements, joined by ';\n'. A single-column key is written on its column,
 * a composite one as a table constraint `PRIMARY KEY (a, b)`.
 */
export function rebuildCreateTable(schema: TableSchema): string {
  const pk = pkColumns(schema);
  const defs = schema.columns.map((column) => columnSql(column, pk.length === 1));
  if (pk.length > 1) defs.push(`PRIMARY KEY (${pk.map(quoteIdentifier).join(', ')})`);
  const options = schema.withoutRowid ? ' WITHOUT ROWID' : '';
  const create = `CREATE TABLE ${quoteIdentifier(schema.name)} (${defs.join(', ')})${options}`;
  return [create, ...schema.indexes.map((index) => indexSql(schema, index))].join(';\n');
}
