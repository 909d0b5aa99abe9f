/**
 * A few students' runaway batches do not stop the class: four clients keep
 * sending batches that would run for a minute (two at a time each), beside
 * twenty clients doing ordinary work. The runaway requests end at
 * -request-timeout; no client holds more than its share of the engines, and
 * calls that run long let the pool grow, so every ordinary request is served
 * (none waits out a deadline, which would answer 503 [SQ6011]).
 */
import path from 'node:path';
import t from 'tap';
import { closeClients, postFrom } from './helpers/clients';
import { startServer } from './helpers/server';
import type { Reply, TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

// Long enough for every runaway client to be stopped at its deadline twice or more (three rounds of
// 3 s): each round after the first meets a pool the earlier rounds grew and shrank.
const RUN_MS = 7_000;
const REQUEST_TIMEOUT = '3s';
/** About 0.3 s each on an idle machine: two hundred of them run about a minute. */
const SLOW = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 2000000) SELECT count(*) FROM c';
const RUNAWAY = Array.from({ length: 200 }, () => SLOW).join(';\n');

interface Outcome {
  status: number;
  code: number | undefined;
  ms: number;
}

/** Sends `sql` from `from` again and again until the end of the run. */
async function keepSending(
  server: TestServer,
  from: string,
  sql: (i: number) => { db: string; sql: string },
  endMs: number,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; Date.now() < endMs && i < 10_000; i++) {
    const started = Date.now();
    const reply: Reply = await postFrom(server, { from, body: sql(i) });
    outcomes.push({ status: reply.status, code: reply.body?.code, ms: Date.now() - started });
  }
  return outcomes;
}

t.test('four runaway clients beside twenty ordinary ones', async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(
    ['-dir', path.join(dir, 'data'), '-request-timeout', REQUEST_TIMEOUT, '-query-timeout', '20s'],
    { cwd: dir },
  );
  t.teardown(() => (closeClients(), server.stop()));
  for (const db of ['runaway', ...Array.from({ length: 20 }, (_, i) => `pupil${i}`)])
    t.equal((await server.post('/dbs', { db })).status, 201);
  for (let i = 0; i < 20; i++) t.equal((await server.exec(`pupil${i}`, 'CREATE TABLE t (x INT)')).status, 200);

  const endMs = Date.now() + RUN_MS;
  const runaway = Array.from({ length: 8 }, (_, i) =>
    keepSending(server, `127.0.0.${2 + (i % 4)}`, () => ({ db: 'runaway', sql: RUNAWAY }), endMs),
  );
  // Ordinary work that needs an engine process: a write, and a read the server cannot answer in-process
  // (a plain count would be bounded by its plan and answered there: a recursive common table never is).
  const read = 'WITH RECURSIVE one(n) AS (SELECT 1) SELECT count(*), sum(x) FROM t, one';
  const ordinary = Array.from({ length: 20 }, (_, i) =>
    keepSending(
      server,
      `127.0.0.${10 + i}`,
      (n) => ({ db: `pupil${i}`, sql: n % 2 === 0 ? `INSERT INTO t VALUES (${n})` : read }),
      endMs,
    ),
  );
  const runawayOutcomes = (await Promise.all(runaway)).flat();
  const ordinaryOutcomes = await Promise.all(ordinary);

  t.ok(runawayOutcomes.length >= 8, `${runawayOutcomes.length} runaway requests`);
  const runawayCodes = new Set(runawayOutcomes.map((outcome) => outcome.code));
  t.ok(
    [...runawayCodes].every((code) => code === 6010 || code === 6011),
    `runaway requests end at the deadline (codes ${[...runawayCodes].join(', ')})`,
  );
  t.ok(
    runawayOutcomes.every((outcome) => outcome.ms < 8000),
    'no runaway request outlives its deadline by much',
  );

  const all = ordinaryOutcomes.flat();
  const failed = all.filter((outcome) => outcome.status !== 200);
  t.same(failed, [], `every one of ${all.length} ordinary requests was served`);
  const fewest = Math.min(...ordinaryOutcomes.map((outcomes) => outcomes.length));
  t.ok(fewest >= 5, `every ordinary client kept being served (the least served: ${fewest} requests)`);
  const sorted = all.map((outcome) => outcome.ms).sort((a, b) => a - b);
  t.comment(
    `ordinary requests: median ${sorted[Math.floor(sorted.length / 2)]} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]} ms, max ${sorted[sorted.length - 1]} ms`,
  );
  t.equal((await server.get('/health')).status, 200);
});
