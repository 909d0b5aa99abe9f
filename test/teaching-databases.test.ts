/**
 * Teaching databases imported unedited through POST /dbs/{db}/import, in
 * every format each is published in, against better-sqlite3 opened directly
 * on the same data: the same tables and views, the same row counts, the same
 * foreign key violations (`PRAGMA foreign_key_check`), then `replay -verify`.
 *
 * The sets are test/fixtures/teaching/: files written for these tests in the
 * shapes the public sets are published in (see its README). With
 * SQLSCRIBE_TEACHING_DATA naming a directory that holds the published files
 * themselves (northwind/create.sql, sql-mysteries/sql-murder-mystery.db and
 * the sql-murder-mystery.dump.sql sqlite3's .dump writes of it,
 * sakila/sqlite-sakila-schema.sql and sqlite-sakila-insert-data.sql,
 * sakila/sqlite-sakila.sq), each of them found there is checked the same way.
 * Nothing is fetched.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';

const FIXTURES = path.join(__dirname, 'fixtures', 'teaching');
const PUBLISHED = process.env.SQLSCRIBE_TEACHING_DATA;
const SQL = 'application/sql';
const SQLITE = 'application/vnd.sqlite3';
const SOLUTION_CHECK = "INSERT INTO solution VALUES (1, 'Jeremy Bowers'); SELECT value FROM solution;";

/** One database as it is published: its files, imported in order, and the set's own checks. */
interface TeachingImport {
  readonly db: string;
  readonly contentType: typeof SQL | typeof SQLITE;
  readonly files: readonly string[];
  readonly kind: 'northwind' | 'murder' | 'sakila';
}

function fixtureImports(scratch: string): TeachingImport[] {
  const murderDump = path.join(FIXTURES, 'murder-style.dump.sql');
  const sakila = ['sakila-style-schema.sql', 'sakila-style-insert-data.sql'].map((f) => path.join(FIXTURES, f));
  // The .db and .sqlite files are made here from the scripts, as sqlite3 would make them (foreign keys off).
  const murderDb = path.join(scratch, 'murder-style.db');
  const sakilaDb = path.join(scratch, 'sakila-style.sqlite');
  scriptDatabase(murderDb, [murderDump]).close();
  scriptDatabase(sakilaDb, sakila).close();
  return [
    { db: 'northwind-sql', contentType: SQL, files: [path.join(FIXTURES, 'northwind-style.sql')], kind: 'northwind' },
    { db: 'murder-db', contentType: SQLITE, files: [murderDb], kind: 'murder' },
    { db: 'murder-dump', contentType: SQL, files: [murderDump], kind: 'murder' },
    { db: 'sakila-sql', contentType: SQL, files: sakila, kind: 'sakila' },
    { db: 'sakila-sqlite', contentType: SQLITE, files: [sakilaDb], kind: 'sakila' },
  ];
}

/** The published files that SQLSCRIBE_TEACHING_DATA holds. */
function publishedImports(dir: string): TeachingImport[] {
  const at = (...parts: string[]): string => path.join(dir, ...parts);
  const candidates: TeachingImport[] = [
    { db: 'published-northwind', contentType: SQL, files: [at('northwind', 'create.sql')], kind: 'northwind' },
    {
      db: 'published-murder',
      contentType: SQLITE,
      files: [at('sql-mysteries', 'sql-murder-mystery.db')],
      kind: 'murder',
    },
    {
      db: 'published-murder-dump',
      contentType: SQL,
      files: [at('sql-mysteries', 'sql-murder-mystery.dump.sql')],
      kind: 'murder',
    },
    {
      db: 'published-sakila-sql',
      contentType: SQL,
      files: [at('sakila', 'sqlite-sakila-schema.sql'), at('sakila', 'sqlite-sakila-insert-data.sql')],
      kind: 'sakila',
    },
    {
      db: 'published-sakila-schema',
      contentType: SQL,
      files: [at('sakila', 'sqlite-sakila-schema.sql')],
      kind: 'sakila',
    },
    { db: 'published-sakila-sqlite', contentType: SQLITE, files: [at('sakila', 'sqlite-sakila.sq')], kind: 'sakila' },
  ];
  return candidates.filter((candidate) => candidate.files.every((file) => fs.existsSync(file)));
}

/** A database file made by running the scripts as sqlite3 runs them: foreign keys off unless a script turns them on. */
function scriptDatabase(file: string, scripts: readonly string[]): Database.Database {
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  for (const script of scripts) db.exec(fs.readFileSync(script, 'utf8'));
  return db;
}

/** The reference: better-sqlite3 on the same data (the file itself, or the scripts run into a new file). */
function reference(item: TeachingImport, scratch: string): Database.Database {
  if (item.contentType === SQLITE) return new Database(item.files[0] as string, { readonly: true });
  return scriptDatabase(path.join(scratch, `${item.db}.reference.db`), item.files);
}

interface Census {
  readonly tables: Record<string, number>;
  readonly views: string[];
  readonly triggers: string[];
}

const OBJECTS =
  "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";

function censusOf(rows: Array<[string, string]>, count: (table: string) => number): Census {
  const tables: Record<string, number> = {};
  for (const [type, name] of rows) if (type === 'table') tables[name] = count(name);
  return {
    tables,
    views: rows.filter(([type]) => type === 'view').map(([, name]) => name),
    triggers: rows.filter(([type]) => type === 'trigger').map(([, name]) => name),
  };
}

function directCensus(db: Database.Database): Census {
  const rows = db.prepare(OBJECTS).raw(true).all() as Array<[string, string]>;
  return censusOf(rows, (table) =>
    Number(
      db
        .prepare(`SELECT count(*) FROM "${table.replace(/"/g, '""')}"`)
        .pluck()
        .get(),
    ),
  );
}

async function rowsOf(server: TestServer, db: string, sql: string): Promise<unknown[][]> {
  const reply = await server.exec(db, sql);
  if (reply.status !== 200) throw new Error(`${sql}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return reply.body.results[0].rows as unknown[][];
}

async function servedCensus(server: TestServer, db: string): Promise<Census> {
  const rows = (await rowsOf(server, db, OBJECTS)) as Array<[string, string]>;
  const tables = rows.filter(([type]) => type === 'table').map(([, name]) => name);
  // One batch for every count: a published set has dozens of tables.
  const reply = await server.exec(
    db,
    tables.map((name) => `SELECT count(*) FROM "${name.replace(/"/g, '""')}"`).join(';\n'),
  );
  if (reply.status !== 200) throw new Error(`counting the rows of ${db}: ${reply.status} ${reply.text.slice(0, 300)}`);
  const counts = new Map(
    tables.map((name, i) => [name, Number((reply.body.results[i].rows as unknown[][])[0]?.[0])] as const),
  );
  return censusOf(rows, (table) => counts.get(table) as number);
}

/** `PRAGMA foreign_key_check` counted by table, in the order it lists them. */
function directViolations(db: Database.Database): Array<{ table: string; rows: number }> {
  const counts = new Map<string, number>();
  for (const row of db.pragma('foreign_key_check') as Array<{ table: string }>)
    counts.set(row.table, (counts.get(row.table) ?? 0) + 1);
  return [...counts].map(([table, rows]) => ({ table, rows }));
}

async function importFiles(server: TestServer, item: TeachingImport): Promise<Reply[]> {
  const created = await server.post('/dbs', { db: item.db });
  if (created.status !== 201) throw new Error(`POST /dbs ${item.db}: ${created.text}`);
  const answers: Reply[] = [];
  for (const file of item.files)
    answers.push(
      await server.request('POST', `/dbs/${item.db}/import`, {
        rawBody: fs.readFileSync(file),
        headers: { 'content-type': item.contentType },
      }),
    );
  return answers;
}

t.test('teaching databases import unedited, as SQLite has them', async (t) => {
  const dir = scratchDir(t);
  const data = path.join(dir, 'data');
  // Idle connections kept well past the client's own keep-alive (4 s): an import of a published set can
  // take longer than the server's default 5 s on a loaded machine, and a pooled connection the server
  // closes just as the client reuses it fails the next request with "other side closed".
  const server = await startServer(['-dir', data, '-idle-timeout', '60s'], { cwd: dir });
  t.teardown(() => server.stop());
  const imports = [...fixtureImports(dir), ...(PUBLISHED === undefined ? [] : publishedImports(PUBLISHED))];

  for (const item of imports) {
    await t.test(`${item.db}: ${item.files.map((file) => path.basename(file)).join(' + ')}`, async (t) => {
      const answers = await importFiles(server, item);
      for (const answer of answers) t.equal(answer.status, 200, answer.text.slice(0, 400));
      const direct = reference(item, dir);
      t.teardown(() => direct.close());
      t.strictSame(
        await servedCensus(server, item.db),
        directCensus(direct),
        'the same tables, rows, views and triggers',
      );
      const last = answers[answers.length - 1]?.body;
      if (last?.foreignKeys === 'off')
        t.strictSame(
          last.foreignKeyViolations,
          directViolations(direct),
          'the violations, as foreign_key_check counts them',
        );
      else t.strictSame(directViolations(direct), [], 'enforced, and nothing to enforce');
      if (item.kind === 'murder') await murderChecks(t, server, item, answers, directCensus(direct));
      if (item.kind === 'northwind') northwindChecks(t, item, answers);
      if (item.kind === 'sakila') await sakilaChecks(t, server, item);
    });
  }

  await t.test('replay -verify rebuilds every one of them, foreign keys off and violations included', async (t) => {
    t.equal(await server.stop(), 0);
    const journal = fs
      .readdirSync(path.join(data, 'journal'))
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => fs.readFileSync(path.join(data, 'journal', name), 'utf8'))
      .join('');
    t.match(journal, /"foreignKeys":"off"/, 'the journal records the imports that ran without enforcement');
    const run = await runReplay(
      [
        '-log-file',
        path.join(data, 'journal', 'statements.jsonl'),
        '-out',
        path.join(dir, 'replayed'),
        '-verify',
        data,
      ],
      dir,
    );
    t.equal(run.code, 0, run.stderr);
    t.match(run.stderr, /equals the live databases/);
  });
});

/** The Murder Mystery: its keys point nowhere, its own solution check answers, later writes as SQLite with foreign_keys=ON. */
async function murderChecks(
  t: Test,
  server: TestServer,
  item: TeachingImport,
  answers: Reply[],
  census: Census,
): Promise<void> {
  await exportsRoundTrip(t, server, item.db, census);
  const answer = answers[0]?.body;
  t.equal(answer.foreignKeys, 'off', 'a file, or a dump that turns them off, comes in as SQLite opens it');
  t.ok(answer.foreignKeyViolations.length > 0, 'its broken keys are listed, not refused');
  t.match(
    answer.rewritten,
    [{ type: 'trigger', name: 'check_solution', literals: 3 }],
    'the answer says what was rewritten',
  );
  const solved = await server.exec(item.db, SOLUTION_CHECK);
  t.equal(solved.status, 200, solved.text.slice(0, 300));
  t.match(solved.body.results[1].rows[0][0], /^Congrats/, 'its own solution check answers');
  const orphan = (
    await rowsOf(server, item.db, 'SELECT id FROM person WHERE ssn NOT IN (SELECT ssn FROM income) LIMIT 1')
  )[0]?.[0];
  t.equal(
    (await server.exec(item.db, `UPDATE person SET name = name || '' WHERE id = ${String(orphan)}`)).status,
    200,
    'a later write that leaves the broken key alone is taken',
  );
  t.match(
    await server.exec(item.db, `UPDATE person SET ssn = 'nobody' WHERE id = ${String(orphan)}`),
    { status: 400, body: { code: 3004 } },
    'one that writes a key pointing nowhere is refused, as with foreign_keys=ON',
  );
}

function northwindChecks(t: Test, item: TeachingImport, answers: Reply[]): void {
  const answer = answers[0]?.body;
  t.equal(answer.foreignKeys, 'off', 'its PRAGMA foreign_keys=off before the data');
  t.match(
    answer.settings,
    [/^PRAGMA foreign_keys=off$/i, /^PRAGMA foreign_keys=on$/i],
    `${item.db}: both PRAGMAs taken`,
  );
}

async function sakilaChecks(t: Test, server: TestServer, item: TeachingImport): Promise<void> {
  const film = (await server.get(`/schema?db=${item.db}&table=film`)).body.table;
  t.match(
    film.columns.find((column: { name: string }) => column.name === 'description'),
    { type: 'TEXT', declaredType: 'BLOB SUB_TYPE TEXT' },
    'BLOB SUB_TYPE TEXT has the type its affinity gives, its spelling kept',
  );
}

/** Both file exports of a database whose keys point nowhere, imported back: the same tables and rows. */
async function exportsRoundTrip(t: Test, server: TestServer, db: string, census: Census): Promise<void> {
  for (const [format, contentType] of [
    ['sqlite', SQLITE],
    ['sql', SQL],
  ] as const) {
    const response = await fetch(`${server.url}/dbs/${db}/export?format=${format}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    t.equal(response.status, 200, `the ${format} export: ${bytes.toString('utf8', 0, 200)}`);
    if (format === 'sql')
      t.match(bytes.toString('utf8', 0, 300), /\nPRAGMA foreign_keys=OFF;\n/, 'it says how to load it back');
    const copy = `${db}-${format}-copy`;
    t.equal((await server.post('/dbs', { db: copy })).status, 201);
    const loaded = await server.request('POST', `/dbs/${copy}/import`, {
      rawBody: bytes,
      headers: { 'content-type': contentType },
    });
    t.equal(loaded.status, 200, loaded.text.slice(0, 300));
    t.strictSame(await servedCensus(server, copy), census, `the ${format} export loads back as it was`);
  }
}
