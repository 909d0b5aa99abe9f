/**
 * Pages of GET /rows whose work is bounded before they run, so that the
 * server may read them in its own process, as it does the reads of
 * bounded-read.ts and planned-read.ts, without the round trip to an engine
 * process (a page is the most common read of a class's console).
 *
 * A page walks its table in key order (row-key.ts) and stops after
 * offset + limit + 1 rows, or seeks to a cursor and reads limit + 1; its
 * count is SQLite's count of the table's pages. So it is bounded when:
 * - it reads a table (a view runs its own SELECT, of any cost) without
 *   generated columns (each would run an expression per row);
 * - the walk is in the B-tree's own order: the page's bytecode opens no
 *   sorter (checked once per schema), and a cursor page seeks by one term
 *   that holds no NULL (several terms, or NULLs, may filter rows out one by
 *   one after the seek); an offset page that may seek to a position learnt
 *   earlier (offset-seeks.ts) has the cursor page's plan too, which must not
 *   sort either;
 * - rows walked stay under the planner's ROW_BUDGET, and rows walked times
 *   the table's largest row under its BYTE_BUDGET;
 * - the database is within the planner's MAX_FILE_BYTES, which bounds the
 *   count and the walk that finds the largest row, and holds no
 *   sqlite_stat4 (which could change a plan with the values bound).
 */
import type { Connection } from '../connection-pool';
import { BYTE_BUDGET, MAX_FILE_BYTES, planStatsOf, ROW_BUDGET } from './planned-read';
import type { RowsRequest } from '../protocol';
import { cursorPageQuery, pageQuery } from '../rows/row-pages';
import { tableOrder, type TableOrder } from '../rows/row-key';
import { seekableKey } from '../rows/offset-seeks';
import type { TableSchema } from '../schema/schema';

/** Whether each page query of a table's schema record sorts (a new schema brings a new record, so these go with it). */
const sorting = new WeakMap<TableSchema, Map<string, boolean>>();

/** Must run inside the read transaction that read `schema` and will read the page. */
export function isRowPageBoundedOn(connection: Connection, schema: TableSchema, request: RowsRequest): boolean {
  if (schema.kind !== 'table' || connection.schema.hasGeneratedColumns(schema.name)) return false;
  const order = tableOrder(connection.db, schema);
  if (request.after !== null && seekableKey(order) === null) return false;
  const visits = (request.after === null ? request.offset : 0) + request.limit + 1;
  if (visits > ROW_BUDGET) return false;
  const stats = planStatsOf(connection);
  stats.sync();
  // With sqlite_stat4 SQLite may plan a page again for its values: the plan checked here would not be the one run.
  if (stats.fileBytes() > MAX_FILE_BYTES || stats.table('sqlite_stat4') !== undefined) return false;
  const shape = request.after === null || order.key === null ? 'offset' : 'after';
  if (sorts(connection, schema, order, shape)) return false;
  // An offset page may seek by its key instead (offset-seeks.ts), with the plan of a cursor page: it must not sort either.
  if (shape === 'offset' && seekableKey(order) !== null && sorts(connection, schema, order, 'after')) return false;
  return visits * stats.largestRow(schema.name) <= BYTE_BUDGET;
}

/** Whether the page's SELECT sorts its rows (a sorter or a temporary B-tree) instead of walking the table or an index. */
function sorts(connection: Connection, schema: TableSchema, order: TableOrder, shape: 'offset' | 'after'): boolean {
  let known = sorting.get(schema);
  if (known === undefined) {
    known = new Map();
    sorting.set(schema, known);
  }
  // Only the shape matters: the plan of a page does not depend on its values (no sqlite_stat4 is read here).
  let sorted = known.get(shape);
  if (sorted === undefined) {
    const query =
      shape === 'after' && order.key !== null
        ? cursorPageQuery(schema, order.orderBy, order.key, [0], 1n)
        : pageQuery(schema, order, { file: '', table: schema.name, limit: 1, offset: 0, after: null });
    const ops = connection.db.prepare(`EXPLAIN ${query.sql}`).all(...query.params) as Array<{ opcode: string }>;
    sorted = ops.some((op) => op.opcode === 'SorterOpen' || op.opcode === 'OpenEphemeral');
    known.set(shape, sorted);
  }
  return sorted;
}
