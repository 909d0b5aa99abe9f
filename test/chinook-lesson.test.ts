/**
 * A class of thirty opens the Chinook sample database: the upstream script,
 * unmodified (NVARCHAR, DATETIME, NUMERIC(10,2), 15,000 rows), loads in one
 * import request, and a lesson of typical classroom queries answers exactly as
 * SQLite itself does (better-sqlite3 opened directly on the same script):
 * same columns, same rows, in the same order where ORDER BY fixes it.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { CHINOOK_LESSON, CHINOOK_SCRIPT } from './helpers/chinook';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type TestServer } from './helpers/server';

/**
 * The lesson lives in fixtures/chinook/lesson.json, shared with the lesson
 * scenario of `npm run bench` (test/bench/lesson.mjs), so that the statements
 * checked here are the ones measured there.
 */
const LESSON = CHINOOK_LESSON;
const SCRIPT = CHINOOK_SCRIPT;

function expectedAnswers(): Array<{ columns: string[]; rows: unknown[][] }> {
  const db = new Database(':memory:');
  db.exec(SCRIPT);
  const answers = LESSON.map(({ sql }) => {
    const statement = db.prepare(sql);
    return {
      columns: statement.columns().map((column) => column.name),
      rows: statement.raw(true).all() as unknown[][],
    };
  });
  db.close();
  return answers;
}

function sorted(rows: unknown[][]): unknown[][] {
  return [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

t.test('the unmodified Chinook script loads in one import and a lesson answers as SQLite does', async (tt) => {
  const dir = scratchDir(tt);
  const server: TestServer = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  tt.teardown(() => server.stop());
  tt.equal((await server.post('/dbs', { db: 'chinook' })).status, 201);
  const loaded = await server.request('POST', '/dbs/chinook/import', {
    rawBody: SCRIPT,
    headers: { 'content-type': 'application/sql' },
  });
  tt.equal(loaded.status, 200, loaded.text.slice(0, 300));
  tt.match(loaded.body, { ok: true, db: 'chinook.db', format: 'sql', statements: 57, changes: 15607 });

  tt.ok(LESSON.length >= 40, `${LESSON.length} queries`);
  const expected = expectedAnswers();
  // The whole lesson as one batch, as a teacher's prepared script would be sent.
  const answer = await server.exec('chinook', LESSON.map((query) => query.sql).join(';\n'));
  tt.equal(answer.status, 200, answer.text.slice(0, 300));
  for (const [index, query] of LESSON.entries()) {
    const got = answer.body.results[index] as { columns: string[]; rows: unknown[][] };
    const want = expected[index] as { columns: string[]; rows: unknown[][] };
    tt.same(got.columns, want.columns, `columns of ${query.sql}`);
    tt.ok(want.rows.length > 0, `the query returns rows: ${query.sql}`);
    if (query.ordered === false) tt.same(sorted(got.rows), sorted(want.rows), query.sql);
    else tt.same(got.rows, want.rows, query.sql);
  }
  // better-sqlite3 12 on Node 24 aborted the whole server process here (a statement's destructor ran after its environment was gone).
  const health = await server.get('/health');
  tt.equal(health.status, 200, 'the server that imported Chinook still answers');
  tt.equal(server.child.exitCode, null, 'and is the same process, never restarted');
  tt.equal(server.child.signalCode, null);
});
