/**
 * The replication scenario (BENCH_ONLY=replication): what shipping the
 * journal to NATS JetStream costs, and how far a replica trails.
 *
 * - Write throughput: single-row INSERTs (journal synced) on a server whose
 *   journal stays local and on one that ships it to a one-node JetStream on
 *   loopback (-journal-nats), in rotating rounds; the ratio shipped ÷ local.
 * - Replica lag at steady load: while 16 clients write to the shipping
 *   primary without pause, a probe writes once every 100 ms and measures the
 *   time until a replica (-follow) has applied that write's seq (read from its
 *   /health), and /health's seqBehind is sampled.
 *
 * nats-server comes from Debian's package (apt-get install -y nats-server);
 * everything runs on 127.0.0.1 and stops at the end.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { rotatingRounds } from './load.mjs';
import { ok, startSqlscribe, stopProcess, TOKEN } from './processes.mjs';

const INSERT = 'INSERT INTO log (name, qty) VALUES (?, ?)';
const SCENARIO = {
  name: 'single-row INSERT',
  method: 'POST',
  path: '/exec',
  body: { db: 'bench', sql: INSERT, params: ['a name', 7] },
};
const LAG_SECONDS = 10;
const LAG_WRITERS = 16;
const PROBE_EVERY_MS = 100;

function natsBinary() {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin']) {
    const file = path.join(dir, 'nats-server');
    if (dir !== '' && fs.existsSync(file)) return file;
  }
  throw new Error('nats-server was not found; install it with: apt-get install -y nats-server');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startNats(dir) {
  const port = await freePort();
  const child = spawn(natsBinary(), ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', path.join(dir, 'nats')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server did not start: ${log}`)), 15_000);
    child.stderr.on('data', (chunk) => {
      log += chunk.toString();
      if (/Server is ready/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${log}`)));
  });
  return { url: `nats://127.0.0.1:${port}`, stop: () => stopProcess(child) };
}

async function prepare(url) {
  await ok(url, 'POST', '/dbs', { db: 'bench' });
  await ok(url, 'POST', '/exec', { db: 'bench', sql: 'CREATE TABLE log (id INT PRIMARY KEY, name TEXT, qty INT)' });
}

/** One request over fetch's own pool: the lag load needs many at once (processes.mjs's agent takes one at a time). */
async function request(url, method, pathAndQuery, body) {
  const response = await fetch(url + pathAndQuery, {
    method,
    headers: { 'x-service-token': TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body: parsed };
}

function percentile(sorted, fraction) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}

async function appliedSeq(url) {
  const health = await request(url, 'GET', '/health');
  return health.body.replication;
}

/** Writes without pause from `writers` clients for `seconds`, while a probe times how soon the replica has each of its writes. */
async function lagAtSteadyLoad(primaryUrl, replicaUrl, seconds) {
  const until = performance.now() + seconds * 1000;
  let writes = 0;
  const writer = async () => {
    while (performance.now() < until) {
      const reply = await request(primaryUrl, 'POST', '/exec', SCENARIO.body);
      if (reply.status === 200) writes++;
    }
  };
  const lags = [];
  const behind = [];
  const probe = async () => {
    while (performance.now() < until) {
      const reply = await request(primaryUrl, 'POST', '/exec', SCENARIO.body);
      const acked = performance.now();
      // The write's own seq, or a later one: X-Journal-Seq is what the primary holds once it answered.
      const seq = Number(reply.headers['x-journal-seq']);
      if (reply.status !== 200 || !Number.isFinite(seq))
        throw new Error(`probe write: ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
      for (;;) {
        const status = await appliedSeq(replicaUrl);
        behind.push(status.lag.seqBehind);
        if (status.appliedSeq >= seq) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      lags.push(performance.now() - acked);
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  };
  const started = performance.now();
  await Promise.all([...Array.from({ length: LAG_WRITERS }, writer), probe()]);
  const elapsed = (performance.now() - started) / 1000;
  lags.sort((a, b) => a - b);
  behind.sort((a, b) => a - b);
  return {
    writesPerSecond: writes / elapsed,
    probes: lags.length,
    lagMs: { p50: percentile(lags, 0.5), p95: percentile(lags, 0.95), max: lags.at(-1) },
    seqBehind: { p50: percentile(behind, 0.5), p95: percentile(behind, 0.95), max: behind.at(-1) },
  };
}

export async function replication(work, { rounds, seconds }) {
  const dir = path.join(work, 'replication');
  for (const name of ['local', 'shipped', 'replica']) fs.mkdirSync(path.join(dir, name), { recursive: true });
  const nats = await startNats(dir);
  const started = [];
  try {
    const common = ['-max-connections', '256', '-client-share', '1'];
    const local = await startSqlscribe(path.join(dir, 'local'), common);
    started.push(local);
    const shipped = await startSqlscribe(path.join(dir, 'shipped'), [
      ...common,
      '-journal-nats',
      nats.url,
      '-node',
      'bench-primary',
    ]);
    started.push(shipped);
    await prepare(local.url);
    await prepare(shipped.url);
    const replica = await startSqlscribe(path.join(dir, 'replica'), [
      ...common,
      '-follow',
      nats.url,
      '-node',
      'bench-replica',
    ]);
    started.push(replica);
    const servers = {
      local: { url: local.url, pid: local.child.pid },
      shipped: { url: shipped.url, pid: shipped.child.pid },
    };
    const result = await rotatingRounds(servers, SCENARIO, { rounds, seconds, connections: 32 });
    const lag = await lagAtSteadyLoad(shipped.url, replica.url, LAG_SECONDS);
    return { local: result.local, shipped: result.shipped, ratio: result.shipped.rps / result.local.rps, lag };
  } finally {
    for (const server of started.reverse()) await server.stop();
    await nats.stop();
  }
}
