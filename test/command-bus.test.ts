/**
 * The command bus as a unit: middleware runs outermost first around the one
 * handler of a command; a command whose request already stopped never
 * reaches its handler; every command is counted by its outcome.
 */
import t from 'tap';
import { CommandBus, type Handlers, type Middleware } from '../src/bus/command-bus';
import { commandMetrics, outcomeOf } from '../src/bus/middleware/command-metrics';
import { refuseStoppedCalls } from '../src/bus/middleware/stopped-calls';
import { EngineError } from '../src/errors';
import type { RequestStop } from '../src/engine/protocol';

/** Handlers that record what ran; list-databases answers, create-database fails as told. */
function handlers(ran: string[], createFails?: unknown): Handlers {
  const unused = (): never => {
    throw new Error('not used by these tests');
  };
  return {
    'list-databases': () => {
      ran.push('handler');
      return { mode: 'multi-db', dbs: ['a'] };
    },
    'create-database': async () => {
      ran.push('handler');
      if (createFails !== undefined) throw createFails;
      return { db: 'a' };
    },
    'copy-databases': unused,
    'reset-database': unused,
    'restore-database': unused,
    'list-tables': unused,
    'show-schema': unused,
    'read-rows': unused,
    exec: unused,
    import: unused,
    export: unused,
    'begin-session': unused,
    'end-session': unused,
    'create-pilot': unused,
    'get-pilot': unused,
    'list-pilots': unused,
    'summarize-pilots': unused,
    'create-tokens': unused,
    'list-tokens': unused,
    'revoke-token': unused,
    'class-activity': unused,
    history: unused,
    'list-exercises': unused,
    'get-exercise': unused,
    'exercise-tables': unused,
    'create-exercise': unused,
    'replace-exercise': unused,
    'delete-exercise': unused,
    'check-exercise': unused,
    'exercise-progress': unused,
    'own-progress': unused,
    'exercise-evidence': unused,
  };
}

const noClose = async (): Promise<void> => undefined;

t.test('middleware wraps the handler, outermost first, and sees its result', async (t) => {
  const ran: string[] = [];
  const layer =
    (name: string): Middleware =>
    async (command, _call, next) => {
      ran.push(`${name} before ${command.type}`);
      const result = await next();
      ran.push(`${name} after`);
      return result;
    };
  const bus = new CommandBus(handlers(ran), [layer('outer'), layer('inner')], noClose);
  t.same(await bus.dispatch({ type: 'list-databases' }), { mode: 'multi-db', dbs: ['a'] });
  t.same(ran, ['outer before list-databases', 'inner before list-databases', 'handler', 'inner after', 'outer after']);
});

t.test('a handler error passes out through every layer unchanged', async (t) => {
  const ran: string[] = [];
  const failure = new EngineError('DATABASE_EXISTS', { db: 'a' });
  const bus = new CommandBus(handlers(ran, failure), [async (_c, _call, next) => next()], noClose);
  await t.rejects(bus.dispatch({ type: 'create-database', db: 'a' }), failure);
});

t.test('a command whose request stopped never reaches its handler', async (t) => {
  for (const [stop, code] of [
    [{ reason: 'gone', ms: 0 }, 'CLIENT_CLOSED'],
    [{ reason: 'deadline', ms: 30_000 }, 'ENGINES_BUSY'],
  ] as const) {
    const ran: string[] = [];
    const bus = new CommandBus(handlers(ran), [refuseStoppedCalls], noClose);
    const controller = new AbortController();
    controller.abort(stop satisfies RequestStop);
    const error: unknown = await bus
      .dispatch({ type: 'list-databases' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    t.equal(error instanceof EngineError ? error.errorName : error, code, `${stop.reason}: answered ${code}`);
    t.same(ran, [], `${stop.reason}: the handler did not run`);
  }
  const ran: string[] = [];
  const live = new AbortController();
  await new CommandBus(handlers(ran), [refuseStoppedCalls], noClose).dispatch(
    { type: 'list-databases' },
    { signal: live.signal },
  );
  t.same(ran, ['handler'], 'a live request runs');
});

t.test('every command is counted by outcome and timed with the given clock', async (t) => {
  const seen: Array<[string, string, number]> = [];
  const observer = {
    command: (type: string, outcome: string, seconds: number) => void seen.push([type, outcome, seconds]),
  };
  let clock = 0;
  const now = (): number => (clock += 250);
  const constraint = new EngineError('CONSTRAINT_UNIQUE', { detail: 't.x' });
  for (const failure of [undefined, constraint, new TypeError('a bug')]) {
    const bus = new CommandBus(handlers([], failure), [commandMetrics(observer, now)], noClose);
    await bus.dispatch({ type: 'create-database', db: 'a' }).catch(() => undefined);
  }
  t.same(seen, [
    ['create-database', 'ok', 0.25],
    ['create-database', `class${Math.floor(constraint.code / 1000)}`, 0.25],
    ['create-database', 'fault', 0.25],
  ]);
  t.equal(outcomeOf(constraint), 'class3', 'a constraint violation is class 3');
});
