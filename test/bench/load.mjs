/**
 * Closed-loop load with autocannon, against 127.0.0.1 only, bounded in time.
 * Latencies are collected from autocannon's response events (fractional ms;
 * its own histogram rounds to whole ms), 2xx only; other statuses are counted.
 */
import { createRequire } from 'node:module';
import { TOKEN, treeCpuMs } from './processes.mjs';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');

/** Keeps at most this many latencies per run: enough for p99, bounded in memory. */
const MAX_SAMPLES = 2_000_000;

function percentile(sorted, fraction) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

/** One timed run: { requests, seconds, latencies (Float64Array, ms), non2xx, errors }. */
export function runLoad(url, scenario, seconds, connections) {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error(`the benchmark only loads 127.0.0.1, not ${target.hostname}`);
  const body = scenario.body === undefined ? undefined : JSON.stringify(scenario.body);
  const headers = { 'x-service-token': TOKEN, ...(body ? { 'content-type': 'application/json' } : {}) };
  const latencies = new Float64Array(MAX_SAMPLES);
  let count = 0;
  let non2xx = 0;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: `${url}${scenario.path}`,
        method: scenario.method,
        headers,
        body,
        connections,
        duration: seconds,
        timeout: 30,
      },
      (error, result) => {
        if (error) return reject(error);
        const elapsed = (performance.now() - started) / 1000;
        resolve({
          requests: count + non2xx,
          ok: count,
          seconds: elapsed,
          latencies: latencies.subarray(0, Math.min(count, MAX_SAMPLES)),
          non2xx,
          errors: result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) {
        non2xx++;
        return;
      }
      if (count < MAX_SAMPLES) latencies[count] = responseTime;
      count++;
    });
  });
}

/** Pools the rounds of one server: throughput over their total time, percentiles over every sample. */
export function summarize(runs) {
  const ok = runs.reduce((sum, run) => sum + run.ok, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const all = new Float64Array(runs.reduce((sum, run) => sum + run.latencies.length, 0));
  let at = 0;
  for (const run of runs) {
    all.set(run.latencies, at);
    at += run.latencies.length;
  }
  all.sort();
  return {
    rps: ok / seconds,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    requests: ok,
  };
}

/**
 * Runs a scenario on every server in turn, round after round, the order
 * rotating each round so that drift of the machine hits all alike; a short
 * warm-up run goes first. `servers`: { key: { url, pid } }. Adds to each
 * summary the CPU µs per answered request of the server's whole process tree.
 */
export async function rotatingRounds(servers, scenario, { rounds, seconds, connections, warmup = 1 }) {
  const keys = Object.keys(servers);
  for (const key of keys) await runLoad(servers[key].url, scenario, warmup, connections);
  const runs = Object.fromEntries(keys.map((key) => [key, []]));
  const cpu = Object.fromEntries(keys.map((key) => [key, 0]));
  for (let round = 0; round < rounds; round++) {
    const order = keys.map((_, i) => keys[(i + round) % keys.length]);
    for (const key of order) {
      const before = treeCpuMs(servers[key].pid);
      runs[key].push(await runLoad(servers[key].url, scenario, seconds, connections));
      cpu[key] += treeCpuMs(servers[key].pid) - before;
    }
  }
  return Object.fromEntries(
    keys.map((key) => {
      const summary = summarize(runs[key]);
      return [key, { ...summary, cpuUsPerRequest: summary.requests > 0 ? (cpu[key] * 1000) / summary.requests : NaN }];
    }),
  );
}
