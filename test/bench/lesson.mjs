/**
 * A lesson, as a class runs it: each student, with a personal `write` token,
 * runs the Chinook lesson (test/fixtures/chinook/lesson.json: the classroom
 * queries and a few writes to a table of their own) on their own copy of the
 * template, one statement per /exec request, back to back or thinking
 * 0.2–1 s between statements. It measures what a statement costs the machine
 * (CPU of every sqlscribe process, engines included, per statement) against
 * the in-process floor (better-sqlite3 on a copy of the same database, the
 * same statements in the same order, rows turned into JSON), the latencies a
 * student sees, and the memory of the server and its engines: at peak through
 * the lesson and idle beside a directory of 1,000 databases.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, processTree, rssSampler, send, startSqlscribe, treeCpuMs } from './processes.mjs';
import { fillDirectory } from './fixtures.mjs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const CHINOOK = path.join(ROOT, 'test/fixtures/chinook');
const LESSON = JSON.parse(fs.readFileSync(path.join(CHINOOK, 'lesson.json'), 'utf8'));

/**
 * The statements in the order a student sends them: the queries, with the
 * writes spread among them (the table is made first, then a note is added,
 * changed and old ones removed as the lesson goes on).
 */
export function lessonStatements() {
  const queries = LESSON.queries.map((query) => query.sql);
  const [create, ...changes] = LESSON.writes;
  const out = [create];
  const every = Math.ceil(queries.length / (changes.length + 1));
  queries.forEach((sql, i) => {
    out.push(sql);
    if ((i + 1) % every === 0 && changes.length > 0) out.push(changes.shift());
  });
  out.push(...changes);
  return out;
}

/** The runs: clients and whether they think between statements (0.2–1 s). */
export const LESSON_RUNS = [
  { clients: 4, think: false },
  { clients: 4, think: true },
  { clients: 25, think: false },
  { clients: 25, think: true },
  { clients: 200, think: true },
];

/** A small seeded generator (mulberry32): the same think times on every run of the bench. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted, fraction) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

async function must(reply, what) {
  const answer = await reply;
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.text.length > 0 ? JSON.parse(answer.text) : null;
}

/** Names as the server numbers a class (database-names.ts): two digits, three from 100 on. */
function classNames(prefix, count) {
  const width = Math.max(2, String(count).length);
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(width, '0')}`);
}

/** The Chinook template imported, a copy per student, and a personal `write` token each (bound to its copy). */
async function setUpClass(url, students) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await must(send(agent, url, 'POST', '/dbs', { json: { db: 'chinook' } }), 'create chinook');
  const script = fs.readFileSync(path.join(CHINOOK, 'Chinook_Sqlite.sql'), 'utf8');
  await must(
    send(agent, url, 'POST', '/dbs/chinook/import', { raw: script, type: 'application/sql' }),
    'import chinook',
  );
  const names = classNames('student', students);
  for (let i = 0; i < names.length; i += 100) {
    await must(
      send(agent, url, 'POST', '/dbs', { json: { dbs: names.slice(i, i + 100), from: 'chinook' } }),
      'copy chinook',
    );
  }
  const made = await must(
    send(agent, url, 'POST', '/tokens', { json: { prefix: 'student', count: students, role: 'write' } }),
    'tokens',
  );
  const class_ = made.tokens.map((token) => ({ db: token.databases[0], secret: token.secret }));
  // Each student's table exists before the clock starts: a student may begin anywhere in the lesson.
  for (const who of class_)
    await must(
      send(agent, url, 'POST', '/exec', { token: who.secret, json: { db: who.db, sql: LESSON.writes[0] } }),
      'notes table',
    );
  agent.destroy();
  return class_;
}

/** A student: the lesson's statements in turn (from a place of their own), until `stopAt`. */
async function student(url, who, statements, { think, rng, stopAt, out }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let next = Math.floor(rng() * statements.length);
  try {
    while (performance.now() < stopAt) {
      const sql = statements[next % statements.length];
      next++;
      const reply = await send(agent, url, 'POST', '/exec', { token: who.secret, json: { db: who.db, sql } });
      if (reply.status === 200) out.latencies.push(reply.ms);
      else out.failed.push(`${reply.status} ${reply.text.slice(0, 120)}`);
      if (think) await new Promise((resolve) => setTimeout(resolve, 200 + rng() * 800));
    }
  } finally {
    agent.destroy();
  }
}

/** One run: `clients` students for `seconds`; statements/s, latencies, and CPU per statement of the server's whole process tree. */
export async function lessonRun(server, students, statements, { clients, think, seconds, seed }) {
  const out = { latencies: [], failed: [] };
  const pid = server.child.pid;
  const sampler = rssSampler(pid);
  const before = treeCpuMs(pid);
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  await Promise.all(
    students
      .slice(0, clients)
      .map((who, i) => student(server.url, who, statements, { think, rng: seeded(seed + i), stopAt, out })),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuMs = treeCpuMs(pid) - before;
  const memory = sampler.stop();
  const sorted = Float64Array.from(out.latencies).sort();
  return {
    clients,
    think,
    statements: sorted.length,
    seconds: elapsed,
    perSecond: sorted.length / elapsed,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    cpuMsPerStatement: sorted.length > 0 ? cpuMs / sorted.length : NaN,
    failed: out.failed.length,
    firstFailure: out.failed[0],
    peakRss: memory.peakSum,
    peakPss: memory.peakPss,
    /** Each process's own peak since it started (VmHWM): the server first, then the engines. */
    processPeaks: memory.perProcess.map((p) => p.peakRss),
  };
}

/**
 * The floor: better-sqlite3 in this process on a copy of the same database,
 * the same statements in the same order, each answer turned into JSON (rows
 * as arrays), statements prepared once as the engine does (its statement
 * cache), or with `prepareEach` prepared anew for every statement (a
 * reference: what the floor is without a statement cache). CPU ms per
 * statement, over whole rounds of the lesson until about `cpuMs` is spent.
 */
export function inProcessFloor(file, statements, { cpuMs = 2000, prepareEach = false } = {}) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  const prepared = new Map();
  const run = (sql) => {
    let statement = prepareEach ? undefined : prepared.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (!prepareEach) prepared.set(sql, statement);
    }
    if (!statement.reader) return JSON.stringify({ changes: statement.run().changes });
    return JSON.stringify({
      columns: statement.columns().map((column) => column.name),
      rows: statement.raw(true).all(),
    });
  };
  for (const sql of statements) run(sql); // warm: prepared, pages cached
  const start = process.cpuUsage();
  let count = 0;
  let used = 0;
  do {
    for (const sql of statements) run(sql);
    count += statements.length;
    const spent = process.cpuUsage(start);
    used = (spent.user + spent.system) / 1000;
  } while (used < cpuMs);
  db.close();
  return { statements: count, cpuMsPerStatement: used / count };
}

/**
 * A server with a class set up: tokens on, journal synced, the template
 * imported and `students` copies. The runs of up to 25 students share one
 * server set up for 25 (as a teacher would set up a class of that size);
 * 200 students get their own, with -max-connections 512.
 */
export async function classServer(dir, students, extra) {
  fs.mkdirSync(dir, { recursive: true });
  // One load generator stands for a whole class from one address: it may use every engine (-client-share 1).
  const server = await startSqlscribe(dir, ['-client-share', '1', ...extra]);
  try {
    const started = performance.now();
    const class_ = await setUpClass(server.url, students);
    return { server, students: class_, setupMs: performance.now() - started };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** The lesson's runs (LESSON_RUNS) and the floor; the floor's copy is taken from the imported template. */
export async function lessonBench(work, { seconds = 15, runs = LESSON_RUNS, seed = 26 } = {}) {
  const statements = lessonStatements();
  const result = { statementsInLesson: statements.length, seconds, runs: [], setupMs: [] };
  const groups = [
    { students: 25, extra: [], runs: runs.filter((run) => run.clients <= 25) },
    { students: 200, extra: ['-max-connections', '512'], runs: runs.filter((run) => run.clients > 25) },
  ];
  for (const [g, group] of groups.entries()) {
    if (group.runs.length === 0) continue;
    const dir = path.join(work, `lesson-${group.students}`);
    const { server, students, setupMs } = await classServer(dir, group.students, group.extra);
    result.setupMs.push(setupMs);
    try {
      if (result.floor === undefined) {
        const floorFile = path.join(work, 'lesson-floor.db');
        const template = new Database(path.join(dir, 'chinook.db'), { readonly: true });
        await template.backup(floorFile);
        template.close();
        result.floor = inProcessFloor(floorFile, statements);
        result.floorPreparingEach = inProcessFloor(floorFile, statements, { cpuMs: 1000, prepareEach: true });
      }
      for (const [i, run] of group.runs.entries()) {
        result.runs.push(
          await lessonRun(server, students, statements, { ...run, seconds, seed: seed * 1000 + g * 100 + i * 10 }),
        );
      }
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return result;
}

/** Summed RSS (and PSS) of the server and its engines, idle a few seconds after start-up beside `count` databases. */
export async function idleMemory(work, { count = 1000, settleMs = 3000 } = {}) {
  const dir = path.join(work, `idle-${count}`);
  fillDirectory(dir, count);
  const server = await startSqlscribe(dir);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const listed = await must(send(agent, server.url, 'GET', '/dbs'), 'GET /dbs');
    if (listed.dbs.length !== count) throw new Error(`GET /dbs listed ${listed.dbs.length} of ${count}`);
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const sampler = rssSampler(server.child.pid);
    const memory = sampler.stop();
    return {
      databases: count,
      settleMs,
      rss: memory.peakSum,
      pss: memory.peakPss,
      processes: processTree(server.child.pid).length,
    };
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
