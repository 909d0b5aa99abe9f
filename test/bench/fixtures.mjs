/**
 * The benchmark's data, the same on both sides. sqlscribe builds `bench.db`
 * through its own API (so its journal holds the whole history and replay can
 * rebuild it); the baseline runs the same SQL directly, with CREATE TABLE
 * rewritten the way sqlscribe stores it (STRICT, BOOL as INTEGER + CHECK).
 * `growth.db` (10^3 … 10^6 rows) is built once in-process with INSERT …
 * SELECT over a recursive CTE and copied to both sides.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, ok } from './processes.mjs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const { rewriteForStorage } = require(path.join(ROOT, 'dist/src/engine/dialect/rewrite.js'));

export const BOOL_COLUMNS = ['active'];
export const ITEMS = 100_000;
export const GROWTH_SIZES = [1_000, 10_000, 100_000, 1_000_000];

const ITEM_COLUMNS = '(id INT PRIMARY KEY, name TEXT NOT NULL, qty INT, price FLOAT, active BOOL)';

function fill(table, rows) {
  return (
    `INSERT INTO ${table} (id, name, qty, price, active) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows}) ` +
    `SELECT i, 'item ' || i, i % 1000, i * 0.25, i % 2 FROM n`
  );
}

/** The SQL that builds bench.db, statement by statement. */
export const BENCH_SQL = [
  `CREATE TABLE items ${ITEM_COLUMNS}`,
  fill('items', ITEMS),
  'CREATE TABLE log (id INT PRIMARY KEY, name TEXT NOT NULL, qty INT)',
];

function storageSql(sql) {
  return sql.startsWith('CREATE TABLE')
    ? rewriteForStorage({ sql, kind: 'create-table', level: 'table', readonly: false })
    : sql;
}

function openDatabase(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  return db;
}

/** bench.db for the baseline, directly. */
export function buildBaselineBench(dir) {
  const db = openDatabase(path.join(dir, 'bench.db'));
  for (const sql of BENCH_SQL) db.exec(storageSql(sql));
  db.close();
}

/** bench.db for sqlscribe, through POST /dbs and /exec. */
export async function buildSqlscribeBench(url) {
  await ok(url, 'POST', '/dbs', { db: 'bench' });
  for (const sql of BENCH_SQL) await ok(url, 'POST', '/exec', { db: 'bench', sql });
}

/** growth.db with tables g1000 … g1000000, built once and copied into each directory. */
export function buildGrowth(workDir, targets) {
  const template = path.join(workDir, 'growth-template.db');
  const db = openDatabase(template);
  for (const size of GROWTH_SIZES) {
    db.exec(storageSql(`CREATE TABLE g${size} ${ITEM_COLUMNS}`));
    db.exec(fill(`g${size}`, size));
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  for (const dir of targets) fs.copyFileSync(template, path.join(dir, 'growth.db'));
  fs.rmSync(template, { force: true });
}

export const DEEP_ROWS = 1_000_000;

/**
 * deep.db for the deep-page scenario: `deep`, the items shape keyed by an
 * INTEGER PRIMARY KEY, and `deep_pair`, WITHOUT ROWID with a composite text
 * key (a, b), both of DEEP_ROWS rows.
 */
export function buildDeepPage(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const db = openDatabase(path.join(dir, 'deep.db'));
  db.exec(storageSql(`CREATE TABLE deep ${ITEM_COLUMNS}`));
  db.exec(fill('deep', DEEP_ROWS));
  db.exec(storageSql('CREATE TABLE deep_pair (a TEXT, b TEXT, qty INT, PRIMARY KEY (a, b)) WITHOUT ROWID'));
  db.exec(
    `INSERT INTO deep_pair WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${DEEP_ROWS}) ` +
      "SELECT printf('group %04d', i % 1000), printf('member %07d', i), i % 1000 FROM n",
  );
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** A small database file, copied `count` times into `dir` (start-up against the number of databases). */
export function fillDirectory(dir, count) {
  fs.mkdirSync(dir, { recursive: true });
  const template = path.join(dir, 'template.tmp');
  const db = openDatabase(template);
  db.exec(storageSql('CREATE TABLE t (id INT PRIMARY KEY, name TEXT)'));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  for (let i = 0; i < count; i++) fs.copyFileSync(template, path.join(dir, `db${String(i).padStart(5, '0')}.db`));
  fs.rmSync(template, { force: true });
}
