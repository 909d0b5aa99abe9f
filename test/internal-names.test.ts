/**
 * Property: no spelling of a name the service keeps for itself reaches it.
 *
 * fast-check builds statements of many shapes around the internal table and
 * savepoints, the schema tables, dbstat and the pragma_* functions, each name
 * in a random quoting, case and schema prefix, and sends them to a running
 * server; and introspection (PRAGMA table_info, pragma_table_info(…), EXPLAIN)
 * of each. Every one must be a 400 with a catalog code, or (reads of the
 * schema table, of the introspection functions, and introspection of any
 * name) a 200 that shows nothing internal; /health answers after each. At the end the journal position is still in its table, the server
 * starts again and replay -verify agrees with the data directory.
 *
 * The seed is fixed (override with SQLSCRIBE_PROPERTY_SEED) and printed by
 * fast-check on failure.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import t from 'tap';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const SEED = Number(process.env.SQLSCRIBE_PROPERTY_SEED ?? 20261123);
const NUM_RUNS = 300;
const DB = 'school';

const INTERNAL = ['_sqlscribe_meta', '_sqlscribe_group', '_sqlscribe_1', '_sqlscribe_x'];
const REVEALING = ['dbstat', 'pragma_table_list', 'pragma_database_list'];
/** Answered as SQLite answers them, with the service's own tables out of sight. */
const INTROSPECTION = ['pragma_table_info', 'pragma_index_list', 'pragma_foreign_key_list'];
const SCHEMA_TABLES = ['sqlite_schema', 'sqlite_master', 'sqlite_temp_schema', 'sqlite_temp_master'];

const QUOTES: Array<(name: string) => string> = [
  (n) => n,
  (n) => `"${n}"`,
  (n) => `'${n}'`,
  (n) => `[${n}]`,
  (n) => `\`${n}\``,
];
const PREFIXES = ['', 'main.', 'temp.', 'MAIN.', '"main".', "'main'."];

/** `{t}` is the name with its schema prefix, where a table goes; `{n}` the bare quoted name. */
const SHAPES = [
  'SELECT * FROM {t}',
  'SELECT * FROM notes, {t}',
  'SELECT * FROM notes JOIN {t} ON 1',
  'SELECT * FROM notes LEFT JOIN notes m ON 1 IN (1), ({t})',
  'SELECT * FROM ({t})',
  'SELECT * FROM notes WHERE n IN {t}',
  'SELECT (SELECT count(*) FROM {t})',
  'SELECT * FROM notes WHERE EXISTS (SELECT 1 FROM {t})',
  'WITH c AS (SELECT * FROM {t}) SELECT * FROM c',
  'WITH {n} AS (SELECT 1) SELECT * FROM notes',
  "INSERT INTO {t} VALUES ('applied', 1)",
  'INSERT INTO notes SELECT 1 FROM {t}',
  'UPDATE {t} SET value = 0',
  "UPDATE notes SET n = 'x', {n} = 1",
  'DELETE FROM {t}',
  'DROP TABLE {t}',
  'DROP TABLE IF EXISTS {t}',
  'DROP INDEX {t}',
  'ALTER TABLE {t} RENAME COLUMN value TO v',
  'ALTER TABLE {t} RENAME TO stolen',
  'ALTER TABLE {t} ADD COLUMN z INT',
  'ALTER TABLE {t} DROP COLUMN value',
  'ALTER TABLE notes RENAME TO {n}',
  'ALTER TABLE notes RENAME COLUMN n TO {n}',
  'CREATE INDEX i ON {t} (value)',
  'CREATE INDEX {n} ON notes (n)',
  'CREATE TABLE {n} (a INT)',
  'CREATE TABLE c (a INT REFERENCES {n})',
  'CREATE TRIGGER tr AFTER INSERT ON notes BEGIN DELETE FROM {t}; END',
  'CREATE VIEW v AS SELECT * FROM {t}',
  'CREATE VIEW {n} AS SELECT 1',
  'CREATE VIEW IF NOT EXISTS v (a) AS SELECT n FROM notes WHERE n IN (SELECT name FROM {t})',
  'CREATE VIEW v AS WITH c AS (SELECT * FROM {t}) SELECT * FROM c',
  'CREATE VIEW v AS SELECT * FROM notes JOIN {t} ON 1',
  'CREATE TRIGGER {n} AFTER INSERT ON notes BEGIN SELECT 1; END',
  'CREATE TRIGGER IF NOT EXISTS tr AFTER INSERT ON {t} BEGIN SELECT 1; END',
  'CREATE TRIGGER tr INSTEAD OF INSERT ON {t} BEGIN SELECT 1; END',
  "CREATE TRIGGER tr BEFORE UPDATE ON notes BEGIN INSERT INTO {t} VALUES ('applied', 1); END",
  'CREATE TRIGGER tr AFTER DELETE ON notes BEGIN SELECT 1; UPDATE {t} SET value = 0; END',
  'CREATE TRIGGER tr AFTER INSERT ON notes WHEN (SELECT count(*) FROM {t}) > 0 BEGIN SELECT 1; END',
  'CREATE TRIGGER tr AFTER INSERT ON notes BEGIN INSERT INTO notes SELECT name FROM {t}; END',
  'DROP VIEW {t}',
  'DROP VIEW IF EXISTS {t}',
  'DROP TRIGGER {t}',
  'DROP TRIGGER IF EXISTS {t}',
  'SELECT * FROM notes INDEXED BY {n}',
  'SAVEPOINT {n}',
  'RELEASE {n}',
  'ROLLBACK TO {n}',
  'SELECT * FROM pragma_table_info({n})',
  'SELECT p.* FROM notes JOIN pragma_index_list({n}) p',
  'SELECT * FROM pragma_foreign_key_check({n}, {n})',
  'PRAGMA table_info({n})',
  'PRAGMA main.index_list({n})',
  'PRAGMA foreign_key_list = {n}',
  'EXPLAIN SELECT * FROM {t}',
  'EXPLAIN QUERY PLAN UPDATE {t} SET value = 0',
];

interface Case {
  name: string;
  sql: string;
}

/** Each character of the name in upper or lower case. */
const casedName = (names: string[]): fc.Arbitrary<string> =>
  fc
    .constantFrom(...names)
    .chain((name) =>
      fc
        .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
        .map((upper) => [...name].map((c, i) => (upper[i] === true ? c.toUpperCase() : c)).join('')),
    );

const caseArbitrary: fc.Arbitrary<Case> = fc
  .record({
    name: casedName([...INTERNAL, ...REVEALING, ...INTROSPECTION, ...SCHEMA_TABLES]),
    quote: fc.constantFrom(...QUOTES),
    prefix: fc.constantFrom(...PREFIXES),
    shape: fc.constantFrom(...SHAPES),
  })
  .map(({ name, quote, prefix, shape }) => ({
    name,
    sql: shape.replaceAll('{t}', prefix + quote(name)).replaceAll('{n}', quote(name)),
  }));

/** Names a read of which may answer, as long as it shows nothing of the service. */
const isReadable = (name: string): boolean => [...SCHEMA_TABLES, ...INTROSPECTION].includes(name.toLowerCase());
/** Shapes that introspect whatever they name: they may answer, and must show nothing of the service. */
const INTROSPECTING = /^(PRAGMA|EXPLAIN)|pragma_/;

/** Views and triggers are kept and run later: any internal name in them is refused, always as forbidden. */
const STORED = /^(CREATE|DROP) (VIEW|TRIGGER)/;
const FORBIDDEN = 1003;
/** A view or trigger that reads an introspection function is refused for that (its arguments are checked as a statement runs). */
const INTROSPECTION_FORM = 1103;

/**
 * A 400 with a catalog code (1003 for a view or trigger, or 1103 for one that reads an
 * introspection function), or a read that shows nothing of the service. EXPLAIN of a read of the
 * schema table shows the filter that leaves the service's rows out, prefix and all, but never
 * the name of one of its objects.
 */
function harmless(c: Case, reply: Reply): string | undefined {
  const stored = [FORBIDDEN, ...(INTROSPECTION.includes(c.name.toLowerCase()) ? [INTROSPECTION_FORM] : [])];
  if (reply.status === 400 && STORED.test(c.sql) && !stored.includes(reply.body?.code))
    return `refused with ${reply.body?.code}, not ${stored.join(' or ')}`;
  if (reply.status === 400)
    return typeof reply.body?.code === 'number' ? undefined : `400 without a code: ${reply.text}`;
  if (reply.status !== 200) return `status ${reply.status}: ${reply.text.slice(0, 300)}`;
  if (!isReadable(c.name) && !INTROSPECTING.test(c.sql)) return `accepted: ${reply.text.slice(0, 300)}`;
  const shown = reply.text.toLowerCase();
  const revealed = c.sql.startsWith('EXPLAIN') ? /_sqlscribe_\w/.test(shown) : shown.includes('_sqlscribe');
  return revealed ? `revealed: ${reply.text.slice(0, 300)}` : undefined;
}

function appliedPosition(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare("SELECT value FROM _sqlscribe_meta WHERE key = 'applied'").safeIntegers(false).get() as
      { value: number } | undefined;
    return row?.value ?? -1;
  } finally {
    db.close();
  }
}

async function start(dir: string): Promise<TestServer> {
  return startServer(['-dir', path.join(dir, 'data'), '-log-file', path.join(dir, 'journal')], { cwd: dir });
}

t.test('no spelling of an internal name reads, writes or breaks internals', async (tt) => {
  const dir = scratchDir(tt, { data: {} });
  let server = await start(dir);
  tt.teardown(() => server.stop());
  tt.equal((await server.exec(undefined, `CREATE DATABASE ${DB}`)).status, 200);
  tt.equal(
    (await server.exec(DB, "CREATE TABLE notes (n TEXT); INSERT INTO notes VALUES ('_sqlscribe is a word')")).status,
    200,
    'a value may hold the prefix',
  );
  tt.equal(
    (await server.exec(DB, 'DELETE FROM notes')).status,
    200,
    'and it goes, so that no answer below holds the prefix as data',
  );

  const failures: string[] = [];
  await fc
    .assert(
      fc.asyncProperty(caseArbitrary, async (c) => {
        const problem = harmless(c, await server.exec(DB, c.sql));
        const health = await server.get('/health');
        if (problem !== undefined) failures.push(`${c.sql} → ${problem}`);
        if (health.status !== 200) failures.push(`${c.sql} → /health ${health.status}`);
        return problem === undefined && health.status === 200;
      }),
      { seed: SEED, numRuns: NUM_RUNS },
    )
    .catch((err: unknown) => failures.unshift(err instanceof Error ? err.message.slice(0, 400) : String(err)));
  tt.strictSame(failures.slice(0, 10), [], 'every variant refused or harmless');

  const made = await server.exec(DB, "SELECT count(*) FROM sqlite_schema WHERE type IN ('view', 'trigger')");
  tt.strictSame(made.body?.results?.[0]?.rows, [[0]], 'no view or trigger was made');
  const write = await server.exec(DB, "INSERT INTO notes VALUES ('after')");
  tt.equal(write.status, 200, 'the database still takes writes');
  tt.equal(await server.stop(), 0, 'clean stop');
  const file = path.join(dir, 'data', `${DB}.db`);
  tt.ok(appliedPosition(file) > 0, 'the journal position is still recorded in its table');

  server = await start(dir);
  tt.equal((await server.get('/health')).status, 200, 'the server starts again');
  const read = await server.exec(DB, "SELECT count(*) FROM notes WHERE n = 'after'");
  tt.strictSame(read.body?.results?.[0]?.rows, [[1]], 'the data is whole');
  tt.equal(await server.stop(), 0);

  const replayed = await runReplay(
    ['-log-file', path.join(dir, 'journal'), '-out', path.join(dir, 'out'), '-verify', path.join(dir, 'data')],
    dir,
  );
  tt.equal(replayed.code, 0, `replay -verify exits 0 (${replayed.stderr.slice(0, 500)})`);
});
