/**
 * What the read planner (planned-read.ts) needs to know of a database to put
 * a bound on a statement's work: how many rows each table has (counted only
 * up to a limit, so that counting is itself bounded), how many bytes its
 * largest row holds, which table each B-tree (root page) and index belongs
 * to, and how many rows share one key of an index. Each fact is kept until
 * the database changes (PRAGMA data_version: another connection committed;
 * PRAGMA schema_version), so a class reading the same tables pays for it once.
 *
 * Every query here reads at most the row limit's worth of rows, or the
 * pages of a table within that limit in a database of bounded size, so
 * gathering the facts stays cheap next to the work they bound.
 */
import type Database from 'better-sqlite3';
import { quoteIdentifier } from '../types';

/** Fact queries kept prepared per database (one or two per table read); past this, they start over. */
const VALUE_QUERIES = 256;

/**
 * A database of at most this many pages has its tables counted whole: SQLite
 * counts a table by walking its B-tree's pages (PlaylistTrack's 8,715 rows in
 * 12 µs), where counting at most limit + 1 rows steps through every row (583
 * µs). A table cannot have more pages than its file, so the whole count walks
 * at most this many, about what stepping through the limit's rows costs.
 */
const WHOLE_COUNT_PAGES = 2048;

/** A table or index of sqlite_schema, found by its root page. */
export interface SchemaObject {
  readonly type: 'table' | 'index';
  readonly name: string;
  /** The table an index belongs to; the table itself for a table. */
  readonly table: string;
}

export interface IndexFacts {
  readonly table: string;
  /** Key columns, in order: name and collation; undefined name for an expression. */
  readonly columns: ReadonlyArray<{ readonly name: string | undefined; readonly collation: string }>;
}

/** The facts of one database at one data version. */
export class PlanStats {
  private readonly dataVersionQuery: Database.Statement;
  private readonly schemaVersionQuery: Database.Statement;
  private schemaVersion = '';
  private dataVersion = '';
  private objects: Map<number, SchemaObject> | undefined;
  private viewsLength: Map<string, number> | undefined;
  private misleading: boolean | undefined;
  private nesting: boolean | undefined;
  private bytes: number | undefined;
  private pages: number | undefined;
  private viewSql: Map<string, string> | undefined;
  private tableNames: Map<string, string> | undefined;
  private readonly counts = new Map<string, number>();
  private readonly rowBytes = new Map<string, number>();
  private readonly groups = new Map<string, number>();
  private readonly indexes = new Map<string, IndexFacts | null>();
  /** The fact queries, prepared once each: a write moves the data version and its facts are asked again, often. */
  private readonly valueQueries = new Map<string, Database.Statement>();

  /** `limit`: counts stop at limit + 1 (anything above the limit is "too many" to the planner). */
  constructor(
    private readonly db: Database.Database,
    readonly limit: number,
  ) {
    this.dataVersionQuery = db.prepare('PRAGMA data_version').pluck().safeIntegers(false);
    this.schemaVersionQuery = db.prepare('PRAGMA schema_version').pluck().safeIntegers(false);
  }

  /**
   * The database's version as this transaction sees it; drops the facts that
   * moved with it: all of them when the schema changed, the data's (row
   * counts, sizes, groups) when only the data did. Must run inside the read
   * transaction that uses the facts. Returns the schema and data versions.
   */
  sync(): { schema: string; data: string } {
    const schema = String(this.schemaVersionQuery.get());
    const data = String(this.dataVersionQuery.get());
    if (schema !== this.schemaVersion) {
      this.schemaVersion = schema;
      this.objects = undefined;
      this.viewsLength = undefined;
      this.misleading = undefined;
      this.nesting = undefined;
      this.viewSql = undefined;
      this.tableNames = undefined;
      this.indexes.clear();
      this.valueQueries.clear();
      this.dataVersion = '';
    }
    if (data !== this.dataVersion) {
      this.dataVersion = data;
      this.bytes = undefined;
      this.pages = undefined;
      this.counts.clear();
      this.rowBytes.clear();
      this.groups.clear();
    }
    return { schema, data: `${data}:${schema}` };
  }

  /** The table or index whose B-tree starts at `rootPage`. */
  objectAt(rootPage: number): SchemaObject | undefined {
    if (this.objects === undefined) {
      const objects = new Map<number, SchemaObject>([
        [1, { type: 'table', name: 'sqlite_schema', table: 'sqlite_schema' }],
      ]);
      const rows = this.db
        .prepare(
          "SELECT type, name, tbl_name AS tbl, rootpage FROM sqlite_schema WHERE type IN ('table', 'index') AND rootpage > 0",
        )
        .safeIntegers(false)
        .all() as Array<{ type: 'table' | 'index'; name: string; tbl: string; rootpage: number }>;
      for (const row of rows) objects.set(row.rootpage, { type: row.type, name: row.name, table: row.tbl });
      this.objects = objects;
    }
    return this.objects.get(rootPage);
  }

  /**
   * Characters of the SQL of the views among `names` (lower case): a view's
   * text may hold a long list of literals the planner probes one by one.
   */
  viewTextLength(names: ReadonlySet<string>): number {
    if (this.viewsLength === undefined) {
      const rows = this.db
        .prepare("SELECT name, length(sql) AS length FROM sqlite_schema WHERE type = 'view'")
        .safeIntegers(false)
        .all() as Array<{ name: string; length: number | null }>;
      this.viewsLength = new Map(rows.map((row) => [row.name.toLowerCase(), row.length ?? 0]));
    }
    let length = 0;
    for (const [name, chars] of this.viewsLength) if (names.has(name)) length += chars;
    return length;
  }

  /** Whether `check` finds a misleading name among the schema's names and views' texts; asked once per schema. */
  namesMislead(check: (names: readonly string[], viewTexts: readonly string[]) => boolean): boolean {
    if (this.misleading === undefined) {
      const rows = this.db.prepare('SELECT type, name, sql FROM sqlite_schema').safeIntegers(false).all() as Array<{
        type: string;
        name: string;
        sql: string | null;
      }>;
      this.misleading = check(
        rows.map((row) => row.name),
        rows.filter((row) => row.type === 'view').map((row) => row.sql ?? ''),
      );
    }
    return this.misleading;
  }

  /** The SQL of the views among `names` (lower case). */
  viewTexts(names: ReadonlySet<string>): string[] {
    this.viewSql ??= new Map(
      (
        this.db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'view'").all() as Array<{
          name: string;
          sql: string | null;
        }>
      ).map((row) => [row.name.toLowerCase(), row.sql ?? '']),
    );
    const texts: string[] = [];
    for (const [name, sql] of this.viewSql) if (names.has(name)) texts.push(sql);
    return texts;
  }

  /** A table's name as the schema spells it, found without regard to case; undefined for anything else. */
  table(name: string): string | undefined {
    if (this.tableNames === undefined) {
      this.tableNames = new Map([
        ['sqlite_schema', 'sqlite_schema'],
        ['sqlite_master', 'sqlite_schema'],
      ]);
      for (const row of this.db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
        .pluck()
        .all() as string[])
        this.tableNames.set(row.toLowerCase(), row);
    }
    return this.tableNames.get(name.toLowerCase());
  }

  /** Whether `check` finds views that read views; asked once per schema. */
  viewsNest(check: (views: ReadonlyArray<{ name: string; sql: string }>) => boolean): boolean {
    if (this.nesting === undefined) {
      const views = this.db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'view'").all() as Array<{
        name: string;
        sql: string | null;
      }>;
      this.nesting = check(views.map((view) => ({ name: view.name, sql: view.sql ?? '' })));
    }
    return this.nesting;
  }

  /** Rows of a table, or limit + 1 when there are more than the limit. */
  rowCount(table: string): number {
    let count = this.counts.get(table);
    if (count === undefined) {
      const quoted = quoteIdentifier(table);
      count =
        this.pageCount() <= WHOLE_COUNT_PAGES
          ? Math.min(Number(this.valueQuery(`SELECT count(*) FROM ${quoted}`).get()), this.limit + 1)
          : Number(this.valueQuery(`SELECT count(*) FROM (SELECT 1 FROM ${quoted} LIMIT ?)`).get(this.limit + 1));
      this.counts.set(table, count);
    }
    return count;
  }

  /**
   * Bytes of the largest row of a table: the largest cell payload of its
   * B-tree, from SQLite's dbstat table (about 50 µs for a table of a few
   * thousand rows, where reading every row's sizes cost milliseconds). It
   * walks the table's pages, overflow pages included, so it is only asked of
   * a table within the row limit in a database within fileLimit bytes.
   */
  largestRow(table: string): number {
    let bytes = this.rowBytes.get(table);
    if (bytes === undefined) {
      bytes = Number(this.valueQuery("SELECT max(mx_payload) FROM dbstat('main', 1) WHERE name = ?").get(table) ?? 0);
      this.rowBytes.set(table, bytes);
    }
    return bytes;
  }

  /** The database's size in bytes (pages times page size). */
  fileBytes(): number {
    this.bytes ??= this.pageCount() * Number(this.valueQuery('PRAGMA page_size').get());
    return this.bytes;
  }

  /** The database's size in pages. */
  private pageCount(): number {
    this.pages ??= Number(this.valueQuery('PRAGMA page_count').get());
    return this.pages;
  }

  /** An index's table and key columns; undefined for an unknown name. */
  index(name: string): IndexFacts | undefined {
    let facts = this.indexes.get(name);
    if (facts === undefined) {
      const table = this.db
        .prepare("SELECT tbl_name FROM sqlite_schema WHERE type = 'index' AND name = ?")
        .pluck()
        .get(name) as string | undefined;
      if (table === undefined) {
        facts = null;
      } else {
        const rows = this.db
          .prepare('SELECT cid, name, coll, key FROM pragma_index_xinfo(?) ORDER BY seqno')
          .safeIntegers(false)
          .all(name) as Array<{ cid: number; name: string | null; coll: string; key: number }>;
        const columns = rows
          .filter((row) => row.key === 1)
          .map((row) => ({ name: row.cid >= 0 && row.name !== null ? row.name : undefined, collation: row.coll }));
        facts = { table, columns };
      }
      this.indexes.set(name, facts);
    }
    return facts ?? undefined;
  }

  /**
   * Most rows sharing one value of an index's first `equal` key columns
   * (NULLs counted as one value: `IS NULL` is searched like `=`), compared as
   * the index compares them; the table's row count when a column is an
   * expression. Only asked of a table within the row limit.
   */
  largestGroup(indexName: string, equal: number): number {
    const facts = this.index(indexName);
    if (facts === undefined) return Infinity;
    const key = `${indexName}\u0000${equal}`;
    let most = this.groups.get(key);
    if (most === undefined) {
      const columns = facts.columns.slice(0, equal);
      if (columns.length < equal || columns.some((column) => column.name === undefined)) {
        most = this.rowCount(facts.table);
      } else {
        const groupBy = columns
          .map((column) => `${quoteIdentifier(column.name as string)} COLLATE ${quoteIdentifier(column.collation)}`)
          .join(', ');
        const found = this.valueQuery(
          `SELECT max(n) FROM (SELECT count(*) AS n FROM ${quoteIdentifier(facts.table)} GROUP BY ${groupBy})`,
        ).get();
        most = Number(found ?? 0);
      }
      this.groups.set(key, most);
    }
    return most;
  }

  /** A query of one value (numbers as numbers), prepared once per schema; at most VALUE_QUERIES of them are kept. */
  private valueQuery(sql: string): Database.Statement {
    let statement = this.valueQueries.get(sql);
    if (statement === undefined) {
      if (this.valueQueries.size >= VALUE_QUERIES) this.valueQueries.clear();
      statement = this.db.prepare(sql).pluck().safeIntegers(false);
      this.valueQueries.set(sql, statement);
    }
    return statement;
  }
}
