/**
 * Start-up against a long journal: 500,000 entries in 50 rotated
 * files, the databases they imply, a checkpoint that knows the last seq but
 * not what was applied (as after a crash), and one snapshot round 10,000
 * entries before the end. Recovery should read only the tail after the round.
 * The files are written directly with the journal's own encoder, so setup
 * takes seconds, not a server run of 500,000 requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { MAIN, ROOT, rssSampler, startProcess } from './processes.mjs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const { encodeLine } = require(path.join(ROOT, 'dist/journal/record.js'));
const { rotatedName } = require(path.join(ROOT, 'dist/journal/naming.js'));
const { engineVersions } = require(path.join(ROOT, 'dist/src/engine/engine-versions.js'));
const { writeManifest, snapshotFileName, MANIFEST_FORMAT } = require(path.join(ROOT, 'dist/src/snapshots/manifest.js'));

export const ENTRIES = 500_000;
const PER_FILE = 10_000;
const SNAPSHOT_BEHIND = 10_000;
const TS = '2026-11-21T05:43:12.345Z';

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

function entry(seq) {
  if (seq === 1)
    return encodeLine({ seq, ts: TS, db: 'bench.db', session: null, kind: 'createdb', sql: null, ok: true, ms: 0 });
  const sql = `INSERT INTO t (v) VALUES ('row ${seq}')`;
  return encodeLine({
    seq,
    ts: TS,
    db: 'bench.db',
    session: null,
    kind: 'exec',
    sql,
    statements: [{ sql }],
    readonly: false,
    ok: true,
    changes: 1,
    ms: 0.05,
    clock: 1_795_239_792_345,
    seed: '0123456789abcdef',
  });
}

function writeJournal(journalDir) {
  fs.mkdirSync(journalDir, { recursive: true });
  const active = path.join(journalDir, 'statements.jsonl');
  for (let first = 1, index = 1; first <= ENTRIES; first += PER_FILE, index++) {
    const last = Math.min(ENTRIES, first + PER_FILE - 1);
    const lines = [header(first)];
    for (let seq = first; seq <= last; seq++) lines.push(entry(seq));
    const file = last === ENTRIES ? active : rotatedName(active, new Date(Date.UTC(2026, 10, 21, 0, 0, index)), index);
    fs.writeFileSync(file, lines.join(''));
  }
  // As after a crash: the last seq is known, what was applied is not.
  fs.writeFileSync(`${active}.checkpoint`, `${JSON.stringify({ lastSeq: ENTRIES })}\n`);
  return active;
}

/** bench.db as the journal leaves it: one row per insert, and its position. */
function writeDatabase(file, applied) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT) STRICT');
  db.prepare(
    `INSERT INTO t (v) WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT 'row ' || i FROM n`,
  ).run(applied);
  db.exec('CREATE TABLE _sqlscribe_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT');
  db.prepare('INSERT INTO _sqlscribe_meta VALUES (?, ?), (?, ?)').run('applied', applied, 'created', 1);
  db.close();
}

function writeSnapshot(snapshotDir, seq) {
  fs.mkdirSync(snapshotDir, { recursive: true });
  const file = snapshotFileName('bench.db', seq);
  writeDatabase(path.join(snapshotDir, file), seq);
  writeManifest(snapshotDir, {
    format: MANIFEST_FORMAT,
    base: seq,
    through: seq,
    throughTime: TS,
    taken: TS,
    databases: [{ db: 'bench.db', file, seq }],
  });
}

/** Builds the fixture in `dir`; with `snapshot` false the round is left out (recovery then reads the whole journal). */
export function buildLongJournal(dir, { snapshot = true } = {}) {
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const journal = writeJournal(path.join(dir, 'journal'));
  writeDatabase(path.join(dir, 'data', 'bench.db'), ENTRIES);
  if (snapshot) writeSnapshot(path.join(dir, 'journal', 'snapshots'), ENTRIES - SNAPSHOT_BEHIND);
  return journal;
}

/** Spawn to ready and the server's peak resident memory, for the server started with `args`. */
async function timedStart(args) {
  const server = await startProcess(
    [MAIN, '-addr', '127.0.0.1:0', ...args],
    [/listening on (http:\/\/\S+)/, /\nsqlscribe ready \((\d+)/],
    { timeoutMs: 120_000 },
  );
  const memory = rssSampler(server.child.pid).stop();
  const applied = Number(/sqlscribe ready \((\d+)/.exec(server.stderr())?.[1]);
  await server.stop();
  return {
    listening: server.times[0],
    ready: server.times[1],
    applied,
    peakRss: memory.perProcess.reduce((sum, p) => sum + p.peakRss, 0),
    serverPeakRss: memory.perProcess[0]?.peakRss ?? 0,
  };
}

/**
 * The same server started on an empty directory and journal, in the same
 * run: what a start costs at all on this machine now, to compare against.
 */
async function emptyStart(workDir) {
  const dir = path.join(workDir, 'empty-journal');
  fs.mkdirSync(dir, { recursive: true });
  try {
    return await timedStart([
      '-dir',
      path.join(dir, 'data'),
      '-log-file',
      path.join(dir, 'journal', 'statements.jsonl'),
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Spawn to ready, and the peak resident memory (VmHWM, so the whole start is covered) of the server and its engine processes. */
export async function startupWithLongJournal(workDir, { snapshot = true } = {}) {
  const dir = path.join(workDir, 'long-journal');
  const setupStarted = performance.now();
  const journal = buildLongJournal(dir, { snapshot });
  const setupMs = performance.now() - setupStarted;
  const journalDir = path.dirname(journal);
  const bytes = fs
    .readdirSync(journalDir)
    .filter((n) => n.endsWith('.jsonl'))
    .reduce((sum, n) => sum + fs.statSync(path.join(journalDir, n)).size, 0);
  const empty = await emptyStart(workDir);
  const long = await timedStart(['-dir', path.join(dir, 'data'), '-log-file', journal, '-snapshot-every', '100000']);
  fs.rmSync(dir, { recursive: true, force: true });
  return { entries: ENTRIES, snapshot, journalBytes: bytes, setupMs, ...long, empty };
}
