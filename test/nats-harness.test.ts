/**
 * The nats-server helper (test/helpers/nats-server.ts) that the journal's
 * JetStream tests stand on: real `nats-server -js` processes from
 * Debian's package, on loopback. Without the binary this file fails with the
 * install line: it does not skip.
 *
 * Without the binary, natsServerPath throws the install line. One node: a
 * stream takes messages and gives them back, and keeps them across a
 * restart. A cluster of three: an R3 stream takes 50 acknowledged messages,
 * its leader is killed, 50 more are acknowledged once a new leader is
 * elected, all 100 are read back through a surviving node, and the killed
 * node, restarted, catches up as a current replica.
 */
import { chmodSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { scratchDir } from './helpers/scratch-dir';
import { natsServerPath, startNats, startNatsCluster } from './helpers/nats-server';
import { sleep } from './helpers/wait';

t.setTimeout(120_000);

// transport-node re-exports its types from @nats-io/nats-core/internal, a package export that
// the project's moduleResolution "node" does not follow: the connection is typed `any` here.
type NatsConnection = Awaited<ReturnType<typeof connect>>;

/** A client closed by a teardown registered after the servers', so it closes before they are killed. */
async function client(tt: Test, servers: string | string[]): Promise<NatsConnection> {
  const nc = await connect({ servers, timeout: 5_000 });
  tt.teardown(() => nc.close());
  return nc;
}

/** Retries `fn` until it resolves, for at most `ms`: a JetStream cluster answers errors while it elects a leader. */
async function within<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() >= deadline) throw new Error(`${what}: still failing after ${ms} ms: ${String(error)}`);
      await sleep(250);
    }
  }
}

/** The payloads of a stream's messages, by sequence from 1. */
async function payloads(jsm: JetStreamManager, stream: string): Promise<string[]> {
  const { state } = await jsm.streams.info(stream);
  const out: string[] = [];
  for (let seq = 1; seq <= state.last_seq; seq++)
    out.push((await jsm.streams.getMessage(stream, { seq }))?.string() ?? `<no message ${seq}>`);
  return out;
}

t.test('natsServerPath throws the install line when no directory has the binary', async (tt) => {
  const empty = scratchDir(tt);
  // The line itself, not the constant: README and .ci/run say the same words.
  tt.throws(() => natsServerPath([empty, path.join(empty, 'missing')]), { message: /apt-get install -y nats-server/ });
  // And it takes the first executable one it finds, in the order given.
  const fake = scratchDir(tt, { a: {}, b: { 'nats-server': '#!/bin/sh\n' } });
  chmodSync(path.join(fake, 'b', 'nats-server'), 0o755);
  tt.equal(natsServerPath([path.join(fake, 'a'), path.join(fake, 'b')]), path.join(fake, 'b', 'nats-server'));
});

t.test('one node: a stream takes messages, gives them back, and keeps them across a restart', async (tt) => {
  const node = await startNats(tt, { name: 'solo' });
  tt.match(node.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
  tt.equal(node.url, `nats://127.0.0.1:${node.port}`);
  tt.match(node.log(), /Server is ready/);

  const nc = await client(tt, node.url);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'SOLO', subjects: ['solo.>'] });
  const js = jetstream(nc);
  for (let i = 0; i < 5; i++) {
    const ack = await js.publish('solo.entry', `entry ${i}`);
    tt.equal(ack.seq, i + 1);
  }
  tt.same(await payloads(jsm, 'SOLO'), ['entry 0', 'entry 1', 'entry 2', 'entry 3', 'entry 4']);
  await nc.close();

  // Same port and store dir: the stream and its messages are still there.
  await node.restart();
  const again = await client(tt, node.url);
  tt.same(await payloads(await jetstreamManager(again), 'SOLO'), [
    'entry 0',
    'entry 1',
    'entry 2',
    'entry 3',
    'entry 4',
  ]);
  await again.close();
  await node.stop();
  tt.match(node.log(), /Server Exiting/);
});

t.test('a cluster of three: killing the stream leader loses no acknowledged message, and it rejoins', async (tt) => {
  const cluster = await startNatsCluster(tt, 3);
  tt.equal(cluster.nodes.length, 3);
  tt.equal(cluster.urls, cluster.nodes.map((node) => node.url).join(','));

  const nc = await client(tt, cluster.urls.split(','));
  const jsm = await jetstreamManager(nc, { timeout: 3_000 });
  await jsm.streams.add({ name: 'JOURNAL', subjects: ['journal.>'], num_replicas: 3 });
  // The timeout is short so that a publish lost in the election is retried, not waited on; msgID makes a retry of one that did land a duplicate the stream drops.
  const js = jetstream(nc, { timeout: 2_000 });
  const publish = (i: number): Promise<unknown> =>
    within(30_000, `publish ${i}`, () => js.publish('journal.entry', `entry ${i}`, { msgID: `entry-${i}` }));
  for (let i = 0; i < 50; i++) await publish(i);

  const leaderName = (await jsm.streams.info('JOURNAL')).cluster?.leader;
  const leader = cluster.nodes.find((node) => node.name === leaderName);
  if (leader === undefined) throw new Error(`no node is the stream's leader (${leaderName})`);
  await leader.kill();

  for (let i = 50; i < 100; i++) await publish(i);

  // Read through a node that survived, by itself, not through the client that may have been on the killed one.
  const survivor = cluster.nodes.find((node) => node !== leader)!;
  const direct = await client(tt, survivor.url);
  // Its account info is asked at once, which may time out while the cluster is still electing: retried.
  const survivorJsm = await within(20_000, 'a JetStream manager on a survivor', () =>
    jetstreamManager(direct, { timeout: 3_000 }),
  );
  const info = await within(20_000, 'stream info after the kill', () => survivorJsm.streams.info('JOURNAL'));
  tt.not(info.cluster?.leader, leader.name, 'a new leader was elected');
  tt.equal(info.state.messages, 100);
  tt.same(
    await payloads(survivorJsm, 'JOURNAL'),
    Array.from({ length: 100 }, (_, i) => `entry ${i}`),
  );

  // The killed node, restarted on its port and store dir, is a current replica again.
  await leader.restart();
  const rejoined = await within(30_000, `${leader.name} rejoining`, async () => {
    const replica = (await survivorJsm.streams.info('JOURNAL')).cluster?.replicas?.find(
      (peer) => peer.name === leader.name,
    );
    if (replica === undefined || !replica.current || replica.offline)
      throw new Error(`${leader.name} is not current yet: ${JSON.stringify(replica)}`);
    return replica;
  });
  tt.equal(rejoined.lag ?? 0, 0);
});
