/**
 * Revoking a token ends what it holds across requests: an open `GET /journal`
 * event stream of a revoked admin token closes within a second and receives
 * no entry written after the revocation (a new exercise's solution among
 * them), while another token's feed goes on. A token's expiry ends its feed
 * the same way (TokenExpiry, with an injected clock, and once for real).
 * `replay -verify` equals the live files afterwards.
 *
 * Build first (`npm run build`): the server runs from dist/.
 */
import http from 'node:http';
import path from 'node:path';
import t, { type Test } from 'tap';
import { TokenExpiry } from '../src/tokens/token-expiry';
import { FakeClock } from './helpers/fake-clock';
import { scratchDir } from './helpers/scratch-dir';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';
import { waitFor } from './helpers/wait';

t.setTimeout(90_000);

const ADMIN = 'revoke-feeds-admin';

/** An event-stream follower of /journal: what it received, and when its connection closed. */
interface Feed {
  readonly entries: Array<{ seq: number; kind: string; sql?: string | null; text: string }>;
  readonly errors: string[];
  closedAt: number | null;
  close(): void;
}

function openFeed(server: TestServer, secret: string): Promise<Feed> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${server.url}/journal?since=999999999`,
      { headers: { Accept: 'text/event-stream', 'X-Service-Token': secret } },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`GET /journal: ${response.statusCode}`));
          return;
        }
        const feed: Feed = { entries: [], errors: [], closedAt: null, close: () => request.destroy() };
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (data === undefined) continue;
            if (/^event: error$/m.test(block)) feed.errors.push(data);
            else {
              const entry = JSON.parse(data) as { seq: number; kind: string; sql?: string | null };
              feed.entries.push({ ...entry, text: data });
            }
          }
        });
        response.on('close', () => (feed.closedAt ??= Date.now()));
        response.on('error', () => undefined);
        resolve(feed);
      },
    );
    request.on('error', reject);
  });
}

async function serve(tt: Test): Promise<{ server: TestServer; cwd: string }> {
  const cwd = scratchDir(tt);
  const journal = path.join(cwd, 'journal', 'statements.jsonl');
  const server = await startServer(['-dir', path.join(cwd, 'data'), '-log-file', journal, '-token', ADMIN], {
    cwd,
    headers: { 'X-Service-Token': ADMIN },
  });
  tt.teardown(() => server.stop());
  return { server, cwd };
}

function ok(reply: Reply, status: number, what: string): Reply {
  if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.text}`);
  return reply;
}

async function makeToken(server: TestServer, spec: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  return ok(await server.post('/tokens', spec), 201, 'POST /tokens').body.tokens[0];
}

async function journalHead(server: TestServer): Promise<number> {
  return Number((await server.get('/journal?limit=1')).headers.get('journal-head'));
}

t.test("a revoked admin token's open feed closes within a second and gets nothing written after", async (tt) => {
  const { server, cwd } = await serve(tt);
  ok(await server.post('/dbs', { db: 'tpl' }), 201, 'POST /dbs');
  ok(await server.exec('tpl', 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)'), 200, 'CREATE');
  const assistant = await makeToken(server, { name: 'assistant', role: 'admin' });
  const stays = await makeToken(server, { name: 'stays', role: 'admin' });
  const revokedFeed = await openFeed(server, assistant.secret);
  const otherFeed = await openFeed(server, stays.secret);
  tt.teardown(() => {
    revokedFeed.close();
    otherFeed.close();
  });

  ok(await server.exec('tpl', "INSERT INTO t (v) VALUES ('before')"), 200, 'INSERT');
  const before = await journalHead(server);
  await waitFor(() => revokedFeed.entries.some((entry) => entry.seq === before), { what: 'the live entry' });
  tt.pass('the feed is live: it receives the write before the revocation');

  const revokedAt = Date.now();
  ok(await server.request('DELETE', `/tokens/${assistant.id}`), 200, 'DELETE /tokens/{id}');
  const headAtRevoke = await journalHead(server);
  // Written at once after: a feed still open would receive them.
  ok(await server.exec('tpl', "INSERT INTO t (v) VALUES ('after')"), 200, 'INSERT after');
  ok(
    await server.post('/exercises', {
      id: 'secret-answer',
      set: 'lesson-1',
      position: 1,
      title: 'Rows',
      prompt: 'Every row.',
      template: 'tpl',
      solution: 'SELECT v FROM t ORDER BY id -- solution-mark-after-revoke',
    }),
    201,
    'POST /exercises',
  );
  await waitFor(() => revokedFeed.closedAt !== null, { timeoutMs: 3000, what: 'the revoked feed to close' });
  const took = (revokedFeed.closedAt as number) - revokedAt;
  tt.ok(took <= 1000, `the revoked feed closed ${took} ms after DELETE /tokens (at most 1000)`);
  tt.same(
    revokedFeed.entries.filter((entry) => entry.seq > headAtRevoke).map((entry) => entry.seq),
    [],
    'it received no entry written after the revocation',
  );
  tt.notOk(
    revokedFeed.entries.some((entry) => entry.text.includes('solution-mark-after-revoke')),
    "the new exercise's solution never reached it",
  );
  tt.match(revokedFeed.errors, [/revoked/], 'its last event says why it ended');

  const last = await journalHead(server);
  await waitFor(() => otherFeed.entries.some((entry) => entry.seq === last), { what: 'the other feed' });
  tt.equal(otherFeed.closedAt, null, "another admin token's feed stays open");
  tt.ok(
    otherFeed.entries.some((entry) => entry.text.includes('solution-mark-after-revoke')),
    'and goes on receiving entries',
  );
  const again = await server.request('GET', '/journal?limit=1', { headers: { 'X-Service-Token': assistant.secret } });
  tt.equal(again.status, 401, 'the revoked token cannot open a feed again');

  otherFeed.close();
  tt.equal(await server.stop(), 0);
  const replay = await runReplay(
    [
      '-log-file',
      path.join(cwd, 'journal', 'statements.jsonl'),
      '-out',
      path.join(cwd, 'replayed'),
      '-verify',
      path.join(cwd, 'data'),
    ],
    cwd,
  );
  tt.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr}`);
});

t.test("a token's expiry ends its open feed the same way", async (tt) => {
  const { server } = await serve(tt);
  const expiresAt = Date.now() + 2500;
  const shortLived = await makeToken(server, {
    name: 'short-lived',
    role: 'admin',
    expires: new Date(expiresAt).toISOString(),
  });
  const feed = await openFeed(server, shortLived.secret);
  tt.teardown(() => feed.close());
  await waitFor(() => feed.closedAt !== null, { timeoutMs: 8000, what: 'the feed to close at the expiry' });
  const late = (feed.closedAt as number) - expiresAt;
  tt.ok(late >= -50 && late <= 1000, `the feed closed ${late} ms after the token's expiry (within a second)`);
  tt.match(feed.errors, [/revoked or has expired/], 'and says why');
});

t.test('TokenExpiry: each token is told of once, at its expiry, however far ahead', async (tt) => {
  const clock = new FakeClock();
  const told: string[] = [];
  const expiry = new TokenExpiry(clock, (id) => told.push(`${id}@${clock.now()}`));
  const start = clock.now();
  const month = 30 * 24 * 60 * 60 * 1000;
  expiry.watch(
    new Map([
      ['past', start - 1],
      ['soon', start + 1000],
      ['later', start + month],
    ]),
  );
  tt.same(told, [`past@${start}`], 'a token expired already is told of at once');
  clock.advance(999);
  tt.same(told.length, 1, 'nothing before its time');
  clock.advance(1);
  tt.same(told.at(-1), `soon@${start + 1000}`, 'the next one at its expiry');
  clock.advance(month);
  tt.same(
    told.at(-1),
    `later@${start + month}`,
    'one a month ahead too (armed in steps shorter than a timer may wait)',
  );
  expiry.watch(new Map([['past', start - 1]]));
  tt.equal(told.length, 3, 'watching again tells no token twice');
  expiry.stop();
});
