/**
 * The templates scenario (BENCH_ONLY=templates): a class of thirty. A
 * template of about 1 MB, then thirty copies of it in one request
 * (`POST /dbs {prefix, count: 30, from}`), and thirty one-copy requests one
 * after the other for comparison. Target: thirty copies in under 2 s in all.
 * Each figure is the best of three rounds, under new names each time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ok, startSqlscribe } from './processes.mjs';

const COPIES = 30;
const ROUNDS = 3;
/** Rows of about 100 bytes: about 1 MB of table. */
const ROWS = 10_000;

function bytesOf(dir, name) {
  return ['', '-wal'].reduce(
    (sum, suffix) =>
      sum + (fs.existsSync(path.join(dir, name + suffix)) ? fs.statSync(path.join(dir, name + suffix)).size : 0),
    0,
  );
}

async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function templates(work) {
  const dir = path.join(work, 'templates');
  fs.mkdirSync(dir, { recursive: true });
  const server = await startSqlscribe(dir);
  try {
    const url = server.url;
    await ok(url, 'POST', '/dbs', { db: 'class' });
    await ok(url, 'POST', '/exec', {
      db: 'class',
      sql: 'CREATE TABLE pupils (id INT PRIMARY KEY, name TEXT NOT NULL, note TEXT); CREATE INDEX pupils_name ON pupils (name)',
    });
    const fill = `INSERT INTO pupils (id, name, note) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS}) SELECT i, 'pupil ' || i, printf('%060d', i) FROM n`;
    await ok(url, 'POST', '/exec', { db: 'class', sql: fill });
    const templateBytes = bytesOf(dir, 'class.db');
    const oneRequest = [];
    const oneByOne = [];
    for (let round = 1; round <= ROUNDS; round++) {
      oneRequest.push(
        await timed(() => ok(url, 'POST', '/dbs', { prefix: `r${round}`, count: COPIES, from: 'class' })),
      );
      oneByOne.push(
        await timed(async () => {
          for (let i = 1; i <= COPIES; i++) await ok(url, 'POST', '/dbs', { db: `s${round}-${i}`, from: 'class' });
        }),
      );
    }
    const copy = await ok(url, 'POST', '/exec', {
      db: `r1-${String(COPIES).padStart(2, '0')}`,
      sql: 'SELECT count(*) FROM pupils',
    });
    const rowsInCopy = copy.body.results[0].rows[0][0];
    return {
      copies: COPIES,
      templateBytes,
      rowsInCopy,
      oneRequestMs: Math.min(...oneRequest),
      oneByOneMs: Math.min(...oneByOne),
    };
  } finally {
    await server.stop();
  }
}
