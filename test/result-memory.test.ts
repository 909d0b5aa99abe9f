/**
 * Big results keep the service's memory bounded: six clients at once each ask
 * for about 300 MB of rows; each gets the first -max-result-bytes (16M) of it,
 * cut with `truncated`, and the resident memory of all sqlscribe processes
 * together (the server and its engine processes, sampled as they run) stays
 * under 1 GB.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { closeClients, enginePids, postFrom } from './helpers/clients';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(180_000);

const MiB = 1024 * 1024;
/** 30,000 rows of about 10 KB: about 300 MB as JSON (under -max-result-rows, so the byte bound is what cuts it). */
const BIG =
  "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 30000) SELECT i, printf('%.10000c', 'x') FROM r";

function residentBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0; // the process ended meanwhile
  }
}

/** Samples the summed resident memory of the server and its engine processes until stopped; gives the highest sum. */
function sampleMemory(server: TestServer): { stop(): number; byProcess: Map<string, number> } {
  let peak = 0;
  const byProcess = new Map<string, number>();
  const sample = (): void => {
    let sum = 0;
    for (const pid of [server.child.pid as number, ...enginePids(server)]) {
      const bytes = residentBytes(pid);
      const name = pid === server.child.pid ? 'server' : `engine ${pid}`;
      byProcess.set(name, Math.max(byProcess.get(name) ?? 0, bytes));
      sum += bytes;
    }
    peak = Math.max(peak, sum);
  };
  const timer = setInterval(sample, 25);
  return {
    byProcess,
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

t.test('six 300 MB results at once keep all processes together under 1 GB', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(['-dir', path.join(dir, 'data'), '-query-timeout', '60s'], { cwd: dir });
  t.teardown(() => (closeClients(), server.stop()));
  t.equal((await server.post('/dbs', { db: 'big' })).status, 201);
  const memory = sampleMemory(server);
  const replies = await Promise.all(
    Array.from({ length: 6 }, (_, i) => postFrom(server, { from: `127.0.0.${10 + i}`, body: { db: 'big', sql: BIG } })),
  );
  const peak = memory.stop();
  t.comment(
    `peaks by process (MB): ${[...memory.byProcess].map(([name, bytes]) => `${name} ${(bytes / MiB).toFixed(0)}`).join(', ')}`,
  );
  for (const reply of replies) {
    t.equal(reply.status, 200, reply.text.slice(0, 200));
    t.equal(reply.body.results[0].truncated, true, 'cut');
    t.ok(
      reply.text.length > 15 * MiB && reply.text.length < 17 * MiB,
      `about 16 MB answered (${(reply.text.length / MiB).toFixed(1)} MB)`,
    );
  }
  t.ok(peak < 1024 * MiB, `summed resident memory peaked at ${(peak / MiB).toFixed(0)} MB`);
});
