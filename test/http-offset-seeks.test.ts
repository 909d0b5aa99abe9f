/**
 * GET /rows by offset against the real server, where pages seek to
 * positions learnt from earlier pages (src/engine/rows/offset-seeks.ts):
 * after writes through /exec, made by an engine process while the server
 * process keeps its positions, every page still holds the rows that are at
 * its offset now. Both kinds of reader are walked: the server's own (a
 * shallow page) and an engine process's (a page deeper than the server
 * reads itself).
 */
import t from 'tap';
import { serverPerFile, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { ROW_BUDGET } from '../src/engine/in-server/planned-read';

t.setTimeout(120_000);

const root = scratchDir(t);
let server!: TestServer;
serverPerFile(t, root, (started) => (server = started));

const ROWS = ROW_BUDGET + 2_000;
const LIMIT = 100;

async function ok(tt: tap.Test, reply: Promise<{ status: number; text: string; body?: any }>): Promise<any> {
  const answered = await reply;
  tt.ok(answered.status === 200 || answered.status === 201, answered.text.slice(0, 300));
  return answered.body;
}

/** The ids a page at `offset` must hold, from the ids the table holds now. */
function expectedIds(ids: readonly number[], offset: number): number[] {
  return ids.slice(offset, offset + LIMIT);
}

t.test('pages by offset follow every write, in the server and in an engine process', async (t) => {
  await ok(t, server.post('/dbs', { db: 'seeks' }));
  await ok(
    t,
    server.exec(
      'seeks',
      `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
       INSERT INTO t WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${ROWS}) SELECT n * 2, 'v' || n FROM c`,
    ),
  );
  let ids = Array.from({ length: ROWS }, (_, i) => (i + 1) * 2);
  const shallow = 1_000;
  const deep = ROW_BUDGET + 500;

  const check = async (label: string): Promise<void> => {
    for (const offset of [shallow, shallow + LIMIT, shallow, deep, deep + LIMIT, deep]) {
      const page = await ok(t, server.get(`/rows?db=seeks&table=t&limit=${LIMIT}&offset=${offset}`));
      t.same(
        page.rows.map((row: [number, string]) => row[0]),
        expectedIds(ids, offset),
        `${label}: page at ${offset}`,
      );
      t.equal(page.total, ids.length, `${label}: total at ${offset}`);
    }
  };

  await check('before any write');
  await ok(t, server.exec('seeks', 'DELETE FROM t WHERE id <= 20'));
  ids = ids.filter((id) => id > 20);
  await check('after ten rows were deleted before every page');
  await ok(t, server.exec('seeks', 'INSERT INTO t (id, v) VALUES (1, ?), (3, ?), (5, ?)', { params: ['a', 'b', 'c'] }));
  ids = [1, 3, 5, ...ids];
  await check('after three rows were inserted before every page');
  // A write whose transaction rolls back changes nothing the pages see.
  const refused = await server.exec(
    'seeks',
    'INSERT INTO t (id, v) VALUES (7, 1); INSERT INTO t (id, v) VALUES (7, 2)',
  );
  t.not(refused.status, 200, 'the duplicate key fails the batch');
  await check('after a batch that rolled back');
});
