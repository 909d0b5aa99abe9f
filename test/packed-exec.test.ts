/**
 * Exec requests and their results cross the engine channel packed
 * (src/engine/host/packed-requests.ts, packed-results.ts): each distinct
 * statement once, plain results as two flat arrays. Unpacked, every request
 * and result is what was sent, down to its keys' order (the answer's JSON).
 */
import path from 'node:path';
import v8 from 'node:v8';
import t from 'tap';
import { Engine } from '../src/engine/engine';
import type { ExecStatement } from '../src/engine/protocol';
import { packOutcomes, packResults, unpackOutcomes, unpackResults } from '../src/engine/host/packed-results';
import { packRequest, unpackRequest } from '../src/engine/host/packed-requests';
import { scratchDir } from './helpers/scratch-dir';

const statement = (sql: string, kind: ExecStatement['kind'], params?: unknown[]): ExecStatement =>
  params === undefined ? { sql, kind } : ({ sql, kind, params } as ExecStatement);

/** Through the channel's own serializer, as the reply travels. */
const acrossChannel = <T>(value: T): T => v8.deserialize(v8.serialize(value)) as T;

t.test('a mixed batch comes back as the engine answered it', async (t) => {
  const dir = scratchDir(t);
  const file = path.join(dir, 'mixed.db');
  const engine = new Engine({ syncCommits: false });
  t.teardown(() => engine.close());
  engine.createDatabase(file);
  const results = engine.exec({
    file,
    statements: [
      statement('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, big INT)', 'create-table'),
      statement('INSERT INTO t (name, big) VALUES (?, ?)', 'insert', ['a', 1]),
      statement("INSERT INTO t (name, big) VALUES ('b', 9007199254740993)", 'insert'),
      statement('SELECT id, name, big FROM t ORDER BY id DESC', 'select'),
      statement('UPDATE t SET name = upper(name)', 'update'),
      statement('SELECT id FROM t', 'select'),
      statement('DELETE FROM t WHERE id = 1 RETURNING name', 'delete'),
      statement('SELECT 1 WHERE 0', 'select'),
    ],
    maxResultRows: 1,
    context: { clockMs: 0, seed: '0' },
  });
  const packed = packResults(results);
  // CREATE, two INSERTs and the UPDATE are plain; the reads, the RETURNING and the empty SELECT (it has columns) are not.
  t.same(packed.messages, ['OK', 'INSERT 1', 'INSERT 1', null, 'UPDATE 2', null, null, null]);
  t.same(packed.changes, [0, 1, 1, 0, 2, 0, 0, 0]);
  t.equal(packed.others.length, 4);
  const back = unpackResults(acrossChannel(packed));
  t.strictSame(back, results, 'the same values');
  t.equal(typeof back[3]?.rows[0]?.[2], 'bigint', 'a 64-bit integer stays one');
  t.equal(
    JSON.stringify(back, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
    JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
    'the same keys in the same order',
  );
  t.ok(
    results.some((result) => result.truncated === true),
    'a cut page is among them',
  );
});

t.test('a result with anything beyond message and changes is sent whole', async (t) => {
  const odd = [
    { columns: [], rows: [], message: 'INSERT 1', changes: 1, truncated: true as const },
    { columns: [], rows: [], message: 'OK' },
    { columns: [], rows: [], changes: 3 },
    { columns: ['x'], rows: [], message: 'SELECT 0', changes: 0 },
    { columns: [], rows: [[1]], message: 'SELECT 1', changes: 0 },
  ];
  const packed = packResults(odd);
  t.same(packed.messages, [null, null, null, null, null]);
  t.same(unpackResults(acrossChannel(packed)), odd);
  t.same(unpackResults(packResults([])), []);
});

t.test('group outcomes keep their errors and their order', async (t) => {
  const outcomes = [
    { results: [{ columns: [], rows: [], message: 'INSERT 2', changes: 2 }] },
    { error: { code: 2001, status: 400, errorName: 'SYNTAX_ERROR', message: 'near "x": syntax error' } },
    { results: [] },
  ];
  const packed = packOutcomes(outcomes as never);
  t.same(unpackOutcomes(acrossChannel(packed)), outcomes);
});

t.test('a request carries each distinct statement once, and unpacks to itself', async (t) => {
  const insert = 'INSERT INTO t (a, b) VALUES (?, ?)';
  const statements: ExecStatement[] = [
    statement(insert, 'insert', ['x', 1]),
    { sql: 'SAVEPOINT s1', kind: 'savepoint', savepoint: 's1' },
    statement(insert, 'insert', ['y', 2]),
    statement('INSERT INTO t (a) VALUES (:a)', 'insert', { a: 'named' } as never),
    { sql: 'RELEASE s1', kind: 'release', savepoint: 's1' },
    statement(insert, 'insert', ['z', 3]),
    statement('SELECT 1', 'select'),
    statement('SELECT 1', 'select'),
  ];
  const request = {
    file: '/data/a.db',
    statements,
    maxResultRows: 10,
    maxResultBytes: 1000,
    context: { clockMs: 5, seed: 'ab' },
    jsonRows: true,
  };
  const packed = packRequest(request);
  t.same(
    packed.texts.map((text) => text.sql),
    [insert, 'SAVEPOINT s1', 'INSERT INTO t (a) VALUES (:a)', 'RELEASE s1', 'SELECT 1'],
  );
  t.same(packed.at, [0, 1, 0, 2, 3, 0, 4, 4]);
  const back = unpackRequest(acrossChannel(packed));
  t.strictSame(back, request);
  t.equal(
    JSON.stringify(back.statements),
    JSON.stringify(request.statements),
    'statements with the same keys in the same order',
  );
  t.ok(v8.serialize(packed).length < v8.serialize(request).length, 'smaller across the channel');
});

t.test('one text run as two kinds stays two statements', async (t) => {
  const request = {
    file: '/data/a.db',
    statements: [statement('X', 'select'), statement('X', 'insert'), statement('X', 'select')],
    maxResultRows: 1,
  };
  t.strictSame(unpackRequest(acrossChannel(packRequest(request))), request);
});
