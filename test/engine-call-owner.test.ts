/**
 * Every engine call is answered, whatever else is queued: random
 * interleavings of pool calls (exec, rows; several clients; signals that
 * abort), each process's own calls (closeDatabase on every process, as
 * copyDatabase and closeDatabase send them), held write groups and a
 * session, against fake engine processes (engine-child.ts) that load late,
 * answer in their own time, fail, crash or hang past the query timeout. Time
 * is a fake clock moved by the steps.
 *
 * At the end every call has settled with its own reply (never another
 * call's), every client's share of the pool is given back, no process is
 * left reserved or busy, and nothing waits in the queue.
 */
import fc from 'fast-check';
import t from 'tap';
import { newBatchContext } from '../src/engine/deterministic-functions';
import type { EngineChild } from '../src/engine/host/engine-child';
import type { EngineCall, EngineReply } from '../src/engine/host/engine-messages';
import type { CallClock, EngineProcessHandle } from '../src/engine/host/engine-process-handle';
import type { EngineShares } from '../src/engine/host/engine-shares';
import { packResults, type PackedOutcome } from '../src/engine/host/packed-results';
import type { PackedRequest } from '../src/engine/host/packed-requests';
import { ProcessEngineHost } from '../src/engine/host/process-engine-host';
import type { ExecRequest, RowsRequest } from '../src/engine/protocol';
import { EngineError } from '../src/errors';
import { FakeClock } from './helpers/fake-clock';

const QUERY_TIMEOUT_MS = 1000;
const CLIENTS = ['ana', 'bruno', 'carla', undefined] as const;

class FakeCallClock extends FakeClock implements CallClock {
  nowUs(): number {
    return this.now() * 1000;
  }
}

/** An engine process that does what the test says, when it says. */
class FakeChild implements EngineChild {
  /** No pid: the handle never renices a process that is not there. */
  readonly pid = undefined;
  loaded = false;
  gone = false;
  /** Sent and not yet answered, in order (a process answers one call after another). */
  readonly inbox: EngineCall[] = [];
  private readonly messageListeners: Array<(reply: EngineReply) => void> = [];
  private readonly exitListeners: Array<() => void> = [];

  send(call: EngineCall): void {
    if (!this.gone) this.inbox.push(call);
  }
  onMessage(listener: (reply: EngineReply) => void): void {
    this.messageListeners.push(listener);
  }
  onceExit(listener: () => void): void {
    this.exitListeners.push(listener);
  }
  onError(): void {}
  kill(): void {
    setImmediate(() => this.crash());
  }
  disconnect(): void {
    setImmediate(() => this.crash());
  }

  load(): void {
    if (this.loaded || this.gone) return;
    this.loaded = true;
    this.emit({ id: 0, kind: 'ready' });
  }
  /** Answers the oldest call: with its result, or with an SQL error. */
  answer(fail: boolean): boolean {
    if (!this.loaded || this.gone) return false;
    const call = this.inbox.shift();
    if (call === undefined) return false;
    this.emit(
      fail
        ? { id: call.id, kind: 'error', error: new EngineError('SQL_ERROR', { detail: tagOf(call) }).toData() }
        : { id: call.id, kind: 'result', value: replyTo(call) },
    );
    return true;
  }
  crash(): void {
    if (this.gone) return;
    this.gone = true;
    this.inbox.length = 0;
    for (const listener of this.exitListeners.splice(0)) listener();
  }
  private emit(reply: EngineReply): void {
    for (const listener of this.messageListeners) listener(reply);
  }
}

/** Each call names a file of its own: its reply carries it back, so a reply handed to another call shows. */
function tagOf(call: EngineCall): string {
  switch (call.method) {
    case 'exec':
    case 'execInSession':
      return call.args[0].file;
    case 'execHeldGroup':
      return (call.args[0][0] as PackedRequest).file;
    case 'rows':
      return call.args[0].file;
    case 'copyDatabase':
      return call.args[1];
    default:
      return typeof call.args[0] === 'string' ? call.args[0] : call.method;
  }
}

function replyTo(call: EngineCall): unknown {
  const tag = tagOf(call);
  const packed = packResults([{ columns: ['tag'], rows: [[tag]] }]);
  if (call.method === 'exec' || call.method === 'execInSession') return packed;
  if (call.method === 'execHeldGroup') return call.args[0].map((): PackedOutcome => ({ packed }));
  if (call.method === 'rows') return { table: tag, total: 0, columns: [], rows: [] };
  return null;
}

function execRequest(file: string): ExecRequest {
  return {
    file,
    statements: [{ sql: 'UPDATE t SET v = 2', kind: 'update' }],
    maxResultRows: 10,
    context: newBatchContext(),
  };
}

function rowsRequest(file: string): RowsRequest {
  return { file, table: 't', limit: 10, offset: 0, after: null };
}

type Step =
  | { op: 'pool'; method: 'exec' | 'rows'; client: number; abortable: boolean }
  | { op: 'closeAll' }
  | { op: 'copy' }
  | { op: 'group'; client: number; commit: boolean }
  | { op: 'session' }
  | { op: 'abort'; which: number; deadline: boolean }
  | { op: 'child'; which: number; act: 'load' | 'answer' | 'fail' | 'crash' }
  | { op: 'time'; ms: number }
  | { op: 'tick' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('pool' as const),
      method: fc.constantFrom('exec' as const, 'rows' as const),
      client: fc.nat(CLIENTS.length - 1),
      abortable: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ op: 'closeAll' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'copy' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('group' as const), client: fc.nat(2), commit: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'session' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('abort' as const), which: fc.nat(20), deadline: fc.boolean() }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('child' as const),
      which: fc.nat(5),
      act: fc.constantFrom('load' as const, 'answer' as const, 'answer' as const, 'fail' as const, 'crash' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 1500 }) }) },
  { weight: 2, arbitrary: fc.constant({ op: 'tick' as const }) },
);

interface Tracked {
  readonly name: string;
  /** The tag the answer must carry, when the call answers one. */
  readonly tag: string | undefined;
  settled: number;
  outcome?: { value: unknown } | { error: unknown };
}

/** The host's insides, read by the test only. */
interface HostInsides {
  readonly shares: EngineShares;
  readonly queue: unknown[];
  readonly processes: Set<EngineProcessHandle>;
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function tagIn(value: unknown): unknown {
  if (Array.isArray(value)) {
    const first = value[0] as { rows?: unknown[][]; results?: Array<{ rows: unknown[][] }> } | undefined;
    return first?.rows?.[0]?.[0] ?? first?.results?.[0]?.rows[0]?.[0];
  }
  return (value as { table?: unknown } | undefined)?.table;
}

async function runScenario(
  steps: readonly Step[],
  pool: { min: number; max: number },
): Promise<{ failures: string[] }> {
  const clock = new FakeCallClock();
  const children: FakeChild[] = [];
  const host = new ProcessEngineHost({
    queryTimeoutMs: QUERY_TIMEOUT_MS,
    minProcesses: pool.min,
    maxProcesses: pool.max,
    clock,
    callClock: clock,
    spawnChild: () => {
      const child = new FakeChild();
      children.push(child);
      return child;
    },
  });
  const inside = host as unknown as HostInsides;
  const tracked: Tracked[] = [];
  const controllers: AbortController[] = [];
  let sessionOpen = false;
  let counter = 0;
  const track = (name: string, tag: string | undefined, promise: Promise<unknown>): void => {
    const entry: Tracked = { name, tag, settled: 0 };
    tracked.push(entry);
    promise.then(
      (value) => ((entry.settled += 1), (entry.outcome = { value })),
      (error: unknown) => ((entry.settled += 1), (entry.outcome = { error })),
    );
  };

  for (const s of steps) {
    const tag = `db-${++counter}`;
    switch (s.op) {
      case 'pool': {
        const client = CLIENTS[s.client];
        const controller = s.abortable ? new AbortController() : undefined;
        if (controller) controllers.push(controller);
        const context = { ...(client !== undefined && { client }), ...(controller && { signal: controller.signal }) };
        track(
          `${s.method} ${tag} of ${client ?? 'nobody'}`,
          tag,
          s.method === 'exec' ? host.exec(execRequest(tag), context) : host.rows(rowsRequest(tag), context),
        );
        break;
      }
      case 'closeAll':
        track(`closeDatabase ${tag}`, undefined, host.closeDatabase(tag));
        break;
      case 'copy':
        track(`copyDatabase to ${tag}`, undefined, host.copyDatabase('template.db', tag, undefined, 'template'));
        break;
      case 'group': {
        const client = CLIENTS[s.client];
        const held = host.execHeldGroup([execRequest(tag)], client === undefined ? {} : { client });
        track(
          `held group ${tag}`,
          tag,
          held.then(async (group) => {
            await (s.commit ? group.commit(counter) : group.rollback());
            return group.outcomes;
          }),
        );
        break;
      }
      case 'session': {
        if (sessionOpen) break;
        sessionOpen = true;
        const run = async (): Promise<unknown> => {
          const session = await host.openSession(tag);
          try {
            return await session.exec(execRequest(tag));
          } finally {
            await session.end(true, undefined);
          }
        };
        track(
          `session ${tag}`,
          tag,
          run().finally(() => (sessionOpen = false)),
        );
        break;
      }
      case 'abort': {
        const controller = controllers[s.which % Math.max(1, controllers.length)];
        controller?.abort(s.deadline ? { reason: 'deadline', ms: 500 } : undefined);
        break;
      }
      case 'child': {
        const live = children.filter((child) => !child.gone);
        const child = live[s.which % Math.max(1, live.length)];
        if (child === undefined) break;
        if (s.act === 'load') child.load();
        else if (s.act === 'crash') child.crash();
        else child.answer(s.act === 'fail');
        break;
      }
      case 'time':
        clock.advance(s.ms);
        break;
      case 'tick':
        await flush();
        break;
    }
    await Promise.resolve();
  }

  // Every process loads and answers whatever it is sent; time goes on until every call has settled (or plainly never will).
  for (let round = 0; round < 60 && tracked.some((entry) => entry.settled === 0); round++) {
    await flush();
    for (const child of children) child.load();
    for (let answered = true; answered;) {
      answered = false;
      for (const child of children) if (child.answer(false)) answered = true;
      await flush();
    }
    if (round % 10 === 9) clock.advance(QUERY_TIMEOUT_MS);
  }
  await flush();

  const failures: string[] = [];
  for (const entry of tracked) {
    if (entry.settled !== 1) failures.push(`${entry.name} settled ${entry.settled} times`);
    const outcome = entry.outcome;
    if (outcome === undefined) continue;
    if ('error' in outcome) {
      if (!(outcome.error instanceof EngineError)) failures.push(`${entry.name} failed with ${String(outcome.error)}`);
    } else if (entry.tag !== undefined && tagIn(outcome.value) !== entry.tag) {
      failures.push(`${entry.name} was answered with another call's reply: ${JSON.stringify(outcome.value)}`);
    }
  }
  for (const client of CLIENTS) {
    const held = inside.shares.heldBy(client);
    if (held !== 0) failures.push(`${client} still holds ${held} processes`);
  }
  if (inside.queue.length !== 0) failures.push(`${inside.queue.length} calls still wait in the queue`);
  for (const handle of inside.processes) {
    if (handle.reserved) failures.push(`a process is still reserved`);
    else if (handle.busy && !handle.starting) failures.push(`a process is still busy`);
  }
  const closing = host.close();
  for (let i = 0; i < 5; i++) await flush();
  await closing;
  return { failures };
}

t.test(
  'every call settles once with its own reply; every share, reservation and queue place is given back',
  async (t) => {
    const pools = fc.record({ min: fc.integer({ min: 1, max: 2 }), extra: fc.integer({ min: 0, max: 2 }) });
    const sized = ({ min, extra }: { min: number; extra: number }): { min: number; max: number } => ({
      min,
      max: min + extra,
    });
    const result = await fc.check(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 80, size: 'large' }), pools, async (steps, pool) => {
        const { failures } = await runScenario(steps, sized(pool));
        return failures.length === 0;
      }),
      { numRuns: 300, seed: Number(process.env.CALL_OWNER_SEED ?? Date.now() % 2 ** 31) },
    );
    if (!result.failed) return t.pass('every interleaving');
    const [steps, pool] = result.counterexample ?? [[], { min: 1, extra: 0 }];
    const { failures } = await runScenario(steps, sized(pool));
    t.fail(
      `seed ${result.seed}, pool ${JSON.stringify(sized(pool))}, steps ${JSON.stringify(steps)}: ${failures.join('; ')}`,
    );
  },
);

t.test('a pool call queued behind a process that has its own close queued is answered (the lost call)', async (t) => {
  const steps: Step[] = [
    { op: 'child', which: 0, act: 'load' },
    { op: 'pool', method: 'exec', client: 0, abortable: false },
    { op: 'pool', method: 'rows', client: 1, abortable: false },
    { op: 'closeAll' },
    { op: 'child', which: 0, act: 'answer' },
  ];
  const { failures } = await runScenario(steps, { min: 1, max: 1 });
  t.same(failures, [], 'nothing lost, nothing held');
});
