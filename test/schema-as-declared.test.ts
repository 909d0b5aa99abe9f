/**
 * The schema record says what a table does, as it was declared: every
 * foreign-key action (ON DELETE and ON UPDATE: SET NULL, SET DEFAULT,
 * CASCADE, RESTRICT; NO ACTION or none reads RESTRICT), kept by a rebuild;
 * and a table made outside sqlscribe (a file served with -db, a file put in
 * -dir) reports `type` by SQLite's affinity rules, `declaredType` as
 * written, and `strict: false`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { readTableSchema, type TableSchema } from '../src/engine/schema/schema';
import { rebuildCreateTable } from '../src/engine/schema/schema-rebuild';
import { classifyStatement } from '../src/engine/dialect/classify';
import { rewriteForStorage } from '../src/engine/dialect/rewrite';
import { splitStatements } from '../src/engine/dialect/split';
import { affinityOf } from '../src/engine/types';
import { execOk } from './helpers/exec';
import { scratchDir } from './helpers/scratch-dir';
import { startServer } from './helpers/server';

/** Foreign keys with every action SQLite has, on delete and on update. */
const ACTIONS = `
  CREATE TABLE parent (id INTEGER PRIMARY KEY, code TEXT UNIQUE);
  CREATE TABLE child (
    id INTEGER PRIMARY KEY,
    set_null INTEGER REFERENCES parent(id) ON DELETE SET NULL,
    set_default INTEGER DEFAULT 0 REFERENCES parent(id) ON DELETE SET DEFAULT ON UPDATE SET DEFAULT,
    cascade_ INTEGER REFERENCES parent(id) ON DELETE CASCADE ON UPDATE CASCADE,
    restrict_ INTEGER REFERENCES parent(id) ON DELETE RESTRICT ON UPDATE RESTRICT,
    no_action INTEGER REFERENCES parent(id) ON DELETE NO ACTION ON UPDATE NO ACTION,
    omitted INTEGER REFERENCES parent(id),
    upd_null TEXT REFERENCES parent(code) ON UPDATE SET NULL
  )`;

const EXPECTED_ACTIONS = {
  set_null: { onDelete: 'SET NULL', onUpdate: 'RESTRICT' },
  set_default: { onDelete: 'SET DEFAULT', onUpdate: 'SET DEFAULT' },
  cascade_: { onDelete: 'CASCADE', onUpdate: 'CASCADE' },
  restrict_: { onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
  no_action: { onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
  omitted: { onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
  upd_null: { onDelete: 'RESTRICT', onUpdate: 'SET NULL' },
};

function actionsOf(schema: TableSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of schema?.columns ?? []) {
    if (column.references === null) continue;
    out[column.name] = { onDelete: column.references.onDelete, onUpdate: column.references.onUpdate };
  }
  return out;
}

/** Run user-dialect SQL the way the service does: each statement rewritten for storage. */
function execUserSql(db: Database.Database, sql: string): void {
  for (const statement of splitStatements(sql)) db.exec(rewriteForStorage(classifyStatement(statement)));
}

t.test('reads every ON DELETE and ON UPDATE action as declared, NO ACTION as RESTRICT', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec(ACTIONS);
  t.strictSame(actionsOf(readTableSchema(db, 'child')), EXPECTED_ACTIONS);
});

t.test('a rebuild from the record keeps each action, and SQLite then does what was declared', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  execUserSql(db, ACTIONS);
  const before = readTableSchema(db, 'child');
  t.strictSame(actionsOf(before), EXPECTED_ACTIONS, 'through the user dialect (a STRICT table)');
  const sql = rebuildCreateTable(before as TableSchema);
  t.match(sql, /"set_null" INTEGER REFERENCES "parent"\("id"\) ON DELETE SET NULL[,)]/);
  t.match(sql, /ON DELETE SET DEFAULT ON UPDATE SET DEFAULT/);
  const fresh = new Database(':memory:');
  t.teardown(() => fresh.close());
  execUserSql(fresh, 'CREATE TABLE parent (id INTEGER PRIMARY KEY, code TEXT UNIQUE)');
  execUserSql(fresh, sql);
  t.strictSame(actionsOf(readTableSchema(fresh, 'child')), EXPECTED_ACTIONS, 'the rebuilt table reads the same');
  fresh.exec(
    "INSERT INTO parent VALUES (0, 'zero'), (1, 'one'); INSERT INTO child VALUES (1, NULL, 1, 1, NULL, NULL, NULL, 'one')",
  );
  fresh.exec('UPDATE parent SET id = 5 WHERE id = 1');
  t.strictSame(
    fresh.prepare('SELECT set_null, set_default, cascade_ FROM child').raw().get(),
    [null, 0, 5],
    'ON UPDATE SET DEFAULT and CASCADE act',
  );
  fresh.exec("UPDATE parent SET code = 'uno' WHERE code = 'one'");
  t.equal(fresh.prepare('SELECT upd_null FROM child').pluck().get(), null, 'ON UPDATE SET NULL acts');
  fresh.exec('UPDATE child SET set_null = 5; DELETE FROM parent WHERE id = 5');
  t.strictSame(fresh.prepare('SELECT count(*) FROM child').pluck().get(), 0, 'ON DELETE CASCADE removed the child');
});

t.test('SQLite affinity rules, in the record names', async (t) => {
  const cases: Array<[string, string]> = [
    ['INT', 'INT'],
    ['integer', 'INT'],
    ['BIGINT', 'INT'],
    ['FLOATING POINT', 'INT'],
    ['POINT', 'INT'],
    ['VARCHAR(20)', 'TEXT'],
    ['NCHAR(5)', 'TEXT'],
    ['CLOB', 'TEXT'],
    ['BLOB SUB_TYPE TEXT', 'TEXT'],
    ['BLOB', 'BLOB'],
    ['', 'BLOB'],
    ['REAL', 'FLOAT'],
    ['DOUBLE PRECISION', 'FLOAT'],
    ['FLOAT', 'FLOAT'],
    ['NUMERIC', 'NUMERIC'],
    ['DECIMAL(10,2)', 'NUMERIC'],
    ['BOOLEAN', 'NUMERIC'],
    ['DATETIME', 'NUMERIC'],
    ['STRING', 'NUMERIC'],
    ['GEOMETRY', 'NUMERIC'],
  ];
  for (const [declared, affinity] of cases) t.equal(affinityOf(declared), affinity, JSON.stringify(declared));
});

/** A file as a course hands it out, made outside sqlscribe: no STRICT, types spelled any way, every action. */
function writeTeachingFile(file: string): void {
  const db = new Database(file);
  db.exec(`${ACTIONS};
    CREATE TABLE film (
      film_id integer PRIMARY KEY, title VARCHAR(255) NOT NULL, description "BLOB SUB_TYPE TEXT",
      rental_rate DECIMAL(4,2) DEFAULT 4.99, price NUMERIC, length SMALLINT, rating varchar ( 10 ),
      last_update TIMESTAMP, special, active BOOLEAN, score REAL, nick STRING, photo BLOB, len INT
    );
    CREATE TABLE typed (id INTEGER PRIMARY KEY, label TEXT, v ANY) STRICT;
    CREATE TABLE notes (id integer PRIMARY KEY, body, at DATETIME);
    CREATE VIEW film_price AS SELECT title, rental_rate FROM film;
    INSERT INTO film (film_id, title, rental_rate, price) VALUES (1, 'ACADEMY DINOSAUR', 65000, 65000);
  `);
  db.close();
}

const FILM_TYPES = [
  // SQLite keeps the names of its own storage types in upper case (INTEGER for integer), every other as written.
  ['film_id', 'INT', 'INTEGER'],
  ['title', 'TEXT', 'VARCHAR(255)'],
  ['description', 'TEXT', 'BLOB SUB_TYPE TEXT'],
  ['rental_rate', 'NUMERIC', 'DECIMAL(4,2)'],
  ['price', 'NUMERIC', undefined],
  ['length', 'INT', 'SMALLINT'],
  ['rating', 'TEXT', 'varchar ( 10 )'],
  ['last_update', 'NUMERIC', 'TIMESTAMP'],
  ['special', 'BLOB', ''],
  ['active', 'BOOL', 'BOOLEAN'],
  ['score', 'FLOAT', 'REAL'],
  ['nick', 'NUMERIC', 'STRING'],
  ['photo', 'BLOB', undefined],
  ['len', 'INT', undefined],
];

interface ReportedColumn {
  name: string;
  type: string | null;
  declaredType?: string;
  references: { onDelete: string; onUpdate: string } | null;
}
interface ReportedTable {
  name: string;
  strict: boolean;
  columns: ReportedColumn[];
}

function typesOf(table: ReportedTable | undefined): unknown[] {
  return (table?.columns ?? []).map((c) => [c.name, c.type, c.declaredType]);
}

t.test('a file served with -db reports its own types, declared types and actions', async (t) => {
  const dir = scratchDir(t);
  const file = path.join(dir, 'sakila.db');
  writeTeachingFile(file);
  const server = await startServer(['-db', file], { cwd: dir });
  t.teardown(() => server.stop());

  const film = await server.get('/schema?table=film');
  t.equal(film.status, 200, film.text);
  const table = film.body.table as ReportedTable;
  t.equal(table.strict, false, 'not strict');
  t.strictSame(typesOf(table), FILM_TYPES, 'type by affinity, declaredType as written');

  const strictTable = (await server.get('/schema?table=typed')).body.table as ReportedTable;
  t.equal(strictTable.strict, true);
  t.strictSame(typesOf(strictTable), [
    ['id', 'INT', undefined],
    ['label', 'TEXT', undefined],
    ['v', 'BLOB', 'ANY'],
  ]);

  const tables = (await server.get('/tables')).body.tables as ReportedTable[];
  const child = tables.find((entry) => entry.name === 'child');
  t.strictSame(actionsOf(child as unknown as TableSchema), EXPECTED_ACTIONS, '/tables says the same');
  t.strictSame(
    typesOf(tables.find((entry) => entry.name === 'film_price')),
    [
      ['title', 'TEXT', undefined],
      ['rental_rate', 'NUMERIC', undefined],
    ],
    "a view's column takes its table column's type",
  );

  const typed = await server.exec(
    undefined,
    'SELECT film_id, title, description, rental_rate, special, active, score, count(*) FROM film',
  );
  t.strictSame(
    typed.body.results?.[0]?.types,
    ['INT', 'TEXT', 'TEXT', 'NUMERIC', null, 'BOOL', 'FLOAT', null],
    "/exec's types say what the record says (no type: null, its values are kept as given)",
  );

  // A NUMERIC column keeps 65000 an integer, as SQLite does: the record's NUMERIC says why.
  const division = await server.exec(undefined, 'SELECT rental_rate / 12, typeof(price) FROM film');
  t.strictSame(division.body.results?.[0]?.rows, [[5416, 'integer']]);
});

t.test('a file put into -dir is reported the same; a table made through /exec reports its actions', async (t) => {
  const dir = scratchDir(t);
  fs.mkdirSync(path.join(dir, 'data'));
  writeTeachingFile(path.join(dir, 'data', 'course.db'));
  const server = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  t.teardown(() => server.stop());
  const film = (await server.get('/schema?db=course&table=film')).body.table as ReportedTable;
  t.strictSame(typesOf(film), FILM_TYPES);

  // A CSV into a column declared without a type keeps its text as text (its BLOB affinity is no BLOB type).
  const csv = await server.request('POST', '/dbs/course/import?table=notes', {
    rawBody: 'id,body,at\n1,aGVsbG8=,2024-01-01\n',
    headers: { 'content-type': 'text/csv' },
  });
  t.equal(csv.status, 200, csv.text);
  const stored = await server.exec('course', 'SELECT body, typeof(body), at, typeof(at) FROM notes');
  t.strictSame(stored.body.results?.[0]?.rows, [['aGVsbG8=', 'text', '2024-01-01', 'text']]);

  t.equal((await server.post('/dbs', { db: 'made' })).status, 201);
  await execOk(t, server, 'made', ACTIONS);
  const made = (await server.get('/schema?db=made&table=child')).body.table as ReportedTable;
  t.equal(made.strict, true, 'made by the service: STRICT');
  t.strictSame(actionsOf(made as unknown as TableSchema), EXPECTED_ACTIONS);
  t.strictSame(
    made.columns.map((c) => c.type),
    ['INT', 'INT', 'INT', 'INT', 'INT', 'INT', 'INT', 'TEXT'],
    'and its types as ever',
  );
});
