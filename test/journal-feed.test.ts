/**
 * GET /journal against real servers: NDJSON pages with every filter and
 * `since` paging; the event stream's backlog and live entries, each exactly
 * once across a disconnect, a Last-Event-ID resume and rotations; a follower
 * that stops reading is cut while the server's memory stays bounded; the
 * follower cap; who may read the feed, and a server without a journal.
 *
 * Build first (`npx tsc -p tsconfig.json`): the server runs from dist/.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import t, { type Test } from 'tap';
import { isError } from './helpers/assertions';
import { sleep } from './helpers/wait';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(90_000);

/* eslint-disable @typescript-eslint/no-explicit-any -- journal entries are JSON */
type Entry = any;

const TOKEN = 'feed-token';

async function serve(tt: Test, args: string[], headers?: Record<string, string>): Promise<TestServer> {
  const cwd = scratchDir(tt);
  const server = await startServer(['-dir', 'data', ...args], headers === undefined ? { cwd } : { cwd, headers });
  tt.teardown(() => server.stop());
  return server;
}

function ndjson(text: string): Entry[] {
  return text === ''
    ? []
    : text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
}

/** Every page from `since` on, following Journal-Next-Since until it reaches Journal-Head. */
async function allPages(tt: Test, server: TestServer, query: string, limit: number): Promise<Entry[]> {
  const found: Entry[] = [];
  let since = 0;
  for (let pages = 0; pages < 1000; pages++) {
    const reply = await server.get(`/journal?since=${since}&limit=${limit}${query}`);
    tt.equal(reply.status, 200);
    const page = ndjson(reply.text);
    tt.ok(page.length <= limit, 'a page holds at most limit entries');
    found.push(...page);
    since = Number(reply.headers.get('journal-next-since'));
    if (since >= Number(reply.headers.get('journal-head'))) return found;
  }
  throw new Error('paging did not end');
}

/** A server-sent event follower over plain http, keeping what it received. */
interface Follower {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly ids: number[];
  readonly entries: Entry[];
  readonly comments: string[];
  closed: boolean;
  close(): void;
  /** Waits (bounded) until `done` holds. */
  until(done: () => boolean, what: string): Promise<void>;
}

function follow(server: TestServer, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Follower> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${server.url}${pathAndQuery}`,
      { headers: { Accept: 'text/event-stream', ...headers } },
      (res) => {
        const follower: Follower = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          ids: [],
          entries: [],
          comments: [],
          closed: false,
          close: () => req.destroy(),
          async until(done, what) {
            for (let waited = 0; !done(); waited += 20) {
              if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
              await sleep(20);
            }
          },
        };
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            takeEvent(follower, buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        });
        res.on('close', () => (follower.closed = true));
        res.on('error', () => undefined);
        resolve(follower);
      },
    );
    req.on('error', reject);
  });
}

function takeEvent(follower: Follower, block: string): void {
  let id: number | undefined;
  for (const line of block.split('\n')) {
    if (line.startsWith(': ')) follower.comments.push(line.slice(2));
    else if (line.startsWith('id: ')) id = Number(line.slice(4));
    else if (line.startsWith('data: ') && id !== undefined) {
      follower.ids.push(id);
      follower.entries.push(JSON.parse(line.slice(6)));
    }
  }
}

const head = async (server: TestServer): Promise<number> =>
  Number((await server.get('/journal?limit=1')).headers.get('journal-head'));

async function writeSome(server: TestServer, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const reply = await server.exec('a', `INSERT INTO t VALUES (${i}, '${'x'.repeat(100)}')`);
    if (reply.status !== 200) throw new Error(reply.text);
  }
}

t.test('NDJSON pages: every filter, and since paging', async (tt) => {
  const server = await serve(tt, ['-journal-feed', '-log-max-size', '2K']);
  tt.equal((await server.post('/dbs', { db: 'a' })).status, 201);
  tt.equal((await server.post('/dbs', { db: 'b' })).status, 201);
  tt.equal((await server.exec('a', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)')).status, 200);
  await writeSome(server, 1, 5);
  await server.exec('a', 'SELECT * FROM missing'); // class 2
  await server.exec('b', 'SELEC 1'); // class 1
  await server.exec('a', "INSERT INTO t VALUES (1, 'dup')"); // class 3
  const all = ndjson((await server.get('/journal')).text);
  tt.same(
    all.map((e) => e.seq),
    all.map((_, i) => i + 1),
    'from the start, every seq once, in order',
  );
  tt.ok(all.length >= 10, `${all.length} entries`);
  tt.ok(
    all.every((e) => e.crc === undefined),
    'no crc field',
  );
  const fs2 = fs.readdirSync(`${server.cwd}/data/journal`).filter((n) => n.startsWith('statements.2'));
  tt.ok(fs2.length > 0, 'the journal rotated, so pages span files');

  const failed = ndjson((await server.get('/journal?failed=true')).text);
  tt.same(
    failed.map((e) => e.seq),
    all.filter((e) => !e.ok).map((e) => e.seq),
    'failed=true',
  );
  tt.equal(failed.length, 3);
  const class2 = ndjson((await server.get('/journal?class=2')).text);
  tt.ok(class2.length === 1 && class2[0].class === 2, 'class=2');
  const classes = ndjson((await server.get('/journal?class=1,3')).text);
  tt.same(classes.map((e) => e.class).sort(), [1, 3], 'class=1,3');
  const code = failed[0].code as number;
  tt.same(
    ndjson((await server.get(`/journal?code=${code}`)).text).map((e) => e.seq),
    all.filter((e) => e.code === code).map((e) => e.seq),
    'code=',
  );
  const onB = ndjson((await server.get('/journal?db=b.db')).text);
  tt.ok(onB.length >= 2 && onB.every((e) => e.db === 'b.db'), 'db=');
  tt.same(ndjson((await server.get('/journal?db=a.db&failed=true&class=3')).text).length, 1, 'filters combine');

  tt.same(
    (await allPages(tt, server, '', 3)).map((e) => e.seq),
    all.map((e) => e.seq),
    'pages of 3 give every entry once',
  );
  tt.same(
    (await allPages(tt, server, '&failed=true', 1)).map((e) => e.seq),
    failed.map((e) => e.seq),
    'filtered pages too',
  );
  const after = ndjson((await server.get('/journal?since=4&limit=2')).text);
  tt.same(
    after.map((e) => e.seq),
    [5, 6],
    'since is exclusive, limit bounds',
  );
  const past = await server.get('/journal?since=100000');
  tt.equal(past.text, '', 'after the head: nothing');

  isError(tt, await server.get('/journal?class=x'), 400, 1008, 'class not a number');
  isError(tt, await server.get('/journal?code=12'), 400, 1008, 'code not a code');
  isError(tt, await server.get('/journal?limit=0'), 400, 1008, 'limit 0');
  isError(tt, await server.get('/journal?limit=1001'), 400, 1008, 'limit above 1000');
  isError(tt, await server.get('/journal?since=-1'), 400, 1008, 'negative since');
  isError(tt, await server.get('/journal?failed=yes'), 400, 1008, 'failed not a boolean');
  isError(tt, await server.get('/journal', { 'Last-Event-ID': 'abc' }), 400, 1006, 'Last-Event-ID not a seq');
});

t.test(
  'event stream: backlog then live, each entry once across a resume and rotations, past -request-timeout',
  async (tt) => {
    const server = await serve(tt, [
      '-journal-feed',
      '-log-max-size',
      '2K',
      '-request-timeout',
      '1s',
      '-journal-heartbeat',
      '200ms',
    ]);
    await server.post('/dbs', { db: 'a' });
    await server.exec('a', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
    await writeSome(server, 1, 10);

    const first = await follow(server, '/journal');
    tt.equal(first.status, 200);
    tt.match(first.headers['content-type'], /^text\/event-stream/);
    let target = await head(server);
    await first.until(() => first.ids.length >= target, 'the backlog');
    // Writes while following; then the stream outlives -request-timeout and keeps receiving.
    await writeSome(server, 11, 10);
    await sleep(1500);
    await writeSome(server, 21, 10);
    target = await head(server);
    await first.until(() => first.ids.at(-1) === target, 'live entries');
    tt.notOk(first.closed, 'still open after 1.5 s with -request-timeout 1s');
    tt.ok(first.comments.includes('heartbeat'), 'heartbeats came');
    first.close();

    const resumeAt = first.ids.at(-1) as number;
    await writeSome(server, 31, 15); // several rotations while no one follows
    const second = await follow(server, '/journal?since=3', { 'Last-Event-ID': String(resumeAt) });
    await writeSome(server, 46, 15); // live, possibly while the backlog is still read
    target = await head(server);
    await second.until(() => second.ids.at(-1) === target, 'the resumed stream');
    second.close();

    const union = [...first.ids, ...second.ids];
    tt.same(
      union,
      Array.from({ length: target }, (_, i) => i + 1),
      'every entry exactly once, in seq order',
    );
    tt.same(
      second.entries.map((e) => e.seq),
      second.ids,
      'each event id is its entry seq',
    );
    const files = fs.readdirSync(`${server.cwd}/data/journal`).filter((n) => n.startsWith('statements.2'));
    tt.ok(files.length >= 3, `${files.length} rotated files`);

    const filtered = await follow(server, '/journal?failed=true');
    await server.exec('a', 'SELECT * FROM missing');
    await writeSome(server, 61, 2);
    await server.exec('a', 'SELEC 1');
    await filtered.until(() => filtered.ids.length >= 2, 'two failures');
    tt.ok(
      filtered.entries.every((e) => e.ok === false),
      'only failed entries follow',
    );
    filtered.close();
  },
);

function vmRssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0);
}

t.test('since past the head follows from now on; db= takes a name with or without .db', async (tt) => {
  const server = await serve(tt, ['-journal-feed']);
  tt.equal((await server.post('/dbs', { db: 'alumno-05' })).status, 201);
  tt.equal((await server.exec('alumno-05', 'CREATE TABLE t (id INT PRIMARY KEY)')).status, 200);
  tt.equal((await server.exec('alumno-05', 'INSERT INTO t VALUES (1)')).status, 200);

  const ahead = await follow(server, '/journal?class=3&since=999999999');
  const byName = await follow(server, '/journal?db=alumno-05&failed=true&since=999999999');
  await ahead.until(() => ahead.comments.some((c) => c.startsWith('following')), 'the opening comment');
  const page = await server.get('/journal?class=3&since=999999999');
  tt.equal(page.text, '', 'a page past the head holds nothing yet');
  const nextSince = Number(page.headers.get('journal-next-since'));
  tt.equal(nextSince, Number(page.headers.get('journal-head')), 'and its next since is the head, not past it');

  isError(tt, await server.exec('alumno-05', 'INSERT INTO t VALUES (1)'), 400, [3002, 3003], 'a class-3 failure');
  await ahead.until(() => ahead.entries.length === 1, 'the new class-3 entry');
  tt.equal(ahead.entries[0].class, 3, 'since past the head delivers new entries');
  await byName.until(() => byName.entries.length === 1, 'the failure, by db=alumno-05');
  tt.equal(byName.entries[0].db, 'alumno-05.db');
  ahead.close();
  byName.close();
  tt.same(
    ndjson((await server.get(`/journal?class=3&since=${nextSince}`)).text).map((e) => e.class),
    [3],
    'the next page from there has it',
  );

  const withSuffix = ndjson((await server.get('/journal?db=alumno-05.db')).text);
  const withoutSuffix = ndjson((await server.get('/journal?db=alumno-05')).text);
  tt.ok(withSuffix.length >= 3, `${withSuffix.length} entries of alumno-05.db`);
  tt.same(withoutSuffix, withSuffix, 'db=alumno-05 and db=alumno-05.db give the same');
  tt.same(ndjson((await server.get('/journal?db=ALUMNO-05')).text), withSuffix, 'any case, as everywhere else');
});

t.test('token= keeps the entries one token caused, by its name', async (tt) => {
  const server = await serve(tt, ['-token', TOKEN], { 'X-Service-Token': TOKEN });
  const made = await server.post('/tokens', { prefix: 'alumno', count: 2, role: 'write' });
  tt.equal(made.status, 201);
  const [first, second] = made.body.tokens as Array<{ name: string; secret: string }>;
  for (const student of [first!, second!]) {
    const as = { 'X-Service-Token': student.secret };
    tt.equal(
      (
        await server.request('POST', '/exec', {
          body: { db: student.name, sql: 'CREATE TABLE t (id INT)' },
          headers: as,
        })
      ).status,
      200,
    );
  }
  const following = await follow(server, '/journal?token=alumno-02&since=999999999', { 'X-Service-Token': TOKEN });
  await following.until(() => following.comments.some((c) => c.startsWith('following')), 'the opening comment');
  for (const student of [first!, second!]) {
    await server.request('POST', '/exec', {
      body: { db: student.name, sql: 'INSERT INTO t VALUES (1)' },
      headers: { 'X-Service-Token': student.secret },
    });
  }
  await following.until(() => following.entries.length === 1, "alumno-02's insert");
  tt.equal(following.entries[0].tokenName, 'alumno-02', "the follower gets that token's entries only");
  following.close();

  const mine = ndjson((await server.get('/journal?token=alumno-01')).text);
  tt.ok(mine.length >= 2 && mine.every((e) => e.tokenName === 'alumno-01'), `${mine.length} entries, all of alumno-01`);
  tt.same(ndjson((await server.get('/journal?token=ALUMNO-01')).text), mine, 'names match regardless of case');
  tt.same(
    ndjson((await server.get('/journal?token=alumno-01,alumno-02')).text)
      .map((e) => e.tokenName)
      .sort(),
    ['alumno-01', 'alumno-01', 'alumno-02', 'alumno-02'],
    'a list matches any',
  );
  isError(tt, await server.get('/journal?token=a%20b'), 400, 1008, 'not a token name');
});

t.test('a follower that stops reading is cut; the server does not buffer for it', async (tt) => {
  const server = await serve(tt, ['-journal-feed', '-log-fsync=false', '-log-max-size', '4M']);
  await server.post('/dbs', { db: 'a' });
  await server.exec('a', 'CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
  const port = Number(new URL(server.url).port);
  const stalled = net.connect(port, '127.0.0.1');
  stalled.on('error', () => undefined);
  await new Promise((resolve) => stalled.once('connect', resolve));
  stalled.pause(); // never reads a byte
  stalled.write('GET /journal HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
  await sleep(300);
  const before = vmRssKiB(server.child.pid as number);
  const big = 'y'.repeat(400 * 1024);
  // ~0.8 MiB per entry (the SQL is in the entry twice): far more than the socket buffers hold.
  let cut = false;
  for (let i = 0; i < 60 && !cut; i++) {
    tt.equal((await server.exec('a', `INSERT INTO t VALUES (${i}, '${big}')`)).status, 200);
    if (i % 10 === 9)
      cut = /sqlscribe_journal_followers_cut_total 1/.test((await server.get('/metrics?format=prometheus')).text);
  }
  tt.ok(cut, 'the stalled follower was cut (metric)');
  const after = vmRssKiB(server.child.pid as number);
  tt.ok(after - before < 100 * 1024, `RSS grew ${Math.round((after - before) / 1024)} MiB, bounded`);
  stalled.destroy();
  // The slot is free again: a new follower is served.
  const next = await follow(server, '/journal?since=1000000');
  tt.equal(next.status, 200);
  next.close();
});

t.test('at most 16 followers; the 17th gets 503 with Retry-After', async (tt) => {
  const server = await serve(tt, ['-journal-feed']);
  const followers: Follower[] = [];
  for (let i = 0; i < 16; i++) followers.push(await follow(server, '/journal'));
  tt.ok(
    followers.every((f) => f.status === 200),
    '16 follow',
  );
  const refused = await server.get('/journal', { Accept: 'text/event-stream' });
  isError(tt, refused, 503, 6014, 'the 17th');
  tt.ok(refused.headers.get('retry-after'), 'Retry-After');
  tt.equal((await server.get('/journal')).status, 200, 'NDJSON pages are not followers');
  (followers.pop() as Follower).close();
  await sleep(200);
  const again = await follow(server, '/journal');
  tt.equal(again.status, 200, 'a freed slot is taken again');
  for (const f of [...followers, again]) f.close();
});

t.test('who may read: the token holder; without -token only with -journal-feed; no journal, 409', async (tt) => {
  const withToken = await serve(tt, ['-token', TOKEN], { 'X-Service-Token': TOKEN });
  tt.equal((await withToken.get('/journal')).status, 200, 'the token holder reads');
  isError(tt, await withToken.get('/journal', { 'X-Service-Token': '' }), 401, 1012, 'without the token');
  const stream = await follow(withToken, '/journal', { 'X-Service-Token': 'wrong' });
  tt.equal(stream.status, 401, 'the event stream asks for the token too');
  stream.close();

  const open = await serve(tt, []);
  isError(tt, await open.get('/journal'), 403, 1022, 'no token, no -journal-feed');
  const refused = await follow(open, '/journal');
  tt.equal(refused.status, 403, 'the event stream is refused too');
  refused.close();

  const none = await serve(tt, ['-log-level', 'none', '-journal-feed']);
  isError(tt, await none.get('/journal'), 409, 7004, 'no journal');
});
