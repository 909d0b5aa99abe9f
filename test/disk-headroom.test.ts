/**
 * -min-free-disk-mb: below it, writes of tokens that are not admins are
 * refused (507 [SQ6061]) before they run, while the journal still records
 * (the refusal itself, and the admin's cleanup, which goes on); once there
 * is room again, the class writes again without a restart, and
 * `replay -verify` equals the live files.
 *
 * First with an injected statfs and clock (DiskHeadroom: statfs asked at
 * most once a second), then for real on a small tmpfs (this runs as root in
 * CI; without the right to mount it says so and skips).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { EngineError } from '../src/errors';
import { DiskHeadroom } from '../src/services/disk-headroom';
import { readJournal } from '../journal/reader';
import { FakeClock } from './helpers/fake-clock';
import { scratchDir } from './helpers/scratch-dir';
import { canMount, mountSmallDisk } from './helpers/small-disk';
import { runReplay, startServer, type Reply } from './helpers/server';
import { waitFor } from './helpers/wait';

t.setTimeout(120_000);

const MiB = 1024 * 1024;

t.test('DiskHeadroom: refuses below the headroom, asks statfs at most once a second', async (tt) => {
  const clock = new FakeClock();
  let free = 500 * MiB;
  let asked = 0;
  const headroom = new DiskHeadroom({
    dir: '/data',
    minFreeMb: 256,
    clock,
    freeSpace: async () => {
      asked++;
      return free;
    },
  });
  await headroom.assertRoom();
  await headroom.assertRoom();
  tt.equal(asked, 1, 'two checks within a second read statfs once');
  free = 100 * MiB;
  await headroom.assertRoom();
  tt.pass('a drop within the second is seen only after it');
  clock.advance(1000);
  const refused = await headroom.assertRoom().then(
    () => null,
    (error: unknown) => error,
  );
  tt.ok(refused instanceof EngineError, 'below the headroom: refused');
  tt.match(refused, { code: 6061, status: 507, retryAfter: 30 }, 'with its code, 507 and Retry-After');
  tt.match((refused as EngineError).message, /100 MiB free, below -min-free-disk-mb 256/, 'saying how much is left');
  tt.equal(asked, 2);
  free = 300 * MiB;
  clock.advance(1000);
  await headroom.assertRoom();
  tt.pass('room again: writes go on');
  const off = new DiskHeadroom({ dir: '/data', minFreeMb: 0, freeSpace: async () => 0 });
  await off.assertRoom();
  tt.pass('0 turns it off');
  const unreadable = new DiskHeadroom({
    dir: '/data',
    minFreeMb: 256,
    freeSpace: () => Promise.reject(new Error('EIO')),
  });
  await unreadable.assertRoom();
  tt.pass('a disk whose space cannot be read refuses nothing');
});

/** Fills the disk that holds `dir` with one file until `leave` bytes are free. */
function fillUntil(dir: string, leave: number): string {
  const filler = path.join(dir, 'filler');
  const block = Buffer.alloc(MiB, 0x78);
  const fd = fs.openSync(filler, 'w');
  try {
    for (;;) {
      const stats = fs.statfsSync(dir);
      const free = stats.bavail * stats.bsize;
      if (free <= leave) break;
      fs.writeSync(fd, block, 0, Math.min(block.length, free - leave));
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

const ADMIN = 'headroom-admin';

t.test(
  'a small disk: student writes refused below the headroom while the journal records and the admin cleans up',
  { skip: canMount() ? false : 'needs root to mount a tmpfs' },
  async (tt) => {
    const cwd = scratchDir(tt);
    const disk = mountSmallDisk(tt, '64m');
    const data = path.join(disk, 'data');
    // The journal on the same disk: the headroom is its room.
    const journal = path.join(disk, 'journal', 'statements.jsonl');
    const server = await startServer(
      ['-dir', data, '-log-file', journal, '-log-level', 'all', '-token', ADMIN, '-min-free-disk-mb', '24'],
      { cwd, headers: { 'X-Service-Token': ADMIN } },
    );
    tt.teardown(() => server.stop());
    const ok = (reply: Reply, what: string, status = 200): Reply => {
      if (reply.status !== status) throw new Error(`${what}: ${reply.status} ${reply.text}`);
      return reply;
    };
    ok(await server.post('/dbs', { db: 'class' }), 'POST /dbs', 201);
    ok(await server.exec('class', 'CREATE TABLE t (k TEXT PRIMARY KEY, pad BLOB)'), 'CREATE');
    const made = ok(await server.post('/tokens', { name: 'ana', role: 'write', databases: ['class'] }), 'token', 201);
    const ana = { 'X-Service-Token': made.body.tokens[0].secret as string };
    const write = (key: string): Promise<Reply> =>
      server.request('POST', '/exec', {
        body: { db: 'class', sql: 'INSERT INTO t VALUES (?, zeroblob(1000))', params: [key] },
        headers: ana,
      });
    ok(await write('before'), 'a student writes while there is room');

    const filler = fillUntil(disk, 16 * MiB);
    // The headroom reads statfs at most once a second: the next check after that sees the full disk.
    const refused = await waitFor(
      async () => {
        const reply = await write('below');
        return reply.status === 507 ? reply : null;
      },
      { timeoutMs: 5000, what: 'a refusal below the headroom' },
    );
    tt.match(refused.body, { code: 6061 }, `refused with its code: ${refused.text.slice(0, 200)}`);
    tt.ok(refused.headers.get('retry-after'), 'saying when to retry');
    tt.match(
      await server.request('POST', '/tx/begin', { body: { db: 'class' }, headers: ana }),
      { status: 507, body: { code: 6061 } },
      'a session too',
    );
    tt.equal((await server.request('GET', '/rows?db=class&table=t', { headers: ana })).status, 200, 'reads go on');
    ok(await server.exec('class', "DELETE FROM t WHERE k = 'before'"), "the admin's cleanup goes on");
    ok(await server.post('/dbs', { db: 'scratch' }), 'and so does making a database', 201);
    ok(await server.exec(undefined, 'DROP DATABASE scratch'), 'and dropping one');

    fs.rmSync(filler);
    await waitFor(async () => (await write('after')).status === 200, {
      timeoutMs: 5000,
      what: 'student writes once there is room again',
    });
    tt.pass('room again: the student writes without a restart');
    tt.equal(await server.stop(), 0);

    const entries = (await readJournal(journal)).entries;
    tt.ok(
      entries.some((entry) => entry.kind === 'refused' && entry.code === 6061 && entry.tokenName === 'ana'),
      'the journal recorded the refusal, naming the token',
    );
    tt.ok(
      entries.some((entry) => entry.kind === 'exec' && entry.ok && /DELETE FROM t/.test(entry.sql ?? '')),
      "and the admin's cleanup",
    );
    tt.ok(
      entries.some((entry) => entry.kind === 'dropdb' && entry.db === 'scratch.db'),
      'and the drop',
    );
    const replay = await runReplay(['-log-file', journal, '-out', path.join(cwd, 'replayed'), '-verify', data], cwd);
    tt.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr}`);
  },
);
