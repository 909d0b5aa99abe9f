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
import { EngineError } from '../../errors';
import type { RebuildBounds } from '../../services/databases/restore-process';
import type { Journal } from '../../../journal/journal';
import type { Config, ReplicationConfig } from '../../config/options';
import type { ReplicationStatus, ServerRoleState } from '../../services/server-role';
import { readJournal } from '../../../journal/reader';
import { encodeLine } from '../../../journal/record';
import { entriesOf, type FenceMessage } from '../stream/chunk-message';
import { JournalShipper } from '../primary/journal-shipper';
import { JournalStream, WrongLastSequenceError } from '../stream/journal-stream';
import { LeaseLostError, PrimaryLease } from '../stream/primary-lease';
import type { Primary } from '../primary/primary-start';
import { ReplicaFollower } from './replica-follower';
import { WorkerApplier } from './replica-applier';
import { seedFromSnapshot } from './replica-seed';

export interface ReplicaRoleOptions {
  readonly config: Config;
  readonly replication: ReplicationConfig;
  readonly journal: Journal;
  readonly journalFile: string;
  readonly role: ServerRoleState;
  readonly url: string;
  /** A database's file, by its name in the journal. */
  readonly fileOf: (db: string) => string;
  /** Makes the server's engine processes let go of a database file the follower replaced. */
  readonly release: (file: string) => Promise<void>;
  /** The journal index (its file, and settling it for a rebuild process to read); null: none (-history-index=false). */
  readonly index: { readonly file: string; settle(): Promise<void> } | null;
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

/** Why this server cannot be a replica of the stream; at start-up the server stops with it. */
export class ReplicaStartError extends Error {}

/** How often a read waiting for a seq looks whether the follower has started yet. */
const FOLLOWER_POLL_MS = 50;

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
    await role.attempt(true);
    return role;
  }

  /**
   * A journal that runs past the stream holds entries no primary shipped (a
   * replaced primary's directory, or a stream made anew): following would
   * fork it, so the replica refuses.
   */
  private async refuseForeignJournal(stream: JournalStream): Promise<void> {
    const last = this.options.journal.lastSeq;
    if (last === 0) return;
    const tail = await stream.tail(false);
    const streamEnd = tail.lastEntries?.message.lastSeq ?? 0;
    if (last > streamEnd) {
      throw new ReplicaStartError(
        `this server's journal ends at seq ${last}, past the stream's last entry (${streamEnd}): it holds entries no primary shipped. Start a replica on an empty data directory`,
      );
    }
    // Same seq, other entry: a replaced primary's unshipped write where its successor wrote another.
    const mine = await lastLocalLine(this.options.journalFile, last);
    const chunk = await stream.chunkHolding(last);
    const theirs = chunk === null ? undefined : entriesOf(chunk.message).find((entry) => entry.seq === last);
    if (mine !== undefined && theirs !== undefined && encodeLine(theirs) !== mine) {
      throw new ReplicaStartError(
        `this server's journal entry ${last} differs from the stream's: it was written by a primary that was replaced before shipping it. Start a replica on an empty data directory`,
      );
    }
  }

  /** `first`: during start-up, where a refusal stops the server; later ones are logged and end the retries. */
  private async attempt(first: boolean): Promise<void> {
    const { replication, journal, journalFile, config, log } = this.options;
    try {
      this.stream ??= await JournalStream.connect(
        {
          servers: replication.servers,
          auth: replication.auth,
          stream: replication.stream,
          replicas: replication.streamReplicas,
        },
        replication.timeoutMs,
        `sqlscribe replica ${replication.node}`,
      );
      await this.stream.ensure();
      this.lease ??= await PrimaryLease.open(this.stream);
      await this.refuseForeignJournal(this.stream);
      const positionFile = path.join(config.dir, POSITION_FILE);
      // A replica that holds nothing starts from the newest snapshot round in JetStream, then follows the tail.
      const { fileOf, release, index } = this.options;
      if (
        await seedFromSnapshot({
          stream: this.stream,
          journal,
          dir: config.dir,
          dbFile: config.dbFile,
          snapshotDir: config.snapshotDir,
          positionFile,
          fileOf,
          release,
          log,
        })
      ) {
        this.appliedAtStart = journal.lastSeq;
      }
      this.follower = await ReplicaFollower.start({
        stream: this.stream,
        journal,
        journalFile,
        fileOf: this.options.fileOf,
        // Applied in a worker thread: a large entry must not stop this server answering reads meanwhile;
        // a restore's state is rebuilt in a process of its own, under the restore bounds (replica-restorer.ts).
        applier: new WorkerApplier(
          {
            dir: config.dir,
            dbFile: config.dbFile,
            journalFile,
            restores: {
              bounds: restoreBounds(config),
              indexFile: this.options.index?.file ?? null,
              snapshotDir: config.snapshotDir,
              scratchDir: path.join(path.dirname(journalFile), 'restoring'),
            },
          },
          log,
        ),
        ...(index === null ? {} : { settleIndex: () => index.settle() }),
        replaced: (db) => this.options.release(this.options.fileOf(db)),
        positionFile,
        consumer: consumerNameOf(replication.node),
        log,
      });
      await this.learnPrimary();
      this.leaseWatch = setInterval(() => void this.learnPrimary(), 2000);
      this.leaseWatch.unref();
      log(
        `following JetStream stream ${replication.stream} as replica ${replication.node} from seq ${journal.lastSeq + 1}`,
      );
    } catch (error) {
      if (error instanceof ReplicaStartError) {
        if (first) throw error;
        log(`this server cannot follow the stream: ${error.message}`);
        return;
      }
      log(
        `JetStream at ${replication.servers.join(',')} cannot be followed yet (${error instanceof Error ? error.message : String(error)}); retrying`,
      );
      if (!this.stopped) this.retry = setTimeout(() => void this.attempt(false), this.options.retryMs ?? 1000);
    }
  }

  /** The lease says where the primary is: refusals name it. */
  private async learnPrimary(): Promise<void> {
    try {
      const state = await this.lease?.read();
      if (state !== null && state !== undefined && this.options.role.role === 'replica')
        this.options.role.following(state.holder.url);
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
    const halted = follower?.halted ?? null;
    return {
      role: role.role,
      stream: replication.stream,
      node: replication.node,
      epoch: follower?.epoch ?? 0,
      primary: role.primary,
      appliedSeq: applied,
      lag,
      ...(halted === null ? {} : { halted: haltedStatus(halted) }),
    };
  }

  /** Waits for `seq` to be applied, also while JetStream has not been reached yet: the follower may start within the wait. */
  async waitForSeq(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.follower === null) {
      if (this.appliedAtStart >= seq) return true;
      if (this.stopped || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, FOLLOWER_POLL_MS));
    }
    return this.follower.waitFor(seq, Math.max(0, deadline - Date.now()));
  }

  /** Takes over as primary (see the top of this file); gives what the new primary ships with. */
  async takeOver(): Promise<Primary> {
    const { stream, lease, follower } = this;
    if (stream === null || lease === null || follower === null)
      throw new EngineError('PROMOTION_REFUSED', { detail: 'it has not reached JetStream yet' });
    if (follower.halted !== null)
      throw new EngineError('PROMOTION_REFUSED', {
        detail: `it stopped following the stream (${follower.halted.message})`,
      });
    const { replication, role, log } = this.options;
    let holder;
    try {
      holder = await lease.take(await lease.read(), replication.node, this.options.url);
    } catch (error) {
      if (error instanceof LeaseLostError)
        throw new EngineError('PROMOTION_REFUSED', {
          detail: 'another server took the primary lease at the same moment',
        });
      throw error;
    }
    const fence: FenceMessage = { kind: 'fence', epoch: holder.epoch, node: replication.node, url: this.options.url };
    const fenceSeq = await publishFence(stream, fence, replication.timeoutMs);
    await follower.catchUpAndStop();
    this.stopFollowing();
    // Everything before the fence is applied, or this server would take writes on top of a hole.
    const tail = await stream.tail(false);
    const streamEnd = tail.lastEntries?.message.lastSeq ?? 0;
    if (this.options.journal.lastSeq !== streamEnd) {
      throw new EngineError('PROMOTION_REFUSED', {
        detail: `it holds the journal through seq ${this.options.journal.lastSeq}, the stream through ${streamEnd}; it holds the lease (epoch ${holder.epoch}): promote it again once it has caught up`,
      });
    }
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

function restoreBounds(config: Config): RebuildBounds {
  return { timeoutMs: config.restoreTimeoutMs, memoryBytes: config.restoreMemoryBytes };
}

/** Why the follower halted, as /health says it. */
function haltedStatus(error: Error): { error: string; code?: number } {
  return error instanceof EngineError ? { error: error.message, code: error.code } : { error: error.message };
}

/** The local journal's line of `seq`, as encodeLine writes it. */
async function lastLocalLine(journalFile: string, seq: number): Promise<string | undefined> {
  const { entries } = await readJournal(journalFile, { fromSeq: seq });
  const entry = entries.find((candidate) => candidate.seq === seq);
  return entry === undefined ? undefined : encodeLine(entry);
}

/** Publishes the fence where the stream ends, re-reading the end while the old primary still gets chunks in first. */
async function publishFence(stream: JournalStream, fence: FenceMessage, timeoutMs: number): Promise<number> {
  for (let attempt = 0; attempt < FENCE_ATTEMPTS; attempt++) {
    try {
      return await stream.publish(fence, await stream.lastStreamSeq(), timeoutMs);
    } catch (error) {
      if (!(error instanceof WrongLastSequenceError))
        throw new EngineError('PROMOTION_REFUSED', {
          detail: `the fence could not be published (${(error as Error).message})`,
        });
    }
  }
  throw new EngineError('PROMOTION_REFUSED', {
    detail: `the old primary kept publishing: the fence did not get in after ${FENCE_ATTEMPTS} attempts`,
  });
}
