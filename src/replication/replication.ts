/**
 * Replication as the server sees it: one object for either role, started
 * around crash recovery, asked for the status, read-your-writes and a
 * standby's takeover.
 *
 * - primary (-journal-nats): before recovery, because reaching the stream may
 *   copy entries into the local journal that recovery must apply;
 * - replica (-follow): after recovery, following the stream from where its
 *   local journal ends.
 */
import type { Journal } from '../../journal/journal';
import type { Config, ReplicationConfig } from '../config/options';
import { EngineError } from '../errors';
import type { ReplicationControl, ReplicationStatus, ServerRoleState } from '../services/server-role';
import { PrimaryRole } from './primary/primary-role';
import { ReplicaRole } from './replica/replica-role';
import { SnapshotUploader } from './primary/snapshot-uploader';
import type { SnapshotManifest } from '../snapshots/manifest';

export interface ReplicationDeps {
  readonly config: Config;
  readonly replication: ReplicationConfig;
  readonly journal: Journal;
  readonly journalFile: string;
  readonly role: ServerRoleState;
  /** The journal seq the databases hold on a primary: every durable entry is applied before its write is answered. */
  readonly primaryAppliedSeq: () => number;
  /** A database's file, by its name in the journal. */
  readonly fileOf: (db: string) => string;
  /** Makes the server's engine processes let go of a database file a replica's follower replaced. */
  readonly release: (file: string) => Promise<void>;
  /** The journal index, which a replica's restore rebuilds read through; null: none. */
  readonly index: { readonly file: string; settle(): Promise<void> } | null;
  readonly log: (message: string) => void;
}

export class Replication implements ReplicationControl {
  private primary: PrimaryRole | null = null;
  private replica: ReplicaRole | null = null;
  private url = '';
  private promoting = false;
  private readonly uploader: SnapshotUploader | null;

  constructor(private readonly deps: ReplicationDeps) {
    this.uploader = deps.config.snapshotDir === null ? null : new SnapshotUploader(deps.config.snapshotDir, deps.log);
    // A replica's journal takes its primary's entries only, from the first moment.
    if (deps.replication.role === 'replica') {
      deps.journal.follow(true);
      deps.role.becomeReplica();
    }
  }

  /** Where clients reach this server: -advertise, else the address it listens on. */
  listening(url: string): void {
    this.url = this.deps.replication.advertise ?? url;
  }

  async beforeRecovery(): Promise<void> {
    if (this.deps.replication.role !== 'primary') return;
    const { replication, journal, journalFile, role, log } = this.deps;
    this.primary = await PrimaryRole.start({ config: replication, journal, journalFile, role, url: this.url, log });
  }

  async afterRecovery(): Promise<void> {
    if (this.deps.replication.role !== 'replica') return;
    this.replica = await ReplicaRole.start({ ...this.deps, url: this.url });
    if (this.deps.replication.promote) await this.promote();
  }

  status(): ReplicationStatus {
    if (this.primary !== null) return this.primary.status(this.deps.primaryAppliedSeq());
    if (this.replica !== null) return this.replica.status();
    const { replication, role } = this.deps;
    return {
      role: role.role,
      stream: replication.stream,
      node: replication.node,
      epoch: 0,
      primary: role.primary,
      appliedSeq: this.deps.journal.lastSeq,
    };
  }

  /** A replica's databases hold the journal this far (an open session's entries wait); null elsewhere: the write path knows. */
  settledThrough(): number | null {
    return this.replica?.settledThrough() ?? null;
  }

  waitForSeq(seq: number, timeoutMs: number): Promise<boolean> {
    if (this.replica !== null && this.deps.role.role === 'replica') return this.replica.waitForSeq(seq, timeoutMs);
    return Promise.resolve(this.status().appliedSeq >= seq);
  }

  /** After a snapshot round: the primary puts it in the stream's bucket, for new replicas to start from. Never rejects. */
  async roundTaken(manifest: SnapshotManifest): Promise<void> {
    if (this.primary === null || this.deps.role.role !== 'primary') return;
    await this.uploader?.upload(this.primary.stream, manifest);
  }

  async promote(): Promise<ReplicationStatus> {
    if (this.promoting) throw new EngineError('PROMOTION_REFUSED', { detail: 'it is taking over already' });
    if (this.replica === null || this.deps.role.role !== 'replica') {
      throw new EngineError('PROMOTION_REFUSED', {
        detail: `it is ${this.deps.role.role === 'replica' ? 'still starting' : `the ${this.deps.role.role}, not a replica`}`,
      });
    }
    // One takeover at a time: a second would take the lease again and fence this very server.
    this.promoting = true;
    try {
      const { replication, journal, journalFile, role, log } = this.deps;
      const primary = await this.replica.takeOver();
      this.primary = PrimaryRole.promoted(
        { config: replication, journal, journalFile, role, url: this.url, log },
        primary,
      );
      this.replica = null;
      return this.status();
    } finally {
      this.promoting = false;
    }
  }

  async close(): Promise<void> {
    await this.replica?.close();
    await this.primary?.close();
  }
}
