/**
 * JSON that JSON.parse accepts but the service must not take as it is:
 * prototype keys, lone UTF-16 surrogates, integers beyond 2^53. Each form is a
 * 400 with a catalog code, never a 500, and nothing of it is stored; the
 * server stays healthy after all of them.
 */
import t from 'tap';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { isError } from './helpers/assertions';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const STACK_TEXT = /\n\s*at\s|\bat\s+\S+\s+\(|\.(?:js|ts|mjs|cjs):\d+|node_modules/;
const JSON_TYPE = { 'content-type': 'application/json' };
let server: TestServer;

function raw(path: string, body: string): Promise<Reply> {
  return server.request('POST', path, { rawBody: body, headers: JSON_TYPE });
}

async function rowsOf(sql: string): Promise<unknown[][]> {
  const reply = await server.exec('class', sql);
  return reply.body?.results?.[0]?.rows;
}

t.before(async () => {
  const cwd = scratchDir(t);
  server = await startServer(['-dir', 'data'], { cwd });
  await server.exec(undefined, 'CREATE DATABASE class');
  await server.exec('class', 'CREATE TABLE t (x TEXT)');
  await server.exec('class', 'CREATE TABLE n (v INT)');
});
t.teardown(() => server.stop());

t.test('prototype keys anywhere in a body are 400 [SQ1006]', async (tt) => {
  const insert = "INSERT INTO t VALUES ('proto')";
  const cases: Array<[string, string, string]> = [
    ['__proto__ at the top of /exec', '/exec', `{"__proto__":{"db":"other"},"db":"class","sql":"${insert}"}`],
    ['__proto__ spelled with an escape', '/exec', `{"\\u005f_proto__":{},"db":"class","sql":"${insert}"}`],
    [
      'a parameter named __proto__',
      '/exec',
      '{"db":"class","sql":"INSERT INTO t VALUES (:__proto__)","params":{"__proto__":"a"}}',
    ],
    [
      'a parameter named constructor',
      '/exec',
      '{"db":"class","sql":"INSERT INTO t VALUES (:constructor)","params":{"constructor":"a"}}',
    ],
    [
      'a parameter named prototype',
      '/exec',
      '{"db":"class","sql":"INSERT INTO t VALUES (:prototype)","params":{"prototype":"a"}}',
    ],
    [
      'constructor.prototype inside statements',
      '/exec',
      `{"db":"class","statements":[{"sql":"${insert}","params":{"constructor":{"prototype":{"x":1}}}}]}`,
    ],
    ['__proto__ in POST /dbs', '/dbs', '{"__proto__":{"x":1},"db":"extra"}'],
    ['__proto__ in POST /tx/begin', '/tx/begin', '{"__proto__":{"x":1},"db":"class"}'],
    ['__proto__ in POST /pilots', '/pilots', '{"__proto__":{"admin":true}}'],
  ];
  for (const [label, path, body] of cases) isError(tt, await raw(path, body), 400, 1006, label);
  tt.strictSame(await rowsOf('SELECT count(*) FROM t'), [[0]], 'nothing was inserted');
  tt.strictSame((await server.get('/dbs')).body?.dbs, ['class.db'], 'no database was created');
});

t.test('lone UTF-16 surrogates are 400 [SQ1015], a proper pair is stored exactly', async (tt) => {
  const cases: Array<[string, string]> = [
    ['a high surrogate in SQL', `{"db":"class","sql":"INSERT INTO t VALUES ('\\ud800')"}`],
    ['a low surrogate in SQL', `{"db":"class","sql":"INSERT INTO t VALUES ('a\\udc00b')"}`],
    [
      'a lone surrogate in a positional parameter',
      '{"db":"class","sql":"INSERT INTO t VALUES (?)","params":["\\udfff"]}',
    ],
    ['a pair in the wrong order', '{"db":"class","sql":"INSERT INTO t VALUES (?)","params":["\\udc00\\ud800"]}'],
    [
      'a lone surrogate in a parameter name',
      '{"db":"class","sql":"INSERT INTO t VALUES (:a)","params":{"\\ud800":"x"}}',
    ],
    [
      'a lone surrogate inside statements',
      '{"db":"class","statements":[{"sql":"INSERT INTO t VALUES (?)","params":["\\ud83d"]}]}',
    ],
  ];
  for (const [label, body] of cases) isError(tt, await raw('/exec', body), 400, 1015, label);
  tt.strictSame(await rowsOf('SELECT count(*) FROM t'), [[0]], 'nothing was stored, altered or not');
  const pair = await raw('/exec', '{"db":"class","sql":"INSERT INTO t VALUES (?)","params":["\\ud83d\\ude00"]}');
  tt.equal(pair.status, 200, 'a surrogate pair is a character like any other');
  tt.strictSame(await rowsOf('SELECT hex(x) FROM t'), [['F09F9880']], 'stored as its UTF-8 bytes');
  await server.exec('class', 'DELETE FROM t');
});

t.test('integers JSON would round are 400 [SQ1006]; the exact range and SQL literals are kept', async (tt) => {
  const cases: Array<[string, string]> = [
    ['2^53 + 1', '[9007199254740993]'],
    ['-(2^53 + 1)', '[-9007199254740993]'],
    ['2^53 itself (2^53 + 1 would arrive as it)', '[9007199254740992]'],
    ['2^64', '[18446744073709551616]'],
  ];
  for (const [label, params] of cases) {
    const reply = await raw('/exec', `{"db":"class","sql":"INSERT INTO n VALUES (?)","params":${params}}`);
    isError(tt, reply, 400, 1006, label);
    tt.match(reply.body?.error, /9007199254740991/, `${label}: the message names the bound`);
  }
  isError(
    tt,
    await raw('/exec', '{"db":"class","sql":"INSERT INTO n VALUES (:v)","params":{":v":9007199254740993}}'),
    400,
    1006,
    'a named parameter',
  );
  tt.strictSame(await rowsOf('SELECT count(*) FROM n'), [[0]], 'nothing was stored rounded');

  const edges = await raw(
    '/exec',
    '{"db":"class","statements":[{"sql":"INSERT INTO n VALUES (?)","params":[9007199254740991]},{"sql":"INSERT INTO n VALUES (?)","params":[-9007199254740991]}]}',
  );
  tt.equal(edges.status, 200, '±(2^53 − 1) are accepted');
  const literal = await raw('/exec', '{"db":"class","sql":"INSERT INTO n VALUES (9007199254740993)"}');
  tt.equal(literal.status, 200, 'a big integer written in the SQL text is not a JSON number');
  const read = await server.exec('class', 'SELECT v FROM n ORDER BY v');
  tt.match(
    read.text,
    /\[\[-9007199254740991\],\[9007199254740991\],\[9007199254740993\]\]/,
    'all three read back exactly',
  );
});

t.test('after every refused form the server is healthy and logged no fault', async (tt) => {
  const health = await server.get('/health');
  tt.equal(health.status, 200, '/health answers');
  tt.equal(health.body?.ok, true);
  const metrics = await server.get('/metrics');
  tt.equal(metrics.body?.errors_total, 0, 'no request was a server fault');
  tt.equal(metrics.body?.requests_by_status?.['500'], undefined, 'no 500 at all');
  tt.notMatch(server.stderr(), STACK_TEXT, 'no stack trace on stderr');
});
