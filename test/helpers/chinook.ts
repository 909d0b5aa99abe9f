/**
 * The Chinook sample database as the tests use it: the upstream script, the
 * lesson the lesson test and the lesson bench share, and the two requests that
 * load the script into a server.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Test } from 'tap';
import { Engine } from '../../src/engine/engine';
import type { TestServer } from './server';

const FIXTURE = path.join(__dirname, '../fixtures/chinook');

/** The upstream script, unmodified. */
export const CHINOOK_SCRIPT = fs.readFileSync(path.join(FIXTURE, 'Chinook_Sqlite.sql'), 'utf8');

/** `ordered: false`: the query fixes no complete order, so rows are compared as sorted lists. */
export interface LessonQuery {
  readonly topic: string;
  readonly sql: string;
  readonly ordered?: false;
}

/** The lesson's queries, from fixtures/chinook/lesson.json. */
export const CHINOOK_LESSON: readonly LessonQuery[] = (
  JSON.parse(fs.readFileSync(path.join(FIXTURE, 'lesson.json'), 'utf8')) as { queries: LessonQuery[] }
).queries;

/**
 * Chinook in a WAL file of the test's own directory (with `extraSql` run after
 * the script), and an in-process Engine closed when the test ends: for unit
 * tests of the engine's reads.
 */
export function chinookEngine(t: Test, extraSql = ''): { engine: Engine; file: string } {
  const file = path.join(t.testdir(), 'chinook.db');
  const db = new Database(file);
  db.exec(CHINOOK_SCRIPT);
  if (extraSql !== '') db.exec(extraSql);
  db.pragma('journal_mode = WAL');
  db.close();
  const engine = new Engine();
  t.teardown(() => engine.close());
  return { engine, file };
}

/** Creates database `db` and imports the script into it; throws with the server's answer when either fails. */
export async function importChinook(
  server: TestServer,
  db = 'chinook',
  headers: Record<string, string> = {},
): Promise<void> {
  const created = await server.request('POST', '/dbs', { body: { db }, headers });
  if (created.status !== 201) throw new Error(`POST /dbs ${db}: ${created.status} ${created.text.slice(0, 300)}`);
  const loaded = await server.request('POST', `/dbs/${db}/import`, {
    rawBody: CHINOOK_SCRIPT,
    headers: { ...headers, 'content-type': 'application/sql' },
  });
  if (loaded.status !== 200)
    throw new Error(`importing Chinook into ${db}: ${loaded.status} ${loaded.text.slice(0, 300)}`);
}
