/**
 * -tokens-file against the real server: a file that is not right stops the
 * start with one line (exit 2); a right one's tokens work with their roles,
 * without any -token; and a server with neither flag stays open, with no
 * token endpoints (403 [SQ1033]).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCli, startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

/** As docs/flags.md says to make one: `printf %s "$SECRET" | sha256sum`. */
const sha256 = (secret: string): string => `sha256:${createHash('sha256').update(secret).digest('hex')}`;

t.test('an invalid tokens file stops the start: exit 2, one line naming the flag', async (t) => {
  const cases: Array<[string, string | null, RegExp]> = [
    ['missing', null, /-tokens-file: cannot read .*missing\.json: ENOENT/],
    ['not JSON', '{"tokens": [', /-tokens-file: .*not valid JSON/],
    [
      'a secret instead of a hash',
      JSON.stringify({ tokens: [{ name: 'a', role: 'admin', hash: 'sqs_plain' }] }),
      /-tokens-file: .*tokens\[0\]: "hash" must be/,
    ],
    [
      'an unknown role',
      JSON.stringify({ tokens: [{ name: 'a', role: 'teacher', hash: sha256('x') }] }),
      /-tokens-file: .*"role"/,
    ],
  ];
  for (const [what, content, mentions] of cases) {
    const cwd = scratchDir(t, content === null ? {} : { 'tokens.json': content });
    const file = content === null ? 'missing.json' : 'tokens.json';
    const { code, stdout, stderr } = await runCli(['-dir', 'data', '-tokens-file', file], cwd);
    t.equal(code, 2, `${what}: exit 2`);
    t.equal(stdout, '', `${what}: nothing on stdout`);
    t.match(stderr, /^[^\n]+\n?$/, `${what}: one line`);
    t.match(stderr, mentions, `${what}: ${stderr.trim()}`);
    t.notOk(fs.existsSync(path.join(cwd, 'data')), `${what}: nothing started`);
  }
});

t.test('the tokens of the file work with their roles, without -token', async (t) => {
  const teacher = 'sqs_teacher-secret-kept-by-the-operator';
  const student = 'sqs_student-secret-kept-by-the-operator';
  const cwd = scratchDir(t, {
    'tokens.json': JSON.stringify({
      tokens: [
        { name: 'teacher', role: 'admin', hash: sha256(teacher) },
        { name: 'ana', role: 'read', databases: ['clase-*'], hash: sha256(student) },
        { name: 'old', role: 'admin', hash: sha256('sqs_old'), expires: '2001-01-01T00:00:00Z' },
      ],
    }),
  });
  const server = await startServer(['-dir', 'data', '-tokens-file', 'tokens.json'], { cwd });
  t.teardown(() => server.stop());
  const as = (secret: string): Record<string, string> => ({ Authorization: `Bearer ${secret}` });
  t.equal(
    (await server.post('/dbs', { db: 'clase-1' }, as(teacher))).status,
    201,
    'the admin of the file creates a database',
  );
  t.equal((await server.post('/dbs', { db: 'otra' }, as(teacher))).status, 201);
  t.same((await server.get('/dbs', as(student))).body.dbs, ['clase-1.db'], 'the read token sees its pattern only');
  const write = await server.request('POST', '/exec', {
    body: { db: 'clase-1', sql: 'CREATE TABLE t (id INT PRIMARY KEY)' },
    headers: as(student),
  });
  t.same([write.status, write.body.code], [403, 1032], 'and may not write');
  t.equal((await server.get('/dbs', as('sqs_old'))).status, 401, 'an expired token of the file is refused');
  t.equal((await server.get('/dbs')).status, 401, 'no token: 401');
  const listed = await server.get('/tokens', as(teacher));
  t.same(
    listed.body.tokens.map((token: { id: string; source: string }) => [token.id, token.source]),
    [
      ['file:ana', 'file'],
      ['file:old', 'file'],
      ['file:teacher', 'file'],
    ],
    'GET /tokens lists them',
  );
  const revoke = await server.request('DELETE', '/tokens/file:ana', { headers: as(teacher) });
  t.same([revoke.status, revoke.body.code], [409, 2032], 'they are revoked in the file, not through the API');
});

t.test('without -token and -tokens-file the service stays open and has no token endpoints', async (t) => {
  const cwd = scratchDir(t);
  const server = await startServer(['-dir', 'data'], { cwd });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'open' })).status, 201, 'no credential needed');
  t.equal((await server.exec('open', 'CREATE TABLE t (id INT PRIMARY KEY)')).status, 200);
  for (const [method, target, body] of [
    ['GET', '/tokens'],
    ['POST', '/tokens', { name: 'a', role: 'read', databases: ['open'] }],
    ['DELETE', '/tokens/tok_1'],
  ] as const) {
    const reply = await server.request(method, target, body === undefined ? {} : { body });
    t.same([reply.status, reply.body.code], [403, 1033], `${method} /tokens: 403 [SQ1033]`);
  }
  t.notOk(fs.existsSync(path.join(cwd, 'data', '_sqlscribe_tokens.json')), 'no token file is written');
});
