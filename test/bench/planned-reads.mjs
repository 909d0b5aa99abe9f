/**
 * What reads decided bounded by their plan (src/engine/in-server/planned-read.ts) cost
 * and save, small and on its own (the lesson scenario of `npm run bench` is
 * the full measure):
 *
 *   node test/bench/planned-reads.mjs decide        the decision's cost, and the budgets' worst case, in this process
 *   node test/bench/planned-reads.mjs http [main.js] [rounds]
 *                                                   CPU per lesson statement of the server and its engines
 *                                                   (default: this checkout's dist; pass another build's main.js to compare)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { ROOT, TOKEN, MAIN, processCpuMs, processTree, stopProcess } from './processes.mjs';

const require = createRequire(import.meta.url);
const SCRIPT = fs.readFileSync(path.join(ROOT, 'test/fixtures/chinook/Chinook_Sqlite.sql'), 'utf8');
/** The lesson's queries, from the fixture the lesson test and the lesson bench read. */
const LESSON = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/chinook/lesson.json'), 'utf8')).queries.map(
  (query) => query.sql,
);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median CPU time of `run` in µs (CPU, not wall time: the machine is shared). */
function timeUs(run, times) {
  const samples = [];
  for (let i = 0; i < times; i++) {
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    samples.push(used.user + used.system);
  }
  return median(samples);
}

async function decide() {
  const { Engine } = require(path.join(ROOT, 'dist/src/engine/engine.js'));
  const { classifyStatement } = require(path.join(ROOT, 'dist/src/engine/dialect/classify.js'));
  const Database = require('better-sqlite3');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'planned-reads-'));
  const file = path.join(work, 'chinook.db');
  const db = new Database(file);
  db.exec(SCRIPT);
  db.pragma('journal_mode = WAL');
  // The budgets' worst case: 50,000 visits of rows of 320 bytes (16 MB), with a few doublings and a LIKE.
  db.exec(
    "CREATE TABLE wide (id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 49000) INSERT INTO wide SELECT i, printf('%.*c', 300, char(65 + i % 26)) FROM n",
  );
  db.exec('CREATE TABLE g (id INT PRIMARY KEY, name TEXT) STRICT; INSERT INTO g SELECT GenreId, Name FROM Genre');
  // At the budgets: 6,000 rows of 300 bytes (a visit and a sort of each: 12,000 visits × 300 B × growth 2 of a LIKE ≈ 4 MB … the largest admitted).
  db.exec(
    "CREATE TABLE edge (id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) INSERT INTO edge SELECT i, printf('%.*c', 300, char(65 + i % 26)) FROM n",
  );
  db.exec(
    'CREATE TABLE keyed (id INTEGER PRIMARY KEY, v INT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 24000) INSERT INTO keyed SELECT i, i FROM n',
  );
  db.close();
  const request = (sql) => ({
    file,
    statements: [{ sql, kind: classifyStatement(sql).kind }],
    maxResultRows: 1000,
    maxResultBytes: 10_000_000,
    jsonRows: true,
  });
  const engine = new Engine();
  let decided = 0;
  const firstUs = [];
  const runUs = [];
  const plainUs = [];
  for (const sql of LESSON) {
    // A fresh engine per statement: the first decision, with the table facts to gather.
    const cold = new Engine();
    const started = process.cpuUsage();
    const answer = cold.execBoundedRead(request(sql));
    const used = process.cpuUsage(started);
    firstUs.push(used.user + used.system);
    cold.close();
    if (answer !== undefined) decided++;
    runUs.push(timeUs(() => engine.execBoundedRead(request(sql)), 20));
    plainUs.push(timeUs(() => engine.exec(request(sql)), 20));
  }
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  // Each statement's first time on a connection that already knows the tables (the usual case in a lesson).
  const warm = new Engine();
  warm.execBoundedRead(request('SELECT 1 FROM Artist WHERE ArtistId = 1'));
  const warmFirst = LESSON.map((sql) => timeUs(() => warm.execBoundedRead(request(sql)), 1));
  warm.close();
  console.log(`lesson: ${decided} of ${LESSON.length} statements decided in-process`);
  console.log(
    `per statement, µs (sum over the lesson / ${LESSON.length}): first time (cold connection, decision and facts) ${(sum(firstUs) / LESSON.length).toFixed(0)}, cached decision + run ${(sum(runUs) / LESSON.length).toFixed(0)}, run alone on the ordinary path ${(sum(plainUs) / LESSON.length).toFixed(0)}`,
  );
  console.log(
    `first time of each statement on a connection already open: ${(sum(warmFirst) / LESSON.length).toFixed(0)} µs (decision, table facts shared between statements, and the run)`,
  );
  // After another connection commits (a student's INSERT), every fact and decision of the database is gathered again.
  const writer = new Database(file);
  writer.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, t TEXT)');
  const afterWrite = [];
  for (const sql of LESSON) {
    const samples = [];
    for (let i = 0; i < 5; i++) {
      writer.prepare("INSERT INTO notes (t) VALUES ('x')").run();
      samples.push(timeUs(() => engine.execBoundedRead(request(sql)), 1));
    }
    afterWrite.push(median(samples));
  }
  writer.close();
  console.log(
    `first read of each statement after a write by another connection: ${(sum(afterWrite) / LESSON.length).toFixed(0)} µs`,
  );
  // The cached decision's own cost: the same one-row read as a point read (no planning) and as a planned read.
  const many = (sql) => {
    const started = process.cpuUsage();
    for (let i = 0; i < 5000; i++) engine.execBoundedRead(request(sql));
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 5000;
  };
  const point = many('SELECT name FROM g WHERE id = 1');
  const planned = many('SELECT name FROM g WHERE id = 1 AND 1');
  console.log(
    `one-row read: as a point read ${point.toFixed(1)} µs, as a planned read (cached decision) ${planned.toFixed(1)} µs`,
  );
  console.log(
    `decision when cached ≈ ${((sum(runUs) - sum(plainUs)) / LESSON.length).toFixed(0)} µs (difference of the two)`,
  );
  for (const sql of [
    'SELECT max(upper(v)) FROM edge',
    "SELECT count(*) FROM edge WHERE v LIKE '%ZZ%'",
    'SELECT max(v || v) FROM edge',
    'SELECT count(*) FROM keyed a JOIN keyed b ON b.id = a.id',
    'SELECT max(n) FROM (SELECT v % 1000 AS g, count(*) AS n FROM keyed GROUP BY g)',
    'SELECT count(*) FROM wide',
    'SELECT max(upper(v)) FROM wide',
    "SELECT count(*) FROM wide WHERE v LIKE '%ZZ%'",
    'SELECT max(v || v) FROM wide',
    'SELECT count(*) FROM wide a JOIN wide b ON b.id = a.id',
  ]) {
    const here = engine.execBoundedRead(request(sql)) !== undefined;
    console.log(
      `${here ? 'in-process' : 'engine    '} ${timeUs(() => engine.exec(request(sql)), 5)
        .toFixed(0)
        .padStart(6)} µs  ${sql}`,
    );
  }
  engine.close();
  fs.rmSync(work, { recursive: true, force: true });
}

function startServer(main, dir) {
  const child = spawn(
    process.execPath,
    [
      main,
      '-dir',
      dir,
      '-addr',
      '127.0.0.1:0',
      '-token',
      TOKEN,
      '-log-file',
      path.join(dir, 'journal', 'statements.jsonl'),
      '-log-level',
      'mod',
      '-max-connections',
      '256',
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
      if (url && /sqlscribe ready/.test(text)) resolve({ child, url });
    });
    child.on('exit', () => reject(new Error(text)));
  });
}

async function call(url, method, route, body, type = 'application/json') {
  const response = await fetch(new URL(route, url), {
    method,
    headers: { 'x-service-token': TOKEN, 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${route}: ${response.status} ${text.slice(0, 200)}`);
  return text;
}

async function http(main = MAIN, rounds = '20') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'planned-reads-http-'));
  const server = await startServer(main, dir);
  try {
    await call(server.url, 'POST', '/dbs', { db: 'chinook' });
    await call(server.url, 'POST', '/dbs/chinook/import', SCRIPT, 'application/sql');
    for (const sql of LESSON) await call(server.url, 'POST', '/exec', { db: 'chinook', sql });
    const pids = processTree(server.child.pid);
    const before = pids.map(processCpuMs);
    const self = process.cpuUsage();
    const started = performance.now();
    for (let round = 0; round < Number(rounds); round++)
      for (const sql of LESSON) await call(server.url, 'POST', '/exec', { db: 'chinook', sql });
    const elapsed = performance.now() - started;
    const loader = process.cpuUsage(self);
    const after = processTree(server.child.pid);
    const used = after.map((pid) => processCpuMs(pid) - (before[pids.indexOf(pid)] ?? 0));
    const statements = Number(rounds) * LESSON.length;
    const total = used.reduce((a, b) => a + b, 0);
    console.log(
      `${main}: ${statements} statements, CPU µs/statement total ${((total * 1000) / statements).toFixed(0)} [${used.map((ms) => ((ms * 1000) / statements).toFixed(0)).join(' + ')}], latency ${((elapsed * 1000) / statements).toFixed(0)} µs, client ${((loader.user + loader.system) / statements).toFixed(0)} µs`,
    );
  } finally {
    await stopProcess(server.child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const [mode = 'decide', ...rest] = process.argv.slice(2);
if (mode === 'decide') await decide();
else await http(...rest);
