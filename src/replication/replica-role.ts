/**
 * The replica side, running: connects to the stream (retrying while
 * JetStream does not answer; reads go on from what the databases hold),
 * follows it, tells where the primary is, and — when promoted — takes over.
 *
 * Takeover, in this order, so that no acknowledged write is lost and no
 * stale one gets in:
 * 1. take the lease with a compare-and-set (the next epoch): two standbys
 *    racing cannot both win;
 * 2. publish a fence where the stream ends now: from then on the old
 *    primary's publishes, which expect the stream to end where it left it,
 *    are refused, so whatever it had acknowledged is before the fence;
 * 3. apply everything up to the fence, then ship from the fence on.
 */
import path from 'node:path';
import { EngineError } from '../errors';
import type { Journal } from '../../journal/journal';
import type { Config, ReplicationConfig } from '../options';
import type { ReplicationStatus, ServerRole } from '../services/server-role';
import type { FenceMessage } from './chunk-message';
import { JournalShipper } from './journal-shipper';
import { JournalStream, WrongLastSequenceError } from './journal-stream';
import { LeaseLostError, PrimaryLease } from './primary-lease';
import type { Primary } from './primary-start';
import { ReplicaFollower } from './replica-follower';

export interface ReplicaRoleOptions {
  readonly config: Config;
  readonly replication: ReplicationConfig;
  readonly journal: Journal;
  readonly journalFile: string;
  readonly role: ServerRole;
  readonly url: string;
  /** A database's file, by its name in the journal. */
  readonly fileOf: (db: string) => string;
  readonly log: (message: string) => void;
  /** Between attempts to reach JetStream. @default 1000 */
  readonly retryMs?: number;
}

/** The replica's stream position is kept with its data, beside the databases. */
export const POSITION_FILE = '_sqlscribe_replica.json';

/** A durable consumer's name: one per replica, stable across its restarts. */
export function consumerNameOf(node: string): string {
  return `replica-${node.replace(/[^A-Za-z0-9_-]/g, '_').slice(-200)}`;
}

/** How many times a takeover re-reads the end of the stream when the old primary published meanwhile. */
const FENCE_ATTEMPTS = 20;

export class ReplicaRole {
  private stream: JournalStream | null = null;
  private lease: PrimaryLease | null = null;
  private follower: ReplicaFollower | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private leaseWatch: NodeJS.Timeout | null = null;
  private appliedAtStart: number;

  private constructor(private readonly options: ReplicaRoleOptions) {
    this.appliedAtStart = options.journal.lastSeq;
  }

  /** Starts following; when JetStream does not answer yet, keeps trying in the background. */
  static async start(options: ReplicaRoleOptions): Promise<ReplicaRole> {
    const role = new ReplicaRole(options);
    await role.attempt();
    return role;
  }

  private async attempt(): Promise<void> {
    const { replication, journal, journalFile, config, log } = this.options;
    try {
      this.stream ??= await JournalStream.connect({ servers: replication.servers, stream: replication.stream, replicas: replication.streamReplicas }, replication.timeoutMs, `sqlscribe replica ${replication.node}`);
      await this.stream.ensure();
      this.lease ??= await PrimaryLease.open(this.stream);
      this.follower = await ReplicaFollower.start({
        stream: this.stream,
        journal,
        journalFile,
        fileOf: this.options.fileOf,
        positionFile: path.join(config.dir, POSITION_FILE),
        consumer: consumerNameOf(replication.node),
        log,
      });
      await this.learnPrimary();
      this.leaseWatch = setInterval(() => void this.learnPrimary(), 2000);
      this.leaseWatch.unref();
      log(`following JetStream stream ${replication.stream} as replica ${replication.node} from seq ${journal.lastSeq + 1}`);
    } catch (error) {
      log(`JetStream at ${replication.servers.join(',')} cannot be followed yet (${(error as Error).message}); retrying`);
      if (!this.stopped) this.retry = setTimeout(() => void this.attempt(), this.options.retryMs ?? 1000);
    }
  }

  /** The lease says where the primary is: refusals name it. */
  private async learnPrimary(): Promise<void> {
    try {
      const state = await this.lease?.read();
      if (state !== null && state !== undefined && this.options.role.role === 'replica') this.options.role.following(state.holder.url);
    } catch {
      // Asked again shortly; the last known address stays meanwhile.
    }
  }

  settledThrough(): number {
    return this.follower?.settledThrough() ?? this.appliedAtStart;
  }

  status(): ReplicationStatus {
    const { replication, role } = this.options;
    const follower = this.follower;
    const applied = follower?.applied ?? this.appliedAtStart;
    const lag = follower?.lag() ?? { seqBehind: 0, secondsBehind: 0, primaryLastSeq: applied };
    return { role: role.role, stream: replication.stream, node: replication.node, epoch: follower?.epoch ?? 0, primary: role.primary, appliedSeq: applied, lag };
  }

  waitForSeq(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.follower === null) return Promise.resolve(this.appliedAtStart >= seq);
    return this.follower.waitFor(seq, timeoutMs);
  }

  /** Takes over as primary (see the top of this file); gives what the new primary ships with. */
  async takeOver(): Promise<Primary> {
    const { stream, lease, follower } = this;
    if (stream === null || lease === null || follower === null) throw new EngineError('PROMOTION_REFUSED', { detail: 'it has not reached JetStream yet' });
    if (follower.halted !== null) throw new EngineError('PROMOTION_REFUSED', { detail: `it stopped following the stream (${follower.halted.message})` });
    const { replication, role, log } = this.options;
    let holder;
    try {
      holder = await lease.take(await lease.read(), replication.node, this.options.url);
    } catch (error) {
      if (error instanceof LeaseLostError) throw new EngineError('PROMOTION_REFUSED', { detail: 'another server took the primary lease at the same moment' });
      throw error;
    }
    const fence: FenceMessage = { kind: 'fence', epoch: holder.epoch, node: replication.node, url: this.options.url };
    const fenceSeq = await publishFence(stream, fence, replication.timeoutMs);
    await follower.catchUpAndStop();
    this.stopFollowing();
    const shipper = new JournalShipper(stream, holder.epoch, replication.node, fenceSeq, {
      timeoutMs: replication.timeoutMs,
      log,
      onFenced: (newer) => role.fenced(newer),
    });
    return { stream, lease, shipper, holder, close: () => stream.close() };
  }

  private stopFollowing(): void {
    if (this.leaseWatch !== null) clearInterval(this.leaseWatch);
    this.leaseWatch = null;
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.stopFollowing();
    await this.follower?.stop();
    await this.stream?.close();
  }
}

/** Publishes the fence where the stream ends, re-reading the end while the old primary still gets chunks in first. */
async function publishFence(stream: JournalStream, fence: FenceMessage, timeoutMs: number): Promise<number> {
  for (let attempt = 0; attempt < FENCE_ATTEMPTS; attempt++) {
    try {
      return await stream.publish(fence, await stream.lastStreamSeq(), timeoutMs);
    } catch (error) {
      if (!(error instanceof WrongLastSequenceError)) throw new EngineError('PROMOTION_REFUSED', { detail: `the fence could not be published (${(error as Error).message})` });
    }
  }
  throw new EngineError('PROMOTION_REFUSED', { detail: `the old primary kept publishing: the fence did not get in after ${FENCE_ATTEMPTS} attempts` });
}
