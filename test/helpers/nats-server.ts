/**
 * Real `nats-server -js` processes on loopback for the tests of the journal's
 * JetStream shipping: one node, or a JetStream cluster.
 *
 * The binary is Debian's package (apt-get install -y nats-server, 2.9.10),
 * never downloaded. Without it a test fails with the install line: it does not
 * skip, so a machine that lacks it cannot pass the replication tests by
 * silently not running them.
 *
 * Every process is SIGKILLed by a teardown of the test that started it, and
 * every wait is bounded, so a failed assertion neither leaves a server behind
 * nor hangs the run. Its store directory lives in the test's scratch
 * directory, whose removal (registered first) runs after those teardowns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { scratchDir } from './scratch-dir';
import { sleep } from './wait';

/** The line a failure without the binary carries; README and .ci/run install it the same way. */
export const NATS_INSTALL = 'apt-get install -y nats-server';

/** How long a process may take to log "Server is ready". */
const READY_MS = 15_000;
/** How long a killed or stopped process may take to exit. */
const EXIT_MS = 10_000;
/** How long a cluster may take to elect its JetStream meta leader and place a replicated stream. */
const CLUSTER_READY_MS = 30_000;
/** Tries at fresh ports when one was taken between choosing it and the server binding it. */
const PORT_TRIES = 5;

interface HasTeardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface NatsNode {
  /** The server_name (JetStream's cluster info names the stream leader by it). */
  readonly name: string;
  /** nats://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** SIGKILL (a crash: nothing flushed), and waits until the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean shutdown), and waits until the process is gone. */
  stop(): Promise<void>;
  /** Starts the node again on the same port and store dir (stopping it first if it runs); waits until it is ready. */
  restart(): Promise<void>;
  /** Everything the server logged, across restarts. */
  log(): string;
}

export interface NatsCluster {
  readonly nodes: NatsNode[];
  /** The client URLs, comma-separated: the form sqlscribe's -journal-nats flag takes. */
  readonly urls: string;
}

/**
 * The nats-server binary: the first executable `nats-server` in `searchDirs`
 * (PATH, then /usr/sbin and /usr/bin, where Debian puts it but where a
 * non-root PATH may not look). Throws, with the install line, when there is none.
 */
export function natsServerPath(searchDirs: readonly string[] = defaultSearchDirs()): string {
  for (const dir of searchDirs) {
    const candidate = path.join(dir, 'nats-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  throw new Error(`nats-server was not found (looked in ${searchDirs.join(', ')}); install it with: ${NATS_INSTALL}`);
}

function defaultSearchDirs(): string[] {
  const fromPath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '');
  return [...new Set([...fromPath, '/usr/sbin', '/usr/bin'])];
}

/** One `nats-server -js` on a free loopback port, its store dir in a scratch directory of the test. */
/** `args`: more nats-server flags, e.g. `--user`/`--pass` for a server that wants credentials. */
export async function startNats(
  tt: HasTeardown,
  options: { name?: string; args?: readonly string[] } = {},
): Promise<NatsNode> {
  const binary = natsServerPath();
  const dir = scratchDir(tt);
  const name = options.name ?? 'nats';
  const storeDir = path.join(dir, name);
  for (let attempt = 1; ; attempt++) {
    const [port] = await freePorts(1);
    const node = new Node(tt, binary, name, port!, [
      '-js',
      '-n',
      name,
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-sd',
      storeDir,
      ...(options.args ?? []),
    ]);
    try {
      await node.start();
      return node;
    } catch (error) {
      if (!(error instanceof AddressInUse) || attempt >= PORT_TRIES) throw error;
    }
  }
}

/**
 * A JetStream cluster of `size` nodes (n1, n2, …) on loopback, each with its
 * own config file and store dir, routed to all the others. Resolves once a
 * stream with num_replicas = size can be created, which needs a meta leader
 * that knows every peer: "Server is ready" on each node comes well before that.
 */
export async function startNatsCluster(tt: HasTeardown, size = 3): Promise<NatsCluster> {
  const binary = natsServerPath();
  const dir = scratchDir(tt);
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(2 * size);
    const clientPorts = ports.slice(0, size);
    const clusterPorts = ports.slice(size);
    const nodes = clientPorts.map((port, i) => {
      const name = `n${i + 1}`;
      const routes = clusterPorts.filter((_, j) => j !== i).map((p) => `nats-route://127.0.0.1:${p}`);
      const config = path.join(dir, `${name}.conf`);
      writeFileSync(
        config,
        [
          `server_name: ${name}`,
          `listen: 127.0.0.1:${port}`,
          `jetstream { store_dir: ${JSON.stringify(path.join(dir, name))} }`,
          `cluster { name: sqs, listen: 127.0.0.1:${clusterPorts[i]}, routes: [${routes.join(', ')}] }`,
          '',
        ].join('\n'),
      );
      return new Node(tt, binary, name, port, ['-c', config]);
    });
    try {
      await Promise.all(nodes.map((node) => node.start()));
    } catch (error) {
      // The others' routes name every cluster port, so a taken one means new ports for all.
      await Promise.all(nodes.map((node) => node.kill()));
      if (!(error instanceof AddressInUse) || attempt >= PORT_TRIES) throw error;
      continue;
    }
    const cluster: NatsCluster = { nodes, urls: nodes.map((node) => node.url).join(',') };
    await untilJetStreamReplicates(cluster, size);
    return cluster;
  }
}

/** Creates and deletes an R`size` stream until that works, within CLUSTER_READY_MS. */
async function untilJetStreamReplicates(cluster: NatsCluster, size: number): Promise<void> {
  const deadline = Date.now() + CLUSTER_READY_MS;
  const nc = await connect({ servers: cluster.nodes.map((node) => node.url), timeout: 5_000 });
  let last: unknown;
  try {
    while (Date.now() < deadline) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.getAccountInfo();
        await jsm.streams.add({ name: 'harness-probe', subjects: ['harness.probe'], num_replicas: size });
        await jsm.streams.delete('harness-probe');
        return;
      } catch (error) {
        last = error;
        await sleep(250);
      }
    }
  } finally {
    await nc.close();
  }
  const logs = cluster.nodes.map((node) => `--- ${node.name}\n${tail(node.log())}`).join('\n');
  throw new Error(
    `the JetStream cluster did not replicate within ${CLUSTER_READY_MS} ms (last error: ${String(last)})\n${logs}`,
  );
}

/** nats-server said its port was taken: the caller picks another. */
class AddressInUse extends Error {}

class Node implements NatsNode {
  readonly url: string;
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    tt: HasTeardown,
    private readonly binary: string,
    readonly name: string,
    readonly port: number,
    private readonly args: readonly string[],
  ) {
    this.url = `nats://127.0.0.1:${port}`;
    tt.teardown(() => this.kill());
  }

  log(): string {
    return this.output;
  }

  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  async restart(): Promise<void> {
    await this.stop();
    // A killed server's port is free at once, but another process may take it meanwhile; the port must stay, so try again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.start();
      } catch (error) {
        if (!(error instanceof AddressInUse) || attempt >= PORT_TRIES) throw error;
        await sleep(500);
      }
    }
  }

  /** Spawns the server and waits for "Server is ready"; rejects with its log tail when it exits or stays silent. */
  start(): Promise<void> {
    const child = spawn(this.binary, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const logged = this.output.length;
    return new Promise<void>((resolve, reject) => {
      const fail = (why: string): void => {
        clearTimeout(timer);
        const ownLog = this.output.slice(logged);
        if (/address already in use/.test(ownLog))
          reject(new AddressInUse(`${this.name}: port taken\n${tail(ownLog)}`));
        else reject(new Error(`nats-server ${this.name} (${this.url}) ${why}\n${tail(ownLog)}`));
      };
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        fail(`was not ready within ${READY_MS} ms`);
      }, READY_MS);
      const onData = (chunk: Buffer): void => {
        this.output += chunk.toString();
        if (this.output.indexOf('Server is ready', logged) !== -1) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (error) => fail(`could not start: ${error.message}`));
      child.once('exit', (code, signal) => fail(`exited with ${code ?? signal} before it was ready`));
    });
  }

  /** Signals the running process (if any) and waits for its exit; SIGKILL after EXIT_MS. */
  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_MS);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Loopback ports the system has just handed out, all distinct: each is bound
 * (port 0) until every one is known, then released for nats-server to take.
 * Another process may take one in between; the callers retry on that.
 */
async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

function tail(log: string, lines = 30): string {
  return log.trimEnd().split('\n').slice(-lines).join('\n');
}
