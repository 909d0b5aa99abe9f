/**
 * GET /tables, /schema and /rows against the real server. Multi-DB mode
 * on one shared server with a fresh database per test, unless a test starts
 * its own.
 */
import path from 'node:path';
import t from 'tap';
import { serverPerFile, startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { execOk } from './helpers/exec';
import { scratchDir } from './helpers/scratch-dir';

type Value = number | string | boolean | null;

interface Reference {
  table: string;
  column: string;
  onDelete: string;
  onUpdate: string;
}

interface Column {
  name: string;
  type: string;
  declaredType?: string;
  pk: boolean;
  notNull: boolean;
  unique: boolean;
  hasDefault: boolean;
  default: Value;
  defaultSql?: string | null;
  references: Reference | null;
}

interface Index {
  name: string;
  column: string;
  rootPage: number;
  unique: boolean;
}

interface TableRecord {
  name: string;
  primaryKey: string;
  rootPage: number;
  columns: Column[];
  indexes: Index[];
}

// Each test may start a server; under a loaded machine a start can take seconds.
t.setTimeout(120_000);

const root = scratchDir(t);
let server!: TestServer;
let dbCount = 0;
serverPerFile(t, root, (started) => (server = started));

async function freshDb(tt: tap.Test, setup = ''): Promise<string> {
  const name = `db${++dbCount}`;
  const created = await server.post('/dbs', { db: name });
  tt.equal(created.status, 201, `POST /dbs ${name}: ${created.text}`);
  if (setup !== '') await execOk(tt, server, name, setup);
  return name;
}

/** GET that must answer 200 with ok true; returns the body. */
async function getOk(tt: tap.Test, pathAndQuery: string, on: TestServer = server): Promise<any> {
  const reply = await on.get(pathAndQuery);
  tt.equal(reply.status, 200, `GET ${pathAndQuery} → ${reply.text.slice(0, 300)}`);
  tt.equal(reply.body?.ok, true, `GET ${pathAndQuery}: ok`);
  return reply.body ?? {};
}

async function schemaOf(tt: tap.Test, db: string, table: string): Promise<TableRecord> {
  return (await getOk(tt, `/schema?db=${db}&table=${encodeURIComponent(table)}`)).table as TableRecord;
}

/** The fields a column's schema record has, nothing else. */
function listedColumn(column: Column): Column {
  const { name, type, pk, notNull, unique, hasDefault, references } = column;
  return { name, type, pk, notNull, unique, hasDefault, default: column.default, references };
}

function column(record: TableRecord | undefined, name: string): Column {
  const found = record?.columns.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no column ${name} in ${record?.name}`);
  return listedColumn(found);
}

const NO_DEFAULT = { hasDefault: false, default: null } as const;
const PLAIN = { pk: false, notNull: false, unique: false, references: null } as const;

/** Asserts the shape of one table record: every listed field, with its type. */
function checkRecordShape(tt: tap.Test, record: TableRecord): void {
  tt.type(record.name, 'string', 'name');
  tt.type(record.primaryKey, 'string', `${record.name}: primaryKey`);
  tt.ok(Number.isInteger(record.rootPage) && record.rootPage > 0, `${record.name}: rootPage is a positive integer`);
  tt.ok(Array.isArray(record.columns) && record.columns.length > 0, `${record.name}: columns`);
  tt.ok(Array.isArray(record.indexes), `${record.name}: indexes`);
  for (const c of record.columns) {
    const where = `${record.name}.${c.name}`;
    tt.ok(['INT', 'TEXT', 'FLOAT', 'BOOL', 'BLOB'].includes(c.type), `${where}: type ${c.type}`);
    for (const flag of ['pk', 'notNull', 'unique', 'hasDefault'] as const)
      tt.type(c[flag], 'boolean', `${where}: ${flag}`);
    tt.ok('default' in c, `${where}: default present`);
    tt.ok('references' in c, `${where}: references present`);
    tt.ok(
      c.references === null || (typeof c.references === 'object' && typeof c.references.table === 'string'),
      `${where}: references null or object`,
    );
    if (!c.hasDefault) tt.equal(c.default, null, `${where}: no default means default null`);
  }
  for (const index of record.indexes) {
    tt.type(index.name, 'string');
    tt.type(index.column, 'string');
    tt.type(index.unique, 'boolean');
    tt.ok(Number.isInteger(index.rootPage) && index.rootPage > 0, `${index.name}: rootPage is a positive integer`);
  }
}

// ── GET /tables ────────────────────────────────────────────────────────────────

const SHOP = `
  CREATE TABLE parent (id INT PRIMARY KEY, label TEXT NOT NULL UNIQUE);
  CREATE TABLE child (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id INT REFERENCES parent(id) ON DELETE CASCADE,
    ok BOOL DEFAULT FALSE);
  CREATE INDEX child_parent ON child (parent_id);
  CREATE TABLE loose (note TEXT);
  INSERT INTO parent VALUES (1, 'one');
  INSERT INTO child (parent_id) VALUES (1)`;

t.test('lists every table with its full record', async (tt) => {
  const db = await freshDb(tt, SHOP);
  const internal = await server.exec(
    db,
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'sqlite_%'",
  );
  tt.strictSame(internal.body?.results?.[0]?.rows, [['sqlite_sequence']], 'AUTOINCREMENT made an internal table');

  const body = await getOk(tt, `/tables?db=${db}`);
  const tables = body.tables as TableRecord[];
  tt.strictSame(
    tables.map((table) => table.name).sort(),
    ['child', 'loose', 'parent'],
    'user tables only, no sqlite_%',
  );
  for (const table of tables) {
    checkRecordShape(tt, table);
    tt.strictSame(table, await schemaOf(tt, db, table.name), `${table.name}: the same record as /schema`);
  }
  const child = tables.find((table) => table.name === 'child');
  tt.strictSame(column(child, 'parent_id').references, {
    table: 'parent',
    column: 'id',
    onDelete: 'CASCADE',
    onUpdate: 'RESTRICT',
  });
  tt.strictSame(column(child, 'ok'), { name: 'ok', type: 'BOOL', ...PLAIN, hasDefault: true, default: false });
  tt.strictSame(
    child?.indexes.map(({ name, column: c, unique }) => ({ name, column: c, unique })),
    [{ name: 'child_parent', column: 'parent_id', unique: false }],
  );
  const parent = tables.find((table) => table.name === 'parent');
  tt.strictSame(column(parent, 'label'), {
    name: 'label',
    type: 'TEXT',
    pk: false,
    notNull: true,
    unique: true,
    references: null,
    ...NO_DEFAULT,
  });
  tt.equal(tables.find((table) => table.name === 'loose')?.primaryKey, '');
});

t.test('lists no tables for an empty database and needs an existing db', async (tt) => {
  const db = await freshDb(tt);
  tt.strictSame((await getOk(tt, `/tables?db=${db}`)).tables, []);
  isError(tt, await server.get('/tables'), 400, 7003, 'no db in multi-DB mode');
  isError(tt, await server.get('/tables?db=nope'), 404, 2001, 'unknown db');
});

// ── GET /schema ────────────────────────────────────────────────────────────────

t.test('shows every field of a table with a composite key, indexes and references', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE owners (id INT PRIMARY KEY, name TEXT);
    CREATE TABLE pets (
      owner_id INT NOT NULL REFERENCES owners(id),
      seq INT NOT NULL,
      name TEXT NOT NULL UNIQUE,
      weight FLOAT,
      vaccinated BOOL NOT NULL DEFAULT TRUE,
      vet INT REFERENCES owners(id) ON DELETE CASCADE,
      PRIMARY KEY (owner_id, seq));
    CREATE INDEX pets_weight ON pets (weight);
    CREATE UNIQUE INDEX pets_vet ON pets (vet)`,
  );
  const pets = await schemaOf(tt, db, 'pets');
  checkRecordShape(tt, pets);
  tt.equal(pets.name, 'pets');
  tt.equal(pets.primaryKey, 'owner_id,seq', 'a composite key joined by a comma');
  tt.strictSame(pets.columns.map(listedColumn), [
    {
      name: 'owner_id',
      type: 'INT',
      pk: true,
      notNull: true,
      unique: false,
      ...NO_DEFAULT,
      references: { table: 'owners', column: 'id', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    },
    { name: 'seq', type: 'INT', pk: true, notNull: true, unique: false, ...NO_DEFAULT, references: null },
    { name: 'name', type: 'TEXT', pk: false, notNull: true, unique: true, ...NO_DEFAULT, references: null },
    { name: 'weight', type: 'FLOAT', ...PLAIN, ...NO_DEFAULT },
    {
      name: 'vaccinated',
      type: 'BOOL',
      pk: false,
      notNull: true,
      unique: false,
      hasDefault: true,
      default: true,
      references: null,
    },
    {
      name: 'vet',
      type: 'INT',
      ...PLAIN,
      ...NO_DEFAULT,
      references: { table: 'owners', column: 'id', onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
    },
  ]);
  tt.strictSame(
    pets.indexes
      .map(({ name, column: c, unique }) => ({ name, column: c, unique }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    [
      { name: 'pets_vet', column: 'vet', unique: true },
      { name: 'pets_weight', column: 'weight', unique: false },
    ],
    'the CREATE INDEX indexes, not the UNIQUE constraint',
  );
  const pages = new Set([pets.rootPage, ...pets.indexes.map((index) => index.rootPage)]);
  tt.equal(pages.size, 3, 'the table and each index have their own root page');

  const owners = await schemaOf(tt, db, 'owners');
  tt.equal(owners.primaryKey, 'id', 'a single key');
  tt.strictSame(column(owners, 'id'), {
    name: 'id',
    type: 'INT',
    pk: true,
    notNull: false,
    unique: false,
    ...NO_DEFAULT,
    references: null,
  });
  tt.strictSame(owners.indexes, []);
  tt.not(owners.rootPage, pets.rootPage);
  await execOk(tt, server, db, 'CREATE TABLE bare (a TEXT, b INT)');
  tt.equal((await schemaOf(tt, db, 'bare')).primaryKey, '', "'' when there is no key");
  tt.equal((await schemaOf(tt, db, 'PETS')).name, 'pets', 'found without regard to case, named as stored');
});

t.test('reports defaults by the documented rules', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE d (
      none_ INT,
      explicit_null TEXT DEFAULT NULL,
      num INT DEFAULT 42,
      neg INT DEFAULT -7,
      fl FLOAT DEFAULT 2.5,
      str TEXT DEFAULT 'it''s',
      empty TEXT DEFAULT '',
      flag BOOL DEFAULT TRUE,
      off BOOL DEFAULT FALSE,
      created TEXT DEFAULT CURRENT_TIMESTAMP)`,
  );
  const d = await schemaOf(tt, db, 'd');
  const defaults = Object.fromEntries(d.columns.map((c) => [c.name, [c.hasDefault, c.default]]));
  tt.strictSame(defaults, {
    none_: [false, null],
    explicit_null: [true, null],
    num: [true, 42],
    neg: [true, -7],
    fl: [true, 2.5],
    str: [true, "it's"],
    empty: [true, ''],
    flag: [true, true],
    off: [true, false],
    created: [true, 'CURRENT_TIMESTAMP'],
  });
});

t.test('reports references with RESTRICT unless CASCADE is declared', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE p (id INT PRIMARY KEY, code TEXT UNIQUE);
    CREATE TABLE r (
      plain INT,
      bare INT REFERENCES p(id),
      restrict_ INT REFERENCES p(id) ON DELETE RESTRICT,
      cascade_ INT REFERENCES p(id) ON DELETE CASCADE,
      by_code TEXT REFERENCES p(code))`,
  );
  const r = await schemaOf(tt, db, 'r');
  tt.strictSame(Object.fromEntries(r.columns.map((c) => [c.name, c.references])), {
    plain: null,
    bare: { table: 'p', column: 'id', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    restrict_: { table: 'p', column: 'id', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    cascade_: { table: 'p', column: 'id', onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
    by_code: { table: 'p', column: 'code', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
  });
});

t.test('answers /schema errors with their codes', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  const missing = await server.get(`/schema?db=${db}&table=nope`);
  isError(tt, missing, 404, 2002, 'a missing table');
  tt.strictSame(
    Object.keys(missing.body ?? {}).filter((key) => key === 'ok' || key === 'error'),
    ['ok', 'error'],
  );
  isError(tt, await server.get(`/schema?db=${db}&table=sqlite_schema`), 404, 2002, 'an internal table');
  isError(tt, await server.get(`/schema?db=${db}`), 400, 1008, 'no table');
  isError(tt, await server.get(`/schema?db=${db}&table=`), 400, 1008, 'an empty table');
  isError(tt, await server.get('/schema?table=t'), 400, 7003, 'no db in multi-DB mode');
  isError(tt, await server.get('/schema?db=nope&table=t'), 404, 2001, 'an unknown db');
});

// ── Rebuilding a table from its record ─────────────────────────────────────────

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** SQL that may follow DEFAULT as it is; anything else is an expression and needs parentheses. */
const STANDALONE_DEFAULT =
  /^(NULL|TRUE|FALSE|CURRENT_TIME|CURRENT_DATE|CURRENT_TIMESTAMP|[+-]?\d+(\.\d+)?([eE][+-]?\d+)?|'(?:[^']|'')*')$/i;

function defaultClause(c: Column): string {
  if (typeof c.defaultSql === 'string')
    return STANDALONE_DEFAULT.test(c.defaultSql) ? c.defaultSql : `(${c.defaultSql})`;
  const value = c.default;
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  return `'${value.replace(/'/g, "''")}'`;
}

/** CREATE TABLE and CREATE INDEX statements in the user dialect, from the record alone. */
function rebuild(record: TableRecord): string[] {
  const key = record.primaryKey === '' ? [] : record.primaryKey.split(',');
  const defs = record.columns.map((c) => {
    // The declared spelling, when there is one, rebuilds the same record (declaredType included).
    let sql = `${quote(c.name)} ${c.declaredType ?? c.type}`;
    if (c.pk && key.length === 1) sql += ' PRIMARY KEY';
    if (c.notNull) sql += ' NOT NULL';
    if (c.unique) sql += ' UNIQUE';
    if (c.hasDefault) sql += ` DEFAULT ${defaultClause(c)}`;
    if (c.references) {
      sql += ` REFERENCES ${quote(c.references.table)}(${quote(c.references.column)})`;
      if (c.references.onDelete !== 'RESTRICT') sql += ` ON DELETE ${c.references.onDelete}`;
      if (c.references.onUpdate !== 'RESTRICT') sql += ` ON UPDATE ${c.references.onUpdate}`;
    }
    return sql;
  });
  if (key.length > 1) defs.push(`PRIMARY KEY (${key.map(quote).join(', ')})`);
  const indexes = record.indexes.map((index) => {
    const columns = index.column.split(',').map(quote).join(', ');
    return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quote(index.name)} ON ${quote(record.name)} (${columns})`;
  });
  return [`CREATE TABLE ${quote(record.name)} (${defs.join(', ')})`, ...indexes];
}

function withoutRootPages(record: TableRecord): TableRecord {
  return { ...record, rootPage: 0, indexes: record.indexes.map((index) => ({ ...index, rootPage: 0 })) };
}

t.test('rebuilds each table from its /schema record into an equal table', async (tt) => {
  const source = await freshDb(
    tt,
    `
    CREATE TABLE r_owner (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL UNIQUE, joined TEXT DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE r_pet (
      owner_id INT NOT NULL REFERENCES r_owner(id) ON DELETE CASCADE,
      seq INT NOT NULL,
      name TEXT DEFAULT 'it''s',
      weight FLOAT DEFAULT -1.5,
      vaccinated BOOL NOT NULL DEFAULT TRUE,
      PRIMARY KEY (owner_id, seq));
    CREATE INDEX r_pet_weight ON r_pet (weight);
    CREATE UNIQUE INDEX r_pet_name ON r_pet (name);
    CREATE TABLE r_log (
      msg TEXT,
      "group" INT DEFAULT 0,
      "full name" STRING,
      at_ms BIGINT DEFAULT NULL,
      vet INT REFERENCES r_owner(id),
      score DOUBLE PRECISION DEFAULT (1 + 2),
      seen BOOLEAN);
    CREATE INDEX r_log_group ON r_log ("group");
    CREATE TABLE r_flag (code TEXT PRIMARY KEY, enabled BOOL DEFAULT FALSE, ratio REAL NOT NULL DEFAULT 0.5, big INT DEFAULT 9000000000)`,
  );
  const target = await freshDb(tt);
  const order = ['r_owner', 'r_pet', 'r_log', 'r_flag']; // parents first
  for (const name of order) {
    const before = await schemaOf(tt, source, name);
    const statements = rebuild(before);
    await execOk(tt, server, target, statements.join(';\n'));
    const after = await schemaOf(tt, target, name);
    tt.strictSame(withoutRootPages(after), withoutRootPages(before), `${name}: ${statements.join('; ')}`);
  }
  const all = async (db: string): Promise<TableRecord[]> =>
    ((await getOk(tt, `/tables?db=${db}`)).tables as TableRecord[]).map(withoutRootPages);
  tt.strictSame(await all(target), await all(source), 'the two databases list equal tables');

  // The rebuilt tables behave like the originals: defaults, BOOL, UNIQUE and the cascade.
  const rows = async (sql: string): Promise<unknown> => (await server.exec(target, sql)).body?.results?.at(-1)?.rows;
  await execOk(
    tt,
    server,
    target,
    "INSERT INTO r_owner (id, name) VALUES (1, 'ann'); INSERT INTO r_pet (owner_id, seq) VALUES (1, 1); INSERT INTO r_flag (code) VALUES ('x'); INSERT INTO r_log (msg) VALUES ('m')",
  );
  tt.strictSame(await rows('SELECT name, weight, vaccinated FROM r_pet'), [["it's", -1.5, true]]);
  tt.strictSame(await rows('SELECT enabled, ratio, big FROM r_flag'), [[false, 0.5, 9000000000]]);
  tt.strictSame(await rows('SELECT "group", at_ms, score FROM r_log'), [[0, null, 3]]);
  isError(
    tt,
    await server.exec(target, "INSERT INTO r_owner (id, name) VALUES (2, 'ann')"),
    400,
    3002,
    'UNIQUE survives the rebuild',
  );
  isError(tt, await server.exec(target, 'UPDATE r_pet SET vaccinated = 2'), 400, 4001, 'BOOL survives the rebuild');
  await execOk(tt, server, target, 'DELETE FROM r_owner WHERE id = 1');
  tt.strictSame(await rows('SELECT count(*) FROM r_pet'), [[0]], 'ON DELETE CASCADE survives the rebuild');
});

// ── GET /rows ──────────────────────────────────────────────────────────────────

/** 60 rows keyed 'k00'..'k59', inserted out of key order. */
function shuffledKeys(): string {
  const values = Array.from({ length: 60 }, (_, i) => (i * 37) % 60).map(
    (n) => `('k${String(n).padStart(2, '0')}', ${n})`,
  );
  return `CREATE TABLE k (code TEXT PRIMARY KEY, n INT); INSERT INTO k VALUES ${values.join(', ')}`;
}

function rowsPath(db: string, table: string, query = ''): string {
  return `/rows?db=${db}&table=${table}${query}`;
}

t.test('pages rows in primary-key order with limit 25 and offset 0 by default', async (tt) => {
  const db = await freshDb(tt, shuffledKeys());
  const first = await getOk(tt, rowsPath(db, 'k'));
  tt.strictSame(
    {
      db: first.db,
      table: first.table,
      total: first.total,
      limit: first.limit,
      offset: first.offset,
      columns: first.columns,
    },
    { db: `${db}.db`, table: 'k', total: 60, limit: 25, offset: 0, columns: ['code', 'n'] },
  );
  const keys = (rows: Value[][]): Value[] => rows.map((row) => row[0] ?? null);
  const expected = Array.from({ length: 60 }, (_, n) => `k${String(n).padStart(2, '0')}`);
  tt.strictSame(keys(first.rows), expected.slice(0, 25), 'the first page');
  tt.strictSame(first.rows[3], ['k03', 3], 'rows are arrays in column order');
  const second = await getOk(tt, rowsPath(db, 'k', '&offset=25'));
  const third = await getOk(tt, rowsPath(db, 'k', '&limit=25&offset=50'));
  tt.equal(second.offset, 25);
  tt.strictSame(keys(second.rows), expected.slice(25, 50), 'the second page');
  tt.strictSame(keys(third.rows), expected.slice(50), 'the last, short page');
  tt.strictSame(
    [...keys(first.rows), ...keys(second.rows), ...keys(third.rows)],
    expected,
    'disjoint pages cover every row once',
  );
  const past = await getOk(tt, rowsPath(db, 'k', '&offset=60'));
  tt.strictSame([past.total, past.rows], [60, []], 'past the end');
  const small = await getOk(tt, rowsPath(db, 'k', '&limit=3&offset=10'));
  tt.strictSame(small.rows, [
    ['k10', 10],
    ['k11', 11],
    ['k12', 12],
  ]);
  tt.equal(small.limit, 3);
});

t.test('pages rows in rowid order when the table has no primary key', async (tt) => {
  const values = Array.from({ length: 60 }, (_, i) => `('row', ${60 - i})`).join(', ');
  const db = await freshDb(tt, `CREATE TABLE nopk (label TEXT, n INT); INSERT INTO nopk VALUES ${values}`);
  const page = await getOk(tt, rowsPath(db, 'nopk', '&limit=5&offset=10'));
  tt.strictSame(
    page.rows.map((row: Value[]) => row[1]),
    [50, 49, 48, 47, 46],
    'insertion order, not value order',
  );
  tt.equal(page.total, 60);
});

t.test('pages rows in the order of a composite primary key', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE cp (a INT, b TEXT, v INT, PRIMARY KEY (a, b));
    INSERT INTO cp VALUES (2, 'x', 1), (1, 'z', 2), (2, 'a', 3), (1, 'b', 4), (3, 'a', 5)`,
  );
  const page = await getOk(tt, rowsPath(db, 'cp'));
  tt.strictSame(page.rows, [
    [1, 'b', 4],
    [1, 'z', 2],
    [2, 'a', 3],
    [2, 'x', 1],
    [3, 'a', 5],
  ]);
  const second = await getOk(tt, rowsPath(db, 'cp', '&limit=2&offset=2'));
  tt.strictSame(second.rows, [
    [2, 'a', 3],
    [2, 'x', 1],
  ]);
});

t.test('clamps a limit above 1000 to 1000', async (tt) => {
  const db = await freshDb(
    tt,
    `
    CREATE TABLE many (n INT PRIMARY KEY);
    INSERT INTO many (n) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1100) SELECT x FROM c`,
  );
  const page = await getOk(tt, rowsPath(db, 'many', '&limit=5000'));
  tt.equal(page.limit, 1000, 'the response says 1000');
  tt.equal(page.rows.length, 1000);
  tt.equal(page.total, 1100);
  tt.strictSame(page.rows[999], [1000]);
  const exact = await getOk(tt, rowsPath(db, 'many', '&limit=1000&offset=1000'));
  tt.strictSame([exact.limit, exact.rows.length], [1000, 100]);
  const none = await getOk(tt, rowsPath(db, 'many', '&limit=0'));
  tt.strictSame([none.limit, none.rows, none.total], [0, [], 1100], 'limit 0 is a valid count');
});

t.test('refuses a limit or offset that is not a non-negative integer', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  for (const query of [
    '&limit=-1',
    '&limit=abc',
    '&offset=1.5',
    '&offset=-3',
    '&limit=1e3',
    '&limit=',
    '&limit=10&limit=20',
  ]) {
    isError(tt, await server.get(rowsPath(db, 't', query)), 400, 1008, query);
  }
});

t.test('answers /rows errors with their codes', async (tt) => {
  const db = await freshDb(tt, 'CREATE TABLE t (id INT PRIMARY KEY)');
  isError(tt, await server.get(rowsPath(db, 'nope')), 404, 2002, 'a missing table');
  isError(tt, await server.get(`/rows?db=${db}`), 400, 1008, 'no table');
  isError(tt, await server.get('/rows?table=t'), 400, 7003, 'no db in multi-DB mode');
  isError(tt, await server.get('/rows?db=nope&table=t'), 404, 2001, 'an unknown db');
});

t.test('reads BOOL values as true and false', async (tt) => {
  const db = await freshDb(
    tt,
    'CREATE TABLE b (id INT PRIMARY KEY, ok BOOL, n INT); INSERT INTO b VALUES (1, TRUE, 1), (2, FALSE, 0), (3, NULL, NULL)',
  );
  const page = await getOk(tt, rowsPath(db, 'b'));
  tt.strictSame(
    page.rows,
    [
      [1, true, 1],
      [2, false, 0],
      [3, null, null],
    ],
    'BOOL as booleans, INT as numbers',
  );
});

t.test('serves the single database without db', async (tt) => {
  const dir = scratchDir(tt);
  const single = await startServer(['-db', 'solo.db'], { cwd: dir });
  tt.teardown(async () => {
    await single.stop();
  });
  await execOk(
    tt,
    single,
    undefined,
    "CREATE TABLE t (id INT PRIMARY KEY, ok BOOL, name TEXT); INSERT INTO t VALUES (2, FALSE, 'b'), (1, TRUE, 'a')",
  );
  const page = await getOk(tt, '/rows?table=t', single);
  tt.strictSame(
    {
      db: page.db,
      table: page.table,
      total: page.total,
      limit: page.limit,
      offset: page.offset,
      columns: page.columns,
      rows: page.rows,
    },
    {
      db: 'solo.db',
      table: 't',
      total: 2,
      limit: 25,
      offset: 0,
      columns: ['id', 'ok', 'name'],
      rows: [
        [1, true, 'a'],
        [2, false, 'b'],
      ],
    },
  );
  const tables = (await getOk(tt, '/tables', single)).tables as TableRecord[];
  tt.strictSame(
    tables.map((table) => table.name),
    ['t'],
  );
  const schema = (await getOk(tt, '/schema?table=t', single)).table as TableRecord;
  tt.equal(schema.primaryKey, 'id');
  isError(tt, await single.get('/rows?table=nope'), 404, 2002, 'a missing table in single-DB mode');
});
