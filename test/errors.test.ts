import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { catalog, EngineError, errorClass, formatCode } from '../src/errors';
import { catalogMarkdown } from '../src/errors-markdown';
import { toEngineError } from '../src/engine/sqlite-errors';
import Database from 'better-sqlite3';

t.test('every code is unique, four digits, and its class is its first digit', async (t) => {
  const codes = Object.values(catalog).map((entry) => entry.code);
  t.equal(new Set(codes).size, codes.length, 'no code is used twice');
  for (const [name, entry] of Object.entries(catalog)) {
    t.ok(entry.code >= 1000 && entry.code <= 9999, `${name} has four digits`);
    t.ok([1, 2, 3, 4, 5, 6, 7, 9].includes(errorClass(entry.code)), `${name} is in a known class`);
    t.ok(entry.status >= 400 && entry.status <= 599, `${name} has an error status`);
  }
});

t.test('internal and storage errors are the 5xx ones', async (t) => {
  // A full disk is 507; a journal or database that will come back is 503 with Retry-After; the rest 500.
  const expected: Record<string, number> = { STORAGE_FULL: 507, JOURNAL_UNAVAILABLE: 503, DATABASE_BEHIND: 503 };
  for (const [name, entry] of Object.entries(catalog)) {
    if (errorClass(entry.code) === 9)
      t.equal(entry.status, expected[name] ?? 500, `${name} is a ${expected[name] ?? 500}`);
  }
});

t.test('docs/errors.md publishes exactly the catalog', async (t) => {
  const page = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
  const match = /<!-- catalog:start -->\n([\s\S]*?)\n<!-- catalog:end -->/.exec(page);
  t.ok(match, 'docs/errors.md has the catalog markers');
  t.equal(match?.[1], catalogMarkdown(), 'docs/errors.md table equals the catalog (regenerate with: npm run catalog)');
});

t.test('an engine error message starts with its bracketed code', async (t) => {
  const error = new EngineError('NO_SUCH_TABLE', { table: 'pupils' });
  t.equal(formatCode(2003), '[SQ2003]');
  t.equal(error.message, '[SQ2003] no such table: pupils');
  t.same(error.toBody(), { ok: false, error: '[SQ2003] no such table: pupils', code: 2003 });
  t.same(EngineError.fromData(error.toData()).toBody(), error.toBody(), 'survives a trip as plain data');
});

t.test('SQLite errors map to their catalog codes', async (t) => {
  const db = new Database(':memory:');
  db.exec(
    'CREATE TABLE p (id INTEGER PRIMARY KEY) STRICT; CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE, n TEXT NOT NULL, c INTEGER CHECK (c > 0), b INTEGER CHECK (("b") IN (0, 1)), p INTEGER REFERENCES p(id)) STRICT',
  );
  db.pragma('foreign_keys = ON');
  db.exec("INSERT INTO t (id, u, n) VALUES (1, 'a', 'x')");
  const codeOf = (sql: string): number => {
    try {
      db.exec(sql);
    } catch (error) {
      return toEngineError(error, (table, column) => table === 't' && column === 'b').code;
    }
    return 0;
  };
  t.equal(codeOf('SELEC 1'), 1001, 'syntax');
  t.equal(codeOf('SELECT * FROM nope'), 2003, 'no such table');
  t.equal(codeOf('SELECT nope FROM t'), 2004, 'no such column');
  t.equal(codeOf('SELECT nope(1)'), 2006, 'no such function');
  t.equal(codeOf('CREATE TABLE t (a INTEGER) STRICT'), 2008, 'table exists');
  t.equal(codeOf("INSERT INTO t (id, n) VALUES (1, 'x')"), 3003, 'primary key');
  t.equal(codeOf("INSERT INTO t (u, n) VALUES ('a', 'x')"), 3002, 'unique');
  t.equal(codeOf('INSERT INTO t (u) VALUES (1)'), 3001, 'not null');
  t.equal(codeOf("INSERT INTO t (n, p) VALUES ('x', 99)"), 3004, 'foreign key');
  t.equal(codeOf("INSERT INTO t (n, c) VALUES ('x', -1)"), 3005, 'check');
  t.equal(codeOf("INSERT INTO t (n, c) VALUES ('x', 'abc')"), 4001, 'STRICT type');
  t.equal(codeOf("INSERT INTO t (n, b) VALUES ('x', 2)"), 4001, 'BOOL check is a type error');
  t.equal(codeOf('ROLLBACK TO nope'), 5001, 'savepoint');
  db.close();
});

t.test('a BOOL type error names BOOL and the value type', async (t) => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (b INTEGER CHECK (("b") IN (0, 1))) STRICT');
  try {
    db.exec("INSERT INTO t VALUES ('yes')");
    t.fail('should throw');
  } catch (error) {
    const mapped = toEngineError(error, (table, column) => table === 't' && column === 'b');
    t.equal(mapped.code, 4001);
    t.match(mapped.message, /BOOL/);
    t.match(mapped.message, /TEXT/);
  }
  db.close();
});

t.test('anything unknown is an internal error', async (t) => {
  t.equal(toEngineError(new Error('boom')).code, 9001);
  t.equal(toEngineError(new RangeError('Too few parameter values were provided')).code, 1007);
});
