/**
 * Offset pages that seek to a position learnt from an earlier page
 * (src/engine/rows/offset-seeks.ts), in-process: the page read by a seek is
 * the page read from the table's start, whatever the key (rowid, INTEGER
 * PRIMARY KEY, a NOCASE text key, 64-bit rowids) and whatever offsets a walk
 * asks for; a write by another connection or by this one, or a schema
 * change, forgets every position; keys of several terms never seek.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import { Connection } from '../src/engine/connection-pool';
import { readRowPage } from '../src/engine/rows/row-pages';
import type { RowPage } from '../src/engine/protocol';

const TABLES = {
  plain: 'CREATE TABLE plain (v TEXT)',
  ipk: 'CREATE TABLE ipk (id INTEGER PRIMARY KEY, v TEXT)',
  nocase: 'CREATE TABLE nocase (code TEXT COLLATE NOCASE PRIMARY KEY NOT NULL, v INT)',
  huge: 'CREATE TABLE huge (v TEXT)',
  pair: 'CREATE TABLE pair (a TEXT, b TEXT, v, PRIMARY KEY (a, b)) WITHOUT ROWID',
  iview: 'CREATE VIEW iview AS SELECT id, v FROM ipk',
} as const;
type Table = keyof typeof TABLES;
const COUNT = 700;

function makeFile(t: Test): string {
  const file = path.join(t.testdir(), 'seeks.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(Object.values(TABLES).join(';'));
  const rows = `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${COUNT})`;
  db.exec(`${rows} INSERT INTO plain SELECT 'v' || n FROM c;
    ${rows} INSERT INTO ipk SELECT n * 3, 'v' || n FROM c;
    ${rows} INSERT INTO nocase SELECT CASE n % 2 WHEN 0 THEN printf('K%05d', n) ELSE printf('k%05d', n) END, n FROM c;
    ${rows} INSERT INTO huge (rowid, v) SELECT 4611686018427387904 + n * 5, 'v' || n FROM c;
    ${rows} INSERT INTO pair SELECT 'a' || (n % 7), printf('%05d', n), n FROM c;`);
  db.close();
  return file;
}

/** A connection whose prepared texts are recorded, so that a test sees which query read a page. */
function openConnection(t: Test, file: string): { connection: Connection; texts: string[] } {
  const connection = new Connection(file);
  t.teardown(() => connection.close());
  const texts: string[] = [];
  const prepare = connection.prepare.bind(connection);
  connection.prepare = (sql: string) => (texts.push(sql), prepare(sql));
  return { connection, texts };
}

function page(connection: Connection, table: Table, offset: number, limit: number, cache = true): RowPage {
  return connection.read(() => {
    const schema = connection.tableSchema(table);
    if (schema === undefined) throw new Error(`no table ${table}`);
    return readRowPage(connection, schema, { file: connection.file, table, offset, limit, after: null }, cache);
  });
}

/** The same page read from the table's start (nothing kept, nothing sought). */
function truePage(file: string, table: Table, offset: number, limit: number): RowPage {
  const connection = new Connection(file);
  try {
    return page(connection, table, offset, limit, false);
  } finally {
    connection.close();
  }
}

const seeks = (texts: readonly string[]): number => texts.filter((text) => text.includes('>= ?')).length;

t.test('a walk by offset, forward, back and at random, reads every page as a read from the start would', async (t) => {
  const file = makeFile(t);
  const walk = [0, 50, 100, 150, 100, 50, 0, 120, 125, 600, 650, 700, 649, 10, 599];
  for (const table of ['plain', 'ipk', 'nocase', 'huge'] as const) {
    const { connection, texts } = openConnection(t, file);
    for (const offset of walk) {
      t.same(page(connection, table, offset, 50), truePage(file, table, offset, 50), `${table} at ${offset}`);
    }
    // Every page after the first has a known position at or below its offset, except those below the first position noted.
    t.ok(seeks(texts) >= walk.length - 3, `${table}: ${seeks(texts)} of ${walk.length} pages sought a known position`);
  }
});

t.test('the second read of one page seeks to its first row', async (t) => {
  const file = makeFile(t);
  const { connection, texts } = openConnection(t, file);
  const first = page(connection, 'ipk', 400, 100);
  t.equal(seeks(texts), 0, 'the first read starts from the table start');
  t.same(page(connection, 'ipk', 400, 100), first);
  t.equal(seeks(texts), 1, 'the second seeks');
  t.match(JSON.parse(first.rowsJson), [[1203, 'v401']]);
});

t.test('a write by another connection, or by this one, forgets every position', async (t) => {
  const file = makeFile(t);
  const { connection, texts } = openConnection(t, file);
  page(connection, 'ipk', 200, 50);
  page(connection, 'ipk', 250, 50);
  t.equal(seeks(texts), 1);

  const other = new Database(file);
  t.teardown(() => other.close());
  other.exec('DELETE FROM ipk WHERE id <= 30');
  const afterOther = page(connection, 'ipk', 250, 50);
  t.equal(seeks(texts), 1, 'no seek after another connection wrote');
  t.same(afterOther, truePage(file, 'ipk', 250, 50));
  t.match(JSON.parse(afterOther.rowsJson), [[783, 'v261']], 'ten rows fewer before the page');

  page(connection, 'ipk', 300, 50);
  t.equal(seeks(texts), 2, 'positions learnt again');
  connection.noteWrite();
  connection.db.exec('DELETE FROM ipk WHERE id <= 60');
  const afterOwn = page(connection, 'ipk', 300, 50);
  t.equal(seeks(texts), 2, 'no seek after its own write');
  t.same(afterOwn, truePage(file, 'ipk', 300, 50));
});

t.test('a schema change forgets every position', async (t) => {
  const file = makeFile(t);
  const { connection, texts } = openConnection(t, file);
  page(connection, 'plain', 300, 50);
  const other = new Database(file);
  t.teardown(() => other.close());
  other.exec('ALTER TABLE plain ADD COLUMN w INT DEFAULT 7');
  const after = page(connection, 'plain', 300, 50);
  t.equal(seeks(texts), 0);
  t.same(after.columns, ['v', 'w']);
  t.same(after, truePage(file, 'plain', 300, 50));
});

t.test(
  'a key of several terms, a read inside a transaction that may have written, and a view never seek',
  async (t) => {
    const file = makeFile(t);
    const { connection, texts } = openConnection(t, file);
    for (let i = 0; i < 3; i++) t.same(page(connection, 'pair', 300, 50), truePage(file, 'pair', 300, 50));
    for (let i = 0; i < 3; i++) t.same(page(connection, 'iview', 300, 50), truePage(file, 'iview', 300, 50));
    for (let i = 0; i < 3; i++) page(connection, 'ipk', 300, 50, false);
    t.equal(seeks(texts), 0);
  },
);
