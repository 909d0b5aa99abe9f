/**
 * The /rows cursor in-process: a cursor page is found by searching the key,
 * whatever its depth (the query plan says so; no clock is read), keys that
 * may hold NULL are walked in full, and no text given as a cursor does
 * anything but decode or raise ROWS_CURSOR_INVALID.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import { Engine } from '../src/engine/engine';
import { isEngineError } from '../src/errors';
import { decodeCursor, encodeCursor } from '../src/engine/rows/row-cursor';
import { tableOrder } from '../src/engine/rows/row-key';
import { pageQuery } from '../src/engine/rows/row-pages';
import { readTableSchema } from '../src/engine/schema/schema';

const TABLES = {
  plain: 'CREATE TABLE plain (v TEXT)',
  ipk: 'CREATE TABLE ipk (id INTEGER PRIMARY KEY, v TEXT)',
  wr: 'CREATE TABLE wr (a TEXT, b TEXT, v, PRIMARY KEY (a, b)) WITHOUT ROWID',
  textpk: 'CREATE TABLE textpk (code TEXT PRIMARY KEY, v TEXT) STRICT',
  nullable: 'CREATE TABLE nullable (a TEXT, b INTEGER, v, PRIMARY KEY (a, b))',
} as const;

/** A file with every kind of table, each filled with `count` rows, made outside the service as any SQLite file may be. */
function makeFile(t: Test, count: number): string {
  const file = path.join(t.testdir(), 'keys.db');
  const db = new Database(file);
  db.exec(Object.values(TABLES).join(';'));
  db.exec(`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count})
    INSERT INTO plain SELECT 'v' || n FROM c;
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count})
    INSERT INTO ipk SELECT n * 2, 'v' || n FROM c;
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count})
    INSERT INTO wr SELECT 'a' || (n % 17), printf('%08d', n), n FROM c;
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count})
    INSERT INTO textpk SELECT printf('k%08d', n), 'v' || n FROM c;
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${count})
    INSERT INTO nullable SELECT CASE WHEN n % 7 = 0 THEN NULL ELSE 'a' || (n % 5) END, CASE WHEN n % 3 = 0 THEN NULL ELSE n END, n FROM c`);
  db.close();
  return file;
}

function openEngine(t: Test): Engine {
  const engine = new Engine();
  t.teardown(() => engine.close());
  return engine;
}

t.test('a deep cursor page searches the key; an offset page scans', async (t) => {
  const file = makeFile(t, 3000);
  const engine = openEngine(t);
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const plan = (sql: string, params: unknown[]): string =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>)
      .map((row) => row.detail)
      .join(' | ');
  const expected: Record<string, RegExp> = {
    plain: /^SEARCH plain USING INTEGER PRIMARY KEY \(rowid>\?\)$/,
    ipk: /^SEARCH ipk USING INTEGER PRIMARY KEY \(rowid>\?\)$/,
    wr: /^SEARCH wr USING PRIMARY KEY \(\(a,b\)>\(\?,\?\)\)$/,
    textpk: /^SEARCH textpk USING INDEX sqlite_autoindex_textpk_1 \(code>\?\)$/,
    nullable: /^SEARCH nullable USING INDEX sqlite_autoindex_nullable_1 /,
  };
  for (const table of Object.keys(TABLES)) {
    const deep = engine.rows({ file, table, limit: 10, offset: 2900, after: null });
    t.type(deep.next, 'string', `${table}: a page deep in the table has a next`);
    const schema = readTableSchema(db, table);
    if (schema === undefined) throw new Error(`no table ${table}`);
    const order = tableOrder(db, schema);
    const byCursor = pageQuery(schema, order, { file, table, limit: 10, offset: 0, after: deep.next });
    const cursorPlan = plan(byCursor.sql, byCursor.params);
    t.match(cursorPlan, expected[table] as RegExp, `${table}: the cursor page searches the key (${cursorPlan})`);
    t.notMatch(cursorPlan, /SCAN|TEMP B-TREE/, `${table}: no scan and no sort`);
    const byOffset = pageQuery(schema, order, { file, table, limit: 10, offset: 2900, after: null });
    t.match(plan(byOffset.sql, byOffset.params), /^SCAN /, `${table}: the offset page steps over the rows before it`);
  }
});

t.test('a primary key that may hold NULL is walked in full, NULLs first and ties by rowid', async (t) => {
  const file = makeFile(t, 200);
  const engine = openEngine(t);
  const all = JSON.parse(
    engine.rows({ file, table: 'nullable', limit: 1000, offset: 0, after: null }).rowsJson,
  ) as unknown[][];
  t.equal(all.length, 200);
  t.strictSame(all[0]?.slice(0, 2), [null, null], 'NULLs sort first, as SQLite sorts them');
  for (const limit of [1, 3, 10]) {
    const walked: unknown[] = [];
    let after: string | null = null;
    for (let pages = 0; pages <= 200; pages++) {
      const page = engine.rows({ file, table: 'nullable', limit, offset: 0, after });
      walked.push(...(JSON.parse(page.rowsJson) as unknown[]));
      if (page.next === null) break;
      after = page.next;
    }
    t.strictSame(walked, all, `limit ${limit}: every row once, in the offset order`);
  }
});

t.test('key values come back as the storage class they were read as', async (t) => {
  const file = path.join(t.testdir(), 'kinds.db');
  const db = new Database(file);
  db.exec('CREATE TABLE kinds (k PRIMARY KEY, v) WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO kinds VALUES (?, ?)');
  const keys: unknown[] = [
    -(2n ** 63n),
    2n ** 63n - 1n,
    1.5,
    -Infinity,
    Infinity,
    'text',
    '',
    Buffer.from([0, 255]),
    Buffer.alloc(0),
  ];
  keys.forEach((key, i) => insert.run(key, i));
  db.close();
  const engine = openEngine(t);
  const walked: number[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 20; pages++) {
    const page = engine.rows({ file, table: 'kinds', limit: 1, offset: 0, after });
    walked.push(...(JSON.parse(page.rowsJson) as unknown[][]).map((row) => Number(row[1])));
    if (page.next === null) break;
    after = page.next;
  }
  t.strictSame(
    walked.sort((a, b) => a - b),
    keys.map((_, i) => i),
    'integers at both ends of 64 bits, reals, infinities, text and blobs each once',
  );
});

t.test('any text given as a cursor decodes or is refused with ROWS_CURSOR_INVALID', async (t) => {
  const good = encodeCursor({ table: 't', names: ['a', 'rowid'], values: ['x', 7n] });
  t.strictSame(decodeCursor(good), { table: 't', names: ['a', 'rowid'], values: ['x', 7n] }, 'a round trip');
  let state = 12345;
  const random = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.{}[]" ';
  const mutate = (text: string): string => {
    const at = random(text.length);
    return text.slice(0, at) + alphabet[random(alphabet.length)] + text.slice(at + 1 + random(2));
  };
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const text =
      i % 2 === 0 ? mutate(good) : Array.from({ length: random(40) }, () => alphabet[random(alphabet.length)]).join('');
    try {
      decodeCursor(text);
    } catch (error) {
      if (!isEngineError(error) || error.errorName !== 'ROWS_CURSOR_INVALID')
        t.fail(`${JSON.stringify(text)} raised ${String(error)}`);
      refused++;
    }
  }
  t.ok(
    refused > 1000,
    `most random texts are refused (${refused} of 3000), and none otherwise than as an invalid cursor`,
  );
});
