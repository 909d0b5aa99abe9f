/**
 * Replay of many small entries: a journal of 100,000 single-row
 * INSERTs into one database, rebuilt by the replay tool as a user runs it
 * (`node dist/replay/cli.js -out`, a process of its own, journal read
 * included), against a raw better-sqlite3 loop inserting the same rows and
 * committing every 1,000 statements. The journal is written directly with
 * the journal's own encoder, so setup takes a second, not a server run.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT } from './processes.mjs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const { encodeLine } = require(path.join(ROOT, 'dist/journal/record.js'));
const { engineVersions } = require(path.join(ROOT, 'dist/src/engine/engine-versions.js'));

export const INSERTS = 100_000;
const RAW_COMMIT_EVERY = 1_000;
const TS = '2026-11-21T05:43:12.345Z';
const CREATE = 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL) STRICT';
const INSERT = 'INSERT INTO items (name, qty) VALUES (?, ?)';
const paramsOf = (i) => [`item ${i}`, i % 1000];

function exec(seq, sql, params) {
  const statement = params === undefined ? { sql } : { sql, params };
  const seed = seq.toString(16).padStart(16, '0');
  return encodeLine({
    seq,
    ts: TS,
    db: 'bench.db',
    session: null,
    kind: 'exec',
    sql,
    statements: [statement],
    readonly: false,
    ok: true,
    changes: 1,
    ms: 0.05,
    clock: 1_795_239_792_345 + seq,
    seed,
  });
}

/** The journal a server would write for: create bench.db, create the table, then one INSERT per request. */
function writeJournal(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'statements.jsonl');
  const lines = [
    encodeLine({
      kind: 'header',
      format: 1,
      service: 'sqlscribe',
      version: '0.1.0',
      level: 'mod',
      ...engineVersions(),
      started: TS,
      firstSeq: 1,
    }),
  ];
  lines.push(
    encodeLine({ seq: 1, ts: TS, db: 'bench.db', session: null, kind: 'createdb', sql: null, ok: true, ms: 0 }),
  );
  lines.push(exec(2, CREATE));
  for (let i = 0; i < INSERTS; i++) lines.push(exec(i + 3, INSERT, paramsOf(i)));
  fs.writeFileSync(file, lines.join(''));
  return file;
}

function runReplay(journalFile, out) {
  fs.rmSync(out, { recursive: true, force: true });
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'dist/replay/cli.js'), '-log-file', journalFile, '-out', out, '-no-snapshots'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (chunk) => {
    err += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code === 0) resolve({ wallMs });
      else reject(new Error(`replay exited ${code}: ${err}`));
    });
  });
}

/** The same rows, in process, as fast as better-sqlite3 goes with a commit every 1,000 (WAL, like sqlscribe's files). */
function runRaw(out) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const started = performance.now();
  const db = new Database(path.join(out, 'bench.db'));
  db.pragma('journal_mode = WAL');
  db.exec(CREATE);
  const insert = db.prepare(INSERT);
  for (let i = 0; i < INSERTS; i += RAW_COMMIT_EVERY) {
    db.exec('BEGIN IMMEDIATE');
    for (let j = i; j < Math.min(INSERTS, i + RAW_COMMIT_EVERY); j++) insert.run(...paramsOf(j));
    db.exec('COMMIT');
  }
  db.close();
  return { wallMs: performance.now() - started };
}

/**
 * The same journal replayed by a raw loop, reading and applying as it goes:
 * the file read whole, each line parsed with JSON.parse, the statements of
 * each successful exec entry run with better-sqlite3 (each text prepared
 * once), a commit every 1,000 entries. No checksum, no shape check, no
 * clock or seed, no recorded position: the least a replay of this journal
 * can do. In this process, so without a process start of its own.
 */
function runRawJournal(journalFile, out) {
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const started = performance.now();
  const db = new Database(path.join(out, 'bench.db'));
  db.pragma('journal_mode = WAL');
  const prepared = new Map();
  let applied = 0;
  db.exec('BEGIN IMMEDIATE');
  for (const line of fs.readFileSync(journalFile, 'utf8').split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line);
    if (entry.kind !== 'exec' || !entry.ok || entry.readonly) continue;
    for (const { sql, params } of entry.statements) {
      let statement = prepared.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
        prepared.set(sql, statement);
      }
      if (params === undefined) statement.run();
      else statement.run(...params);
    }
    if (++applied % RAW_COMMIT_EVERY === 0) {
      db.exec('COMMIT');
      db.exec('BEGIN IMMEDIATE');
    }
  }
  db.exec('COMMIT');
  db.close();
  return { wallMs: performance.now() - started };
}

/**
 * The same replay in this process, split into its two costs: reading the
 * journal (lines split and checksums checked, as the tool reads it), and
 * applying it (each line decoded as it is applied) (CPU ms).
 */
async function inProcess(journalFile, out) {
  const { readJournalLazily } = require(path.join(ROOT, 'dist/journal/reader.js'));
  const { rebuild } = require(path.join(ROOT, 'dist/replay/rebuild.js'));
  const { Engine } = require(path.join(ROOT, 'dist/src/engine/engine.js'));
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const cpuMs = (since) => {
    const used = process.cpuUsage(since);
    return (used.user + used.system) / 1000;
  };
  let since = process.cpuUsage();
  const { entries } = await readJournalLazily(journalFile);
  const readMs = cpuMs(since);
  since = process.cpuUsage();
  const engine = new Engine({ syncCommits: false });
  await rebuild(engine, entries, { fileOf: (db) => path.join(out, db) });
  engine.close();
  return { readMs, applyMs: cpuMs(since) };
}

function rowsOf(file) {
  const db = new Database(file, { readonly: true });
  const rows = db.prepare('SELECT count(*) AS n, sum(qty) AS q, max(id) AS m FROM items').get();
  db.close();
  return JSON.stringify(rows);
}

/** Best of three alternating rounds of each, by wall time (the replay is another process). */
export async function replayBatches(workDir) {
  const dir = path.join(workDir, 'replay-batches');
  const journalFile = writeJournal(path.join(dir, 'journal'));
  const journalBytes = fs.statSync(journalFile).size;
  const replays = [];
  const raws = [];
  const rawJournals = [];
  for (let round = 0; round < 3; round++) {
    replays.push((await runReplay(journalFile, path.join(dir, 'replay-out'))).wallMs);
    raws.push(runRaw(path.join(dir, 'raw-out')).wallMs);
    rawJournals.push(runRawJournal(journalFile, path.join(dir, 'raw-journal-out')).wallMs);
  }
  const phases = [];
  for (let round = 0; round < 2; round++) phases.push(await inProcess(journalFile, path.join(dir, 'in-process')));
  const replayed = rowsOf(path.join(dir, 'replay-out', 'bench.db'));
  const same =
    replayed === rowsOf(path.join(dir, 'raw-out', 'bench.db')) &&
    replayed === rowsOf(path.join(dir, 'raw-journal-out', 'bench.db'));
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    inserts: INSERTS,
    journalBytes,
    replayMs: Math.min(...replays),
    rawMs: Math.min(...raws),
    rawJournalMs: Math.min(...rawJournals),
    replays,
    raws,
    rawJournals,
    same,
    readCpuMs: Math.min(...phases.map((p) => p.readMs)),
    applyCpuMs: Math.min(...phases.map((p) => p.applyMs)),
  };
}
