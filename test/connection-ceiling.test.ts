/**
 * The -max-connections ceiling, seen by clients that keep their connections
 * alive: every 503 it answers counts in errors_total (not in faults_total),
 * clients turned away get their turn while others are being served, and
 * keep-alive still works when nobody waits.
 */
import http from 'node:http';
import t, { type Test } from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { getOver, keepAliveAgent, type AgentReply } from './helpers/agent-request';
import { sleep } from './helpers/wait';

t.setTimeout(120_000);

const keepAlive = keepAliveAgent;

function sample(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match === null ? NaN : Number(match[1]);
}

async function serve(tt: Test, max: number): Promise<TestServer> {
  const server = await startServer(['-dir', 'data', '-max-connections', String(max)], { cwd: scratchDir(tt) });
  tt.teardown(() => server.stop());
  return server;
}

t.test('every 503 at the ceiling counts in errors_total, none in faults_total', async (tt) => {
  const server = await serve(tt, 2);
  const [a, b] = [keepAlive(), keepAlive()];
  const turnedAway = Array.from({ length: 6 }, keepAlive);
  tt.teardown(() => [a, b, ...turnedAway].forEach((agent) => agent.destroy()));
  const before = JSON.parse((await getOver(a, server.url, '/metrics')).text);
  tt.equal((await getOver(b, server.url, '/health')).status, 200, 'both slots are held');
  let seen503 = 0;
  for (const agent of turnedAway) if ((await getOver(agent, server.url, '/health')).status === 503) seen503++;
  tt.equal(seen503, turnedAway.length, 'every connection over the ceiling got a 503');
  const after = JSON.parse((await getOver(a, server.url, '/metrics')).text);
  const prometheus = (await getOver(b, server.url, '/metrics?format=prometheus')).text;
  tt.equal(
    after.errors_total - before.errors_total,
    seen503,
    'errors_total grew by the number of 503s the clients saw',
  );
  tt.equal(after.requests_by_status['503'], seen503, 'as requests_by_status says');
  tt.equal(after.faults_total, 0, 'faults_total leaves the 503s out');
  tt.equal(sample(prometheus, 'sqlscribe_errors_total'), after.errors_total, 'Prometheus has the same errors_total');
  tt.equal(sample(prometheus, 'sqlscribe_faults_total'), 0, 'and the same faults_total');
});

interface Tally {
  readonly statuses: Map<number, number>;
  readonly served: Set<number>;
  errors: number;
}

/** Client `id` asks until every client was served or `until`; it waits as Retry-After says (at most 1 s) after a 503, 100 ms otherwise. */
async function client(
  id: number,
  agent: http.Agent,
  url: string,
  until: number,
  tally: Tally,
  everyone: number,
): Promise<void> {
  while (Date.now() < until && tally.served.size < everyone) {
    let answer: AgentReply | undefined;
    try {
      answer = await getOver(agent, url, '/health');
    } catch {
      tally.errors++;
    }
    if (answer !== undefined) tally.statuses.set(answer.status, (tally.statuses.get(answer.status) ?? 0) + 1);
    if (answer?.status === 200) tally.served.add(id);
    await sleep(answer?.status === 503 ? Math.min(1000, Number(answer.retryAfter ?? '1') * 1000) : 100);
  }
}

t.test('clients turned away at the ceiling get their turn; keep-alive without pressure', async (tt) => {
  const server = await serve(tt, 8);
  const agents = Array.from({ length: 80 }, keepAlive);
  tt.teardown(() => agents.forEach((agent) => agent.destroy()));
  const reusedOver = async (agent: http.Agent): Promise<number> => {
    let reused = 0;
    for (let i = 0; i < 20; i++) if ((await getOver(agent, server.url, '/health')).reused) reused++;
    agent.destroy();
    return reused;
  };
  tt.equal(await reusedOver(keepAlive()), 19, 'without pressure one connection serves all 20 requests');

  const tally: Tally = { statuses: new Map(), served: new Set(), errors: 0 };
  const started = Date.now();
  await Promise.all(agents.map((agent, id) => client(id, agent, server.url, started + 15_000, tally, agents.length)));
  tt.comment(
    `clients served ${tally.served.size} of ${agents.length} in ${Date.now() - started} ms; statuses ${JSON.stringify([...tally.statuses])}, connection errors ${tally.errors}`,
  );
  tt.equal(
    tally.served.size,
    agents.length,
    'every one of 80 clients was served within 15 s against -max-connections 8',
  );
  tt.strictSame(
    [...tally.statuses.keys()].filter((status) => status !== 200 && status !== 503),
    [],
    'answers were 200 or 503 only',
  );
  tt.equal(tally.errors, 0, 'no connection failed');

  for (const agent of agents) agent.destroy();
  await sleep(1500);
  tt.equal(await reusedOver(keepAlive()), 19, 'once nobody is turned away, keep-alive is back');
});
