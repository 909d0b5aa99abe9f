/**
 * The way in of every request, as a client sees it: a route is found the same
 * whether its path is in the table of fixed paths (POST /exec) or only the
 * router matches it (a trailing slash, other letter case, a parameter); a
 * JSON body is read by type, by length and by bytes; and the bookkeeping
 * runs in its order (the console before authentication, then the token, then
 * the admin-only paths).
 */
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const TOKEN = 'request-path-admin-token-0123456789';
const SHOW = { sql: 'SHOW DATABASES' };

async function started(t: Parameters<typeof scratchDir>[0], args: string[] = []): Promise<TestServer> {
  const cwd = scratchDir(t);
  const server = await startServer(['-dir', 'data', ...args], { cwd });
  t.teardown(async () => {
    await server.stop();
  });
  return server;
}

t.test('a route answers the same through the fixed table and through the router', async (t) => {
  const server = await started(t);
  const answers = [];
  for (const path of ['/exec', '/exec/', '/EXEC', '/Exec/']) {
    const reply = await server.post(path, SHOW);
    t.equal(reply.status, 200, `POST ${path}`);
    answers.push(reply.text);
  }
  t.equal(new Set(answers).size, 1, 'one answer for every spelling of the path');
  const wrong = await server.get('/exec');
  t.equal(wrong.status, 405, 'GET /exec: 405');
  t.equal(wrong.headers.get('allow'), 'POST', 'with Allow: POST');
  t.equal((await server.get('/exec/nowhere')).body?.code, 2010, 'a path under a fixed one is no route (404)');
  t.equal((await server.get('/health/')).status, 200, 'GET /health/ as GET /health');
  const param = await server.get('/dbs/none/history');
  t.not(param.body?.code, 2010, `a path with a parameter is found by the router (${param.text.slice(0, 80)})`);
});

t.test('a JSON body: every +json type, a byte-order mark, and nothing at all', async (t) => {
  const server = await started(t);
  const text = JSON.stringify(SHOW);
  for (const type of [
    'application/json',
    'application/json; charset=utf-8',
    'application/vnd.api+json',
    'application/ld+json',
  ]) {
    const reply = await server.request('POST', '/exec', { rawBody: text, headers: { 'content-type': type } });
    t.equal(reply.status, 200, `${type}: the body is read (${reply.text.slice(0, 80)})`);
  }
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
  t.equal(
    (await server.request('POST', '/exec', { rawBody: bom, headers: { 'content-type': 'application/json' } })).status,
    200,
    'a leading byte-order mark is not JSON, and is dropped',
  );
  const empty = await server.request('POST', '/exec', { rawBody: '', headers: { 'content-type': 'application/json' } });
  t.equal(empty.body?.code, 1006, 'an empty body is an empty object: "sql" is required');
  const spaces = await server.request('POST', '/exec', {
    rawBody: ' \n\t',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(spaces.body?.code, 1009, 'whitespace alone is no JSON');
  const array = await server.request('POST', '/exec', {
    rawBody: '[1]',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(array.body?.code, 1006, 'an array is JSON, but not an object');
});

t.test('the console before the token, then the token, then the admin-only paths', async (t) => {
  const server = await started(t, ['-token', TOKEN]);
  const page = await server.get('/');
  t.equal(page.status, 200, 'the console is served without a token');
  const anonymous = await server.post('/exec', SHOW);
  t.equal(anonymous.status, 401, 'an API request without a token: 401');
  t.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer /, 'with WWW-Authenticate');
  const posted = await server.request('POST', '/', { body: SHOW });
  t.equal(posted.status, 405, "POST / is the console's 405, not a 401");
  const metrics = await server.get('/metrics', { 'x-service-token': TOKEN });
  t.equal(metrics.status, 200, 'the admin token reads /metrics');
  t.equal(metrics.body?.requests_by_status?.['401'], 1, 'the 401 was counted by status');
});
