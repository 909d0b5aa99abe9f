/**
 * The exercises scenario (BENCH_ONLY=exercises): what checking an answer
 * costs against running the same query through /exec on the same data.
 * Chinook is loaded, an exercise is written over it, and a student's query
 * (a join with a GROUP BY, as a lesson asks) is sent by turns as
 * `POST /exec` on the template and as `POST /exercises/{id}/check`, one
 * request at a time, in rounds that alternate which goes first. Per request:
 * CPU ms of the whole process tree (server and engine processes) and the
 * median latency. Target: a check costs at most 3× the /exec of its query.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ok, request, ROOT, startSqlscribe, TOKEN, treeCpuMs } from './processes.mjs';

const SCRIPT = path.join(ROOT, 'test/fixtures/chinook/Chinook_Sqlite.sql');
const REQUESTS = 300;
const ROUNDS = 4;

const SOLUTION =
  'SELECT ar.Name, COUNT(al.AlbumId) AS albums FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC, ar.Name LIMIT 10';
/** The student's answer: right, written otherwise. */
const ANSWER =
  'SELECT a.Name AS artist, (SELECT count(*) FROM Album b WHERE b.ArtistId = a.ArtistId) AS n FROM Artist a WHERE n > 0 ORDER BY n DESC, a.Name LIMIT 10';

function importScript(url) {
  const target = new URL('/dbs/chinook/import', url);
  const body = fs.readFileSync(SCRIPT);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'x-service-token': TOKEN, 'content-type': 'application/sql', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`import: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** REQUESTS requests of one kind: CPU ms per request of the tree, and every latency. */
async function measure(pid, send) {
  const latencies = [];
  const cpuBefore = treeCpuMs(pid);
  for (let i = 0; i < REQUESTS; i++) {
    const reply = await send();
    if (reply.status !== 200) throw new Error(`${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
    latencies.push(reply.ms);
  }
  return { cpuMsPerRequest: (treeCpuMs(pid) - cpuBefore) / REQUESTS, p50: median(latencies) };
}

export async function exercisesBench(work) {
  const dir = path.join(work, 'exercises');
  fs.mkdirSync(dir, { recursive: true });
  const server = await startSqlscribe(dir);
  try {
    const url = server.url;
    await ok(url, 'POST', '/dbs', { db: 'chinook' });
    await importScript(url);
    await ok(url, 'POST', '/exercises', {
      id: 'artists',
      set: 'bench',
      title: 'Artists by albums',
      template: 'chinook',
      solution: SOLUTION,
      order: 'exact',
    });
    const exec = () => request(url, 'POST', '/exec', { db: 'chinook', sql: ANSWER });
    const check = async () => {
      const reply = await request(url, 'POST', '/exercises/artists/check', { sql: ANSWER });
      if (reply.body?.correct !== true)
        throw new Error(`the answer was judged wrong: ${JSON.stringify(reply.body).slice(0, 300)}`);
      return reply;
    };
    // Warm both paths: the engine processes, the template's scratch copy, the solution's cached result.
    for (let i = 0; i < 30; i++) {
      await exec();
      await check();
    }
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0 ? exec : check;
      const second = round % 2 === 0 ? check : exec;
      const a = await measure(server.child.pid, first);
      const b = await measure(server.child.pid, second);
      rounds.push(round % 2 === 0 ? { exec: a, check: b } : { exec: b, check: a });
    }
    const execCpu = median(rounds.map((r) => r.exec.cpuMsPerRequest));
    const checkCpu = median(rounds.map((r) => r.check.cpuMsPerRequest));
    const execP50 = median(rounds.map((r) => r.exec.p50));
    const checkP50 = median(rounds.map((r) => r.check.p50));
    return {
      requests: REQUESTS,
      rounds: ROUNDS,
      execCpuMs: execCpu,
      checkCpuMs: checkCpu,
      cpuRatio: checkCpu / execCpu,
      execP50Ms: execP50,
      checkP50Ms: checkP50,
      latencyRatio: checkP50 / execP50,
    };
  } finally {
    await server.stop();
  }
}
