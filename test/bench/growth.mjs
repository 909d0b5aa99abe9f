/**
 * How costs grow: /rows against offset and against table size, count(*),
 * start-up against the number of databases, replay against a raw
 * better-sqlite3 loop, journal bytes per statement.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, request, startSqlscribe } from './processes.mjs';
import { fillDirectory, GROWTH_SIZES } from './fixtures.mjs';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const dist = (file) => require(path.join(ROOT, 'dist', file));

function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Median latency of `count` sequential requests (after one unmeasured). */
async function sequential(url, pathAndQuery, count) {
  await request(url, 'GET', pathAndQuery);
  const times = [];
  for (let i = 0; i < count; i++) {
    const reply = await request(url, 'GET', pathAndQuery);
    if (reply.status !== 200) throw new Error(`${pathAndQuery}: ${reply.status}`);
    times.push(reply.ms);
  }
  return median(times);
}

/** Median ms of /rows on both servers, taken in turns. */
async function bothSides(urls, pathAndQuery, count) {
  const a = await sequential(urls.a, pathAndQuery, count);
  const b = await sequential(urls.b, pathAndQuery, count);
  return { a, b };
}

export async function rowsByOffset(urls) {
  const big = Math.max(...GROWTH_SIZES);
  const out = [];
  for (const offset of [0, 1_000, 10_000, 100_000, 500_000, big - 100]) {
    out.push({
      offset,
      ...(await bothSides(
        urls,
        `/rows?db=growth&table=g${big}&limit=100&offset=${offset}`,
        offset >= 100_000 ? 10 : 40,
      )),
    });
  }
  return out;
}

export async function rowsBySize(urls) {
  const out = [];
  for (const size of GROWTH_SIZES)
    out.push({ size, ...(await bothSides(urls, `/rows?db=growth&table=g${size}&limit=100&offset=0`, 40)) });
  return out;
}

/** count(*) in-process, straight on the file: what `total` costs without a cache. */
export function countCost(file) {
  const db = new Database(file, { readonly: true });
  const out = GROWTH_SIZES.map((size) => {
    const statement = db.prepare(`SELECT count(*) FROM g${size}`).pluck();
    statement.get();
    const times = [];
    for (let i = 0; i < 7; i++) {
      const started = performance.now();
      statement.get();
      times.push(performance.now() - started);
    }
    return { size, ms: median(times) };
  });
  db.close();
  return out;
}

/** Time from spawn to "listening" and to "ready", and the first GET /dbs, for N databases in -dir. */
export async function startup(workDir) {
  const out = [];
  for (const count of [1, 100, 1_000, 10_000]) {
    const dir = path.join(workDir, `startup-${count}`);
    fillDirectory(dir, count);
    const server = await startSqlscribe(dir);
    const dbs = await request(server.url, 'GET', '/dbs');
    if (dbs.body?.dbs?.length !== count) throw new Error(`GET /dbs listed ${dbs.body?.dbs?.length} of ${count}`);
    const health = await request(server.url, 'GET', '/health');
    await server.stop();
    out.push({ count, listening: server.times[0], ready: server.times[1], dbsMs: dbs.ms, healthMs: health.ms });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

function statementsOf(entries) {
  return entries.filter((e) => e.kind === 'exec' && e.ok && e.readonly !== true && e.session === null);
}

/** CPU ms (user + system) and wall ms of `work`. */
async function timed(work) {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  await work();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

/** Applies the journal with the replay tool's own code (rebuild), into `out`. */
async function replayRound(entries, out) {
  const { rebuild } = dist('replay/rebuild.js');
  const { Engine } = dist('src/engine/engine.js');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const engine = new Engine();
  const time = await timed(() => rebuild(engine, entries, { fileOf: (db) => path.join(out, db) }));
  engine.close();
  return time;
}

/** The same statements in a plain better-sqlite3 loop: one transaction per entry, prepared statements cached. */
async function rawRound(entries, out) {
  const { rewriteForStorage } = dist('src/engine/dialect/rewrite.js');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const handles = new Map();
  const time = await timed(async () => {
    for (const entry of entries) {
      if (entry.kind === 'createdb') {
        const db = new Database(path.join(out, entry.db));
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        handles.set(entry.db, { db, cache: new Map() });
        continue;
      }
      if (!(entry.kind === 'exec' && entry.ok && entry.readonly !== true && entry.session === null)) continue;
      const handle = handles.get(entry.db);
      handle.db.exec('BEGIN IMMEDIATE');
      for (const { sql, params } of entry.statements) {
        let statement = handle.cache.get(sql);
        if (!statement) {
          statement = handle.db.prepare(
            sql.startsWith('CREATE TABLE')
              ? rewriteForStorage({ sql, kind: 'create-table', level: 'table', readonly: false })
              : sql,
          );
          handle.cache.set(sql, statement);
        }
        if (params === undefined) statement.run();
        else statement.run(params);
      }
      handle.db.exec('COMMIT');
    }
    for (const { db } of handles.values()) db.close();
  });
  return time;
}

const best = (times) => ({
  cpuMs: Math.min(...times.map((t) => t.cpuMs)),
  wallMs: Math.min(...times.map((t) => t.wallMs)),
});

/**
 * The replay tool's own code (read, then rebuild) against a raw loop of the
 * same statements, in alternating rounds; the best round of each counts, in
 * CPU time (both are synchronous loops in this process, and CPU time holds up
 * on a busy machine) and in wall time.
 */
export async function replay(journalFile, workDir) {
  const { readJournal } = dist('journal/reader.js');
  const started = performance.now();
  const { entries } = await readJournal(journalFile);
  const readMs = performance.now() - started;
  const execs = statementsOf(entries);
  const statements = execs.reduce((sum, e) => sum + e.statements.length, 0);
  const replays = [];
  const raws = [];
  for (let round = 0; round < 2; round++) {
    replays.push(await replayRound(entries, path.join(workDir, 'replay-out')));
    raws.push(await rawRound(entries, path.join(workDir, 'raw-out')));
  }
  const same = compareCounts(path.join(workDir, 'replay-out', 'bench.db'), path.join(workDir, 'raw-out', 'bench.db'));
  return {
    entries: entries.length,
    batches: execs.length,
    statements,
    readMs,
    replay: best(replays),
    raw: best(raws),
    same,
  };
}

function compareCounts(fileA, fileB) {
  const count = (file) => {
    const db = new Database(file, { readonly: true });
    const n = db.prepare("SELECT (SELECT count(*) FROM items) || '/' || (SELECT count(*) FROM log)").pluck().get();
    db.close();
    return n;
  };
  return count(fileA) === count(fileB);
}

/** Bytes of journal line per statement, by batch size, over the active file and the rotated ones. */
export async function journalBytes(journalFile) {
  const files = await dist('journal/naming.js').journalFiles(journalFile);
  const lines = files.flatMap((file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean));
  const groups = new Map();
  for (const line of lines) {
    const entry = JSON.parse(line);
    if (entry.kind !== 'exec') continue;
    const size = entry.statements.length;
    const group = groups.get(size) ?? { entries: 0, bytes: 0, statements: 0 };
    group.entries++;
    group.bytes += Buffer.byteLength(line) + 1;
    group.statements += size;
    groups.set(size, group);
  }
  return [...groups.entries()]
    .filter(([, g]) => g.entries >= 10)
    .map(([size, g]) => ({
      statementsPerEntry: size,
      entries: g.entries,
      bytesPerEntry: g.bytes / g.entries,
      bytesPerStatement: g.bytes / g.statements,
    }));
}
