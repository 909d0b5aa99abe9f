/**
 * `npm run bench`: sqlscribe against two bare servers over better-sqlite3 —
 * node:http, and Koa with koa-bodyparser — same data, same SQL, same JSON
 * shapes, same load, in rotating rounds, with CPU per request; then how
 * costs grow. Plain JavaScript on the built
 * dist/ (npm run bench builds first), outside the tap suite.
 *
 * Environment: BENCH_ROUNDS (default 3), BENCH_SECONDS per round (default 3),
 * BENCH_CONNECTIONS (default: each scenario's own, 32 and/or 64), BENCH_SCENARIOS=<text> (only the throughput
 * scenarios whose name holds the text, e.g. "1,000-row"), BENCH_ONLY=throughput (skip the growth
 * tables), growth (skip the throughput scenarios), startup (only start-up
 * against a 500,000-entry journal with a snapshot) or runaway (only the
 * runaway clients beside a class, runaway.mjs), deep-page (only /rows at
 * the end of a 1,000,000-row table by offset and by cursor, deep-page.mjs) or
 * replay (only the replay of 100,000 single-row INSERTs against a raw loop,
 * replay-batches.mjs) or templates (only thirty copies of a 1 MB template,
 * templates.mjs) or console (only the console's page load with an empty
 * cache in Chromium, console-load.mjs) or replication (only the journal shipped
 * to NATS JetStream against a local one, and a replica's lag, replication.mjs) or history (only the
 * first page of GET /dbs/{db}/history with 10^6 entries against 10^3, and the write path with the journal
 * index against -history-index=false, history.mjs) or restore (only the restore in place of a 1 MB
 * database with 10,000 entries after its newest snapshot round, restore.mjs) or lesson (only the Chinook
 * lesson run by 4, 25 and 200 students with personal tokens on their own copies, against the in-process
 * floor, and the memory of server and engines idle beside 1,000 databases and at peak through the lesson,
 * lesson.mjs; BENCH_LESSON_SECONDS per run, default 15) or exercises (only a check
 * of an answer against the same query through /exec on Chinook, exercises.mjs), BENCH_JSON=<file> to save
 * the figures, BENCH_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")
 * for sqlscribe's processes. Everything runs on 127.0.0.1, bounded in time, in
 * a temporary directory that is removed at the end. cpu-cost.mjs beside this
 * file gives CPU time per request by process, for one scenario.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rotatingRounds } from './load.mjs';
import { rssSampler, startBaseline, startSqlscribe } from './processes.mjs';
import { BOOL_COLUMNS, buildBaselineBench, buildGrowth, buildSqlscribeBench } from './fixtures.mjs';
import { SCENARIOS } from './scenarios.mjs';
import { countCost, journalBytes, replay, rowsByOffset, rowsBySize, startup } from './growth.mjs';
import { startupWithLongJournal } from './long-journal.mjs';
import { runawayClients } from './runaway.mjs';
import { deepPage } from './deep-page.mjs';
import { replayBatches } from './replay-batches.mjs';
import { templates } from './templates.mjs';
import { consoleLoad } from './console-load.mjs';
import { replication } from './replication.mjs';
import { historyBench } from './history.mjs';
import { restoreBench } from './restore.mjs';
import { idleMemory, lessonBench } from './lesson.mjs';
import { exercisesBench } from './exercises.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
/** Overrides every scenario's connection counts when set. */
const CONNECTIONS = process.env.BENCH_CONNECTIONS === undefined ? null : Number(process.env.BENCH_CONNECTIONS);
const ONLY = process.env.BENCH_ONLY ?? '';
/** Only the throughput scenarios whose name holds this text (all when unset). */
const SCENARIO_NAMES = process.env.BENCH_SCENARIOS ?? '';
const LESSON_SECONDS = Number(process.env.BENCH_LESSON_SECONDS ?? 15);

const fmt = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const int = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-');
const pad = (text, width) => String(text).padStart(width);
const say = (line = '') => process.stdout.write(`${line}\n`);
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  return `nproc ${os.availableParallelism()}, ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

function targetNote(ok) {
  return ok ? 'met' : 'MISSED';
}

async function throughput(work, figures) {
  const dirA = path.join(work, 'sqlscribe');
  const dirB = path.join(work, 'baseline');
  const dirK = path.join(work, 'baseline-koa');
  fs.mkdirSync(dirA);
  fs.mkdirSync(dirB);
  fs.mkdirSync(dirK);
  buildBaselineBench(dirB);
  buildBaselineBench(dirK);
  buildGrowth(work, [dirA, dirB]);
  // The load generator is one address standing for a whole class: it may use every engine (-client-share 1).
  const a = await startSqlscribe(dirA, ['-max-connections', '256', '-query-timeout', '60s', '-client-share', '1']);
  const b = await startBaseline(dirB, BOOL_COLUMNS);
  const k = await startBaseline(dirK, BOOL_COLUMNS, { koa: true });
  const urls = { a: a.url, b: b.url };
  try {
    await buildSqlscribeBench(a.url);
    if (ONLY !== 'growth') await scenarios({ sqlscribe: a, node: b, koa: k }, figures);
    if (ONLY !== 'throughput') await growthOnServers(urls, dirA, figures);
  } finally {
    await a.stop();
    await b.stop();
    await k.stop();
  }
  return path.join(dirA, 'journal', 'statements.jsonl');
}

/** Whether each target of the scenario holds for this result, as words. */
function verdicts(scenario, connections, result) {
  const targets = scenario.targets ?? {};
  if (scenario.targetsAt !== undefined && scenario.targetsAt !== connections) return [];
  const said = [];
  if (targets.node !== undefined)
    said.push(`node >= ${targets.node}: ${targetNote(result.sqlscribe.rps / result.node.rps >= targets.node)}`);
  if (targets.koa !== undefined)
    said.push(`koa >= ${targets.koa}: ${targetNote(result.sqlscribe.rps / result.koa.rps >= targets.koa)}`);
  if (targets.cpuOverKoaUs !== undefined) {
    const over = result.sqlscribe.cpuUsPerRequest - result.koa.cpuUsPerRequest;
    said.push(`CPU <= koa + ${targets.cpuOverKoaUs} µs: ${targetNote(over <= targets.cpuOverKoaUs)} (+${int(over)})`);
  }
  return said;
}

async function scenarios(servers, figures) {
  say(
    `load: ${ROUNDS} rotating rounds of ${SECONDS} s per server and scenario (autocannon, closed loop); CPU is µs per answered request, every process of the server`,
  );
  say(
    'systems: sqlscribe (multi-DB, token, journal synced), bare node:http + better-sqlite3, bare Koa + koa-bodyparser + better-sqlite3',
  );
  say();
  const system = (name) => `${pad(name, 9)} ${pad('req/s', 7)} ${pad('p50', 6)} ${pad('p99', 6)} ${pad('CPU', 5)}`;
  say(
    `${'scenario'.padEnd(36)} ${pad('c', 3)} | ${system('sqlscribe')} | ${system('node')} | ${system('koa')} | ${pad('/node', 5)} ${pad('/koa', 5)}  targets`,
  );
  const servedBy = Object.fromEntries(
    Object.entries(servers).map(([key, server]) => [key, { url: server.url, pid: server.child.pid }]),
  );
  const rss = Object.fromEntries(Object.entries(servers).map(([key, server]) => [key, rssSampler(server.child.pid)]));
  figures.scenarios = [];
  for (const scenario of SCENARIOS.filter((each) => each.name.includes(SCENARIO_NAMES))) {
    for (const connections of CONNECTIONS === null ? scenario.connections : [CONNECTIONS]) {
      const result = await rotatingRounds(servedBy, scenario, { rounds: ROUNDS, seconds: SECONDS, connections });
      const column = (r) =>
        `${pad('', 9)} ${pad(int(r.rps), 7)} ${pad(fmt(r.p50), 6)} ${pad(fmt(r.p99), 6)} ${pad(int(r.cpuUsPerRequest), 5)}`;
      const ratios = { node: result.sqlscribe.rps / result.node.rps, koa: result.sqlscribe.rps / result.koa.rps };
      const failed = Object.entries(result)
        .filter(([, r]) => r.non2xx + r.errors > 0)
        .map(([key, r]) => `${key} ${r.non2xx + r.errors}`);
      const notes = [
        ...verdicts(scenario, connections, result),
        ...(failed.length > 0 ? [`failed requests: ${failed.join(', ')}`] : []),
      ];
      say(
        `${scenario.name.padEnd(36)} ${pad(connections, 3)} | ${column(result.sqlscribe)} | ${column(result.node)} | ${column(result.koa)} | ${pad(fmt(ratios.node), 5)} ${pad(fmt(ratios.koa), 5)}  ${notes.join('; ')}`,
      );
      figures.scenarios.push({ name: scenario.name, connections, ...result, ratios });
    }
  }
  const memory = Object.fromEntries(Object.entries(rss).map(([key, sampler]) => [key, sampler.stop()]));
  figures.rss = memory;
  say();
  const { sqlscribe: memA, node: memB, koa: memK } = memory;
  say(
    `peak memory under load, sqlscribe (server and ${memA.perProcess.length - 1} engine processes): RSS summed ${mb(memA.peakSum)} MB (each process's peak: ${memA.perProcess.map((p) => mb(p.peakRss)).join(' + ')} MB),`,
  );
  say(
    `  PSS summed ${mb(memA.peakPss)} MB (shared pages such as the node binary counted once); target < 200 MB: RSS ${targetNote(memA.peakSum < 200 * 2 ** 20)}, PSS ${targetNote(memA.peakPss < 200 * 2 ** 20)}`,
  );
  say(
    `peak memory under load, bare node:http (one process): RSS ${mb(memB.peakSum)} MB, PSS ${mb(memB.peakPss)} MB; bare Koa: RSS ${mb(memK.peakSum)} MB, PSS ${mb(memK.peakPss)} MB`,
  );
}

async function growthOnServers(urls, dirA, figures) {
  say();
  say('/rows latency against offset, table of 1,000,000 rows, limit 100 (median of sequential requests, ms)');
  say(`${pad('offset', 10)} ${pad('sqlscribe', 10)} ${pad('baseline', 10)}`);
  figures.rowsByOffset = await rowsByOffset(urls);
  for (const row of figures.rowsByOffset)
    say(`${pad(int(row.offset), 10)} ${pad(fmt(row.a), 10)} ${pad(fmt(row.b), 10)}`);
  say();
  say(
    '/rows latency against table size, offset 0, limit 100 (median ms); count(*) in-process on the same table (what `total` costs uncached)',
  );
  say(`${pad('rows', 10)} ${pad('sqlscribe', 10)} ${pad('baseline', 10)} ${pad('count(*)', 10)}`);
  figures.rowsBySize = await rowsBySize(urls);
  const counts = countCost(path.join(dirA, 'growth.db'));
  figures.countCost = counts;
  figures.rowsBySize.forEach((row, i) =>
    say(`${pad(int(row.size), 10)} ${pad(fmt(row.a), 10)} ${pad(fmt(row.b), 10)} ${pad(fmt(counts[i].ms, 3), 10)}`),
  );
  const first = figures.rowsBySize[0].a;
  const last = figures.rowsBySize.at(-1).a;
  say(
    `sqlscribe /rows at 10^6 rows / at 10^3 rows: ${fmt(last / first)}x (target: independent of table size: ${targetNote(last / first < 1.5)})`,
  );
}

async function afterwards(work, journalFile, figures) {
  say();
  say('start-up against the number of databases in -dir (journal on, ms from spawn)');
  say(`${pad('databases', 10)} ${pad('listening', 10)} ${pad('ready', 10)} ${pad('GET /dbs', 10)}`);
  figures.startup = await startup(work);
  for (const row of figures.startup)
    say(
      `${pad(int(row.count), 10)} ${pad(int(row.listening), 10)} ${pad(int(row.ready), 10)} ${pad(fmt(row.dbsMs), 10)}`,
    );
  say(
    `start-up with 10,000 databases: ${int(figures.startup.at(-1).ready)} ms (target < 1000 ms: ${targetNote(figures.startup.at(-1).ready < 1000)})`,
  );
  say();
  const r = await replay(journalFile, work);
  figures.replay = r;
  const rate = (ms) => r.statements / (ms / 1000);
  say(
    `replay of this run's journal: ${int(r.entries)} entries, ${int(r.batches)} write batches, ${int(r.statements)} statements (same result as the raw loop: ${r.same ? 'yes' : 'NO'})`,
  );
  say(`  read and verify the journal: ${int(r.readMs)} ms`);
  say(
    `  replay/rebuild (engine code): ${int(r.replay.cpuMs)} ms CPU = ${int(rate(r.replay.cpuMs))} statements/s (wall ${int(r.replay.wallMs)} ms)`,
  );
  say(
    `  raw better-sqlite3 loop:      ${int(r.raw.cpuMs)} ms CPU = ${int(rate(r.raw.cpuMs))} statements/s (wall ${int(r.raw.wallMs)} ms)`,
  );
  const ratio = r.raw.cpuMs / r.replay.cpuMs;
  say(
    `  ratio ${fmt(ratio)} by CPU time, ${fmt(r.raw.wallMs / r.replay.wallMs)} by wall time (target >= 0.5: ${targetNote(ratio >= 0.5)})`,
  );
  say();
  say('journal bytes per statement');
  figures.journalBytes = await journalBytes(journalFile);
  for (const g of figures.journalBytes)
    say(
      `  ${pad(g.statementsPerEntry, 3)} statement(s) per entry: ${int(g.bytesPerEntry)} bytes per entry, ${int(g.bytesPerStatement)} bytes per statement (${int(g.entries)} entries)`,
    );
}

async function longJournal(work, figures) {
  say();
  say(
    'start-up with a long journal: 500,000 entries in 50 files, a snapshot round 10,000 entries before the end, no record of what was applied (as after a crash)',
  );
  const r = await startupWithLongJournal(work);
  figures.longJournal = r;
  say(
    `  journal ${mb(r.journalBytes)} MB (built in ${int(r.setupMs)} ms); listening ${int(r.listening)} ms, ready ${int(r.ready)} ms from spawn (target < 1000 ms: ${targetNote(r.ready < 1000)})`,
  );
  say(
    `  peak RSS: server ${mb(r.serverPeakRss)} MB (target < 100 MB: ${targetNote(r.serverPeakRss < 100 * 2 ** 20)}), with its engine processes ${mb(r.peakRss)} MB`,
  );
  say(
    `  the same server on an empty journal, this run: ready ${int(r.empty.ready)} ms, server peak RSS ${mb(r.empty.serverPeakRss)} MB; long ÷ empty: ready ${fmt(r.ready / r.empty.ready)}×, memory ${fmt(r.serverPeakRss / r.empty.serverPeakRss)}×`,
  );
}

async function runaway(work, figures) {
  const seconds = Math.max(10, SECONDS * 3);
  say();
  say(
    `runaway clients: 20 ordinary clients (own addresses, own databases) for ${seconds} s alone, then ${seconds} s beside 4 clients sending batches that run until -request-timeout (3s)`,
  );
  const r = await runawayClients(work, seconds);
  figures.runaway = r;
  const row = (name, s) =>
    say(
      `  ${name.padEnd(8)} ${pad(int(s.rps), 7)} req/s  p50 ${pad(fmt(s.p50, 1), 7)} ms  p99 ${pad(fmt(s.p99, 1), 7)} ms  max ${pad(int(s.max), 6)} ms  non-200 ${s.non200}`,
    );
  row('alone', r.alone);
  row('beside', r.beside);
  const ratio = r.beside.rps / r.alone.rps;
  say(
    `  beside ÷ alone: throughput ${fmt(ratio)} (target >= 0.5: ${targetNote(ratio >= 0.5)}), p99 ${fmt(r.beside.p99 / r.alone.p99)}×; ordinary non-200 beside runaways: ${r.beside.non200} (target 0: ${targetNote(r.beside.non200 === 0)})`,
  );
  say(
    `  runaway replies by code: ${JSON.stringify(r.runawayCodes)}; summed peak RSS of sqlscribe's processes ${mb(r.peakRss)} MB`,
  );
}

async function deepPages(work, figures) {
  say();
  say(
    '/rows at the end of a 1,000,000-row table, limit 100: first page, last page by offset, last page by cursor (median ms of sequential requests)',
  );
  const r = await deepPage(work);
  figures.deepPage = r;
  say(
    `${'table'.padEnd(28)} ${pad('first', 8)} ${pad('last/offset', 12)} ${pad('last/cursor', 12)} ${pad('cursor÷first', 13)}  target`,
  );
  for (const row of r.tables) {
    const key = row.table === 'deep' ? 'deep (INTEGER PRIMARY KEY)' : 'deep_pair (WITHOUT ROWID)';
    const check = row.same ? '' : '  (the two last pages DIFFER)';
    say(
      `${key.padEnd(28)} ${pad(fmt(row.first), 8)} ${pad(fmt(row.lastByOffset), 12)} ${pad(fmt(row.lastByCursor), 12)} ${pad(fmt(row.ratio), 13)}  <= 2: ${targetNote(row.ratio <= 2)}${check}`,
    );
  }
  say(`  (tables built in-process in ${int(r.buildMs)} ms)`);
}

async function replayOfInserts(work, figures) {
  say();
  say(
    'replay of 100,000 single-row INSERTs into one database: `replay -out` (its own process, journal read included) against raw better-sqlite3 loops in this process committing every 1,000: one replaying the same journal as it reads it (JSON.parse of each line, no checks), one inserting the rows with nothing to read (best of 3, wall time)',
  );
  const r = await replayBatches(work);
  figures.replayBatches = r;
  const ratio = r.rawJournalMs / r.replayMs;
  say(
    `  journal ${(r.journalBytes / 1024 / 1024).toFixed(1)} MB; replay -out ${int(r.replayMs)} ms, raw loop reading the journal ${int(r.rawJournalMs)} ms, raw loop of INSERTs alone ${int(r.rawMs)} ms (same rows: ${r.same ? 'yes' : 'NO'})`,
  );
  say(`  ratio raw journal loop ÷ replay ${fmt(ratio)} (target >= 0.3: ${targetNote(ratio >= 0.3)})`);
  say(`  ratio INSERTs alone ÷ replay ${fmt(r.rawMs / r.replayMs)} (what SQLite's own work would allow)`);
  say(
    `  in process (CPU ms, best of 2): read the journal and check its checksums ${int(r.readCpuMs)}, decode and rebuild ${int(r.applyCpuMs)}; raw ÷ decode and rebuild ${fmt(r.rawMs / r.applyCpuMs)}`,
  );
}

async function classOfThirty(work, figures) {
  say();
  say('a class of thirty: copies of a template of about 1 MB (best of 3, wall time)');
  const r = await templates(work);
  figures.templates = r;
  const seconds = r.oneRequestMs / 1000;
  say(`  template ${mb(r.templateBytes)} MB (${int(r.rowsInCopy)} rows, found in the last copy)`);
  say(
    `  ${r.copies} copies in one request: ${fmt(seconds)} s (target < 2 s: ${targetNote(seconds < 2)}); ${r.copies} one-copy requests in turn: ${fmt(r.oneByOneMs / 1000)} s`,
  );
}

async function consolePage(work, figures) {
  say();
  say(`the console's page load, empty cache, loopback (best of ${ROUNDS}, navigation to ready)`);
  const r = await consoleLoad(work, ROUNDS);
  figures.consoleLoad = r;
  const best = Math.min(...r.times);
  say(
    `  ${fmt(best, 0)} ms (target < 1000 ms: ${targetNote(best < 1000)}); rounds ${r.times.map((ms) => fmt(ms, 0)).join(', ')} ms; editor bundle ${int(r.bundleBytes)} bytes`,
  );
}

async function shipping(work, figures) {
  say();
  say(
    `the journal shipped to NATS JetStream (one nats-server on loopback): single-row INSERT, c32, ${ROUNDS} rotating rounds of ${SECONDS} s`,
  );
  const r = await replication(work, { rounds: ROUNDS, seconds: SECONDS });
  figures.replication = r;
  say(
    `  journal local ${int(r.local.rps)} req/s (p50 ${fmt(r.local.p50)} ms), shipped ${int(r.shipped.rps)} req/s (p50 ${fmt(r.shipped.p50)} ms): shipped ÷ local ${fmt(r.ratio)}`,
  );
  say(`  CPU µs per request: local ${int(r.local.cpuUsPerRequest)}, shipped ${int(r.shipped.cpuUsPerRequest)}`);
  say(
    `  replica lag at steady load (${int(r.lag.writesPerSecond)} writes/s, ${r.lag.probes} probes): acknowledged → applied on the replica p50 ${fmt(r.lag.lagMs.p50, 1)} ms, p95 ${fmt(r.lag.lagMs.p95, 1)} ms, max ${fmt(r.lag.lagMs.max, 1)} ms; seqBehind p50 ${r.lag.seqBehind.p50}, p95 ${r.lag.seqBehind.p95}, max ${r.lag.seqBehind.max}`,
  );
}

async function restoreInPlace(work, figures) {
  say();
  say(
    'POST /dbs/{db}/restore: a ~1 MB database with 10,000 entries after its newest snapshot round, restored to the entry before its last',
  );
  const r = await restoreBench(work);
  figures.restore = r;
  say(
    `  database ${mb(r.bytes)} MB, ${int(r.entries)} entries written in ${int(r.writeMs)} ms; restores took ${r.restoreMs.map((ms) => int(ms)).join(', ')} ms: median ${int(r.medianMs)} ms (target < 1,000: ${targetNote(r.medianMs < 1000)})`,
  );
}

async function history(work, figures) {
  say();
  say(
    'GET /dbs/{db}/history: first page (50 entries) through the journal index, then single-row INSERTs c32 with and without the index',
  );
  const r = await historyBench(work, { rounds: ROUNDS, seconds: SECONDS });
  figures.history = r;
  for (const p of r.small === undefined ? [] : [r.small, r.big]) {
    say(
      `  ${int(p.entries)} entries over ${int(p.dbs)} databases: journal written in ${int(p.setupMs)} ms, index built at start-up in ${int(p.indexMs)} ms; first page median ${fmt(p.medianMs)} ms, p90 ${fmt(p.p90Ms)} ms; asked again (its lines cached) median ${fmt(p.warmMedianMs)} ms, p90 ${fmt(p.warmP90Ms)} ms`,
    );
  }
  if (r.small !== undefined)
    say(
      `  first page 10^6 ÷ 10^3: ${fmt(r.pageRatio)}× (target ≤ 2: ${targetNote(r.pageRatio <= 2)}); asked again: ${fmt(r.warmPageRatio)}×`,
    );
  const a = r.append;
  if (a !== undefined)
    say(
      `  INSERT c32: with the index ${int(a.index.rps)} req/s (p50 ${fmt(a.index.p50)} ms), without ${int(a.noIndex.rps)} req/s (p50 ${fmt(a.noIndex.p50)} ms); CPU ${int(a.index.cpuUsPerRequest)} and ${int(a.noIndex.cpuUsPerRequest)} µs/request; without ÷ with ${fmt(a.ratio, 3)} (index started first ${fmt(a.ratios[0], 3)}, second ${fmt(a.ratios[1], 3)}; target ≤ 1.05: ${targetNote(a.ratio <= 1.05)})`,
    );
}

async function lesson(work, figures) {
  say();
  say(
    `the Chinook lesson: students with personal write tokens on their own copies, one statement per /exec, journal synced, ${LESSON_SECONDS} s per run; CPU of every sqlscribe process per statement against better-sqlite3 in-process (same statements, rows to JSON)`,
  );
  const r = await lessonBench(work, { seconds: LESSON_SECONDS });
  figures.lesson = r;
  const floorUs = r.floor.cpuMsPerStatement * 1000;
  say(
    `  ${r.statementsInLesson} statements a lesson; classes of 25 and 200 set up in ${r.setupMs.map((ms) => int(ms)).join(' and ')} ms; in-process floor ${int(floorUs)} µs CPU per statement (${int(r.floor.statements)} statements, each prepared once as the engine's statement cache does; prepared anew every time: ${int(r.floorPreparingEach.cpuMsPerStatement * 1000)} µs)`,
  );
  say(
    `  ${'clients'.padEnd(16)} ${pad('stmt/s', 7)} ${pad('p50', 7)} ${pad('p95', 7)} ${pad('p99', 7)} ${pad('CPU µs', 7)} ${pad('÷floor', 7)} ${pad('peak RSS', 9)}  targets`,
  );
  for (const run of r.runs) {
    const ratio = run.cpuMsPerStatement / r.floor.cpuMsPerStatement;
    run.floorRatio = ratio;
    const notes = [`CPU <= 2x floor: ${targetNote(ratio <= 2)}`];
    if (run.clients === 200) notes.push(`p95 < 200 ms: ${targetNote(run.p95 < 200)}`);
    if (run.clients === 25) notes.push(`peak RSS <= 400 MB: ${targetNote(run.peakRss <= 400 * 2 ** 20)}`);
    if (run.failed > 0) notes.push(`failed statements: ${run.failed} (${run.firstFailure})`);
    const name = `${run.clients} ${run.think ? 'thinking' : 'back to back'}`;
    say(
      `  ${name.padEnd(16)} ${pad(int(run.perSecond), 7)} ${pad(fmt(run.p50, 1), 7)} ${pad(fmt(run.p95, 1), 7)} ${pad(fmt(run.p99, 1), 7)} ${pad(int(run.cpuMsPerStatement * 1000), 7)} ${pad(fmt(ratio), 7)} ${pad(mb(run.peakRss), 6)} MB  ${notes.join('; ')}`,
    );
    say(
      `  ${''.padEnd(16)} each process's own peak so far (server, then engines): ${run.processPeaks.map((bytes) => mb(bytes)).join(' + ')} MB`,
    );
  }
  const peak25 = Math.max(...r.runs.filter((run) => run.clients === 25).map((run) => run.peakRss));
  const idle = await idleMemory(work);
  figures.lesson.idle = idle;
  figures.lesson.peakRss25 = peak25;
  say(
    `  memory: server and engines idle beside ${int(idle.databases)} databases (${fmt(idle.settleMs / 1000, 0)} s after GET /dbs, ${idle.processes} processes): RSS ${mb(idle.rss)} MB, PSS ${mb(idle.pss)} MB (target RSS <= 150 MB: ${targetNote(idle.rss <= 150 * 2 ** 20)})`,
  );
  say(
    `  memory: peak through the 25-client lesson: RSS ${mb(peak25)} MB (target <= 400 MB: ${targetNote(peak25 <= 400 * 2 ** 20)})`,
  );
}

async function checkingAnswers(work, figures) {
  say();
  say(
    'POST /exercises/{id}/check against POST /exec of the same query on Chinook (one request at a time, medians of 4 alternating rounds of 300)',
  );
  const r = await exercisesBench(work);
  figures.exercises = r;
  say(
    `  /exec ${fmt(r.execCpuMs, 3)} CPU ms/request (p50 ${fmt(r.execP50Ms)} ms), check ${fmt(r.checkCpuMs, 3)} CPU ms/request (p50 ${fmt(r.checkP50Ms)} ms)`,
  );
  say(
    `  check ÷ /exec: CPU ${fmt(r.cpuRatio)}× (target ≤ 3: ${targetNote(r.cpuRatio <= 3)}), latency ${fmt(r.latencyRatio)}×`,
  );
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-bench-'));
  const figures = {
    machine: machine(),
    date: new Date().toISOString(),
    rounds: ROUNDS,
    seconds: SECONDS,
    connections: CONNECTIONS ?? 'per scenario',
  };
  say(`sqlscribe benchmark, ${figures.date}`);
  say(
    `machine: ${figures.machine}; load average at start ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const started = performance.now();
  try {
    if (
      ![
        'startup',
        'runaway',
        'deep-page',
        'replay',
        'templates',
        'console',
        'replication',
        'history',
        'restore',
        'lesson',
        'exercises',
      ].includes(ONLY)
    ) {
      const journalFile = await throughput(work, figures);
      if (ONLY !== 'throughput') await afterwards(work, journalFile, figures);
    }
    if (ONLY === '' || ONLY === 'startup') await longJournal(work, figures);
    if (ONLY === '' || ONLY === 'runaway') await runaway(work, figures);
    if (ONLY === '' || ONLY === 'deep-page') await deepPages(work, figures);
    if (ONLY === '' || ONLY === 'replay') await replayOfInserts(work, figures);
    if (ONLY === '' || ONLY === 'templates') await classOfThirty(work, figures);
    if (ONLY === '' || ONLY === 'console') await consolePage(work, figures);
    if (ONLY === '' || ONLY === 'replication') await shipping(work, figures);
    if (ONLY === '' || ONLY === 'history') await history(work, figures);
    if (ONLY === '' || ONLY === 'restore') await restoreInPlace(work, figures);
    if (ONLY === '' || ONLY === 'lesson') await lesson(work, figures);
    if (ONLY === '' || ONLY === 'exercises') await checkingAnswers(work, figures);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  say();
  say(
    `benchmark took ${fmt((performance.now() - started) / 1000, 0)} s; load average at end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(figures, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`bench: ${error.stack ?? error}\n`);
  process.exit(1);
});
