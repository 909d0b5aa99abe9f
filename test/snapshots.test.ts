/**
 * Snapshots, retention and restore, end to end: a server with a tiny journal
 * size and frequent snapshot rounds drops the head of its journal, and the
 * replay tool still rebuilds the live files from a snapshot and the tail,
 * while a target older than what is kept is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readJournal } from '../journal/reader';
import { listRounds } from '../src/snapshots/manifest';
import { runReplay, startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { waitFor } from './helpers/wait';

async function ok(
  server: TestServer,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<any> {
  const reply = await server.request('POST', '/exec', { body, headers });
  if (reply.status !== 200)
    throw new Error(`${JSON.stringify(body)}: ${reply.status} ${reply.text}; stderr: ${server.stderr().slice(-2000)}`);
  return reply.body;
}

const rotatedFiles = (dir: string): string[] =>
  fs.readdirSync(dir).filter((name) => /^s\.\d{8}-\d{6}\.\d+\.jsonl$/.test(name));

t.test(
  'retention drops only covered journal files, and a snapshot plus the tail restores the live files',
  async (t) => {
    const cwd = scratchDir(t, {});
    const dataDir = path.join(cwd, 'data');
    const journalDir = path.join(cwd, 'journal');
    const logFile = path.join(journalDir, 's.jsonl');
    const snapshotDir = path.join(journalDir, 'snapshots');
    const flags = [
      '-dir',
      dataDir,
      '-log-file',
      logFile,
      '-log-max-size',
      '2K',
      '-snapshot-every',
      '15',
      '-log-retain',
      '1',
    ];
    const server = await startServer(flags, { cwd });
    try {
      for (const db of ['shop', 'notes']) {
        t.equal((await server.post('/dbs', { db })).status, 201);
        await ok(server, { db, sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, r REAL)' });
      }
      for (let i = 0; i < 60; i++) {
        await ok(server, {
          db: i % 3 === 0 ? 'notes' : 'shop',
          sql: `INSERT INTO t (v, r) VALUES ('row ${i} ${'x'.repeat(40)}', random())`,
        });
        if (i % 20 === 10) {
          // A session open across a round: its begin and statements come before the copies' seq, and the base must wait for them.
          const newestThrough = (): number => listRounds(snapshotDir).at(-1)?.through ?? -1;
          const before = newestThrough();
          const session = (await server.post('/tx/begin', { db: 'shop' })).body.session as string;
          await ok(server, { sql: `INSERT INTO t (v) VALUES ('in session ${i}')` }, { 'X-Service-Session': session });
          for (let j = 0; j < 16; j++)
            await ok(server, { db: 'notes', sql: `INSERT INTO t (v) VALUES ('beside the session ${j}')` });
          await waitFor(() => newestThrough() > before, {
            what: 'a round while the session is open',
            timeoutMs: 15_000,
          });
          t.equal((await server.post(`/tx/commit?session=${session}`)).status, 200);
        }
      }
      await waitFor(
        async () => {
          const first = (await readJournal(logFile)).firstSeq ?? 1;
          return listRounds(snapshotDir).length > 0 && first > 1;
        },
        { what: 'a round and a removed journal file', timeoutMs: 15_000 },
      );
      await ok(server, { db: 'shop', sql: "UPDATE t SET v = 'after the last round' WHERE id = 1" });
    } finally {
      t.equal(await server.stop(), 0);
    }

    const journal = await readJournal(logFile);
    const rounds = listRounds(snapshotDir);
    const newest = rounds.at(-1)!;
    t.ok((journal.firstSeq as number) > 1, `the head of the journal is gone (starts at seq ${journal.firstSeq})`);
    t.ok((journal.firstSeq as number) - 1 <= newest.base, "every removed entry is at or below the newest round's base");
    t.ok(rotatedFiles(journalDir).length >= 1, '-log-retain 1 keeps the newest rotated file');
    t.ok(
      rounds.every((round) => round.base + 1 >= (journal.firstSeq as number)),
      'rounds the journal no longer completes are gone',
    );
    t.same(
      fs
        .readdirSync(snapshotDir)
        .filter((n) => n.endsWith('.db'))
        .sort(),
      [...new Set(rounds.flatMap((r) => r.databases.map((d) => d.file)))].sort(),
      'no copy is left that no round uses',
    );

    const restored = await runReplay(
      ['-log-file', logFile, '-out', path.join(cwd, 'restored'), '-verify', dataDir],
      cwd,
    );
    t.equal(restored.code, 0, restored.stderr);
    t.match(restored.stderr, /started from the snapshot through seq \d+/);
    t.match(restored.stderr, /verify: the rebuild equals the live databases/);

    const tooOld = await runReplay(['-log-file', logFile, '-out', path.join(cwd, 'old'), '-until', '3'], cwd);
    t.equal(tooOld.code, 2);
    const oldest = rounds[0]!;
    t.match(
      tooOld.stderr,
      `replay: seq 3 is older than what is kept: the oldest point that can be restored is seq ${oldest.through} (${oldest.throughTime})\n`,
    );
    t.notOk(fs.existsSync(path.join(cwd, 'old')), 'nothing is written for a refused target');

    const journalOnly = await runReplay(['-log-file', logFile, '-out', path.join(cwd, 'alone'), '-no-snapshots'], cwd);
    t.equal(journalOnly.code, 2);
    t.match(
      journalOnly.stderr,
      /cannot rebuild: the journal starts at seq \d+ \(older entries were removed\) and -no-snapshots was given/,
    );

    // The server starts again on the shortened journal.
    const again = await startServer(flags, { cwd });
    try {
      const rows = await ok(again, { db: 'shop', sql: 'SELECT v FROM t WHERE id = 1' });
      t.same(rows.results[0].rows, [['after the last round']]);
    } finally {
      await again.stop();
    }
  },
);
