/**
 * POST /dbs/{db}/restore: a database of about 1 MB whose newest
 * snapshot round is followed by 10,000 journal entries of its own, restored
 * in place to the entry before its last, i.e. the round's copy plus 9,999
 * entries applied again. The round is taken by a first server run with
 * -snapshot-every 1; the entries by a second run without rounds, 32 clients.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ok, startSqlscribe, stopProcess } from './processes.mjs';

const ENTRIES = 10_000;
const CLIENTS = 32;
const RESTORES = 3;

async function waitForRound(snapshotDir, deadlineMs) {
  while (Date.now() < deadlineMs) {
    const rounds = fs.existsSync(snapshotDir)
      ? fs.readdirSync(snapshotDir).filter((name) => /^round-.*\.json$/.test(name))
      : [];
    if (rounds.length > 0) return rounds.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no snapshot round was taken');
}

async function writeEntries(url) {
  let next = 0;
  const client = async () => {
    while (next < ENTRIES) {
      const i = next++;
      await ok(url, 'POST', '/exec', {
        db: 'big',
        sql: 'UPDATE t SET v = ? WHERE id = ?',
        params: [`change ${i}`, (i % 10_000) + 1],
      });
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

const lastSeq = async (url) => (await ok(url, 'GET', '/dbs/big/history?limit=1')).body.entries[0].seq;

export async function restoreBench(work) {
  const dir = path.join(work, 'restore');
  fs.mkdirSync(dir, { recursive: true });
  let server = await startSqlscribe(dir, ['-snapshot-every', '1']);
  try {
    await ok(server.url, 'POST', '/dbs', { db: 'big' });
    await ok(server.url, 'POST', '/exec', {
      db: 'big',
      sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) SELECT printf('%.90d', i) FROM n",
    });
    await waitForRound(path.join(dir, 'journal', 'snapshots'), Date.now() + 30_000);
  } finally {
    await stopProcess(server.child);
  }
  const bytes = fs.statSync(path.join(dir, 'big.db')).size;
  server = await startSqlscribe(dir);
  try {
    const started = performance.now();
    await writeEntries(server.url);
    const writeMs = performance.now() - started;
    const times = [];
    for (let i = 0; i < RESTORES; i++) {
      const to = (await lastSeq(server.url)) - 1;
      const t0 = performance.now();
      const reply = await ok(server.url, 'POST', '/dbs/big/restore', { to });
      times.push(performance.now() - t0);
      if (reply.body.restored?.seq !== to)
        throw new Error(`restore answered ${JSON.stringify(reply.body).slice(0, 200)}`);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return { bytes, entries: ENTRIES, writeMs, restoreMs: times, medianMs: sorted[Math.floor(sorted.length / 2)] };
  } finally {
    await stopProcess(server.child);
  }
}
