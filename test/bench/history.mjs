/**
 * GET /dbs/{db}/history: the first page of a database's history
 * with a journal of 1,000,000 entries over 1,000 databases against one of
 * 1,000 entries over 10 databases (each page full: 50 entries), read through
 * the journal index that start-up builds from the files; and what keeping
 * the index costs the write path: single-row INSERTs at 32 connections with
 * the index and with -history-index=false, in rotating rounds.
 * The journals are written directly with the journal's encoder.
 * BENCH_HISTORY=pages or append runs only that half.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { rotatingRounds } from './load.mjs';
import { ok, request, ROOT, startSqlscribe } from './processes.mjs';

const require = createRequire(import.meta.url);
const { encodeLine } = require(path.join(ROOT, 'dist/journal/record.js'));
const { rotatedName } = require(path.join(ROOT, 'dist/journal/naming.js'));
const { writeCheckpoint } = require(path.join(ROOT, 'dist/journal/checkpoint.js'));
const { engineVersions } = require(path.join(ROOT, 'dist/src/engine/engine-versions.js'));

const PER_FILE = 20_000;
const TS = '2026-11-21T05:43:12.345Z';
const PAGES = 200;

function header(firstSeq) {
  return encodeLine({
    kind: 'header',
    format: 1,
    service: 'sqlscribe',
    version: '0.1.0',
    level: 'mod',
    ...engineVersions(),
    started: TS,
    firstSeq,
  });
}

function entry(seq, dbs) {
  const db = `db-${String(seq % dbs).padStart(4, '0')}.db`;
  const sql = `INSERT INTO t (v) VALUES ('row ${seq}') -- ünïcode`;
  const failed = seq % 10 === 0;
  const outcome = failed
    ? { ok: false, code: 3003, class: 3, error: '[SQ3003] UNIQUE constraint failed: t.v', statement: 0 }
    : { ok: true, changes: 1 };
  return encodeLine({
    seq,
    ts: TS,
    db,
    session: null,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    readonly: false,
    ...outcome,
    ms: 0.05,
    clock: 1_795_239_792_345,
    seed: '0123456789abcdef',
    tokenName: `alumno-${seq % dbs}`,
  });
}

/** A journal of `entries` over `dbs` databases, every entry applied (the checkpoint says so): start-up recovers nothing. */
function writeJournal(dir, entries, dbs) {
  const journalDir = path.join(dir, 'journal');
  fs.mkdirSync(journalDir, { recursive: true });
  const active = path.join(journalDir, 'statements.jsonl');
  for (let first = 1, index = 1; first <= entries; first += PER_FILE, index++) {
    const last = Math.min(entries, first + PER_FILE - 1);
    const lines = [header(first)];
    for (let seq = first; seq <= last; seq++) lines.push(entry(seq, dbs));
    const file = last === entries ? active : rotatedName(active, new Date(Date.UTC(2026, 10, 21, 0, 0, index)), index);
    fs.writeFileSync(file, lines.join(''));
  }
  writeCheckpoint(active, { appliedThrough: entries });
  return active;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Start-up, the index built (timed through the first history request, which waits for it), then first pages of many databases. */
async function firstPages(work, name, entries, dbs) {
  const dir = path.join(work, name);
  const setup = performance.now();
  writeJournal(dir, entries, dbs);
  const setupMs = performance.now() - setup;
  // The data directory is `dir`, its journal `dir/journal/statements.jsonl`, as startSqlscribe sets it.
  const server = await startSqlscribe(dir, ['-log-fsync=false']);
  try {
    const built = performance.now();
    await ok(server.url, 'GET', '/dbs/db-0001/history');
    const indexMs = performance.now() - built;
    // Each database's first page twice: the first read finds its lines wherever the page cache left them
    // (cold, for a 330 MB journal), the second finds them cached: what the index itself costs.
    const times = [];
    const warm = [];
    for (let i = 0; i < PAGES; i++) {
      const page = `/dbs/db-${String((i * 7) % dbs).padStart(4, '0')}/history`;
      const reply = await ok(server.url, 'GET', page);
      if (reply.body.entries.length !== 50) throw new Error(`a first page of ${reply.body.entries.length} entries`);
      times.push(reply.ms);
      warm.push((await ok(server.url, 'GET', page)).ms);
    }
    const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];
    return {
      entries,
      dbs,
      setupMs,
      indexMs,
      medianMs: median(times),
      p90Ms: p90(times),
      warmMedianMs: median(warm),
      warmP90Ms: p90(warm),
    };
  } finally {
    await server.stop();
  }
}

const INSERT = {
  name: 'single-row INSERT (journal synced)',
  method: 'POST',
  path: '/exec',
  body: { db: 'bench', sql: 'INSERT INTO log (name, qty) VALUES (?, ?)', params: ['a name', 7] },
};

const FLAGS = { index: [], noIndex: ['-history-index=false'] };

/**
 * One A/B run: the servers started, and first in every round's rotation, in `order`. The run is done
 * in both orders because the order alone gave one server 14 % more (an A/A run, both without the
 * index, on this shared machine): the ratio is the geometric mean of the two orders'.
 */
async function appendRun(work, order, { rounds, seconds }) {
  const servers = {};
  try {
    for (const key of order) {
      const dir = path.join(work, `append-${order.join('-')}-${key}`);
      fs.mkdirSync(dir, { recursive: true });
      const server = await startSqlscribe(dir, FLAGS[key]);
      await ok(server.url, 'POST', '/dbs', { db: 'bench' });
      await ok(server.url, 'POST', '/exec', {
        db: 'bench',
        sql: 'CREATE TABLE log (id INTEGER PRIMARY KEY, name TEXT, qty INT)',
      });
      servers[key] = { url: server.url, pid: server.child.pid, stop: server.stop };
    }
    const result = await rotatingRounds(servers, INSERT, { rounds, seconds, connections: 32 });
    const check = await request(servers.index.url, 'GET', '/dbs/bench/history?limit=1');
    if (check.status !== 200) throw new Error(`history after the load: ${check.status}`);
    return result;
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}

async function appendPath(work, options) {
  const first = await appendRun(work, ['index', 'noIndex'], options);
  const second = await appendRun(work, ['noIndex', 'index'], options);
  const ratios = [first, second].map((r) => r.noIndex.rps / r.index.rps);
  const both = (key) => ({
    rps: (first[key].rps + second[key].rps) / 2,
    p50: (first[key].p50 + second[key].p50) / 2,
    cpuUsPerRequest: (first[key].cpuUsPerRequest + second[key].cpuUsPerRequest) / 2,
  });
  return {
    index: both('index'),
    noIndex: both('noIndex'),
    ratios,
    ratio: Math.sqrt((ratios[0] ?? NaN) * (ratios[1] ?? NaN)),
  };
}

export async function historyBench(work, options) {
  const part = process.env.BENCH_HISTORY ?? '';
  const figures = {};
  if (part !== 'append') {
    const small = await firstPages(work, 'small', 1_000, 10);
    const big = await firstPages(work, 'big', 1_000_000, 1_000);
    Object.assign(figures, {
      small,
      big,
      pageRatio: big.medianMs / small.medianMs,
      warmPageRatio: big.warmMedianMs / small.warmMedianMs,
    });
  }
  if (part !== 'pages') figures.append = await appendPath(work, options);
  return figures;
}
