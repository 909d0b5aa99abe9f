/**
 * -max-result-bytes bounds what one request returns, counted in the engine as
 * rows are read: a larger result is cut with `truncated: true`, whole rows
 * from the start, and the budget is the request's, not each statement's.
 */
import path from 'node:path';
import t from 'tap';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const SERIES = (n: number): string => `WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ${n}) `;

t.test('a result over -max-result-bytes is cut, with truncated', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-max-result-bytes', '64K'], { cwd: dir });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'big' })).status, 201);
  const reply = await server.exec('big', `${SERIES(5000)}SELECT i, printf('%.100c', 'x') FROM r; SELECT 1 AS after`);
  t.equal(reply.status, 200);
  const [first, second] = reply.body.results;
  t.equal(first.truncated, true, 'the big result is cut');
  t.ok(first.rows.length > 100 && first.rows.length < 5000, `kept ${first.rows.length} of 5000 rows`);
  t.ok(reply.text.length < 80 * 1024, `the response stays near the bound (${reply.text.length} bytes)`);
  t.same(first.rows[0], [1, 'x'.repeat(100)], 'the rows kept are whole, from the start');
  t.same(second.rows, [], "the request's budget is spent: later results are cut too");
  t.equal(second.truncated, true);
  const small = await server.exec('big', `${SERIES(10)}SELECT i FROM r`);
  t.equal(small.body.results[0].rows.length, 10, 'a result under the bound is whole');
  t.notOk(small.body.results[0].truncated);
});

t.test('a big result goes out in slices without splitting a character', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'big' })).status, 201);
  // Emoji are two UTF-16 units each: with a one-character and a two-character prefix, the 256K slice ends
  // fall on both halves of a pair somewhere in these ~1.2M units.
  for (const prefix of ['a', 'ab']) {
    const reply = await server.exec(
      'big',
      `${SERIES(200)}SELECT i, '${prefix}' || replace(printf('%.3000c', 'x'), 'x', '😀') FROM r`,
    );
    t.equal(reply.status, 200);
    const rows = reply.body.results[0].rows as [number, string][];
    t.equal(rows.length, 200);
    t.ok(
      rows.every(([i, text], n) => i === n + 1 && text === prefix + '😀'.repeat(3000)),
      `every value whole (prefix ${prefix})`,
    );
  }
});
