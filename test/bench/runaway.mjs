/**
 * Runaway clients beside a class (`BENCH_ONLY=runaway` runs only this): twenty
 * ordinary clients, each from its own loopback address, write and read their
 * own databases, first alone, then beside four clients that keep sending
 * batches which run until -request-timeout. The figures: the ordinary
 * clients' throughput and latency in both phases, their ratio, the runaway
 * replies, and the summed peak RSS of the server and its engine processes.
 */
import http from 'node:http';
import path from 'node:path';
import { processTree, startSqlscribe, TOKEN } from './processes.mjs';

const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000000) SELECT count(*) FROM c';
const RUNAWAY = Array.from({ length: 200 }, () => SLOW).join(';\n');
const ORDINARY = 20;

function client(url, from) {
  const agent = new http.Agent({ keepAlive: true, localAddress: from, maxSockets: 2 });
  const post = (body) =>
    new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const started = performance.now();
      const req = http.request(
        new URL('/exec', url),
        {
          method: 'POST',
          agent,
          headers: { 'x-service-token': TOKEN, 'content-type': 'application/json', 'content-length': payload.length },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            let code;
            try {
              code = JSON.parse(Buffer.concat(chunks).toString('utf8')).code;
            } catch {
              code = undefined;
            }
            resolve({ status: res.statusCode, code, ms: performance.now() - started });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { post, close: () => agent.destroy() };
}

async function loop(send, endMs) {
  const replies = [];
  for (let i = 0; performance.now() < endMs && i < 100_000; i++) replies.push(await send(i));
  return replies;
}

function summary(replies, seconds) {
  const ms = replies.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q) => ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? NaN;
  return {
    requests: replies.length,
    rps: replies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    max: ms[ms.length - 1] ?? NaN,
    non200: replies.filter((r) => r.status !== 200).length,
  };
}

/** The highest summed resident memory of the server and its engine processes while `work` runs. */
async function peakRss(pid, work) {
  let peak = 0;
  const sample = async () => {
    const { readFileSync } = await import('node:fs');
    let sum = 0;
    for (const p of processTree(pid)) {
      try {
        sum += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      } catch {
        // ended meanwhile
      }
    }
    peak = Math.max(peak, sum);
  };
  const timer = setInterval(sample, 100);
  try {
    const result = await work();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

export async function runawayClients(work, seconds) {
  const dir = path.join(work, 'runaway');
  const server = await startSqlscribe(dir, ['-request-timeout', '3s', '-query-timeout', '20s']);
  const ordinary = Array.from({ length: ORDINARY }, (_, i) => client(server.url, `127.0.0.${10 + i}`));
  const runaway = Array.from({ length: 8 }, (_, i) => client(server.url, `127.0.0.${2 + (i % 4)}`));
  try {
    const admin = client(server.url, '127.0.0.1');
    for (let i = 0; i < ORDINARY; i++) {
      await admin.post({ sql: `CREATE DATABASE p${i}` });
      await admin.post({ db: `p${i}`, sql: 'CREATE TABLE t (x INT)' });
    }
    admin.close();
    const ordinaryLoad = (endMs) =>
      Promise.all(
        ordinary.map((c, i) =>
          loop(
            (n) =>
              c.post({
                db: `p${i}`,
                sql: n % 2 === 0 ? `INSERT INTO t VALUES (${n})` : 'SELECT count(*), sum(x) FROM t',
              }),
            endMs,
          ),
        ),
      );
    const alone = summary((await ordinaryLoad(performance.now() + seconds * 1000)).flat(), seconds);
    const { result, peak } = await peakRss(server.child.pid, async () => {
      const endMs = performance.now() + seconds * 1000;
      const [beside, runawayReplies] = await Promise.all([
        ordinaryLoad(endMs),
        Promise.all(runaway.map((c) => loop(() => c.post({ db: 'p0', sql: RUNAWAY }), endMs))),
      ]);
      return { beside: summary(beside.flat(), seconds), runaway: runawayReplies.flat() };
    });
    const codes = {};
    for (const reply of result.runaway)
      codes[reply.code ?? reply.status] = (codes[reply.code ?? reply.status] ?? 0) + 1;
    return { alone, beside: result.beside, runawayCodes: codes, peakRss: peak };
  } finally {
    for (const c of [...ordinary, ...runaway]) c.close();
    await server.stop();
  }
}
