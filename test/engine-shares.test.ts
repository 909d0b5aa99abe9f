/**
 * Who gets the next engine process (engine-shares.ts): a client holds at most
 * its share, takes a second one only while the pool has room, and among
 * waiting clients the one holding fewest and having used least goes first;
 * use fades with time (an injected clock, no sleeping).
 */
import t from 'tap';
import { EngineShares, processesPerClient } from '../src/engine/host/engine-shares';

t.test("a client's share is the nearest whole number of processes, at least one", async (t) => {
  t.equal(processesPerClient(3, 0.5), 2, 'half of three');
  t.equal(processesPerClient(4, 0.5), 2, 'half of four');
  t.equal(processesPerClient(2, 0.5), 1);
  t.equal(processesPerClient(3, 0.25), 1, 'a quarter of three');
  t.equal(processesPerClient(4, 0.25), 1);
  t.equal(processesPerClient(1, 0.1), 1, 'never none');
  t.equal(processesPerClient(3, 1), 3, 'the whole pool');
});

t.test('a client holds at most its share, and more than one only while the pool has room', async (t) => {
  const shares = new EngineShares(2);
  t.ok(shares.mayTake('a', true), 'a client holding nothing may always take one');
  shares.take('a');
  t.ok(shares.mayTake('a', false), 'a second while the pool has room');
  t.notOk(shares.mayTake('a', true), 'not a second when the pool is full');
  shares.take('a');
  t.notOk(shares.mayTake('a', false), 'never past its share');
  shares.give('a', 10);
  t.ok(shares.mayTake('a', false), 'given back, it may take again');
  t.ok(shares.mayTake(undefined, true), 'work of no client is not limited');
  shares.take(undefined);
  t.equal(shares.heldBy(undefined), 0, 'nor counted');
});

t.test('the client holding fewest goes first, then the one that used least', async (t) => {
  let now = 0;
  const shares = new EngineShares(4, () => now);
  shares.take('runaway');
  t.ok(shares.before('pupil', 'runaway'), 'holding none goes before holding one');
  shares.give('runaway', 3000);
  t.equal(shares.heldBy('runaway'), 0);
  t.ok(shares.before('pupil', 'runaway'), 'holding the same, less engine time goes first');
  t.notOk(shares.before('runaway', 'pupil'));
  t.equal(shares.usedBy('runaway'), 3000);
  now = 10_000;
  t.equal(Math.round(shares.usedBy('runaway')), 1500, 'use counts half after ten seconds');
  shares.take('pupil');
  t.ok(shares.before('runaway', 'pupil'), 'holding counts before use');
});

t.test('clients that hold nothing and whose use faded are forgotten', async (t) => {
  let now = 0;
  const shares = new EngineShares(1, () => now);
  for (let i = 0; i < 100; i++) {
    shares.take(`c${i}`);
    shares.give(`c${i}`, 5);
  }
  shares.take('holder');
  now = 1_000_000;
  shares.take('late');
  shares.give('late', 1);
  t.equal(shares.heldBy('holder'), 1, 'a client holding a process is kept');
  t.equal(shares.usedBy('c1'), 0, 'a faded one reads as new');
  t.equal(
    (shares as unknown as { clients: Map<string, unknown> }).clients.size,
    2,
    'only the holder and the latest remain',
  );
});
