/**
 * The pure parts of import and export: RFC 4180 CSV both ways, type
 * inference, a script's BEGIN/COMMIT wrapper and PRAGMA settings, the types
 * an import gives by affinity, double-quoted literals in triggers and views
 * made single-quoted, SQL literals that read back
 * exactly, the insert order of a dump, and a journal whose last line (an
 * import) is longer than the window the tail reader starts with.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { csvField, csvRecord, parseCsv } from '../src/engine/transfer/csv-records';
import { csvImport, inferType, parseCsvTypes } from '../src/engine/transfer/csv-import';
import { importScript, NO_OP_PRAGMAS } from '../src/engine/transfer/import-script';
import { singleQuoteLiterals } from '../src/engine/transfer/quoted-literals';
import { classifyStatement } from '../src/engine/dialect/classify';
import { rewriteForStorage, withAffinityTypes } from '../src/engine/dialect/rewrite';
import { affinityType } from '../src/engine/types';
import { Engine } from '../src/engine/engine';
import { splitStatements } from '../src/engine/dialect/split';
import type { ExecRequest } from '../src/engine/protocol';
import { dumpStatements, insertOrder } from '../src/engine/transfer/sql-dump';
import { sqlLiteral } from '../src/engine/transfer/sql-literal';
import { lastSeqOfFile, repairTornTail } from '../journal/tail';
import { decodeLine, encodeLine } from '../journal/record';
import { readFileLines } from '../journal/reader';
import { execEntry, header } from './helpers/journal-build';

t.test('parses RFC 4180 CSV: quotes, doubled quotes, line breaks in fields, CRLF, NULL against ""', async (t) => {
  t.same(parseCsv('a,b,c\r\n1,"x, y","say ""hi"""\r\n2,,""\r\n'), [
    ['a', 'b', 'c'],
    ['1', 'x, y', 'say "hi"'],
    ['2', null, ''],
  ]);
  t.same(parseCsv('a,b\n"two\nlines",z\n'), [
    ['a', 'b'],
    ['two\nlines', 'z'],
  ]);
  t.same(parseCsv('\uFEFFa\n1'), [['a'], ['1']], 'a BOM and a missing final line break');
  t.same(
    parseCsv('a,b\n1,\n'),
    [
      ['a', 'b'],
      ['1', null],
    ],
    'a trailing empty field',
  );
  t.same(parseCsv(''), []);
});

t.test('refuses broken CSV naming the line', async (t) => {
  t.throws(() => parseCsv('a,b\n1,2\n3\n'), { code: 1050, params: { line: 3 } });
  t.throws(() => parseCsv('a\n"open\n'), { code: 1050 });
  t.throws(() => parseCsv('a\nx"y\n'), { code: 1050 });
  t.throws(() => parseCsv('a\n"x"y\n'), { code: 1050 });
});

t.test('writes fields back so that they parse to the same values', async (t) => {
  const values = [null, '', 'plain', 'a,b', 'q"uote', 'line\nbreak', ' padded '];
  t.same(parseCsv(csvRecord(values.map((_, i) => `c${i}`)) + csvRecord(values))[1], values);
  t.equal(csvField(null), '');
  t.equal(csvField(''), '""');
});

t.test('infers INT, FLOAT or TEXT from every value of a column', async (t) => {
  t.equal(inferType(['1', '-2', null, '+3']), 'INT');
  t.equal(inferType(['1', '2.5', '1e3']), 'FLOAT');
  t.equal(inferType(['9223372036854775808']), 'FLOAT', 'beyond 64 bits is not an INT');
  t.equal(inferType(['1', '007x']), 'TEXT');
  t.equal(inferType([null, null]), 'TEXT');
  t.same(parseCsvTypes('int, varchar(3),Boolean'), ['INT', 'TEXT', 'BOOL']);
  t.throws(() => parseCsvTypes('INT,GEOMETRY'), { code: 1008 });
});

t.test('turns a CSV into a CREATE TABLE and INSERTs of at most 500 rows', async (t) => {
  const rows = Array.from({ length: 1001 }, (_, i) => `${i},n${i}`).join('\n');
  const plan = csvImport(`id,name\n${rows}\n`, 'people', undefined, undefined);
  t.equal(plan.statements.length, 4);
  t.equal(plan.statements[0], 'CREATE TABLE "people" ("id" INT, "name" TEXT)');
  t.equal(plan.rows, 1001);
  t.throws(() => csvImport('a,b\n1,2\n', 't', undefined, ['INT']), { code: 1008 });
  t.throws(() => csvImport('a,a\n1,2\n', 't', undefined, undefined), { code: 1050 });
});

t.test('skips the BEGIN and COMMIT around a script and refuses transaction control inside it', async (t) => {
  const wrapped = importScript(['BEGIN TRANSACTION', 'CREATE TABLE a (x INT)', 'COMMIT']);
  t.same(
    wrapped.statements.map((s) => s.kind),
    ['create-table'],
  );
  t.equal(wrapped.offset, 1);
  t.equal(importScript(['CREATE TABLE a (x INT)', 'END']).statements.length, 1);
  const dump = importScript([
    'PRAGMA foreign_keys=OFF',
    'BEGIN TRANSACTION',
    'CREATE TABLE a (x INT)',
    'INSERT INTO a VALUES (1)',
    'COMMIT',
  ]);
  t.same(
    dump.statements.map((s) => s.kind),
    ['create-table', 'insert'],
    'the preamble of sqlite3 .dump is skipped',
  );
  t.equal(dump.offset, 2);
  t.throws(
    () => importScript(['SELECT 1', 'PRAGMA writable_schema=ON']),
    { code: 1003, statement: 1 },
    'a PRAGMA that is not one of the import settings is refused',
  );
  t.throws(() => importScript(['CREATE TABLE a (x INT)', 'BEGIN', 'SELECT 1']), { code: 1055, statement: 1 });
  t.throws(() => importScript(['SELECT 1', "ATTACH DATABASE 'x' AS y"]), { code: 1003, statement: 1 });
  t.throws(() => importScript(['CREATE DATABASE other']), { code: 1002, statement: 0 });
  t.throws(() => importScript(['BEGIN', 'COMMIT']), { code: 1005 });
});

t.test('writes SQL literals that read back as the same values', async (t) => {
  const db = new Database(':memory:');
  const values = [null, 9223372036854775807n, -1n, 2, 0.1, 1e300, -0.5, "it's", '', new Uint8Array([0, 255])];
  t.equal(sqlLiteral(2), '2.0', 'a whole REAL stays a REAL');
  const back = db
    .prepare(`SELECT ${values.map((v) => sqlLiteral(v)).join(', ')}`)
    .raw(true)
    .safeIntegers(true)
    .get() as unknown[];
  t.same(back, [null, 9223372036854775807n, -1n, 2, 0.1, 1e300, -0.5, "it's", '', Buffer.from([0, 255])]);
  db.close();
});

t.test('dumps parents before the tables that point at them, and nothing internal', async (t) => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE child (id INT, parent INT REFERENCES parent(id));
    CREATE TABLE parent (id INT PRIMARY KEY, up INT REFERENCES parent(id));
    CREATE TABLE _sqlscribe_position (x INT);
    INSERT INTO parent VALUES (1, NULL); INSERT INTO child VALUES (1, 1);
    CREATE VIEW v AS SELECT * FROM child;`);
  t.same(insertOrder(db, ['child', 'parent']), ['parent', 'child']);
  const dump = [...dumpStatements(db)];
  t.notOk(dump.some((s) => s.includes('_sqlscribe')));
  const fresh = new Database(':memory:');
  fresh.pragma('foreign_keys = ON');
  for (const statement of dump) fresh.exec(statement);
  t.same(
    fresh.prepare('SELECT * FROM v').raw(true).all(),
    [[1, 1]],
    'the dump loads with foreign keys enforced, the view last',
  );
});

t.test('keeps a last journal line longer than the tail window, and finds its seq', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-tail-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'statements.jsonl');
  const long = {
    ...execEntry(2, 'big.db'),
    sql: '-- import',
    statements: [{ sql: `INSERT INTO t VALUES ('${'x'.repeat(5 * 1024 * 1024)}')` }],
  };
  fs.writeFileSync(file, encodeLine(header(1)) + encodeLine(execEntry(1, 'big.db')) + encodeLine(long));
  const size = fs.statSync(file).size;
  t.equal(repairTornTail(file), 0, 'the whole line is kept');
  t.equal(fs.statSync(file).size, size);
  t.equal(lastSeqOfFile(file), 2);
  const seqs: number[] = [];
  for await (const line of readFileLines(file)) {
    const decoded = decodeLine(line.text);
    if ('seq' in decoded) seqs.push(decoded.seq);
  }
  t.same(seqs, [1, 2], 'the reader reads the 5 MB line whole');
  fs.appendFileSync(file, '{"seq":3,"torn');
  t.equal(repairTornTail(file), '{"seq":3,"torn'.length, 'a torn line after it is still cut');
  t.equal(lastSeqOfFile(file), 2);
});

t.test('takes PRAGMA foreign_keys anywhere as the import setting, and the no-op settings as nothing', async (t) => {
  const northwind = importScript([
    'PRAGMA foreign_keys=off',
    'CREATE TABLE a (x INT)',
    'PRAGMA synchronous = OFF',
    'INSERT INTO a VALUES (1)',
    'PRAGMA foreign_keys=on',
  ]);
  t.equal(northwind.foreignKeys, 'off', 'off anywhere: the whole import runs without enforcement');
  t.same(
    northwind.statements.map((s) => s.kind),
    ['create-table', 'insert'],
  );
  t.same(northwind.positions, [1, 3], 'each statement keeps its index in the script');
  t.same(northwind.settings, ['PRAGMA foreign_keys=off', 'PRAGMA synchronous = OFF', 'PRAGMA foreign_keys=on']);
  t.equal(importScript(['PRAGMA foreign_keys = ON', 'SELECT 1']).foreignKeys, 'on');
  t.equal(importScript(['SELECT 1']).foreignKeys, 'on', 'enforced unless the script says otherwise');
  t.equal(importScript(['SELECT 1'], { foreignKeys: 'off' }).foreignKeys, 'off', "an uploaded file's default");
  const dump = importScript([
    'PRAGMA main.journal_mode=WAL',
    "PRAGMA encoding = 'UTF-8'",
    'PRAGMA foreign_keys=OFF',
    'BEGIN TRANSACTION',
    'CREATE TABLE a (x INT)',
    'COMMIT',
    'PRAGMA cache_size(2000)',
  ]);
  t.same(
    dump.statements.map((s) => s.sql),
    ['CREATE TABLE a (x INT)'],
    'the BEGIN … COMMIT inside the settings is skipped too',
  );
  t.equal(dump.offset, 4);
  for (const name of NO_OP_PRAGMAS) t.equal(importScript([`PRAGMA ${name}=1`, 'SELECT 1']).settings.length, 1, name);
  // Settings outside the import's own are refused as /exec refuses them: a value given to a connection setting is [SQ1101].
  t.throws(() => importScript(['SELECT 1', 'PRAGMA foreign_keys=maybe']), { code: 1101, statement: 1 });
  t.throws(() => importScript(['PRAGMA user_version=3', 'SELECT 1']), { code: 1101, statement: 0 });
});

t.test('gives a type outside ours the type SQLite affinity gives it, keeping its spelling', async (t) => {
  const cases: Array<[string, string]> = [
    ['INT(11)', 'INT'],
    ['TINYINT(1)', 'INT'],
    ['DATETIME(6)', 'TEXT'],
    ['BLOB SUB_TYPE TEXT', 'TEXT'],
    ['CHARINT', 'INT'],
    ['FLOATING POINT', 'INT'],
    ['LONGBLOB', 'BLOB'],
    ['', 'BLOB'],
    ['DOUBLE(10,2)', 'FLOAT'],
    ['FLOAT8', 'FLOAT'],
    ['GEOMETRY', 'FLOAT'],
    ['JSON', 'FLOAT'],
  ];
  for (const [declared, type] of cases) t.equal(affinityType(declared), type, declared || '(none)');
  const sakila =
    'CREATE TABLE film (film_id INT NOT NULL, description BLOB SUB_TYPE TEXT DEFAULT NULL, rating VARCHAR(10))';
  const typed = withAffinityTypes(classifyStatement(sakila));
  t.equal(
    typed,
    'CREATE TABLE film (film_id INT NOT NULL, description /* declared BLOB SUB_TYPE TEXT */ TEXT DEFAULT NULL, rating VARCHAR(10))',
  );
  t.equal(
    rewriteForStorage(classifyStatement(typed)),
    'CREATE TABLE film (film_id INTEGER NOT NULL, description /* declared BLOB SUB_TYPE TEXT */ TEXT DEFAULT NULL, rating /* declared VARCHAR(10) */ TEXT) STRICT',
    'what it gives is stored as any known type is',
  );
  t.equal(
    withAffinityTypes(classifyStatement('CREATE TABLE t (a, "b c" PRIMARY KEY)')),
    'CREATE TABLE t (a BLOB, "b c" BLOB PRIMARY KEY)',
  );
  t.equal(
    withAffinityTypes(classifyStatement('ALTER TABLE t ADD COLUMN g GEOMETRY')),
    'ALTER TABLE t ADD COLUMN g /* declared GEOMETRY */ FLOAT',
  );
  t.equal(withAffinityTypes(classifyStatement('CREATE TABLE t (a INT, b TEXT)')), 'CREATE TABLE t (a INT, b TEXT)');
  t.equal(withAffinityTypes(classifyStatement('CREATE TABLE t (a ANY) STRICT')), 'CREATE TABLE t (a ANY) STRICT');
  t.equal(
    importScript([sakila]).statements[0]?.sql,
    typed,
    'the import runs (and journals) the statement with its types given',
  );
  t.throws(
    () => rewriteForStorage(classifyStatement('CREATE TABLE t (a GEOMETRY)')),
    { code: 4002 },
    '/exec still refuses',
  );
});

t.test(
  "single-quotes the double-quoted literals of an import's triggers and views, where they name nothing",
  async (t) => {
    const trigger = `CREATE TRIGGER check_answer AFTER INSERT ON answer
    WHEN new.who==1
    BEGIN
        DELETE FROM answer;
        INSERT INTO answer VALUES (0,
        CASE WHEN hex(new.value)=='414243' THEN "Congrats, it's them!" ELSE "Try again" END);
    END`;
    const names = new Set(['answer', 'who', 'value']);
    const rewritten = singleQuoteLiterals(trigger, names);
    t.equal(rewritten.literals, 2);
    t.match(rewritten.sql, /THEN 'Congrats, it''s them!' ELSE 'Try again' END/);
    const db = new Database(':memory:');
    db.exec('CREATE TABLE answer (who INT, value TEXT)');
    t.throws(
      () => {
        db.exec(trigger);
        db.exec("INSERT INTO answer VALUES (1, 'ABC')");
      },
      /no such column/,
      'as published the trigger fails here',
    );
    db.exec('DROP TRIGGER IF EXISTS check_answer');
    db.exec(rewritten.sql);
    db.exec("INSERT INTO answer VALUES (1, 'ABC')");
    t.same(db.prepare('SELECT value FROM answer').pluck().all(), ["Congrats, it's them!"]);
    db.close();
    const kept = `CREATE VIEW "v" ("a") AS SELECT "value" AS "label", "t"."who", t."who" FROM "answer" AS t WHERE "who" = "nobody"`;
    const view = singleQuoteLiterals(kept, names);
    t.equal(view.literals, 1, 'only the token that names nothing');
    t.match(view.sql, /WHERE "who" = 'nobody'$/);
    t.equal(singleQuoteLiterals('CREATE TABLE "x" (a TEXT)', names).literals, 0, 'only triggers and views');
    const script = importScript([
      trigger,
      'CREATE TABLE answer (who INT, value TEXT)',
      `CREATE VIEW labels AS SELECT value, "none yet" AS note FROM answer`,
    ]);
    t.same(script.rewritten, [
      { type: 'trigger', name: 'check_answer', literals: 2 },
      { type: 'view', name: 'labels', literals: 1 },
    ]);
    t.match(script.statements[0]?.sql, /'Try again'/, 'a trigger before its table is judged by the whole script');
    t.equal(
      importScript(['CREATE VIEW w AS SELECT "who" FROM answer'], { knownNames: ['WHO'] }).rewritten.length,
      0,
      "the database's own columns stay identifiers",
    );
  },
);

t.test(
  'a batch run with foreign keys off has a transaction to itself, and enforcement comes back after it',
  async (t) => {
    const file = path.join(t.testdir(), 'fk.db');
    const engine = new Engine();
    t.teardown(() => engine.close());
    engine.createDatabase(file);
    const batch = (sql: string, seq: number, foreignKeys?: 'off'): ExecRequest => ({
      file,
      statements: splitStatements(sql).map((text) => ({ sql: text, kind: classifyStatement(text).kind })),
      maxResultRows: 0,
      context: { clockMs: 1_795_239_792_345 + seq, seed: seq.toString(16).padStart(16, '0') },
      ...(foreignKeys === undefined ? {} : { foreignKeys }),
    });
    engine.exec(batch('CREATE TABLE p (id INT PRIMARY KEY); CREATE TABLE c (id INT, p INT REFERENCES p(id))', 0));
    const orphan = batch('INSERT INTO c VALUES (1, 7); INSERT INTO c VALUES (2, 8)', 2, 'off');
    const group = engine.execHeldGroup([
      batch('INSERT INTO p VALUES (1)', 1),
      orphan,
      batch('INSERT INTO p VALUES (2)', 3),
    ]);
    t.equal(group.length, 1, 'the group stops before it: the others are sent again');
    engine.commitHeld(1);
    const alone = engine.execHeldGroup([orphan, batch('INSERT INTO p VALUES (2)', 3)]);
    t.equal(alone.length, 1, 'and none joins it');
    t.match(alone[0], { results: [{}, { foreignKeyViolations: [{ table: 'c', rows: 2 }] }] });
    engine.commitHeld(2);
    t.throws(
      () => engine.exec(batch('INSERT INTO c VALUES (3, 9)', 4)),
      { code: 3004 },
      'enforced again after its commit',
    );
    t.throws(() => engine.exec(batch('INSERT INTO c VALUES (3, 9); INSERT INTO nowhere VALUES (1)', 5, 'off')), {
      code: 2003,
    });
    t.throws(() => engine.exec(batch('INSERT INTO c VALUES (3, 9)', 6)), { code: 3004 }, 'and after its rollback');
    t.equal(
      engine.execHeldRun([batch('INSERT INTO c VALUES (4, 9)', 7, 'off'), batch('INSERT INTO p VALUES (3)', 8)]),
      1,
      "replay's group stops after it",
    );
    engine.commitHeld(7);
    t.equal(
      engine.execHeldRun([batch('INSERT INTO p VALUES (3)', 8), batch('INSERT INTO c VALUES (5, 9)', 9, 'off')]),
      1,
      'and before it',
    );
    engine.commitHeld(8);
    const db = new Database(file, { readonly: true });
    t.same(db.prepare('SELECT id FROM c ORDER BY id').pluck().all(), [1, 2, 4]);
    db.close();
  },
);
