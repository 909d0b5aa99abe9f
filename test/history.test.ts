/**
 * GET /dbs/{db}/history over the real server (build first): who may read
 * which database's history, the SQL exactly as sent, failed entries with
 * their code, class, message and statement, the filters, bad parameters,
 * and pages that neither skip nor repeat while writes go on.
 */
import path from 'node:path';
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const ADMIN = 'history-admin-secret-0123456789';
const admin = { 'X-Service-Token': ADMIN };

interface Entry {
  seq: number;
  time: string;
  token: string | null;
  kind: string;
  sql: string | null;
  ok: boolean;
  code?: number;
  class?: number;
  error?: string;
  statement?: number;
  changes?: number;
  from?: string;
}

t.test('history', async (tt) => {
  const dir = scratchDir(tt);
  const server: TestServer = await startServer(['-dir', path.join(dir, 'data'), '-token', ADMIN, '-log-fsync=false'], {
    cwd: dir,
  });
  tt.teardown(async () => {
    await server.stop();
  });
  const made = await server.post('/tokens', { prefix: 'alumno', count: 2, role: 'write' }, admin);
  tt.equal(made.status, 201, made.text);
  const secrets = new Map<string, string>(
    (made.body.tokens as Array<{ name: string; secret: string }>).map((tok) => [tok.name, tok.secret]),
  );
  const as = (name: string): Record<string, string> => ({ 'X-Service-Token': secrets.get(name) ?? '' });
  const history = async (query: string, headers: Record<string, string> = admin) =>
    server.get(`/dbs/${query}`, headers);

  const odd =
    "  -- a comment, ünïcödé ✓ and 🦆\n\tCREATE TABLE t (id INT PRIMARY KEY, v TEXT);   \r\n/* block */ INSERT INTO t VALUES (1, 'a;b')  ;\n\n";
  tt.equal((await server.post('/exec', { db: 'alumno-01', sql: odd }, as('alumno-01'))).status, 200);
  const failed = await server.post(
    '/exec',
    { db: 'alumno-01', sql: "SELECT 1;\nINSERT INTO t VALUES (1, 'dup')" },
    as('alumno-01'),
  );
  tt.equal(failed.body.code, 3003);
  tt.equal(
    (await server.post('/exec', { db: 'alumno-02', sql: 'CREATE TABLE u (x INT)' }, as('alumno-02'))).status,
    200,
  );

  await tt.test('the SQL comes back byte for byte, failures with code, class, message and statement', async (t2) => {
    const reply = await history('alumno-01/history', as('alumno-01'));
    t2.equal(reply.status, 200, reply.text);
    t2.equal(reply.body.db, 'alumno-01.db');
    const [fail, ok, created] = reply.body.entries as Entry[];
    t2.match(fail, {
      kind: 'exec',
      ok: false,
      code: 3003,
      class: 3,
      statement: 1,
      token: 'alumno-01',
      sql: "SELECT 1;\nINSERT INTO t VALUES (1, 'dup')",
    });
    t2.equal(fail?.error, failed.body.error, 'the message the client got');
    t2.equal(ok?.sql, odd, 'exactly as sent');
    t2.match(ok, { ok: true, changes: 1, token: 'alumno-01' });
    t2.match(created, { kind: 'createdb', token: 'admin' });
    t2.ok((fail?.seq ?? 0) > (ok?.seq ?? 0), 'newest first');
    t2.ok(!Number.isNaN(Date.parse(fail?.time ?? '')));
    t2.equal(reply.body.next, null);
    t2.same((await history('alumno-01.db/history', as('alumno-01'))).body, reply.body, 'with or without .db');
  });

  await tt.test("another's database is refused as for any request", async (t2) => {
    const reply = await history('alumno-02/history', as('alumno-01'));
    t2.equal(reply.status, 403);
    t2.equal(reply.body.code, 1031);
    t2.equal((await history('alumno-02/history')).status, 200, 'the admin reads every database');
    t2.equal((await server.get('/dbs/alumno-02/history')).status, 401);
  });

  await tt.test('filters: failed, token, since and until by seq or time', async (t2) => {
    const all = (await history('alumno-01/history')).body.entries as Entry[];
    const onlyFailed = (await history('alumno-01/history?failed=true')).body.entries as Entry[];
    t2.same(
      onlyFailed.map((e) => e.seq),
      all.filter((e) => !e.ok).map((e) => e.seq),
    );
    const byToken = (await history('alumno-01/history?token=ALUMNO-01')).body.entries as Entry[];
    t2.same(
      byToken.map((e) => e.seq),
      all.filter((e) => e.token === 'alumno-01').map((e) => e.seq),
    );
    const [newest, middle, oldest] = all as [Entry, Entry, Entry];
    t2.same(
      ((await history(`alumno-01/history?since=${middle.seq}`)).body.entries as Entry[]).map((e) => e.seq),
      [newest.seq, middle.seq],
    );
    t2.same(
      ((await history(`alumno-01/history?until=${middle.seq}`)).body.entries as Entry[]).map((e) => e.seq),
      [middle.seq, oldest.seq],
    );
    const since = (await history(`alumno-01/history?since=${encodeURIComponent(newest.time)}`)).body.entries as Entry[];
    t2.ok(since.some((e) => e.seq === newest.seq) && since.every((e) => e.time >= newest.time));
    t2.same((await history('alumno-01/history?until=2000-01-01T00:00:00Z')).body.entries, []);
  });

  await tt.test('bad parameters are 400 with a code', async (t2) => {
    for (const query of [
      'limit=0',
      'limit=501',
      'limit=x',
      'before=-1',
      'failed=yes',
      'since=yesterday',
      'until=12:00',
      'token=a%20b',
      'sort=asc',
    ]) {
      const reply = await history(`alumno-01/history?${query}`);
      t2.equal(reply.status, 400, query);
      t2.equal(reply.body.code, 1070, query);
    }
    t2.equal((await history('Bad.Name/history')).body.code, 1011);
    t2.equal((await history('nobody/history')).status, 404);
  });

  await tt.test('pages neither skip nor repeat while writes go on', async (t2) => {
    await server.post('/dbs', { db: 'busy' }, admin);
    await server.post('/exec', { db: 'busy', sql: 'CREATE TABLE w (n INT)' }, admin);
    for (let i = 0; i < 30; i++) await server.post('/exec', { db: 'busy', sql: `INSERT INTO w VALUES (${i})` }, admin);
    const first = await history('busy/history?limit=7');
    const seen: number[] = (first.body.entries as Entry[]).map((e) => e.seq);
    let next: number | null = first.body.next as number | null;
    let written = 0;
    while (next !== null) {
      // Writes land above the first page while the pages are read.
      await server.post('/exec', { db: 'busy', sql: `INSERT INTO w VALUES (${1000 + written++})` }, admin);
      const page = await history(`busy/history?limit=7&before=${next}`);
      t2.equal(page.status, 200);
      seen.push(...(page.body.entries as Entry[]).map((e) => e.seq));
      next = page.body.next as number | null;
    }
    t2.equal(seen.length, 32, 'createdb, the table and 30 inserts');
    t2.same(
      seen,
      [...seen].sort((a, b) => b - a),
      'newest first, no repeat',
    );
    t2.equal(new Set(seen).size, seen.length);
    const now = (await history('busy/history?limit=500')).body.entries as Entry[];
    t2.equal(now.length, 32 + written);
  });

  await tt.test('a restore shows as its own kind, with the seq it went back to', async (t2) => {
    const before = (await history('busy/history?limit=3')).body.entries as Entry[];
    const to = before[2]?.seq ?? 0;
    const restored = await server.post('/dbs/busy/restore', { to }, admin);
    t2.equal(restored.status, 200, restored.text);
    const [newest] = (await history('busy/history?limit=1')).body.entries as Array<Entry & { to?: number }>;
    t2.match(newest, { kind: 'restoredb', to, token: 'admin', ok: true, sql: null });
  });

  await tt.test('a dropped database keeps its history', async (t2) => {
    await server.post('/dbs', { db: 'gone' }, admin);
    t2.equal((await server.post('/exec', { sql: 'DROP DATABASE gone' }, admin)).status, 200);
    const reply = await history('gone/history');
    t2.equal(reply.status, 200, reply.text);
    t2.same(
      (reply.body.entries as Entry[]).map((e) => e.kind),
      ['dropdb', 'createdb'],
    );
  });
});

t.test(
  'a server without tokens shows every history with -journal-feed, none without; without an index it says so',
  async (tt) => {
    const dir = scratchDir(tt);
    const open = await startServer(['-dir', path.join(dir, 'data'), '-journal-feed'], { cwd: dir });
    tt.teardown(async () => {
      await open.stop();
    });
    await open.post('/dbs', { db: 'x' });
    tt.equal((await open.get('/dbs/x/history')).body.entries.length, 1);
    const closedDir = scratchDir(tt);
    const closed = await startServer(['-dir', path.join(closedDir, 'data')], { cwd: closedDir });
    tt.teardown(async () => {
      await closed.stop();
    });
    await closed.post('/dbs', { db: 'x' });
    const refused = await closed.get('/dbs/x/history');
    tt.equal(refused.status, 403, 'without -journal-feed, as the journal itself');
    tt.equal(refused.body.code, 1095);
    const other = scratchDir(tt);
    const off = await startServer(['-dir', path.join(other, 'data'), '-history-index=false', '-journal-feed'], {
      cwd: other,
    });
    tt.teardown(async () => {
      await off.stop();
    });
    await off.post('/dbs', { db: 'x' });
    const reply = await off.get('/dbs/x/history');
    tt.equal(reply.status, 409);
    tt.equal(reply.body.code, 2070);
  },
);
