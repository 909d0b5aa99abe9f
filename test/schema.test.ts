import t from 'tap';
import Database from 'better-sqlite3';
import {
  boolColumns,
  listTableSchemas,
  readTableSchema,
  type ColumnSchema,
  type TableSchema,
} from '../src/engine/schema/schema';
import { defaultClauseSql } from '../src/engine/schema/schema-defaults';
import { rebuildCreateTable } from '../src/engine/schema/schema-rebuild';
import { classifyStatement } from '../src/engine/dialect/classify';
import { rewriteForStorage } from '../src/engine/dialect/rewrite';
import { splitStatements } from '../src/engine/dialect/split';

function open(sql: string): Database.Database {
  const db = new Database(':memory:');
  db.exec(sql);
  return db;
}

function mustRead(db: Database.Database, table: string): TableSchema {
  const schema = readTableSchema(db, table);
  if (schema === undefined) throw new Error(`no schema for ${table}`);
  return schema;
}

function column(schema: TableSchema, name: string): ColumnSchema {
  const found = schema.columns.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no column ${name}`);
  return found;
}

const PLAIN = { pk: false, notNull: false, unique: false, references: null } as const;
const NO_DEFAULT = { hasDefault: false, default: null, defaultSql: null } as const;

/** Run user-dialect SQL the way the service does: each statement rewritten for storage. */
function execUserSql(db: Database.Database, sql: string): void {
  for (const statement of splitStatements(sql)) db.exec(rewriteForStorage(classifyStatement(statement)));
}

function withoutRootPages(schema: TableSchema): unknown {
  return { ...schema, rootPage: 0, indexes: schema.indexes.map((i) => ({ ...i, rootPage: 0 })) };
}

/** Rebuild `table` from its record into a fresh database (with `setup` first) and read it back. */
function roundTrip(
  db: Database.Database,
  table: string,
  setup = '',
): { before: TableSchema; after: TableSchema; sql: string } {
  const before = mustRead(db, table);
  const sql = rebuildCreateTable(before);
  const fresh = open(setup);
  execUserSql(fresh, sql);
  return { before, after: mustRead(fresh, table), sql };
}

const EXAMPLE = `
  CREATE TABLE parent (id INTEGER PRIMARY KEY, label TEXT) STRICT;
  CREATE TABLE t (id INTEGER PRIMARY KEY, ok INTEGER CHECK (("ok") IN (0, 1)) NOT NULL DEFAULT TRUE,
    name TEXT UNIQUE DEFAULT 'x', score REAL DEFAULT 1.5, p INTEGER REFERENCES parent(id) ON DELETE CASCADE) STRICT;`;

t.test('reads every field of a sqlscribe table', async (t) => {
  const db = open(EXAMPLE);
  const rootPage = (db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 't'").get() as { rootpage: number })
    .rootpage;
  t.strictSame(readTableSchema(db, 't'), {
    name: 't',
    kind: 'table',
    primaryKey: 'id',
    rootPage,
    strict: true,
    withoutRowid: false,
    columns: [
      { name: 'id', type: 'INT', ...PLAIN, pk: true, ...NO_DEFAULT },
      { name: 'ok', type: 'BOOL', ...PLAIN, notNull: true, hasDefault: true, default: true, defaultSql: 'TRUE' },
      { name: 'name', type: 'TEXT', ...PLAIN, unique: true, hasDefault: true, default: 'x', defaultSql: "'x'" },
      { name: 'score', type: 'FLOAT', ...PLAIN, hasDefault: true, default: 1.5, defaultSql: '1.5' },
      {
        name: 'p',
        type: 'INT',
        ...PLAIN,
        ...NO_DEFAULT,
        references: { table: 'parent', column: 'id', onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
      },
    ],
    indexes: [],
    triggers: [],
  });
});

t.test('reports each kind of default in its native type', async (t) => {
  const db = open(`CREATE TABLE d (
    none INTEGER, nul INTEGER DEFAULT NULL, num INTEGER DEFAULT 42, neg INTEGER DEFAULT -5, pos INTEGER DEFAULT +3,
    hex INTEGER DEFAULT 0x10, flt REAL DEFAULT -1.5e2, str TEXT DEFAULT 'it''s', numstr TEXT DEFAULT '12',
    t1 INTEGER CHECK (("t1") IN (0, 1)) DEFAULT TRUE, f1 INTEGER CHECK ("f1" IN (0, 1)) DEFAULT FALSE,
    one INTEGER CHECK (("one") IN (0, 1)) DEFAULT 1, zero INTEGER CHECK ("zero" IN (0, 1)) DEFAULT (0),
    inttrue INTEGER DEFAULT TRUE, ts TEXT DEFAULT CURRENT_TIMESTAMP, expr INTEGER DEFAULT (1+2)) STRICT`);
  const schema = mustRead(db, 'd');
  const pick = (name: string): unknown => {
    const c = column(schema, name);
    return [c.hasDefault, c.default, c.defaultSql];
  };
  t.strictSame(pick('none'), [false, null, null], 'no DEFAULT');
  t.strictSame(pick('nul'), [true, null, 'NULL'], 'DEFAULT NULL');
  t.strictSame(pick('num'), [true, 42, '42'], 'number');
  t.strictSame(pick('neg'), [true, -5, '-5'], 'negative number');
  t.strictSame(pick('pos'), [true, 3, '+3'], 'number with a plus sign');
  t.strictSame(pick('hex'), [true, 16, '0x10'], 'hexadecimal number');
  t.strictSame(pick('flt'), [true, -150, '-1.5e2'], 'float with an exponent');
  t.strictSame(pick('str'), [true, "it's", "'it''s'"], 'string with a quote');
  t.strictSame(pick('numstr'), [true, '12', "'12'"], 'a quoted number stays a string');
  t.strictSame(pick('t1'), [true, true, 'TRUE'], 'TRUE on BOOL');
  t.strictSame(pick('f1'), [true, false, 'FALSE'], 'FALSE on BOOL');
  t.strictSame(pick('one'), [true, true, '1'], '1 on BOOL');
  t.strictSame(pick('zero'), [true, false, '0'], '(0) on BOOL');
  t.strictSame(pick('inttrue'), [true, 1, 'TRUE'], 'TRUE on INT is 1');
  t.strictSame(pick('ts'), [true, 'CURRENT_TIMESTAMP', 'CURRENT_TIMESTAMP'], 'CURRENT_TIMESTAMP as its text');
  t.strictSame(pick('expr'), [true, '1+2', '1+2'], 'an expression as its text');
});

t.test('reads references with and without ON DELETE and to an implicit key', async (t) => {
  const db = open(`
    CREATE TABLE parent (code TEXT PRIMARY KEY) STRICT;
    CREATE TABLE pair (a INTEGER, b INTEGER, PRIMARY KEY (b, a)) STRICT;
    CREATE TABLE child (
      cascade TEXT REFERENCES parent(code) ON DELETE CASCADE, plain TEXT REFERENCES parent(code),
      setnull TEXT REFERENCES Parent ON DELETE SET NULL, implicit TEXT REFERENCES parent,
      missing INTEGER REFERENCES nowhere, x INTEGER, y INTEGER, none INTEGER,
      FOREIGN KEY (x, y) REFERENCES pair) STRICT`);
  const refs = Object.fromEntries(mustRead(db, 'child').columns.map((c) => [c.name, c.references]));
  t.strictSame(refs, {
    cascade: { table: 'parent', column: 'code', onDelete: 'CASCADE', onUpdate: 'RESTRICT' },
    plain: { table: 'parent', column: 'code', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    setnull: { table: 'Parent', column: 'code', onDelete: 'SET NULL', onUpdate: 'RESTRICT' },
    implicit: { table: 'parent', column: 'code', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    missing: { table: 'nowhere', column: '', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    x: { table: 'pair', column: 'b', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    y: { table: 'pair', column: 'a', onDelete: 'RESTRICT', onUpdate: 'RESTRICT' },
    none: null,
  });
});

t.test('reads a composite primary key in key order', async (t) => {
  const db = open('CREATE TABLE w (a TEXT, b INTEGER, c REAL, PRIMARY KEY (b, a)) STRICT, WITHOUT ROWID');
  const schema = mustRead(db, 'w');
  t.equal(schema.primaryKey, 'b,a');
  t.strictSame(
    schema.columns.map((c) => c.pk),
    [true, true, false],
  );
  t.equal(schema.withoutRowid, true);
  t.equal(schema.strict, true);
});

t.test('reports an empty primaryKey for a table without one', async (t) => {
  const schema = mustRead(open('CREATE TABLE n (a INTEGER, b TEXT) STRICT'), 'n');
  t.equal(schema.primaryKey, '');
  t.strictSame(
    schema.columns.map((c) => c.pk),
    [false, false],
  );
});

t.test('lists CREATE INDEX indexes, unique or not, by name', async (t) => {
  const db = open(`CREATE TABLE t (a INTEGER UNIQUE, b TEXT, c REAL) STRICT;
    CREATE INDEX t_b ON t (b); CREATE UNIQUE INDEX t_ab ON t (a, "b"); CREATE INDEX t_expr ON t (lower(b), c)`);
  const roots = new Map(
    (
      db.prepare("SELECT name, rootpage FROM sqlite_schema WHERE type = 'index'").all() as {
        name: string;
        rootpage: number;
      }[]
    ).map((r) => [r.name, r.rootpage]),
  );
  t.strictSame(mustRead(db, 't').indexes, [
    { name: 't_ab', column: 'a,b', rootPage: roots.get('t_ab'), unique: true, columns: ['a', 'b'] },
    { name: 't_b', column: 'b', rootPage: roots.get('t_b'), unique: false, columns: ['b'] },
    { name: 't_expr', column: 'lower(b),c', rootPage: roots.get('t_expr'), unique: false, columns: ['lower(b)', 'c'] },
  ]);
});

t.test('marks unique only for a UNIQUE constraint on the column alone', async (t) => {
  const db = open(`CREATE TABLE u (a INTEGER UNIQUE, b INTEGER, c INTEGER, d INTEGER, UNIQUE (b, c), UNIQUE (d)) STRICT;
    CREATE UNIQUE INDEX u_c ON u (c)`);
  t.strictSame(
    mustRead(db, 'u').columns.map((c) => [c.name, c.unique]),
    [
      ['a', true],
      ['b', false],
      ['c', false],
      ['d', true],
    ],
  );
});

t.test('detects BOOL columns after RENAME COLUMN, whatever the quoting', async (t) => {
  const db =
    open(`CREATE TABLE b (id INTEGER PRIMARY KEY, ok INTEGER CHECK (("ok") IN (0, 1)), Done INTEGER CHECK (([done]) IN (0, 1)),
    bare INTEGER CHECK (bare IN (0,1)), tick INTEGER CHECK (\`tick\` IN (0, 1)), n INTEGER CHECK ((n) IN (0, 2)),
    other INTEGER CHECK (("ok") IN (0, 1)), late INTEGER NOT NULL CHECK ((late) IN (0, 1))) STRICT`);
  db.exec(
    'ALTER TABLE b RENAME COLUMN ok TO "Select"; ALTER TABLE b RENAME COLUMN bare TO "has space"; ALTER TABLE b RENAME COLUMN Done TO finished',
  );
  t.strictSame(boolColumns(db, 'B'), new Set(['select', 'finished', 'has space', 'tick']));
  const types = mustRead(db, 'b').columns.map((c) => [c.name, c.type]);
  t.strictSame(types, [
    ['id', 'INT'],
    ['Select', 'BOOL'],
    ['finished', 'BOOL'],
    ['has space', 'BOOL'],
    ['tick', 'BOOL'],
    ['n', 'INT'],
    ['other', 'INT'],
    ['late', 'INT'],
  ]);
});

t.test('detects a BOOL column added by ALTER TABLE ADD COLUMN', async (t) => {
  const db = open(
    'CREATE TABLE a (id INTEGER PRIMARY KEY) STRICT; ALTER TABLE a ADD COLUMN flag INTEGER CHECK (("flag") IN (0, 1)) DEFAULT 0',
  );
  t.strictSame(boolColumns(db, 'a'), new Set(['flag']));
  t.equal(column(mustRead(db, 'a'), 'flag').default, false);
});

t.test('reads a non-STRICT legacy table: its affinities, and its declared types as written', async (t) => {
  const db = open(`CREATE TABLE legacy (id INT PRIMARY KEY, flag BOOLEAN DEFAULT 1, title VARCHAR(20) NOT NULL,
    amount DECIMAL(10, 2), blob_col BLOB, odd WHATEVER(3), untyped, -- comment, with a comma
    big UNSIGNED BIG INT)`);
  const schema = mustRead(db, 'legacy');
  t.equal(schema.strict, false);
  t.strictSame(
    schema.columns.map((c) => [c.name, c.type, c.declaredType]),
    [
      ['id', 'INT', undefined],
      ['flag', 'BOOL', 'BOOLEAN'],
      ['title', 'TEXT', 'VARCHAR(20)'],
      ['amount', 'NUMERIC', 'DECIMAL(10, 2)'],
      ['blob_col', 'BLOB', undefined],
      ['odd', 'NUMERIC', 'WHATEVER(3)'],
      ['untyped', 'BLOB', ''],
      ['big', 'INT', 'UNSIGNED BIG INT'],
    ],
  );
  t.equal(column(schema, 'flag').default, true, 'a declared BOOLEAN takes boolean defaults');
  t.strictSame(boolColumns(db, 'legacy'), new Set(['flag']));
});

t.test('finds a table without regard to case and reports its stored name', async (t) => {
  const db = open(
    'CREATE TABLE "MixedCase" (id INTEGER PRIMARY KEY) STRICT; CREATE TABLE _sqlscribe_meta (k TEXT) STRICT',
  );
  t.equal(readTableSchema(db, 'mixedcase')?.name, 'MixedCase');
  t.equal(readTableSchema(db, 'nothing'), undefined);
  t.equal(readTableSchema(db, '_sqlscribe_meta'), undefined, 'internal tables are hidden');
  t.equal(readTableSchema(db, 'sqlite_schema'), undefined);
  t.strictSame(boolColumns(db, 'nothing'), new Set());
});

t.test('lists every user table and view by name, without internal ones', async (t) => {
  const db = open(`CREATE TABLE zeta (id INTEGER PRIMARY KEY AUTOINCREMENT) STRICT; CREATE TABLE alpha (x TEXT) STRICT;
    CREATE TABLE _sqlscribe_journal (seq INTEGER) STRICT; CREATE VIRTUAL TABLE docs USING fts5(body);
    CREATE VIEW v AS SELECT * FROM alpha; INSERT INTO zeta DEFAULT VALUES`);
  t.strictSame(
    listTableSchemas(db).map((s) => [s.name, s.kind]),
    [
      ['alpha', 'table'],
      ['docs', 'table'],
      ['v', 'view'],
      ['zeta', 'table'],
    ],
  );
  t.strictSame(listTableSchemas(open('')), []);
});

t.test('rebuilds a table in the user dialect', async (t) => {
  const db = open(`${EXAMPLE}
    CREATE TABLE w (a TEXT, b INTEGER DEFAULT (1 + 2), PRIMARY KEY (b, a)) STRICT, WITHOUT ROWID;
    CREATE UNIQUE INDEX t_name_score ON t (name, score); CREATE INDEX "odd ""i""" ON t (lower(name))`);
  t.equal(
    rebuildCreateTable(mustRead(db, 't')),
    'CREATE TABLE "t" ("id" INT PRIMARY KEY, "ok" BOOL NOT NULL DEFAULT TRUE, "name" TEXT UNIQUE DEFAULT \'x\', ' +
      '"score" FLOAT DEFAULT 1.5, "p" INT REFERENCES "parent"("id") ON DELETE CASCADE);\n' +
      'CREATE INDEX "odd ""i""" ON "t" (lower(name));\n' +
      'CREATE UNIQUE INDEX "t_name_score" ON "t" ("name", "score")',
  );
  t.equal(
    rebuildCreateTable(mustRead(db, 'w')),
    'CREATE TABLE "w" ("a" TEXT NOT NULL, "b" INT NOT NULL DEFAULT (1 + 2), PRIMARY KEY ("b", "a")) WITHOUT ROWID',
  );
});

t.test('round-trips a table through rebuildCreateTable', async (t) => {
  const db = open(`${EXAMPLE}
    CREATE TABLE full (id INTEGER PRIMARY KEY, "we""ird" TEXT NOT NULL UNIQUE DEFAULT 'it''s', n INTEGER DEFAULT -5,
      f REAL DEFAULT NULL, b INTEGER CHECK (("b") IN (0, 1)) DEFAULT FALSE, ts TEXT DEFAULT CURRENT_TIMESTAMP,
      e INTEGER DEFAULT ((1) + (2)), r INTEGER REFERENCES parent, s INTEGER REFERENCES parent(id) ON DELETE SET NULL) STRICT;
    CREATE INDEX full_n ON full (n); CREATE UNIQUE INDEX full_nf ON full (n, f); CREATE INDEX full_x ON full (abs(n))`);
  db.exec('ALTER TABLE full RENAME COLUMN b TO "Bool Col"');
  const { before, after } = roundTrip(db, 'full', 'CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT');
  t.strictSame(withoutRootPages(after), withoutRootPages(before));
  t.equal(column(after, 'Bool Col').type, 'BOOL');
});

t.test('round-trips a composite key WITHOUT ROWID table', async (t) => {
  const db =
    open(`CREATE TABLE w (a TEXT, b INTEGER, c INTEGER CHECK (("c") IN (0, 1)) NOT NULL DEFAULT 1, PRIMARY KEY (b, a)) STRICT, WITHOUT ROWID;
    CREATE INDEX w_c ON w (c)`);
  const { before, after } = roundTrip(db, 'w');
  t.strictSame(withoutRootPages(after), withoutRootPages(before));
  t.equal(after.primaryKey, 'b,a');
});

t.test('writes a DEFAULT from the value when a record has no defaultSql', async (t) => {
  t.equal(defaultClauseSql({ default: null, defaultSql: null }), 'NULL');
  t.equal(defaultClauseSql({ default: true, defaultSql: null }), 'TRUE');
  t.equal(defaultClauseSql({ default: -2.5, defaultSql: null }), '-2.5');
  t.equal(defaultClauseSql({ default: "it's", defaultSql: null }), "'it''s'");
  t.equal(
    defaultClauseSql({ default: 'x', defaultSql: "lower('X')" }),
    "(lower('X'))",
    'an expression is parenthesised',
  );
});

t.test('reads flags right on a connection that returns integers as bigint', async (t) => {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT');
  const schema = readTableSchema(db, 't');
  t.equal(schema?.strict, true);
  t.equal(schema?.columns[1]?.notNull, true);
  t.equal(schema?.columns[1]?.unique, true);
  t.equal(schema?.primaryKey, 'id');
  db.close();
});

t.test(
  'reads a view: origin types through nested views, null for computed columns, its SQL and triggers',
  async (t) => {
    const db =
      open(`CREATE TABLE p (id INTEGER PRIMARY KEY, ok INTEGER CHECK ((ok) IN (0, 1)), score REAL, name TEXT) STRICT;
    CREATE VIEW v AS SELECT id, ok AS passed, score * 2 AS doubled, upper(name) AS loud, name FROM p;
    CREATE VIEW "W w" (a, b, c) AS SELECT id, passed, doubled FROM v;
    CREATE TRIGGER tv INSTEAD OF INSERT ON v BEGIN INSERT INTO p (id) VALUES (new.id); END;
    CREATE TRIGGER tp AFTER DELETE ON P BEGIN SELECT 1; END`);
    const v = readTableSchema(db, 'V');
    t.equal(v?.kind, 'view');
    t.equal(v?.name, 'v', 'found without regard to case, reported as stored');
    t.strictSame(
      v?.columns.map((c) => [c.name, c.type]),
      [
        ['id', 'INT'],
        ['passed', 'BOOL'],
        ['doubled', null],
        ['loud', null],
        ['name', 'TEXT'],
      ],
    );
    t.match(v, { primaryKey: '', rootPage: 0, strict: false, withoutRowid: false, indexes: [] });
    t.equal(v?.sql, 'CREATE VIEW v AS SELECT id, ok AS passed, score * 2 AS doubled, upper(name) AS loud, name FROM p');
    t.strictSame(
      v?.triggers.map((tr) => tr.name),
      ['tv'],
    );
    t.strictSame(
      readTableSchema(db, 'w w')?.columns.map((c) => [c.name, c.type]),
      [
        ['a', 'INT'],
        ['b', 'BOOL'],
        ['c', null],
      ],
    );
    const p = readTableSchema(db, 'p');
    t.equal(p?.sql, undefined, 'a table carries no sql');
    t.strictSame(
      p?.triggers,
      [{ name: 'tp', sql: 'CREATE TRIGGER tp AFTER DELETE ON P BEGIN SELECT 1; END' }],
      'its trigger, named in any case',
    );
  },
);

t.test('lists a view broken by a dropped table, with no columns', async (t) => {
  const db = open('CREATE TABLE a (x TEXT) STRICT; CREATE VIEW v AS SELECT x FROM a; DROP TABLE a');
  t.strictSame(
    listTableSchemas(db).map((s) => [s.name, s.columns.length]),
    [['v', 0]],
  );
});
