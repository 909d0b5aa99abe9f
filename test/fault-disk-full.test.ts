/**
 * Full disks, for real: this test mounts a small tmpfs (it runs as root in
 * CI; without the right to mount it says so and skips, and the journal
 * writer's unit tests cover the same faults through their file-system seam).
 *
 * 1. The journal's disk fills up while clients write. Every write answered
 *    2xx is in both the journal and the database; every write refused (503
 *    [SQ9009]) is in neither; reads go on; when space returns, writes resume
 *    without a restart; the journal stays gapless and replays to the live
 *    files.
 * 2. The data directory's disk fills up. A write that cannot commit gets a
 *    clear error (507 [SQ9003]) for that request and database, the server
 *    keeps serving, its journal entry is voided, and writes resume once
 *    space returns; replay equals the live files.
 *
 * As a script an operator can read: mount -t tmpfs -o size=… tmpfs <dir>;
 * fill it with a file; write; remove the file; write again; replay -verify.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import { runReplay, startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { canMount, mountSmallDisk } from './helpers/small-disk';

t.setTimeout(120_000);

/** Fills the disk that holds `dir` with one file, leaving at most `leave` bytes (tmpfs counts in 4 KiB pages). */
function fill(dir: string, leave: number): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(4096, 0x78);
  try {
    for (;;) {
      const free = fs.statfsSync(dir).bavail * fs.statfsSync(dir).bsize;
      if (free <= leave) break;
      fs.writeSync(fd, block.subarray(0, Math.min(block.length, free - leave > 0 ? block.length : 1)));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

async function keysOf(server: TestServer, db: string): Promise<Set<string>> {
  const reply = await server.exec(db, 'SELECT k FROM t');
  if (reply.status !== 200) throw new Error(`SELECT: ${reply.status} ${reply.text}`);
  return new Set((JSON.parse(JSON.stringify(reply.body.results[0].rows)) as string[][]).map((row) => row[0] as string));
}

async function journaledKeys(journal: string): Promise<{ keys: Set<string>; voided: Set<number>; seqs: number[] }> {
  const contents = await readJournal(journal);
  const voided = new Set(contents.entries.flatMap((e) => (e.kind === 'void' ? (e.voids ?? []) : [])));
  const keys = new Set<string>();
  for (const entry of contents.entries) {
    if (entry.kind !== 'exec' || !entry.ok || voided.has(entry.seq)) continue;
    for (const statement of entry.statements ?? [])
      if (Array.isArray(statement.params) && typeof statement.params[0] === 'string') keys.add(statement.params[0]);
  }
  return { keys, voided, seqs: contents.entries.map((e) => e.seq) };
}

const INSERT = 'INSERT INTO t (k, pad) VALUES (?, ?)';

const mountable = canMount();

t.test(
  'the journal disk fills up: no acknowledged write is missing, none refused is kept',
  { skip: mountable ? false : 'needs root to mount a tmpfs' },
  async (t) => {
    const dir = scratchDir(t);
    const journalDisk = mountSmallDisk(t, '256k');
    const journal = path.join(journalDisk, 'statements.jsonl');
    const data = path.join(dir, 'data');
    const server = await startServer(['-dir', data, '-log-file', journal, '-log-max-size', '10M'], { cwd: dir });
    t.teardown(() => server.stop());
    t.equal((await server.post('/dbs', { db: 'class' })).status, 201);
    t.equal((await server.exec('class', 'CREATE TABLE t (k TEXT PRIMARY KEY, pad TEXT)')).status, 200);

    const filler = fill(journalDisk, 6 * 1024);
    const acked = new Set<string>();
    const refused = new Set<string>();
    const other: string[] = [];
    let withoutRetryAfter = 0;
    const pad = 'p'.repeat(300);
    // Concurrent writers, so that failures meet grouped appends too.
    await Promise.all(
      [0, 1, 2, 3].map(async (client) => {
        for (let n = 0; n < 40; n++) {
          const key = `full-${client}-${n}`;
          const reply = await server.exec('class', INSERT, { params: [key, pad] });
          if (reply.status === 200) acked.add(key);
          else if (reply.status === 503 && reply.body?.code === 9009) {
            refused.add(key);
            if (!reply.headers.get('retry-after')) withoutRetryAfter++;
          } else other.push(`${reply.status} ${reply.text}`);
        }
      }),
    );
    t.same(other, [], 'every write is either acknowledged or refused as journal-unavailable');
    t.equal(withoutRetryAfter, 0, 'every refused write says when to retry');
    t.ok(refused.size > 0, `the full disk refused writes (${acked.size} acknowledged, ${refused.size} refused)`);

    const read = await server.get('/rows?db=class&table=t&limit=1');
    t.equal(read.status, 200, 'reads go on while the journal cannot be written');
    const live = await keysOf(server, 'class');
    t.same(
      [...acked].filter((k) => !live.has(k)),
      [],
      'every acknowledged write is in the database',
    );
    t.same(
      [...refused].filter((k) => live.has(k)),
      [],
      'no refused write is in the database',
    );

    fs.rmSync(filler);
    const resumed = await server.exec('class', INSERT, { params: ['after-space-returned', pad] });
    t.equal(resumed.status, 200, 'writes resume without a restart');
    acked.add('after-space-returned');
    t.equal(await server.stop(), 0);

    const { keys, seqs } = await journaledKeys(journal);
    t.same(
      [...acked].filter((k) => !keys.has(k)),
      [],
      'every acknowledged write is in the journal',
    );
    t.same(
      [...refused].filter((k) => keys.has(k)),
      [],
      'no refused write is in the journal',
    );
    t.same(
      seqs,
      seqs.map((_, i) => (seqs[0] as number) + i),
      'seq is gapless',
    );
    const replay = await runReplay(['-log-file', journal, '-out', path.join(dir, 'replayed'), '-verify', data], dir);
    t.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr}`);
  },
);

t.test(
  'the data directory fills up: a clear error for that database, the server serves on',
  { skip: mountable ? false : 'needs root to mount a tmpfs' },
  async (t) => {
    const dir = scratchDir(t);
    const data = mountSmallDisk(t, '2m');
    const journal = path.join(dir, 'journal', 'statements.jsonl');
    const server = await startServer(['-dir', data, '-log-file', journal], { cwd: dir });
    t.teardown(() => server.stop());
    t.equal((await server.post('/dbs', { db: 'class' })).status, 201);
    t.equal((await server.exec('class', 'CREATE TABLE t (k TEXT PRIMARY KEY, pad TEXT)')).status, 200);
    t.equal((await server.exec('class', INSERT, { params: ['before', 'x'] })).status, 200);

    const filler = fill(data, 0);
    const acked = new Set<string>(['before']);
    const refused = new Set<string>();
    const codes = new Set<string>();
    const pad = 'q'.repeat(2000);
    for (let n = 0; n < 30; n++) {
      const key = `dd-${n}`;
      const reply = await server.exec('class', INSERT, { params: [key, pad] });
      if (reply.status === 200) acked.add(key);
      else {
        refused.add(key);
        codes.add(`${reply.status} ${reply.body?.code}`);
      }
    }
    t.ok(refused.size > 0, `the full data disk refused writes (${acked.size} acknowledged)`);
    t.same([...codes], ['507 9003'], 'one clear code: storage full');
    const created = await server.post('/dbs', { db: 'another' });
    t.equal(created.status, 507, 'a database cannot be created on a full disk either');
    t.equal((await server.get('/health')).status, 200, 'the server is still up');
    t.equal((await server.get('/rows?db=class&table=t&limit=5')).status, 200, 'reads go on');

    fs.rmSync(filler);
    const resumed = await server.exec('class', INSERT, { params: ['after', 'x'] });
    t.equal(resumed.status, 200, `writes resume once space returns: ${resumed.text}`);
    acked.add('after');
    t.equal((await server.post('/dbs', { db: 'another' })).status, 201);
    const live = await keysOf(server, 'class');
    t.same(
      [...acked].filter((k) => !live.has(k)),
      [],
      'every acknowledged write is in the database',
    );
    t.same(
      [...refused].filter((k) => live.has(k)),
      [],
      'no refused write is in the database',
    );
    t.equal(await server.stop(), 0);

    const { keys, voided } = await journaledKeys(journal);
    t.ok(voided.size > 0, 'the entries of writes that could not commit are voided in the journal');
    t.same(
      [...refused].filter((k) => keys.has(k)),
      [],
      'replay leaves out every refused write',
    );
    const replay = await runReplay(['-log-file', journal, '-out', path.join(dir, 'replayed'), '-verify', data], dir);
    t.equal(replay.code, 0, `replay -verify equals the live files: ${replay.stderr}`);
    t.notOk(fs.existsSync(path.join(dir, 'replayed', 'another.db.creating')), 'no half-made database is left behind');
  },
);
