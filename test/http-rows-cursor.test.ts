/**
 * GET /rows?after=<cursor> against the real server: a walk by cursor gives
 * every row once, in the very order of the offset pages, for each kind of
 * key a table can have; and a cursor that cannot be followed is a 400 with
 * its code, never a 500.
 */
import t from 'tap';
import { serverPerFile, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { isError } from './helpers/assertions';

type Value = number | string | boolean | null;

t.setTimeout(120_000);

const root = scratchDir(t);
let server!: TestServer;
let dbCount = 0;
serverPerFile(t, root, (started) => (server = started));

async function freshDb(tt: tap.Test, setup: string): Promise<string> {
  const name = `c${++dbCount}`;
  const created = await server.post('/dbs', { db: name });
  tt.equal(created.status, 201, `POST /dbs ${name}: ${created.text}`);
  const reply = await server.exec(name, setup);
  tt.equal(reply.status, 200, `${setup.slice(0, 200)} → ${reply.text.slice(0, 300)}`);
  return name;
}

async function getOk(tt: tap.Test, pathAndQuery: string): Promise<any> {
  const reply = await server.get(pathAndQuery);
  tt.equal(reply.status, 200, `GET ${pathAndQuery} → ${reply.text.slice(0, 300)}`);
  return reply.body ?? {};
}

function rowsPath(db: string, table: string, query = ''): string {
  return `/rows?db=${db}&table=${table}${query}`;
}

/** Every page by offset, until a short one. */
async function walkByOffset(tt: tap.Test, db: string, table: string, limit: number): Promise<Value[][]> {
  const rows: Value[][] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await getOk(tt, rowsPath(db, table, `&limit=${limit}&offset=${offset}`));
    rows.push(...page.rows);
    if (page.rows.length < limit) return rows;
  }
}

/** Every page by cursor, from the first page's next until a page has none; checks each page's fields on the way. */
async function walkByCursor(tt: tap.Test, db: string, table: string, limit: number): Promise<Value[][]> {
  const first = await getOk(tt, rowsPath(db, table, `&limit=${limit}`));
  const rows: Value[][] = [...first.rows];
  let next: unknown = first.next;
  for (let pages = 0; next !== undefined; pages++) {
    if (pages > 1000) throw new Error('the walk does not end');
    tt.type(next, 'string', 'next is a string');
    tt.match(next, /^[A-Za-z0-9_-]+$/, 'next is URL-safe as it is');
    const page = await getOk(tt, rowsPath(db, table, `&limit=${limit}&after=${String(next)}`));
    tt.equal(page.after, next, 'a cursor page says which cursor it came after');
    tt.notOk('offset' in page, 'a cursor page has no offset');
    tt.equal(page.total, first.total, 'every page counts the whole table');
    tt.ok(page.rows.length === limit || page.next === undefined, 'only the last page is short');
    rows.push(...page.rows);
    next = page.next;
  }
  return rows;
}

/** The offset walk, the cursor walk and one big page agree, and hold `count` distinct rows. */
async function checkWalks(tt: tap.Test, db: string, table: string, count: number): Promise<void> {
  const all = (await getOk(tt, rowsPath(db, table, '&limit=1000'))).rows as Value[][];
  tt.equal(all.length, count, `${table}: one page holds every row`);
  for (const limit of [1, 7, count]) {
    const byOffset = await walkByOffset(tt, db, table, limit);
    const byCursor = await walkByCursor(tt, db, table, limit);
    tt.strictSame(byOffset, all, `${table}, limit ${limit}: offset pages cover every row in order`);
    tt.strictSame(byCursor, all, `${table}, limit ${limit}: cursor pages give the same rows in the same order`);
    tt.equal(new Set(byCursor.map((row) => JSON.stringify(row))).size, count, `${table}, limit ${limit}: no row twice`);
  }
}

/** Inserts in a scrambled order, so that insertion order is not key order. */
function scrambled(count: number, row: (n: number) => string): string {
  return Array.from({ length: count }, (_, i) => row((i * 37) % count)).join(', ');
}

t.test('a rowid table (no primary key) pages by rowid, gaps and all', async (tt) => {
  const values = scrambled(53, (n) => `('r${n}', ${n})`);
  const db = await freshDb(
    tt,
    `CREATE TABLE plain (label TEXT, n INT); INSERT INTO plain VALUES ${values}; DELETE FROM plain WHERE n % 5 = 0`,
  );
  await checkWalks(tt, db, 'plain', 42);
  const page = await getOk(tt, rowsPath(db, 'plain', '&limit=3'));
  tt.strictSame(
    page.rows.map((row: Value[]) => row[1]),
    [37, 21, 42],
    'insertion (rowid) order, not value order',
  );
});

t.test('an INTEGER PRIMARY KEY table pages by that key', async (tt) => {
  const values = scrambled(40, (n) => `(${(n - 20) * 1000}, 'v${n}')`);
  const db = await freshDb(tt, `CREATE TABLE ipk (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO ipk VALUES ${values}`);
  await checkWalks(tt, db, 'ipk', 40);
  const page = await getOk(tt, rowsPath(db, 'ipk', '&limit=2'));
  tt.strictSame(
    page.rows,
    [
      [-20000, 'v0'],
      [-19000, 'v1'],
    ],
    'negative keys first',
  );
});

t.test('a WITHOUT ROWID table with a composite text key pages by (a, b)', async (tt) => {
  // Case, the empty string, quotes and non-ASCII text all sort by SQLite's BINARY collation.
  const texts = ['', 'A', 'a', 'b', "o'k", 'é', 'Z', 'zz', '"q"', '10', '9'];
  const pairs = texts.flatMap((a, i) => texts.filter((_, j) => (i + j) % 3 !== 0).map((b) => [a, b] as const));
  const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`;
  const values = pairs
    .map(([a, b], n) => `(${quote(a)}, ${quote(b)}, ${n})`)
    .reverse()
    .join(', ');
  const db = await freshDb(
    tt,
    `CREATE TABLE wr (a TEXT, b TEXT, v INT, PRIMARY KEY (a, b)) WITHOUT ROWID; INSERT INTO wr VALUES ${values}`,
  );
  await checkWalks(tt, db, 'wr', pairs.length);
  const schema = (await getOk(tt, `/schema?db=${db}&table=wr`)).table;
  tt.equal(schema.withoutRowid, true, 'the table is WITHOUT ROWID');
});

t.test('a rowid table with a text primary key pages by that key', async (tt) => {
  const values = scrambled(30, (n) => `('k${String(n).padStart(2, '0')}', ${n})`);
  const db = await freshDb(tt, `CREATE TABLE k (code TEXT PRIMARY KEY, n INT); INSERT INTO k VALUES ${values}`);
  await checkWalks(tt, db, 'k', 30);
});

t.test('an empty table has one page and no next', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE vacant (id INTEGER PRIMARY KEY, v TEXT)');
  const page = await getOk(tt, rowsPath(db, 'vacant'));
  tt.strictSame([page.total, page.rows, page.next], [0, [], undefined]);
});

t.test('next is given only when a row follows the page', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE few (id INTEGER PRIMARY KEY); INSERT INTO few VALUES (1), (2), (3), (4)');
  tt.type((await getOk(tt, rowsPath(db, 'few', '&limit=3'))).next, 'string', 'a row follows');
  tt.equal((await getOk(tt, rowsPath(db, 'few', '&limit=4'))).next, undefined, 'a full page that ends the table');
  tt.equal((await getOk(tt, rowsPath(db, 'few', '&limit=2&offset=2'))).next, undefined, 'the last offset page');
  tt.equal((await getOk(tt, rowsPath(db, 'few', '&limit=0'))).next, undefined, 'limit 0 has no row to point after');
});

t.test("an offset page's next continues where the offset walk would", async (tt) => {
  const values = scrambled(20, (n) => `(${n * 3}, ${n})`);
  const db = await freshDb(tt, `CREATE TABLE sw (id INTEGER PRIMARY KEY, n INT); INSERT INTO sw VALUES ${values}`);
  const byOffset = await getOk(tt, rowsPath(db, 'sw', '&limit=5&offset=10'));
  const byCursor = await getOk(tt, rowsPath(db, 'sw', `&limit=5&after=${String(byOffset.next)}`));
  const thenOffset = await getOk(tt, rowsPath(db, 'sw', '&limit=5&offset=15'));
  tt.strictSame(byCursor.rows, thenOffset.rows, 'switching from offset to cursor loses and repeats nothing');
});

t.test('a cursor follows rows written between pages without losing or repeating any', async (tt) => {
  const db = await freshDb(
    tt,
    "CREATE TABLE live (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO live VALUES (10, 'a'), (20, 'b'), (30, 'c'), (40, 'd')",
  );
  const first = await getOk(tt, rowsPath(db, 'live', '&limit=2'));
  const reply = await server.exec(
    db,
    "DELETE FROM live WHERE id = 10; INSERT INTO live VALUES (5, 'early'), (25, 'later')",
  );
  tt.equal(reply.status, 200);
  const second = await getOk(tt, rowsPath(db, 'live', `&limit=10&after=${String(first.next)}`));
  tt.strictSame(
    second.rows,
    [
      [25, 'later'],
      [30, 'c'],
      [40, 'd'],
    ],
    'the page starts after the key, wherever that row now stands',
  );
});

t.test('refuses what a cursor page cannot follow, with a code', async (tt) => {
  const db = await freshDb(
    tt,
    'CREATE TABLE one (id INTEGER PRIMARY KEY); CREATE TABLE two (id INTEGER PRIMARY KEY); INSERT INTO one VALUES (1), (2), (3); INSERT INTO two VALUES (1), (2)',
  );
  const next = String((await getOk(tt, rowsPath(db, 'one', '&limit=1'))).next);
  isError(tt, await server.get(rowsPath(db, 'one', `&after=${next}&offset=0`)), 400, 1020, 'after with offset 0');
  isError(tt, await server.get(rowsPath(db, 'one', `&offset=5&after=${next}`)), 400, 1020, 'after with an offset');
  isError(tt, await server.get(rowsPath(db, 'two', `&after=${next}`)), 400, 1019, 'a cursor of another table');
  isError(tt, await server.get(rowsPath(db, 'one', `&after=${next}&after=${next}`)), 400, 1008, 'after twice');
  isError(tt, await server.get(rowsPath(db, 'nope', `&after=${next}`)), 404, 2002, 'a missing table');
  const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
  const record = JSON.parse(Buffer.from(next, 'base64url').toString('utf8')) as Record<string, unknown>;
  const bad: Record<string, string> = {
    empty: '',
    'not base64url': '%2B%2F%3D',
    'not JSON': encode('{"v":1,'),
    'JSON of another shape': encode('[1,2,3]'),
    'another version': encode(JSON.stringify({ ...record, v: 2 })),
    'a value of no known kind': encode(JSON.stringify({ ...record, x: [['q', '1']] })),
    'an integer that is not one': encode(JSON.stringify({ ...record, x: [['i', '1.5']] })),
    'an integer beyond 64 bits': encode(JSON.stringify({ ...record, x: [['i', '9223372036854775808']] })),
    'a key with a value missing': encode(JSON.stringify({ ...record, x: [] })),
    'a NULL in a key that has none': encode(JSON.stringify({ ...record, x: [null] })),
    'far too long': 'A'.repeat(9000),
  };
  for (const [label, cursor] of Object.entries(bad)) {
    isError(tt, await server.get(rowsPath(db, 'one', `&after=${cursor}`)), 400, 1018, label);
  }
  const otherKey = encode(JSON.stringify({ ...record, k: ['v'] }));
  isError(tt, await server.get(rowsPath(db, 'one', `&after=${otherKey}`)), 400, 1019, 'a cursor of another key');
  // An edited cursor that is still well formed only moves the start, like any offset would.
  const moved = encode(JSON.stringify({ ...record, x: [['i', '2']] }));
  tt.strictSame(
    (await getOk(tt, rowsPath(db, 'one', `&after=${moved}`))).rows,
    [[3]],
    'a well-formed edited cursor is followed',
  );
});

t.test('a table whose columns take every name of the rowid pages by offset only', async (tt) => {
  const db = await freshDb(
    tt,
    'CREATE TABLE shadow (rowid INT, _rowid_ INT, oid INT); INSERT INTO shadow VALUES (2, 2, 2), (1, 1, 1)',
  );
  const page = await getOk(tt, rowsPath(db, 'shadow', '&limit=1'));
  // "rowid" names the column here, as it always did for such a table.
  tt.strictSame([page.rows, page.next], [[[1, 1, 1]], undefined], 'offset pages as before, without next');
  const cursor = Buffer.from(JSON.stringify({ v: 1, t: 'shadow', k: ['rowid'], x: [['i', '1']] })).toString(
    'base64url',
  );
  isError(tt, await server.get(rowsPath(db, 'shadow', `&after=${cursor}`)), 400, 1021, 'no key a cursor can follow');
});
