/**
 * A request's CallContext makes its signal, timer and connection listener
 * only when something asks for the signal, and then still knows whether the
 * request already stopped: past its deadline, or its client gone.
 */
import { EventEmitter } from 'node:events';
import t from 'tap';
import type { Context } from 'koa';
import { callOf, requestDeadline } from '../src/http/bookkeeping/request-deadline';
import type { RequestStop } from '../src/engine/protocol';

interface FakeResponse extends EventEmitter {
  destroyed: boolean;
  writableFinished: boolean;
}

function fakeContext(): { ctx: Context; res: FakeResponse } {
  const res = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
  const ctx = { request: { ip: '127.0.0.9' }, res, state: {} } as unknown as Context;
  return { ctx, res };
}

t.test('nothing is armed until the signal is asked for, and all is disarmed when the request ends', async (t) => {
  const { ctx, res } = fakeContext();
  await requestDeadline(30_000)(ctx, async () => {
    const call = callOf(ctx);
    t.equal(call.client, '127.0.0.9');
    t.equal(call.stopped?.(), false, 'a live request has not stopped');
    t.equal(res.listenerCount('close'), 0, 'no listener yet');
    t.equal(call.signal?.aborted, false);
    t.equal(res.listenerCount('close'), 1, 'asking for the signal arms it');
    res.destroyed = true;
    res.emit('close');
    t.same(call.signal?.reason, { reason: 'gone', ms: (call.signal?.reason as RequestStop).ms }, 'a hang-up aborts it');
  });
  t.equal(res.listenerCount('close'), 0, 'the listener goes with the request');
});

t.test('a signal asked for late is aborted at once when the request already stopped', async (t) => {
  const late = fakeContext();
  // A deadline of 0 ms has passed by the time anything runs: no need to wait for one.
  await requestDeadline(0)(late.ctx, async () => {
    const call = callOf(late.ctx);
    t.equal(call.stopped?.(), true, 'past the deadline');
    t.same(call.signal?.reason, { reason: 'deadline', ms: 0 }, 'the deadline passed before anyone asked');
  });
  const gone = fakeContext();
  await requestDeadline(30_000)(gone.ctx, async () => {
    gone.res.destroyed = true;
    const call = callOf(gone.ctx);
    t.equal(call.stopped?.(), true, 'the client is gone');
    t.equal((call.signal?.reason as RequestStop).reason, 'gone');
    t.equal(gone.res.listenerCount('close'), 0, 'nothing to listen for');
  });
});

t.test(
  'a request with a token is its token for the fair share of the engines, wherever it connects from',
  async (t) => {
    for (const ip of ['127.0.0.9', '10.0.0.7']) {
      const { ctx } = fakeContext();
      (ctx.request as { ip: string }).ip = ip;
      ctx.state.principal = { id: 'tok_abc', name: 'alumno-07', role: 'write', databases: ['alumno-07'] };
      await requestDeadline(30_000)(ctx, async () => {
        const call = callOf(ctx);
        t.equal(call.client, 'token:tok_abc', `from ${ip}: keyed by the token id`);
        t.equal(call.principal?.name, 'alumno-07', 'and the principal travels with the call');
      });
    }
  },
);
