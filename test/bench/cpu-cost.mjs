/**
 * CPU time per request, by process, for one scenario: a measure that holds up
 * better than throughput on a shared, busy machine (a development aid for the
 * optimizations; `npm run bench` prints the A/B figures). sqlscribe first,
 * then the bare node:http and bare Koa baselines.
 *
 *   node test/bench/cpu-cost.mjs [scenario-index] [seconds] [connections]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLoad } from './load.mjs';
import { processCpuMs, processTree, startBaseline, startSqlscribe } from './processes.mjs';
import { BOOL_COLUMNS, buildBaselineBench, buildSqlscribeBench } from './fixtures.mjs';
import { SCENARIOS } from './scenarios.mjs';

const [index = '0', seconds = '4', connections = '32'] = process.argv.slice(2);
const scenario = SCENARIOS[Number(index)];

async function measure(name, server) {
  await runLoad(server.url, scenario, 1, Number(connections));
  const pids = processTree(server.child.pid);
  const before = pids.map(processCpuMs);
  const self = process.cpuUsage();
  const run = await runLoad(server.url, scenario, Number(seconds), Number(connections));
  const loader = process.cpuUsage(self);
  const after = processTree(server.child.pid);
  const used = after.map((pid) => processCpuMs(pid) - (before[pids.indexOf(pid)] ?? 0));
  const perRequest = used.map((ms) => ((ms * 1000) / run.ok).toFixed(0));
  const total = used.reduce((sum, ms) => sum + ms, 0);
  console.log(
    `${name.padEnd(10)} ${Math.round(run.ok / run.seconds)} req/s, CPU µs/request: total ${((total * 1000) / run.ok).toFixed(0)} [${perRequest.join(' + ')}], load generator ${((loader.user + loader.system) / run.ok).toFixed(0)}, non-2xx ${run.non2xx}`,
  );
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-cpu-'));
const dirA = path.join(work, 'a');
const dirB = path.join(work, 'b');
const dirK = path.join(work, 'k');
fs.mkdirSync(dirA);
fs.mkdirSync(dirB);
fs.mkdirSync(dirK);
buildBaselineBench(dirB);
buildBaselineBench(dirK);
// One load generator stands for a whole class: it may use every engine.
const a = await startSqlscribe(dirA, ['-max-connections', '256', '-client-share', '1']);
const b = await startBaseline(dirB, BOOL_COLUMNS);
const k = await startBaseline(dirK, BOOL_COLUMNS, { koa: true });
try {
  await buildSqlscribeBench(a.url);
  console.log(`${scenario.name}, ${connections} connections, ${seconds} s`);
  await measure('sqlscribe', a);
  await measure('node:http', b);
  await measure('koa', k);
} finally {
  await a.stop();
  await b.stop();
  await k.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
