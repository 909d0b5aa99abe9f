/**
 * INSERTs the bytecode shows to be brief (src/engine/brief-inserts.ts) go
 * without a progress record before them: which texts are judged brief, when
 * judgements are forgotten, and, against a real server, that a runaway
 * statement after a run of brief INSERTs, or an INSERT made long by a
 * trigger created in the same batch, is still named exactly and stopped.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Connection } from '../src/engine/connection-pool';
import { forgetBriefInserts, isBriefInsert } from '../src/engine/brief-inserts';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { isError } from './helpers/assertions';

t.setTimeout(120_000);

/** Judged inside a write transaction, as the engine judges it: the second sighting decides. */
function judge(connection: Connection, sql: string): [boolean, boolean] {
  const params = (): unknown[] => Array.from(sql.matchAll(/\?/g), () => 1);
  connection.begin('IMMEDIATE');
  try {
    return [isBriefInsert(connection, sql, params), isBriefInsert(connection, sql, params)];
  } finally {
    connection.rollback();
  }
}

t.test('which INSERTs are brief', async (t) => {
  const file = path.join(t.testdir(), 'brief.db');
  const setup = new Database(file);
  setup.exec(`
    CREATE TABLE plain (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, ok INTEGER CHECK (ok IN (0, 1))) STRICT;
    CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) ON DELETE CASCADE);
    CREATE TABLE checked (v TEXT CHECK (length(v) < 10));
    CREATE TABLE defaulted (v TEXT DEFAULT (hex(randomblob(8))));
    CREATE TABLE watched (v INTEGER);
    CREATE TRIGGER watch AFTER INSERT ON watched BEGIN INSERT INTO plain (name) VALUES (new.v); END;
  `);
  setup.close();
  const connection = new Connection(file);
  t.teardown(() => connection.close());

  const brief = [
    'INSERT INTO plain (name, ok) VALUES (?, ?)',
    "INSERT OR IGNORE INTO plain (name, ok) VALUES ('x', 1)",
    'INSERT INTO child (parent) VALUES (?)',
  ];
  for (const sql of brief) t.same(judge(connection, sql), [false, true], `brief on its second sighting: ${sql}`);
  const long = [
    'INSERT INTO checked VALUES (?)',
    'INSERT INTO defaulted DEFAULT VALUES',
    'INSERT INTO watched VALUES (?)',
    'INSERT INTO plain (name) SELECT name FROM plain',
    "INSERT INTO plain (name) VALUES ('a'), ('b')",
    'INSERT INTO plain (name) VALUES (?) RETURNING id',
    'INSERT OR REPLACE INTO parent (id) VALUES (?)',
    "INSERT INTO plain (name) VALUES (upper('a'))",
  ];
  for (const sql of long) t.same(judge(connection, sql), [false, false], `never brief: ${sql}`);

  forgetBriefInserts(connection);
  t.same(judge(connection, brief[0] as string), [false, true], 'forgotten: seen afresh');
  const other = new Database(file);
  t.teardown(() => other.close());
  other.exec('CREATE TRIGGER late AFTER INSERT ON plain BEGIN SELECT 1; END');
  connection.begin('IMMEDIATE');
  try {
    t.notOk(
      isBriefInsert(connection, brief[0] as string, () => [1, 1]),
      "another connection's schema change forgets it",
    );
    t.notOk(
      isBriefInsert(connection, brief[0] as string, () => [1, 1]),
      'and with the trigger it is no longer brief',
    );
  } finally {
    connection.rollback();
  }
});

t.test('runaways after brief INSERTs are still named and stopped', async (t) => {
  const dir = scratchDir(t);
  // One engine process: the judgements of one process are what the batches below meet.
  const server = await startServer(['-dir', path.join(dir, 'data'), '-engines', '1', '-query-timeout', '1s'], {
    cwd: dir,
  });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'b' })).status, 201);
  const insert = 'INSERT INTO t (v) VALUES (?)';
  const inserts = (n: number, from: number) =>
    Array.from({ length: n }, (_, i) => ({ sql: insert, params: [from + i] }));
  t.equal((await server.exec('b', 'CREATE TABLE t (v INTEGER)')).status, 200);
  for (let round = 0; round < 2; round++) {
    const reply = await server.post('/exec', { db: 'b', statements: inserts(50, round * 50) });
    t.equal(reply.status, 200, `round ${round} of brief INSERTs`);
  }
  const runaway = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
  const stopped = await server.post('/exec', {
    db: 'b',
    statements: [...inserts(40, 100), { sql: runaway }],
  });
  isError(t, stopped, 400, 6007, 'a runaway SELECT after forty brief INSERTs');
  t.equal(stopped.body?.statement, 40, 'named as statement 40');

  // The runaway's process was killed: its successor judges the text again, then sees it made long by a trigger
  // created in the same batch.
  for (let round = 0; round < 2; round++) {
    const reply = await server.post('/exec', { db: 'b', statements: inserts(50, 200 + round * 50) });
    t.equal(reply.status, 200, `round ${round} of brief INSERTs on the new process`);
  }
  const madeLong = await server.post('/exec', {
    db: 'b',
    statements: [
      { sql: 'CREATE TRIGGER slow AFTER INSERT ON t BEGIN SELECT count(*) FROM t a, t b, t c, t d, t e, t f; END' },
      ...inserts(1, 500),
    ],
  });
  isError(t, madeLong, 400, 6007, 'an INSERT made long by a trigger of the same batch');
  t.equal(madeLong.body?.statement, 1, 'named as statement 1');
  const count = await server.exec('b', 'SELECT count(*) FROM t');
  t.same(count.body?.results?.[0]?.rows, [[200]], 'nothing of the stopped batches was kept');
});
