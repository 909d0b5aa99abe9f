/**
 * -engines sets how many engine processes run brief calls: a burst of more
 * concurrent calls than that queues for them and starts no more processes.
 * Real server, real processes; the calls are a few milliseconds each, far
 * below the quarter second after which a call counts as long and the pool
 * may start one more beside it.
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { enginePids } from './helpers/clients';

t.setTimeout(120_000);

/** About 20,000 steps of SQLite: a few milliseconds, always an engine call (a recursive CTE is never read in the server). */
const BRIEF = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20000) SELECT count(*) FROM c';

async function serverWith(t: Test, engines: string): Promise<TestServer> {
  const dir = scratchDir(t);
  // One address stands for everyone here: the whole pool is its (-client-share 1).
  const server = await startServer(['-dir', path.join(dir, 'data'), '-engines', engines, '-client-share', '1'], {
    cwd: dir,
  });
  t.teardown(() => server.stop());
  for (const db of ['a', 'b', 'c']) t.equal((await server.post('/dbs', { db })).status, 201);
  return server;
}

/** Three rounds of eight concurrent brief calls over three databases; the most engine processes seen after each. */
async function burst(t: Test, server: TestServer): Promise<number> {
  let most = 0;
  for (let round = 0; round < 3; round++) {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => server.exec('abc'[i % 3], BRIEF)));
    t.same(
      replies.map((reply) => reply.status),
      Array(8).fill(200),
      'every call answered',
    );
    most = Math.max(most, enginePids(server).length);
  }
  return most;
}

t.test('-engines 1: a burst runs on one process', async (t) => {
  const server = await serverWith(t, '1');
  t.equal(await burst(t, server), 1);
});

t.test('-engines 2: a burst starts a second process and no third', async (t) => {
  const server = await serverWith(t, '2');
  t.equal(await burst(t, server), 2);
});
