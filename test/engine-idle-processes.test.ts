/**
 * The engine pool grows with load and shrinks when idle: processes started
 * for a burst of calls end once they have run nothing for the idle timeout,
 * down to the minimum, never below it, and never while they run a call; the
 * next burst starts them again. Real engine processes; the idle timeout runs
 * on a fake clock, so no test waits for it.
 */
import path from 'node:path';
import t from 'tap';
import { ProcessEngineHost } from '../src/engine/host/process-engine-host';
import type { ExecRequest } from '../src/engine/protocol';
import { FakeClock } from './helpers/fake-clock';
import { scratchDir } from './helpers/scratch-dir';
import { sleep } from './helpers/wait';

t.setTimeout(120_000);

const IDLE_MS = 30_000;

function select(file: string, sql: string): ExecRequest {
  return { file, statements: [{ sql, kind: 'select' }], maxResultRows: 10 } as ExecRequest;
}

/** A query that keeps a process busy for a moment (about 0.2 s per million rows on an idle machine). */
const countTo = (n: number): string =>
  `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < ${n}) SELECT count(*) FROM c`;

/**
 * Moves the fake clock past the idle timeout until the pool is down to
 * `size`. A process that was still loading when the calls ended arms its
 * timeout when it is ready (real time: seconds under a loaded machine and
 * the TypeScript loader), hence the bounded retries.
 */
async function idleDownTo(host: ProcessEngineHost, clock: FakeClock, size: number): Promise<number> {
  for (let attempt = 0; attempt < 2400 && host.pids.length > size; attempt++) {
    clock.advance(IDLE_MS);
    if (host.pids.length > size) await sleep(25);
  }
  return host.pids.length;
}

t.test('processes started for a burst end when idle, down to the minimum, and start again for the next', async (tt) => {
  const file = path.join(scratchDir(tt), 'pool.db');
  const clock = new FakeClock();
  const host = new ProcessEngineHost({
    queryTimeoutMs: 60_000,
    minProcesses: 1,
    maxProcesses: 3,
    clientShare: 1,
    idleTimeoutMs: IDLE_MS,
    clock,
  });
  tt.teardown(() => host.close());
  tt.equal(host.pids.length, 1, 'one process to start with');
  await host.createDatabase(file);

  const burst = (): Array<Promise<unknown>> =>
    Array.from({ length: 3 }, () => host.exec(select(file, countTo(300_000)), { client: 'class' }));
  const first = burst();
  tt.equal(host.pids.length, 3, 'three calls at once: two processes started for them');
  await Promise.all(first);

  clock.advance(IDLE_MS - 1000);
  tt.equal(host.pids.length, 3, 'none ends before it has been idle for the timeout');
  tt.equal(await idleDownTo(host, clock, 1), 1, 'the two above the minimum end once idle');
  clock.advance(IDLE_MS * 3);
  tt.equal(host.pids.length, 1, 'the minimum stays, however long the pool is idle');

  const second = burst();
  tt.equal(host.pids.length, 3, 'the next burst starts them again');
  const answers = await Promise.all(second);
  tt.same(
    answers.map((results) => (results as Array<{ rows: unknown[][] }>)[0]?.rows),
    [[[300000]], [[300000]], [[300000]]],
    'and is answered',
  );
});

t.test('a process that runs a call is not ended by the idle timeout', async (tt) => {
  const file = path.join(scratchDir(tt), 'busy.db');
  const clock = new FakeClock();
  const host = new ProcessEngineHost({
    queryTimeoutMs: 60_000,
    minProcesses: 1,
    maxProcesses: 2,
    clientShare: 1,
    idleTimeoutMs: IDLE_MS,
    clock,
  });
  tt.teardown(() => host.close());
  await host.createDatabase(file);
  // Both processes run a call: the one started for the second call is above the minimum.
  await Promise.all([
    host.exec(select(file, 'SELECT 1'), { client: 'a' }),
    host.exec(select(file, 'SELECT 1'), { client: 'a' }),
  ]);
  tt.equal(host.pids.length, 2);
  const long = Array.from({ length: 2 }, () => host.exec(select(file, countTo(3_000_000)), { client: 'a' }));
  clock.advance(IDLE_MS * 2);
  const answers = await Promise.all(long);
  tt.same(
    answers.map((results) => (results as Array<{ rows: unknown[][] }>)[0]?.rows),
    [[[3000000]], [[3000000]]],
    'both long calls are answered, neither process was ended under them',
  );
  tt.equal(host.pids.length, 2, 'both processes are still in the pool right after');
  tt.equal(await idleDownTo(host, clock, 1), 1, 'then the one above the minimum ends once idle');
});
