/**
 * The planner's row counts (src/engine/in-server/plan-stats.ts): exact up to
 * the limit and limit + 1 above it, whether the database is small enough to
 * count each table whole or is counted a row at a time up to the limit, and
 * counted again once another connection has changed the data.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { PlanStats } from '../src/engine/in-server/plan-stats';
import { scratchDir } from './helpers/scratch-dir';

const LIMIT = 10;

function database(file: string, pageSize: number, padding: number): Database.Database {
  const db = new Database(file);
  db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE few (id INTEGER PRIMARY KEY); CREATE TABLE many (id INTEGER PRIMARY KEY, note TEXT)');
  db.exec('CREATE TABLE pad (b BLOB)');
  if (padding > 0) db.prepare('INSERT INTO pad VALUES (zeroblob(?))').run(padding);
  const insert = db.prepare('INSERT INTO few DEFAULT VALUES');
  for (let i = 0; i < 7; i++) insert.run();
  const many = db.prepare('INSERT INTO many (note) VALUES (?)');
  for (let i = 0; i < 25; i++) many.run(`row ${i}`);
  return db;
}

/** The counts as the planner reads them: inside a read transaction, after sync. */
function counts(reader: Database.Database, stats: PlanStats): { few: number; many: number; pages: number } {
  reader.exec('BEGIN');
  try {
    stats.sync();
    const pages = Number(reader.pragma('page_count', { simple: true }));
    return { few: stats.rowCount('few'), many: stats.rowCount('many'), pages };
  } finally {
    reader.exec('COMMIT');
  }
}

for (const [name, pageSize, padding, large] of [
  ['a small database, counted whole', 4096, 0, false],
  ['a database of more pages than a whole count may walk', 512, 1_200_000, true],
] as const) {
  t.test(name, async (t) => {
    const file = path.join(scratchDir(t), 'facts.db');
    const writer = database(file, pageSize, padding);
    const reader = new Database(file, { readonly: true });
    t.teardown(() => {
      reader.close();
      writer.close();
    });
    const stats = new PlanStats(reader, LIMIT);
    const before = counts(reader, stats);
    t.equal(before.pages > 2048, large, `${before.pages} pages`);
    t.equal(before.few, 7, 'exact below the limit');
    t.equal(before.many, LIMIT + 1, 'limit + 1 above it');
    writer.exec('DELETE FROM many WHERE id > 4; INSERT INTO few DEFAULT VALUES');
    const after = counts(reader, stats);
    t.equal(after.few, 8, 'counted again after another connection wrote');
    t.equal(after.many, 4);
  });
}
