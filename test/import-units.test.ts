/**
 * The pure parts of import and export: RFC 4180 CSV both ways, type
 * inference, a script's BEGIN/COMMIT wrapper, SQL literals that read back
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
import { importScript } from '../src/engine/transfer/import-script';
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
    () => importScript(['SELECT 1', 'PRAGMA foreign_keys=OFF']),
    { code: 1101, statement: 1 },
    'elsewhere setting foreign_keys is refused',
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
