/**
 * The date functions a batch calls (deterministic-functions.ts) answer what
 * SQLite's own answer for the same arguments, however often and in whatever
 * order they are called: their results are kept by expression and arguments,
 * and a text, an integer and a real that print alike are different
 * arguments. 'now' is the batch's clock, so two batches with two clocks get
 * two answers from one statement.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Connection } from '../src/engine/connection-pool';

const CALLS: ReadonlyArray<[string, unknown[]]> = [
  ["strftime('%Y-%m', ?)", ['2009-01-01 00:00:00']],
  ["strftime('%s', ?)", [1700000000n]],
  ["strftime('%s', ?)", ['1700000000']],
  ["strftime('%s', ?)", [1700000000.0]],
  ["strftime('%s', ?, 'unixepoch')", [1700000000n]],
  ['date(?)', [2460000.5]],
  ['date(?)', ['2460000.5']],
  ["datetime(?, '+1 day', 'start of month')", ['2024-02-28 13:00:00']],
  ['julianday(?)', [null]],
  ["timediff(?, '2000-01-01')", ['2024-02-29']],
  // Kept one level per argument: the same values in another place or another function are another call.
  ['datetime(?, ?, ?)', ['2024-02-28 13:00:00', '+1 day', 'start of month']],
  ['datetime(?, ?, ?)', ['2024-03-28 13:00:00', '+1 day', 'start of month']],
  ['datetime(?, ?, ?)', ['2024-02-28 13:00:00', '+2 days', 'start of month']],
  ['datetime(?, ?)', ['2024-02-28 13:00:00', null]],
  ['time(?, ?, ?)', ['2024-02-28 13:00:00', '+1 day', 'start of month']],
  ['date(?)', [-0]],
  ['date(?)', [0]],
  // Not kept: a blob, a text longer than a key's argument may be.
  ['date(?)', [Buffer.from('2024-01-01')]],
  ['date(?)', [`2024-01-01${' '.repeat(300)}`]],
];

t.test('kept results answer what SQLite answers, whatever the order and the type of the argument', async (t) => {
  const file = path.join(t.testdir(), 'dates.db');
  const native = new Database(':memory:');
  native.defaultSafeIntegers(true);
  new Database(file).close();
  const connection = new Connection(file);
  t.teardown(() => (connection.close(), native.close()));
  const expected = CALLS.map(([sql, args]) =>
    native
      .prepare(`SELECT ${sql}`)
      .pluck()
      .get(...args),
  );
  for (const order of [CALLS.keys(), [...CALLS.keys()].reverse(), CALLS.keys()]) {
    for (const i of order) {
      const [sql, args] = CALLS[i] as [string, unknown[]];
      const got = connection.read(() =>
        connection
          .prepare(`SELECT ${sql}`)
          .pluck()
          .get(...args),
      );
      t.equal(got, expected[i], `${sql} of ${String(args[0])} (${typeof args[0]})`);
    }
  }
});

t.test("'now' is each batch's clock, kept or not", async (t) => {
  const file = path.join(t.testdir(), 'now.db');
  new Database(file).close();
  const connection = new Connection(file);
  t.teardown(() => connection.close());
  const at = (clockMs: number): unknown => {
    connection.setBatchContext({ clockMs, seed: '0123456789abcdef' });
    return connection.read(() => connection.prepare("SELECT datetime('now'), date()").raw(true).get());
  };
  for (let round = 0; round < 2; round++) {
    t.same(at(Date.UTC(2026, 0, 2, 3, 4, 5)), ['2026-01-02 03:04:05', '2026-01-02']);
    t.same(at(Date.UTC(2027, 5, 6, 7, 8, 9)), ['2027-06-06 07:08:09', '2027-06-06']);
  }
});
