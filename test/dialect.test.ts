import t from 'tap';
import Database from 'better-sqlite3';
import { isEngineError } from '../src/errors';
import { parseBatch } from '../src/engine/batch';
import { classifyStatement } from '../src/engine/dialect/classify';
import { defineIntrospectionGuards, unguardedName } from '../src/engine/dialect/pragma-guards';
import { rewriteForStorage } from '../src/engine/dialect/rewrite';
import { splitStatements } from '../src/engine/dialect/split';
import { tokenize } from '../src/engine/dialect/tokenize';

const SYNTAX = 1001;
const UNSUPPORTED = 1002;
const FORBIDDEN = 1003;
const TRANSACTION = 1004;
const EMPTY = 1005;
const UNKNOWN_TYPE = 4002;

/** The engine error code `fn` throws, or undefined when it does not throw one. */
function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    if (isEngineError(err)) return err.code;
    throw err;
  }
  return undefined;
}

function kindOf(sql: string): string {
  return classifyStatement(sql).kind;
}

function rewrite(sql: string): string {
  return rewriteForStorage(classifyStatement(sql));
}

t.test('tokenizes every token kind with offsets and values', async (t) => {
  const sql = `select "a""b", \`c\`, [d e], 'it''s', 1.5e3, 0x1F, .5, 1_000, x'AB', ?, ?12, :n, @n, $n, a->>b; -- gone`;
  const tokens = tokenize(sql);
  t.same(
    tokens.map((tk) => tk.kind),
    [
      'word',
      'identifier',
      'punct',
      'identifier',
      'punct',
      'identifier',
      'punct',
      'string',
      'punct',
      'number',
      'punct',
      'number',
      'punct',
      'number',
      'punct',
      'number',
      'punct',
      'blob',
      'punct',
      'parameter',
      'punct',
      'parameter',
      'punct',
      'parameter',
      'punct',
      'parameter',
      'punct',
      'parameter',
      'punct',
      'word',
      'punct',
      'word',
      'semicolon',
    ],
  );
  t.same(
    tokens.filter((tk) => tk.value !== undefined).map((tk) => tk.value),
    ['SELECT', 'a"b', 'c', 'd e', "it's", 'A', 'B'],
  );
  t.same(
    tokens.map((tk) => sql.slice(tk.start, tk.end)),
    tokens.map((tk) => tk.text),
  );
  t.equal(tokens.find((tk) => tk.text === '->>')?.kind, 'punct');
});

t.test('skips line and block comments', async (t) => {
  t.same(
    tokenize('a -- x\n/* y; */ b').map((tk) => tk.text),
    ['a', 'b'],
  );
});

t.test('rejects unterminated literals, identifiers and comments', async (t) => {
  for (const sql of ["select 'abc", 'select "abc', 'select `abc', 'select [abc', 'select 1 /* open', "select x'AB"]) {
    t.equal(
      codeOf(() => tokenize(sql)),
      SYNTAX,
      sql,
    );
  }
  for (const sql of ['select 12abc', "select x'ABC'", 'select !', 'select :']) {
    t.equal(
      codeOf(() => tokenize(sql)),
      SYNTAX,
      sql,
    );
  }
});

t.test('splits on top-level semicolons only', async (t) => {
  t.same(splitStatements('insert into t values (\'a;b\'); select "x;y" from [p;q]'), [
    "insert into t values ('a;b')",
    'select "x;y" from [p;q]',
  ]);
  t.same(splitStatements('select 1 -- a; b\n, 2; select `c;d`'), ['select 1 -- a; b\n, 2', 'select `c;d`']);
});

t.test('drops empty and comment-only statements', async (t) => {
  t.same(splitStatements(';; select 1;;\n -- only a comment\n; /* c */ ;'), ['select 1']);
  t.same(splitStatements('  -- nothing\n'), []);
  t.same(splitStatements(''), []);
});

t.test('keeps inner comments and drops leading ones', async (t) => {
  t.same(splitStatements('/* lead */ select /* in */ 1 -- tail\n'), ['select /* in */ 1']);
});

t.test('keeps the semicolons of a trigger body', async (t) => {
  const trigger = 'CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET a = 1; DELETE FROM u; END';
  t.same(splitStatements(`${trigger}; select 2`), [trigger, 'select 2']);
  const plain = 'create trigger tr after insert on t begin select 1; end';
  t.same(splitStatements(`${plain};`), [plain]);
});

t.test('does not split inside comments that hide statements', async (t) => {
  t.same(splitStatements("SELECT 1; -- ; ATTACH 'x' AS y"), ['SELECT 1']);
  const parts = splitStatements("SELECT 1 /* ; */ ; ATTACH 'x' AS y");
  t.same(parts, ['SELECT 1', "ATTACH 'x' AS y"]);
  t.equal(kindOf(parts[0] ?? ''), 'select');
  t.equal(
    codeOf(() => classifyStatement(parts[1] ?? '')),
    FORBIDDEN,
  );
});

t.test('throws on an unterminated literal anywhere in the request', async (t) => {
  t.equal(
    codeOf(() => splitStatements("select 1; select 'open")),
    SYNTAX,
  );
  t.equal(
    codeOf(() => splitStatements('select 1; /* open')),
    SYNTAX,
  );
});

t.test('classifies every accepted table-level statement', async (t) => {
  const cases: Array<[string, string]> = [
    ['select 1', 'select'],
    ['VALUES (1), (2)', 'select'],
    ['insert into t values (1)', 'insert'],
    ['REPLACE INTO t VALUES (1)', 'insert'],
    ['insert or ignore into t values (1)', 'insert'],
    ['update t set a = 1', 'update'],
    ['delete from t', 'delete'],
    ['create table t (a INT)', 'create-table'],
    ['create table if not exists main.t (a INT)', 'create-table'],
    ['drop table t', 'drop-table'],
    ['alter table t add column b TEXT', 'alter-table'],
    ['ALTER TABLE t RENAME TO u', 'alter-table'],
    ['alter table t rename column a to b', 'alter-table'],
    ['alter table t drop column a', 'alter-table'],
    ['create index i on t (a)', 'create-index'],
    ['create unique index i on t (a)', 'create-index'],
    ['drop index i', 'drop-index'],
    ['savepoint s', 'savepoint'],
    ['release s', 'release'],
    ['release savepoint s', 'release'],
    ['rollback to s', 'rollback-to'],
    ['ROLLBACK TRANSACTION TO SAVEPOINT s', 'rollback-to'],
    ['integrity check', 'integrity-check'],
    ['select 1;', 'select'],
  ];
  for (const [sql, kind] of cases) {
    const stmt = classifyStatement(sql);
    t.equal(stmt.kind, kind, sql);
    t.equal(stmt.level, 'table', sql);
    t.equal(stmt.readonly, kind === 'select' || kind === 'integrity-check', sql);
    t.equal(stmt.sql, sql);
  }
});

t.test('classifies WITH by its main verb', async (t) => {
  t.equal(kindOf('WITH a AS (SELECT 1) SELECT * FROM a'), 'select');
  t.equal(kindOf('with recursive c(n) as (select 1 union all select n + 1 from c) values (1)'), 'select');
  t.equal(kindOf('WITH a AS (SELECT 1), b AS MATERIALIZED (SELECT 2) INSERT INTO t SELECT * FROM a'), 'insert');
  t.equal(kindOf('WITH replace AS NOT MATERIALIZED (SELECT 1) REPLACE INTO t SELECT * FROM replace'), 'insert');
  t.equal(kindOf('with a as (select 1) update t set x = (select * from a)'), 'update');
  t.equal(kindOf('with a as (select 1) delete from t where x in a'), 'delete');
  t.equal(classifyStatement('with a as (select 1) insert into t select * from a').readonly, false);
  t.equal(
    codeOf(() => classifyStatement('with a as (select 1) drop table t')),
    SYNTAX,
  );
  t.equal(
    codeOf(() => classifyStatement('with a as (select 1')),
    SYNTAX,
  );
});

t.test('classifies the database-level statements', async (t) => {
  t.match(classifyStatement('CREATE DATABASE school'), {
    kind: 'create-database',
    level: 'database',
    readonly: false,
    database: 'school',
    ifNotExists: false,
  });
  t.match(classifyStatement('create database if not exists "my db"'), { database: 'my db', ifNotExists: true });
  t.match(classifyStatement("drop database 'x'"), { kind: 'drop-database', database: 'x', ifExists: false });
  t.match(classifyStatement('DROP DATABASE IF EXISTS `y`'), { database: 'y', ifExists: true });
  t.match(classifyStatement('drop database [z]'), { database: 'z' });
  t.match(classifyStatement('create database "school-2024.db"'), { database: 'school-2024.db' });
  t.match(classifyStatement('create database if'), { database: 'if', ifNotExists: false });
  t.match(classifyStatement('show databases'), { kind: 'show-databases', level: 'database', readonly: false });
});

t.test('rejects extra or missing tokens in database-level statements', async (t) => {
  for (const sql of [
    'SHOW DATABASES x',
    'show',
    'create database',
    'create database a b',
    'drop database if exists',
    'create database school-2024',
    'create database 42',
    'drop database x.db',
    'INTEGRITY CHECK now',
    'integrity',
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      SYNTAX,
      sql,
    );
  }
});

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

t.test('rejects transaction control with the verb', async (t) => {
  for (const [sql, verb] of [
    ['BEGIN', 'BEGIN'],
    ['begin immediate transaction', 'BEGIN'],
    ['COMMIT', 'COMMIT'],
    ['end transaction', 'END'],
    ['rollback', 'ROLLBACK'],
    ['rollback transaction', 'ROLLBACK'],
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql ?? '')),
      TRANSACTION,
      sql ?? '',
    );
    t.match(
      thrownBy(() => classifyStatement(sql ?? '')),
      { params: { detail: verb } },
      sql ?? '',
    );
  }
});

t.test('rejects statements that reach outside the database', async (t) => {
  for (const sql of [
    "ATTACH 'x.db' AS x",
    'detach x',
    'VACUUM',
    "vacuum into '/tmp/x'",
    'pragma database_list',
    'PRAGMA main.journal_mode = WAL',
    'pragma writable_schema = 1',
    "PRAGMA temp_store_directory = '/tmp'",
    'PRAGMA cache_size = -2000',
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      FORBIDDEN,
      sql,
    );
  }
});

t.test('rejects unsupported statements by name', async (t) => {
  const cases: Array<[string, string]> = [
    ['REINDEX', 'REINDEX'],
    ['analyze', 'ANALYZE'],
    ['create virtual table v using fts5(a)', 'CREATE VIRTUAL TABLE'],
    ['create temp table t (a INT)', 'CREATE TEMP TABLE'],
    ['create temporary view v as select 1', 'CREATE TEMP VIEW'],
    ['create table temp.t (a INT)', 'CREATE TEMP TABLE'],
    ['create view temp.v as select 1', 'CREATE TEMP VIEW'],
    ['create view if not exists "TEMP".v as select 1', 'CREATE TEMP VIEW'],
    ['create temp trigger tr after insert on t begin select 1; end', 'CREATE TEMP TRIGGER'],
    ['CREATE TRIGGER [Temp].tr AFTER INSERT ON t BEGIN SELECT 1; END', 'CREATE TEMP TRIGGER'],
  ];
  for (const [sql, detail] of cases) {
    t.throws(() => classifyStatement(sql), { code: UNSUPPORTED, params: { detail } }, sql);
  }
  t.equal(
    codeOf(() => classifyStatement('create table t2 as select * from t')),
    UNSUPPORTED,
  );
});

t.test('classifies views and triggers, with IF [NOT] EXISTS', async (t) => {
  const cases: Array<[string, string, Record<string, boolean>]> = [
    ['create view v as select 1', 'create-view', { ifNotExists: false }],
    ['CREATE VIEW IF NOT EXISTS main.v (a, b) AS SELECT 1, 2', 'create-view', { ifNotExists: true }],
    [
      'create trigger tr after insert on t begin insert into u values (new.a); delete from w; end',
      'create-trigger',
      { ifNotExists: false },
    ],
    [
      'CREATE TRIGGER IF NOT EXISTS tr INSTEAD OF INSERT ON v BEGIN SELECT 1; END;',
      'create-trigger',
      { ifNotExists: true },
    ],
    ['drop view v', 'drop-view', { ifExists: false }],
    ['DROP VIEW IF EXISTS main.v', 'drop-view', { ifExists: true }],
    ['drop trigger tr', 'drop-trigger', { ifExists: false }],
    ['drop trigger if exists "tr"', 'drop-trigger', { ifExists: true }],
  ];
  for (const [sql, kind, flags] of cases) {
    const stmt = classifyStatement(sql);
    t.equal(stmt.kind, kind, sql);
    t.equal(stmt.level, 'table', sql);
    t.equal(stmt.readonly, false, sql);
    t.match(stmt, flags, sql);
  }
});

t.test("refuses a statement after a trigger's END, and anything after a dropped name", async (t) => {
  t.equal(
    codeOf(() => classifyStatement('create trigger tr after insert on t begin select 1; end; drop table t')),
    SYNTAX,
  );
  t.equal(
    codeOf(() => classifyStatement('drop view v w')),
    SYNTAX,
  );
  t.equal(
    codeOf(() => classifyStatement('drop trigger if exists')),
    SYNTAX,
  );
});

t.test('refuses the schema table anywhere in a view or a trigger, in any spelling', async (t) => {
  for (const sql of [
    'create view v as select * from sqlite_schema',
    'CREATE VIEW v AS SELECT name FROM main."SQLITE_MASTER"',
    "create view v as select * from t where a in (select name from 'sqlite_schema')",
    'create trigger tr after insert on t begin insert into u select name from [sqlite_master]; end',
    'create view v as select * from t, sqlite_temp_master',
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      FORBIDDEN,
      sql,
    );
  }
  t.equal(kindOf('select * from sqlite_schema'), 'select', 'a direct read is still allowed');
});

t.test("reads a trigger body statement by statement, and RAISE's message as a value", async (t) => {
  t.equal(
    codeOf(() =>
      classifyStatement(
        "create trigger tr after insert on t begin select 1 from t; insert into '_sqlscribe_meta' values (1); end",
      ),
    ),
    FORBIDDEN,
  );
  t.equal(
    kindOf("create trigger tr before insert on t begin select raise(abort, 'pragma_x is not allowed here'); end"),
    'create-trigger',
  );
});

t.test('rejects unrecognizable statements as syntax errors', async (t) => {
  t.throws(() => classifyStatement('SELEC 1'), { code: SYNTAX, params: { detail: 'near "SELEC"' } });
  for (const sql of ['42', "'select'", '(select 1)', 'create foo', 'drop', 'alter index i', 'show tables']) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      SYNTAX,
      sql,
    );
  }
  t.equal(
    codeOf(() => classifyStatement('select 1; attach x')),
    SYNTAX,
    'a second statement',
  );
  t.equal(
    codeOf(() => classifyStatement(' -- nothing')),
    EMPTY,
  );
});

t.test('is case-insensitive about keywords', async (t) => {
  t.equal(kindOf('SeLeCt 1'), 'select');
  t.equal(kindOf('Integrity Check'), 'integrity-check');
  t.equal(
    codeOf(() => classifyStatement('Begin')),
    TRANSACTION,
  );
});

t.test('rejects table-valued pragma functions that reach outside, anywhere', async (t) => {
  for (const sql of [
    'SELECT * FROM pragma_database_list',
    "select * from t join Pragma_Database_List('t')",
    'insert into t select name from main.pragma_table_list',
    'select * from "pragma_database_list"',
    "select * from 'pragma_database_list'",
    "select * from t, 'pragma_database_list'",
    "select * from 'pragma_table_list'('t')",
    'with a as (select * from [pragma_database_list]) select * from a',
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      FORBIDDEN,
      sql,
    );
  }
  t.equal(kindOf("insert into t values (1, 'pragma_x')"), 'insert', 'a string value is just a value');
  t.equal(kindOf("select * from t where a is distinct from 'pragma_x'"), 'select');
  t.equal(kindOf("select * from t where a in ('x', 'pragma_y')"), 'select');
});

t.test('accepts the introspection pragmas as reads', async (t) => {
  for (const sql of [
    'PRAGMA table_info(t)',
    "pragma TABLE_INFO('t')",
    'PRAGMA table_info = t',
    'PRAGMA main.table_xinfo("t")',
    'PRAGMA "main".index_list([t])',
    'PRAGMA index_info(i)',
    'PRAGMA index_xinfo(sqlite_autoindex_t_1)',
    'PRAGMA foreign_key_list(t)',
    'PRAGMA foreign_key_check',
    'PRAGMA foreign_key_check(t);',
    'PRAGMA integrity_check',
    'PRAGMA integrity_check(10)',
    'PRAGMA quick_check(t)',
    'PRAGMA foreign_keys',
    'PRAGMA table_info(sqlite_schema)',
  ]) {
    const statement = classifyStatement(sql);
    t.match(statement, { kind: 'pragma', level: 'table', readonly: true }, sql);
    t.equal(rewrite(sql), sql, `${sql}: run as written`);
  }
});

t.test('refuses every other pragma with its reason', async (t) => {
  const cases: Array<[string, number]> = [
    ['PRAGMA foreign_keys = OFF', 1101],
    ['PRAGMA foreign_keys(0)', 1101],
    ['PRAGMA recursive_triggers = ON', 1101],
    ['PRAGMA application_id = 3', 1101],
    ['PRAGMA user_version', 1100],
    ['PRAGMA compile_options', 1100],
    ['PRAGMA made_up = 1', 1100],
    ['PRAGMA temp.table_info(t)', 1102],
    ['PRAGMA aux.foreign_key_check', 1102],
    ['PRAGMA table_info', 1103],
    ['PRAGMA index_xinfo(3)', 1103],
    ['PRAGMA table_info(_sqlscribe_meta)', FORBIDDEN],
    ["PRAGMA table_xinfo('_SQLSCRIBE_META')", FORBIDDEN],
    ['PRAGMA index_info(sqlite_autoindex__sqlscribe_meta_1)', FORBIDDEN],
    ['PRAGMA table_info(a, b)', SYNTAX],
    ['PRAGMA table_info(t', SYNTAX],
    ['PRAGMA table_info(t) x', SYNTAX],
    ['PRAGMA', SYNTAX],
    ['PRAGMA 1', SYNTAX],
  ];
  for (const [sql, code] of cases)
    t.equal(
      codeOf(() => classifyStatement(sql)),
      code,
      sql,
    );
});

t.test('reads the introspection functions in FROM lists only, from main, with their arguments checked', async (t) => {
  for (const sql of [
    "select * from t join Pragma_Table_Info('t')",
    "select * from 'pragma_table_info'('t')",
    'SELECT m.name, p.* FROM sqlite_schema m JOIN pragma_table_info(m.name) p',
    'SELECT * FROM main.pragma_foreign_key_check',
    "SELECT pragma_table_info.name FROM pragma_table_info('t')",
    "SELECT * FROM pragma_table_info('sqlite_schema')",
    "SELECT * FROM pragma_table_info('_sqlscribe_meta')",
    'INSERT INTO t SELECT name FROM pragma_index_list(?)',
  ]) {
    t.match(classifyStatement(sql), { level: 'table' }, sql);
  }
  const cases: Array<[string, number]> = [
    ["SELECT * FROM temp.pragma_table_info('t')", 1102],
    ["SELECT * FROM pragma_table_info WHERE arg = 't'", 1103],
    ["SELECT * FROM pragma_table_info('t') AS p WHERE p.\"schema\" = 'temp'", 1103],
    ["SELECT * FROM pragma_index_list('t') JOIN x USING (arg)", 1103],
    ["SELECT 1 WHERE 1 IN pragma_table_info('t')", 1103],
    ["CREATE VIEW v AS SELECT * FROM pragma_table_info('t')", 1103],
    ["CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO u SELECT name FROM pragma_table_info('t'); END", 1103],
    ['SELECT * FROM pragma_page_count', 1100],
    ['SELECT * FROM pragma_table_info(_sqlscribe_meta)', FORBIDDEN],
  ];
  for (const [sql, code] of cases)
    t.equal(
      codeOf(() => classifyStatement(sql)),
      code,
      sql,
    );
});

t.test('wraps the arguments of introspection functions in their checks, and names columns as written', async (t) => {
  t.equal(
    rewrite("SELECT * FROM pragma_table_info('t')"),
    "SELECT * FROM pragma_table_info(introspection_object('t'))",
  );
  t.equal(
    rewrite("SELECT l.name FROM pragma_index_list(lower('T'), 'main') l, pragma_index_info(l.name)"),
    "SELECT l.name FROM pragma_index_list(introspection_object(lower('T')), introspection_schema('main')) l, pragma_index_info(introspection_object(l.name))",
  );
  t.equal(rewrite('SELECT * FROM pragma_foreign_key_check()'), 'SELECT * FROM pragma_foreign_key_check()');
  t.equal(rewrite("SELECT 'pragma_table_info(x)'"), "SELECT 'pragma_table_info(x)'", 'a string is left alone');
  t.equal(
    unguardedName("(SELECT count(*) FROM pragma_table_info(introspection_object('t'), introspection_schema('main')))"),
    "(SELECT count(*) FROM pragma_table_info('t', 'main'))",
  );
  t.equal(unguardedName('name'), 'name');
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  defineIntrospectionGuards(db);
  db.exec('CREATE TABLE _sqlscribe_meta (key TEXT PRIMARY KEY, value INT); CREATE TABLE t (a INT)');
  const run = (sql: string): unknown[] => db.prepare(rewrite(sql)).raw(true).all();
  t.same(run("SELECT name FROM pragma_table_info('t')"), [['a']]);
  for (const sql of [
    "SELECT * FROM pragma_table_info('_sql' || 'scribe_meta')",
    "SELECT * FROM pragma_index_info(X'73716c6974655f6175746f696e6465785f5f73716c7363726962655f6d6574615f31')",
  ])
    t.equal(
      codeOf(() => run(sql)),
      FORBIDDEN,
      sql,
    );
  t.equal(
    codeOf(() => run("SELECT * FROM pragma_table_info('t', 'temp')")),
    1102,
  );
});

t.test('accepts EXPLAIN of what would be accepted, refused with the reason of what it explains', async (t) => {
  for (const sql of [
    'EXPLAIN SELECT 1',
    'explain query plan select * from t where a = 1',
    'EXPLAIN DELETE FROM t',
    'EXPLAIN QUERY PLAN INSERT INTO t VALUES (1)',
    'EXPLAIN CREATE TABLE u (a INT)',
    'EXPLAIN PRAGMA table_info(t)',
    'EXPLAIN SAVEPOINT s',
    'EXPLAIN QUERY PLAN SELECT * FROM sqlite_schema',
  ]) {
    t.match(classifyStatement(sql), { kind: 'explain', level: 'table', readonly: true }, sql);
  }
  const batch = parseBatch(
    [{ sql: 'EXPLAIN DELETE FROM t; PRAGMA table_info(t); EXPLAIN QUERY PLAN DROP TABLE t' }],
    10,
  );
  t.equal(batch.readonly, true, 'a batch of EXPLAINs and PRAGMAs is a read: a read-only token may send it');
  t.equal(
    rewrite('EXPLAIN CREATE TABLE u (a INT)'),
    `EXPLAIN ${rewrite('CREATE TABLE u (a INT)')}`,
    'as it would be stored',
  );
  t.equal(
    rewrite("EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info('t')"),
    "EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info(introspection_object('t'))",
  );
  const cases: Array<[string, number]> = [
    ["EXPLAIN ATTACH 'x' AS y", FORBIDDEN],
    ['EXPLAIN QUERY PLAN SELECT * FROM _sqlscribe_meta', FORBIDDEN],
    ['EXPLAIN BEGIN', TRANSACTION],
    ['EXPLAIN CREATE TEMP TABLE x (a INT)', UNSUPPORTED],
    ['EXPLAIN PRAGMA foreign_keys = OFF', 1101],
    ['EXPLAIN CREATE DATABASE x', 1104],
    ['EXPLAIN SHOW DATABASES', 1104],
    ['EXPLAIN INTEGRITY CHECK', 1104],
    ['EXPLAIN EXPLAIN SELECT 1', SYNTAX],
    ['EXPLAIN', SYNTAX],
    ['EXPLAIN QUERY PLAN', SYNTAX],
    ['EXPLAIN SELECT 1; SELECT 2', SYNTAX],
  ];
  for (const [sql, code] of cases)
    t.equal(
      codeOf(() => classifyStatement(sql)),
      code,
      sql,
    );
});

t.test('rewrites each type alias to its storage type', async (t) => {
  const cases: Array<[string, string]> = [
    ['INT', 'INTEGER'],
    ['integer', 'INTEGER'],
    ['BIGINT', 'INTEGER'],
    ['smallint', 'INTEGER'],
    ['FLOAT', 'REAL'],
    ['real', 'REAL'],
    ['DOUBLE', 'REAL'],
    ['DOUBLE PRECISION', 'REAL'],
    ['numeric', 'REAL'],
    ['DECIMAL(10, 2)', 'REAL'],
    ['TEXT', 'TEXT'],
    ['VARCHAR(20)', 'TEXT'],
    ['char(3)', 'TEXT'],
    ['CHARACTER VARYING(9)', 'TEXT'],
    ['character', 'TEXT'],
    ['STRING', 'TEXT'],
  ];
  for (const [written, stored] of cases) {
    const spelling = written.toUpperCase().replace(/\s+(?=\()|(?<=[(,])\s+/g, '');
    const kept = ['INT', 'FLOAT', 'TEXT'].includes(spelling) ? '' : `/* declared ${spelling} */ `;
    t.equal(
      rewrite(`CREATE TABLE t (a ${written} NOT NULL)`),
      `CREATE TABLE t (a ${kept}${stored} NOT NULL) STRICT`,
      written,
    );
  }
});

t.test('rewrites the aliases of teaching scripts and keeps their spelling in a comment', async (t) => {
  const cases: Array<[string, string]> = [
    ['NVARCHAR(160)', 'TEXT'],
    ['NCHAR(5)', 'TEXT'],
    ['NATIVE CHARACTER(70)', 'TEXT'],
    ['CLOB', 'TEXT'],
    ['TINYINT', 'INTEGER'],
    ['MEDIUMINT', 'INTEGER'],
    ['INT2', 'INTEGER'],
    ['INT8', 'INTEGER'],
    ['UNSIGNED BIG INT', 'INTEGER'],
    ['DATETIME', 'TEXT'],
    ['DATE', 'TEXT'],
    ['TIME', 'TEXT'],
    ['TIMESTAMP', 'TEXT'],
    ['NUMERIC(10,2)', 'REAL'],
    ['BLOB', 'BLOB'],
  ];
  for (const [written, stored] of cases) {
    const kept = written === 'BLOB' ? '' : `/* declared ${written} */ `;
    t.equal(
      rewrite(`CREATE TABLE t (a ${written} NOT NULL)`),
      `CREATE TABLE t (a ${kept}${stored} NOT NULL) STRICT`,
      written,
    );
  }
  t.equal(
    rewrite('CREATE TABLE t (a INTEGER, b TEXT) STRICT'),
    'CREATE TABLE t (a INTEGER, b TEXT) STRICT',
    'a STRICT table is taken as written',
  );
  t.equal(rewrite('ALTER TABLE t ADD COLUMN d datetime'), 'ALTER TABLE t ADD COLUMN d /* declared DATETIME */ TEXT');
});

t.test('adds the BOOL check right after the type', async (t) => {
  t.equal(
    rewrite('create table t (ok BOOLEAN DEFAULT 0, "a b" bool)'),
    'create table t (ok /* declared BOOLEAN */ INTEGER CHECK (("ok") IN (0, 1)) DEFAULT 0, "a b" INTEGER CHECK (("a b") IN (0, 1))) STRICT',
  );
});

t.test('keeps everything but the types byte for byte', async (t) => {
  const sql = `CREATE TABLE IF NOT EXISTS "p""s" (
  id INT PRIMARY KEY, -- the key
  name VARCHAR(20) DEFAULT 'a;b' COLLATE NOCASE,
  [owner] integer REFERENCES people(id) ON DELETE CASCADE,
  CONSTRAINT u UNIQUE (name), CHECK (id > 0), FOREIGN KEY (owner) REFERENCES x (y)
) /* after */`;
  t.equal(
    rewrite(sql),
    sql
      .replace('id INT', 'id INTEGER')
      .replace('VARCHAR(20)', '/* declared VARCHAR(20) */ TEXT')
      .replace('[owner] integer', '[owner] /* declared INTEGER */ INTEGER')
      .replace(') /* after */', ') STRICT /* after */'),
  );
});

t.test('places STRICT after existing table options once', async (t) => {
  t.equal(
    rewrite('create table t (a INT PRIMARY KEY) WITHOUT ROWID'),
    'create table t (a INTEGER PRIMARY KEY) WITHOUT ROWID, STRICT',
  );
  t.equal(rewrite('create table t (a INT) strict'), 'create table t (a INTEGER) strict');
  t.equal(rewrite('create table t (a INT) STRICT, WITHOUT ROWID'), 'create table t (a INTEGER) STRICT, WITHOUT ROWID');
  t.equal(rewrite('create table t (a INT);'), 'create table t (a INTEGER) STRICT;');
});

t.test('rejects unknown and missing types with the column name', async (t) => {
  t.throws(() => rewrite('create table t (a GEOMETRY)'), {
    code: UNKNOWN_TYPE,
    params: { type: 'GEOMETRY', column: 'a' },
  });
  t.throws(() => rewrite('create table t (a INT, b)'), { code: UNKNOWN_TYPE, params: { type: '(none)', column: 'b' } });
  t.throws(() => rewrite('create table t ("x y" PRIMARY KEY)'), {
    code: UNKNOWN_TYPE,
    params: { type: '(none)', column: 'x y' },
  });
  t.throws(() => rewrite('create table t (a INT(5))'), { code: UNKNOWN_TYPE, params: { type: 'INT(5)' } });
  t.throws(() => rewrite('alter table t add column c GEOMETRY'), {
    code: UNKNOWN_TYPE,
    params: { type: 'GEOMETRY', column: 'c' },
  });
});

t.test('rewrites the column of ALTER TABLE ADD COLUMN only', async (t) => {
  t.equal(
    rewrite('ALTER TABLE t ADD COLUMN b BOOL NOT NULL DEFAULT 0'),
    'ALTER TABLE t ADD COLUMN b INTEGER CHECK (("b") IN (0, 1)) NOT NULL DEFAULT 0',
  );
  t.equal(
    rewrite('alter table main.t add c double precision'),
    'alter table main.t add c /* declared DOUBLE PRECISION */ REAL',
  );
  t.equal(rewrite('alter table t rename column a to b'), 'alter table t rename column a to b');
});

t.test('leaves other statements unchanged', async (t) => {
  t.equal(rewrite("insert into t values ('INT')"), "insert into t values ('INT')");
});

t.test('produces tables that SQLite creates and that enforce the types', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec(rewrite('create table t (id INT PRIMARY KEY, n INT, f FLOAT, s VARCHAR(5), ok BOOL)'));
  db.exec(rewrite('alter table t add column flag boolean'));
  const insert = db.prepare('insert into t (n, f, s, ok, flag) values (?, ?, ?, ?, ?)');
  insert.run('12', 1.5, 'x', 1, 0);
  t.same(db.prepare('select id, n, typeof(n) as tn from t').get(), { id: 1, n: 12, tn: 'integer' });
  t.throws(() => insert.run('abc', 1, 'x', 0, 0), { code: 'SQLITE_CONSTRAINT_DATATYPE' });
  t.throws(() => insert.run(1, 1, 'x', 2, 0), { code: 'SQLITE_CONSTRAINT_CHECK' });
  t.throws(() => insert.run(1, 1, 'x', 0, 5), { code: 'SQLITE_CONSTRAINT_CHECK' });
  insert.run(1, 2, 'y', null, null);
  t.equal(
    db.prepare("select sql from sqlite_schema where name = 't'").pluck().get(),
    'CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, f REAL, s /* declared VARCHAR(5) */ TEXT, ok INTEGER CHECK (("ok") IN (0, 1)), flag /* declared BOOLEAN */ INTEGER CHECK (("flag") IN (0, 1))) STRICT',
  );
  db.exec(rewrite('create table w (k TEXT PRIMARY KEY, v INT) WITHOUT ROWID'));
  t.throws(() => db.prepare("insert into w values ('a', 'b')").run(), { code: 'SQLITE_CONSTRAINT_DATATYPE' });
});

t.test('names the savepoint of savepoint statements', async (t) => {
  t.equal(classifyStatement('SAVEPOINT a').savepoint, 'a');
  t.equal(classifyStatement('savepoint "b c"').savepoint, 'b c');
  t.equal(classifyStatement('RELEASE a').savepoint, 'a');
  t.equal(classifyStatement('RELEASE SAVEPOINT a').savepoint, 'a');
  t.equal(classifyStatement('ROLLBACK TO a').savepoint, 'a');
  t.equal(classifyStatement('ROLLBACK TRANSACTION TO SAVEPOINT a').savepoint, 'a');
  t.throws(() => classifyStatement('SAVEPOINT'), { code: 1001 });
  t.throws(() => classifyStatement('SAVEPOINT a b'), { code: 1001 });
  t.throws(() => classifyStatement('SAVEPOINT _sqlscribe_1'), { code: 1002 }, 'the service reserves its own names');
});

t.test("refuses the service's own names", async (t) => {
  t.throws(() => classifyStatement('SELECT * FROM _sqlscribe_meta'), { code: 1003 });
  t.throws(() => classifyStatement('DROP TABLE "_SQLSCRIBE_meta"'), { code: 1003 });
  t.equal(classifyStatement("SELECT '_sqlscribe_meta'").kind, 'select', 'a string is a value');
});

t.test('refuses internal names in every spelling SQLite reads as a name', async (t) => {
  for (const sql of [
    "ALTER TABLE '_sqlscribe_meta' RENAME COLUMN value TO v",
    "SELECT * FROM main.'_SQLSCRIBE_META'",
    'SELECT * FROM [_sqlscribe_meta]',
    'DELETE FROM `_sqlscribe_meta`',
    "SELECT * FROM ('_sqlscribe_meta')",
    "SELECT * FROM t JOIN u ON 1 IN (1), ('_sqlscribe_meta')",
    "SELECT * FROM t WHERE x IN '_sqlscribe_meta'",
    "INSERT INTO '_sqlscribe_meta' VALUES ('a', 1)",
    "UPDATE t SET a = 1, '_sqlscribe_x' = 2",
    "CREATE INDEX i ON '_sqlscribe_meta' (key)",
    "CREATE TABLE c (a INT REFERENCES '_sqlscribe_meta')",
    "ALTER TABLE t RENAME TO '_sqlscribe_x'",
    "WITH '_sqlscribe_meta' AS (SELECT 1) SELECT 1",
    'SELECT * FROM dbstat',
    "SELECT * FROM 'DBSTAT'",
    "SELECT * FROM t, 'pragma_table_list'",
    'DELETE FROM sqlite_schema',
    'UPDATE sqlite_master SET sql = 1',
    'SELECT * FROM t WHERE x IN sqlite_schema',
  ]) {
    t.equal(
      codeOf(() => classifyStatement(sql)),
      FORBIDDEN,
      sql,
    );
  }
});

t.test('a string that can only be a value may hold the prefix', async (t) => {
  for (const sql of [
    "INSERT INTO notes VALUES ('_sqlscribe is a word'), (1, '_sqlscribe')",
    "SELECT * FROM t WHERE a = '_sqlscribe_meta'",
    "SELECT * FROM t WHERE a IN ('_sqlscribe_a', 'b')",
    "UPDATE t SET a = '_sqlscribe'",
    "SELECT * FROM t WHERE a LIKE '_sqlscribe%'",
  ]) {
    t.doesNotThrow(() => classifyStatement(sql), sql);
  }
});

t.test('reads of the schema table leave out the service rows', async (t) => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE _sqlscribe_meta (key TEXT PRIMARY KEY, value INT); CREATE TABLE t (x INT)');
  const names = (sql: string): unknown[] =>
    db
      .prepare(rewriteForStorage(classifyStatement(sql)))
      .pluck()
      .all();
  t.strictSame(names('SELECT name FROM sqlite_schema'), ['t']);
  t.strictSame(names("SELECT m.name FROM main.'sqlite_master' m"), ['t'], 'quoted, qualified, with an alias');
  t.strictSame(
    names('SELECT sqlite_schema.tbl_name FROM t, sqlite_schema'),
    [],
    'in a join, qualified columns still resolve',
  );
  t.strictSame(names('SELECT name FROM (sqlite_schema)'), ['t'], 'in a join group');
  t.strictSame(names("SELECT count(*) FROM sqlite_schema WHERE name LIKE '%sqlscribe%'"), [0]);
});
