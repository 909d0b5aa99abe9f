/**
 * Lesson queries over the teaching sets (test/fixtures/teaching/ and Chinook),
 * each imported through POST /dbs/{db}/import as a teacher would, run through
 * POST /exec and compared with better-sqlite3 opened directly on the same data
 * (the scripts run into a plain database, as sqlite3's CLI runs them, or the
 * .db file itself): the same columns, the same values and, cell by cell, the
 * same storage class (`typeof()`).
 *
 * The queries are test/fixtures/teaching/lesson-queries.json. Its `same` list
 * must answer exactly as SQLite does. Its `differsUntilNumericAffinity` list
 * (NUMERIC and DECIMAL columns of the tables an import creates are still
 * STRICT REAL, where SQLite gives them NUMERIC affinity) must still differ, and exactly as recorded
 * there: once NUMERIC affinity lands this test fails for each of them, so that they are
 * moved into `same`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { CHINOOK_SCRIPT } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type TestServer } from './helpers/server';

const TEACHING = path.join(__dirname, 'fixtures', 'teaching');
const SQL = 'application/sql';
const SQLITE = 'application/vnd.sqlite3';

type SetName = 'northwind' | 'murder' | 'sakila' | 'chinook';

/** One lesson query; `then` is the read that shows what a write did. */
interface LessonQuery {
  readonly set: SetName;
  readonly topic: string;
  readonly sql: string;
  /** false: the query fixes no complete order, so rows are compared as sorted lists. */
  readonly ordered?: false;
  /** A write: its changes are compared, then `then` is read on both sides. */
  readonly then?: string;
}

/** A query that still differs: what the service answers now (each cell as [value, typeof]) and why. */
interface DifferingQuery extends LessonQuery {
  readonly cause: string;
  readonly served: ReadonlyArray<ReadonlyArray<[unknown, string]>>;
}

interface LessonFile {
  readonly same: readonly LessonQuery[];
  readonly differsUntilNumericAffinity: readonly DifferingQuery[];
}

const LESSONS = JSON.parse(fs.readFileSync(path.join(TEACHING, 'lesson-queries.json'), 'utf8')) as LessonFile;

/** A cell as both sides can spell it exactly: its storage class and its value (integers as digits, blobs as base64). */
type Cell = [string, string | number | null];

/** One set: how the service gets it and how SQLite's CLI would have it. */
interface TeachingSet {
  readonly contentType: typeof SQL | typeof SQLITE;
  readonly bodies: readonly Buffer[];
  readonly reference: (file: string) => Database.Database;
}

function scriptDatabase(file: string, scripts: readonly string[]): Database.Database {
  const db = new Database(file);
  db.pragma('foreign_keys = OFF');
  for (const script of scripts) db.exec(script);
  return db;
}

/**
 * sqlite3's CLI reads a double-quoted token that names no column as a string
 * (the game's solution check writes its answers so); better-sqlite3 is built
 * without that, so the reference's trigger is made again with those strings
 * single-quoted: the trigger as the CLI runs it.
 */
function asTheCliReadsIt(db: Database.Database): Database.Database {
  const { sql } = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'check_solution'").get() as { sql: string };
  const quoted = sql.replace(/"([^"]*)"/g, (_match, text: string) => `'${text.replace(/'/g, "''")}'`);
  db.exec(`DROP TRIGGER check_solution; ${quoted};`);
  return db;
}

function teachingScript(name: string): string {
  return fs.readFileSync(path.join(TEACHING, name), 'utf8');
}

function teachingSets(dir: string): Record<SetName, TeachingSet> {
  const murderFile = path.join(dir, 'murder-style.db');
  scriptDatabase(murderFile, [teachingScript('murder-style.dump.sql')]).close();
  const sakila = ['sakila-style-schema.sql', 'sakila-style-insert-data.sql'].map(teachingScript);
  const northwind = teachingScript('northwind-style.sql');
  return {
    northwind: {
      contentType: SQL,
      bodies: [Buffer.from(northwind)],
      reference: (file) => scriptDatabase(file, [northwind]),
    },
    murder: {
      contentType: SQLITE,
      bodies: [fs.readFileSync(murderFile)],
      // The reference plays on a copy of the very file the service was sent.
      reference: (file) => {
        fs.copyFileSync(murderFile, file);
        return asTheCliReadsIt(new Database(file));
      },
    },
    sakila: {
      contentType: SQL,
      bodies: sakila.map((script) => Buffer.from(script)),
      reference: (file) => scriptDatabase(file, sakila),
    },
    chinook: {
      contentType: SQL,
      bodies: [Buffer.from(CHINOOK_SCRIPT)],
      reference: (file) => scriptDatabase(file, [CHINOOK_SCRIPT]),
    },
  };
}

/** JSON read as the service writes it: an integer literal keeps all its digits (JSON.parse would round past 2^53). */
function parseExact(text: string): any {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source)
      ? { integer: context.source }
      : value,
  );
}

function referenceCell(value: unknown): Cell {
  if (value === null) return ['null', null];
  if (typeof value === 'bigint') return ['integer', value.toString()];
  if (typeof value === 'number') return ['real', value];
  if (Buffer.isBuffer(value)) return ['blob', value.toString('base64')];
  return ['text', String(value)];
}

/** A served cell, told by the typeof() answered beside it. */
function servedCell(value: unknown, storage: string): Cell {
  if (value !== null && typeof value === 'object' && 'integer' in value) {
    const digits = (value as { integer: string }).integer;
    return [storage, storage === 'real' ? Number(digits) : digits];
  }
  if (typeof value === 'boolean') return [storage, value ? '1' : '0'];
  return [storage, value as string | number | null];
}

/** The query wrapped so that every cell comes with its storage class: c1, typeof(c1), c2, typeof(c2)… */
function withStorageClasses(sql: string, width: number): string {
  const names = Array.from({ length: width }, (_, i) => `c${i + 1}`);
  return `WITH lesson(${names.join(', ')}) AS (${sql}) SELECT ${names.map((n) => `${n}, typeof(${n})`).join(', ')} FROM lesson`;
}

interface Answer {
  readonly columns: string[];
  /** The rows of the query wrapped in withStorageClasses: each cell with its typeof(). */
  readonly rows: Cell[][];
  /** The rows of the query as written, each cell told by the typeof() of the same cell of `rows`. */
  readonly asWritten: Cell[][];
}

function sortedRows(rows: Cell[][]): Cell[][] {
  return [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

function sortedAnswer(answer: Answer): Answer {
  return { ...answer, rows: sortedRows(answer.rows), asWritten: sortedRows(answer.asWritten) };
}

function directAnswer(db: Database.Database, sql: string): Answer {
  const statement = db.prepare(sql).safeIntegers(true);
  const columns = statement.columns().map((column) => column.name);
  const rows = (statement.raw(true).all() as unknown[][]).map((row) => row.map(referenceCell));
  // better-sqlite3 tells every storage class by its JS type: the query as written is its own typed answer.
  return { columns, rows, asWritten: rows };
}

async function servedAnswer(server: TestServer, db: string, sql: string, width: number): Promise<Answer> {
  const reply = await server.exec(db, `${sql};\n${withStorageClasses(sql, width)}`);
  if (reply.status !== 200) throw new Error(`${reply.status} ${reply.text.slice(0, 400)}`);
  // Two results: the query as written (its column names), then the same rows with each cell's typeof().
  const body = parseExact(reply.text) as { results: unknown[] };
  const [plain, typed] = body.results as [{ columns: string[]; rows: unknown[][] }, { rows: unknown[][] }];
  const rows = typed.rows.map((row) =>
    Array.from({ length: width }, (_, i) => servedCell(row[2 * i], row[2 * i + 1] as string)),
  );
  // The query as written must answer the same cells (a wrapper could lose what a plain query answers, BOOL's true/false).
  const asWritten = plain.rows.map((row, r) =>
    row.map((value, i) => servedCell(value, (typed.rows[r]?.[2 * i + 1] as string | undefined) ?? 'missing')),
  );
  return { columns: plain.columns, rows, asWritten };
}

/** A write of one INSERT, UPDATE or DELETE: its changes are compared (a script of several is run as it is). */
const ONE_DML = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b[^;]*$/i;

async function servedWrite(server: TestServer, db: string, sql: string): Promise<number | undefined> {
  const reply = await server.exec(db, sql);
  if (reply.status !== 200) throw new Error(`${reply.status} ${reply.text.slice(0, 400)}`);
  const results = reply.body.results as Array<{ changes?: number }>;
  return ONE_DML.test(sql) ? results[results.length - 1]?.changes : undefined;
}

function directWrite(db: Database.Database, sql: string): number | undefined {
  if (ONE_DML.test(sql)) return db.prepare(sql).run().changes;
  db.exec(sql);
  return undefined;
}

/** The same query on both sides; a write runs on both, then its `then` read is what is compared. */
async function bothAnswers(
  server: TestServer,
  direct: Database.Database,
  query: LessonQuery,
): Promise<{ served: Answer; direct: Answer; changes?: [number, number] }> {
  let changes: [number, number] | undefined;
  let read = query.sql;
  if (query.then !== undefined) {
    const served = await servedWrite(server, query.set, query.sql);
    const want = directWrite(direct, query.sql);
    if (served !== undefined || want !== undefined) changes = [served ?? -1, want ?? -1];
    read = query.then;
  }
  const want = directAnswer(direct, read);
  const got = await servedAnswer(server, query.set, read, want.columns.length);
  const unordered = query.ordered === false;
  return {
    served: unordered ? sortedAnswer(got) : got,
    direct: unordered ? sortedAnswer(want) : want,
    ...(changes === undefined ? {} : { changes }),
  };
}

async function importSet(server: TestServer, name: SetName, set: TeachingSet): Promise<void> {
  const created = await server.post('/dbs', { db: name });
  if (created.status !== 201) throw new Error(`POST /dbs ${name}: ${created.text}`);
  for (const body of set.bodies) {
    const loaded = await server.request('POST', `/dbs/${name}/import`, {
      rawBody: body,
      headers: { 'content-type': set.contentType },
    });
    if (loaded.status !== 200) throw new Error(`importing ${name}: ${loaded.status} ${loaded.text.slice(0, 400)}`);
  }
}

function label(query: LessonQuery): string {
  return `${query.set} · ${query.topic}: ${query.sql}${query.then === undefined ? '' : ` → ${query.then}`}`;
}

t.test('lesson queries answer as SQLite answers on the same data, value by value and type by type', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-idle-timeout', '60s'], { cwd: dir });
  t.teardown(() => server.stop());
  const sets = teachingSets(dir);
  const directs = new Map<SetName, Database.Database>();
  for (const [name, set] of Object.entries(sets) as Array<[SetName, TeachingSet]>) {
    await importSet(server, name, set);
    const direct = set.reference(path.join(dir, `${name}.reference.db`));
    // Later writes, as the service serves every database: foreign keys enforced, as sqlite3 with foreign_keys=ON.
    direct.pragma('foreign_keys = ON');
    directs.set(name, direct);
  }
  t.teardown(() => directs.forEach((db) => db.close()));

  t.ok(LESSONS.same.length >= 150, `${LESSONS.same.length} lesson queries answer as SQLite does`);
  t.comment(
    `${LESSONS.differsUntilNumericAffinity.length} queries differ until NUMERIC affinity lands (NUMERIC and DECIMAL stored as REAL)`,
  );
  // The differing ones (reads only) first, on the data as imported; then the lesson in the file's order,
  // since a write changes what the later reads see.
  for (const query of LESSONS.differsUntilNumericAffinity)
    await stillDiffers(t, server, directOf(directs, query), query);
  for (const query of LESSONS.same) await sameAnswer(t, server, directOf(directs, query), query);

  // The lesson's writes (triggers and foreign-key actions among them) rebuild from the journal as they ran.
  t.equal(await server.stop(), 0, 'the server stops cleanly');
  const data = path.join(dir, 'data');
  const run = await runReplay(
    ['-log-file', path.join(data, 'journal', 'statements.jsonl'), '-out', path.join(dir, 'replayed'), '-verify', data],
    dir,
  );
  t.equal(run.code, 0, run.stderr);
  t.match(run.stderr, /equals the live databases/);
});

function directOf(directs: ReadonlyMap<SetName, Database.Database>, query: LessonQuery): Database.Database {
  const direct = directs.get(query.set);
  if (direct === undefined) throw new Error(`no set ${query.set}: ${query.sql}`);
  return direct;
}

async function sameAnswer(t: Test, server: TestServer, direct: Database.Database, query: LessonQuery): Promise<void> {
  const answers = await bothAnswers(server, direct, query);
  if (answers.changes !== undefined) t.equal(answers.changes[0], answers.changes[1], `changes of ${label(query)}`);
  t.strictSame(answers.served, answers.direct, label(query));
}

/** Item 1 not built: the answer still differs from SQLite's, in exactly the recorded way. */
async function stillDiffers(
  t: Test,
  server: TestServer,
  direct: Database.Database,
  query: DifferingQuery,
): Promise<void> {
  const answers = await bothAnswers(server, direct, query);
  t.notSame(answers.served.rows, answers.direct.rows, `still differs (${query.cause}): ${label(query)}`);
  t.strictSame(
    answers.served.rows.map((row) => row.map(([storage, value]) => [value, storage])),
    query.served,
    `served as recorded: ${label(query)}`,
  );
}
