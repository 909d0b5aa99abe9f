/**
 * {"undo": "last"} undoes only the caller's own last write, over the real
 * server and the real replay tool (build first): on a database two write
 * tokens share, Ana's undo is refused (409 [SQ2084], its dry run too) while
 * Bruno's writes came after hers, so his rows survive; once Ana wrote last,
 * her undo takes her write alone. A server without tokens keeps undoing the
 * last write by anyone. The pure rule itself is unit-tested at the end.
 */
import path from 'node:path';
import t, { type Test } from 'tap';
import type { JournalEntry } from '../journal/record';
import { targetSeq, undoneEntries } from '../src/services/databases/restore-targets';
import { runReplay, type TestServer } from './helpers/server';
import { placeAt, ServerFleet, type ServerPlace } from './helpers/server-fleet';
import { call, ok, rows, tokenSecret } from './helpers/token-calls';
import { scratchDir } from './helpers/scratch-dir';
import { assertCode, engineCodeOf } from './helpers/assertions';

t.setTimeout(180_000);

const ADMIN = 'undo-admin-secret-0123456789';
const fleet = new ServerFleet(t);

const token = (server: TestServer, name: string): Promise<string> =>
  tokenSecret(server, ADMIN, name, 'write', ['shared']);

async function replayEquals(t: Test, where: ServerPlace): Promise<void> {
  const out = path.join(where.dir, 'replayed');
  const replay = await runReplay(['-log-file', where.journal, '-out', out, '-verify', where.data], where.dir);
  t.equal(replay.code, 0, `replay -verify equals the live databases: ${replay.stderr}`);
}

const ALL = 'SELECT who, n FROM t ORDER BY rowid';

t.test("Ana's undo never takes Bruno's writes", async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where, ['-token', ADMIN]);
  await ok(server, ADMIN, 'POST', '/dbs', { db: 'shared' });
  await ok(server, ADMIN, 'POST', '/exec', { db: 'shared', sql: 'CREATE TABLE t (who TEXT, n INT)' });
  const ana = await token(server, 'ana');
  const bruno = await token(server, 'bruno');
  await ok(server, ana, 'POST', '/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('ana', 1)" });
  await ok(server, bruno, 'POST', '/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('bruno', 1)" });
  await ok(server, bruno, 'POST', '/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('bruno', 2)" });
  const everything = [
    ['ana', 1],
    ['bruno', 1],
    ['bruno', 2],
  ];

  const dry = await call(server, ana, 'POST', '/dbs/shared/restore', { undo: 'last', dryRun: true });
  assertCode(t, dry, 409, 2084, "a dry run of Ana's undo after Bruno wrote");
  t.match(dry.body.error, /bruno/, 'naming who wrote after her');
  const refused = await call(server, ana, 'POST', '/dbs/shared/restore', { undo: 'last' });
  assertCode(t, refused, 409, 2084, "Ana's undo after Bruno wrote");
  t.same(await rows(server, ana, 'shared', ALL), everything, "Bruno's rows survive, and Ana's too");

  // Bruno undoes his own last write: he wrote last.
  const own = await ok(server, bruno, 'POST', '/dbs/shared/restore', { undo: 'last' });
  t.equal(own.body.undone.count, 1, "Bruno's undo takes his one write");
  t.same(
    await rows(server, ana, 'shared', ALL),
    [
      ['ana', 1],
      ['bruno', 1],
    ],
    'his last row is gone, the rest stays',
  );
  assertCode(
    t,
    await call(server, ana, 'POST', '/dbs/shared/restore', { undo: 'last' }),
    409,
    2084,
    "Ana's undo while Bruno's first write and his restore stand after hers",
  );

  // Ana writes last: her undo takes her write alone.
  await ok(server, ana, 'POST', '/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('ana', 2)" });
  const mine = await ok(server, ana, 'POST', '/dbs/shared/restore', { undo: 'last', dryRun: true });
  t.same(
    mine.body.undone.entries.map((e: { token: string }) => e.token),
    ['ana'],
    'her dry run lists her own write only',
  );
  await ok(server, ana, 'POST', '/dbs/shared/restore', { undo: 'last' });
  t.same(
    await rows(server, ana, 'shared', ALL),
    [
      ['ana', 1],
      ['bruno', 1],
    ],
    "Ana's last write is undone, Bruno's row stays",
  );
  assertCode(
    t,
    await call(server, bruno, 'POST', '/dbs/shared/restore', { undo: 'last' }),
    409,
    2084,
    "now Bruno's undo is refused: Ana's restore came after his",
  );
  // An explicit target is the way to go back over others' writes: its dry run lists them.
  const explicit = await ok(server, ADMIN, 'POST', '/dbs/shared/restore', { to: own.body.seq, dryRun: true });
  t.ok(explicit.body.undone.count >= 1, 'a restore to a seq may still undo anyone, listing it in its dry run');

  await fleet.stop(server);
  await replayEquals(t, where);
});

t.test('a server without tokens undoes the last write by anyone', async (t) => {
  const where = placeAt(scratchDir(t));
  const server = await fleet.start(where);
  await server.post('/dbs', { db: 'shared' });
  await server.post('/exec', { db: 'shared', sql: 'CREATE TABLE t (who TEXT, n INT)' });
  await server.post('/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('ana', 1)" });
  await server.post('/exec', { db: 'shared', sql: "INSERT INTO t VALUES ('bruno', 1)" });
  const reply = await server.post('/dbs/shared/restore', { undo: 'last' });
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.undone.count, 1, 'one write undone');
  const left = await server.post('/exec', { db: 'shared', sql: ALL });
  t.same(left.body.results[0].rows, [['ana', 1]], 'the last write, whoever sent it');
  await fleet.stop(server);
  await replayEquals(t, where);
});

let seq = 0;
function write(db: string, tokenId: string | undefined, extra: Partial<JournalEntry> = {}): JournalEntry {
  seq++;
  return {
    seq,
    ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
    db,
    session: null,
    kind: 'exec',
    sql: `-- ${seq}`,
    ok: true,
    ms: 0,
    ...(tokenId === undefined ? {} : { tokenId, tokenName: tokenId }),
    ...extra,
  };
}

t.test('the rule, as a pure function', async (t) => {
  seq = 0;
  const created = write('d', 'admin', { kind: 'createdb' });
  const a1 = write('d', 'ana');
  const elsewhere = write('other', 'bruno');
  const failed = write('d', 'bruno', { ok: false });
  const read = write('d', 'bruno', { readonly: true });
  const entries = [created, a1, elsewhere, failed, read];
  t.equal(
    targetSeq('d', { undo: 'last' }, entries, seq, Date.now(), 'ana'),
    a1.seq - 1,
    'failed writes, reads and other databases do not stand in the way',
  );
  const b1 = write('d', 'bruno');
  entries.push(b1);
  t.equal(
    engineCodeOf(() => targetSeq('d', { undo: 'last' }, entries, seq, Date.now(), 'ana')),
    2084,
    'a later write by another',
  );
  t.equal(targetSeq('d', { undo: 'last' }, entries, seq, Date.now(), undefined), b1.seq - 1, 'without tokens: anyone');
  const restore = write('d', 'bruno', { kind: 'restoredb', to: a1.seq });
  entries.push(restore);
  t.equal(
    engineCodeOf(() => targetSeq('d', { undo: 'last' }, entries, seq, Date.now(), 'ana')),
    2084,
    "another's restore stands in the way too",
  );
  const anon = write('d', undefined);
  t.equal(
    engineCodeOf(() => targetSeq('d', { undo: 'last' }, [created, a1, anon], anon.seq, Date.now(), 'ana')),
    2084,
    'so does a write with no token',
  );
  t.same(
    undoneEntries([created, a1, b1], 'd', a1.seq - 1).entries.map((e) => e.seq),
    [b1.seq, a1.seq],
    'undoneEntries is unchanged',
  );
});
