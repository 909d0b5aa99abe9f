/**
 * The primary side, running: it starts shipping at once if JetStream
 * answers, and otherwise keeps trying in the background while every write
 * fails with JOURNAL_UNAVAILABLE (reads go on). A journal with replication
 * configured never writes a chunk that JetStream has not acknowledged: until
 * the real shipper is in place, a refusing one is.
 */
import type { Journal } from '../../../journal/journal';
import type { ChunkShipper } from '../../../journal/writer';
import type { ReplicationConfig } from '../../config/options';
import type { ReplicationStatus, ServerRoleState } from '../../services/server-role';
import type { FenceMessage } from '../stream/chunk-message';
import type { JournalStream } from '../stream/journal-stream';
import { JetStreamUnavailableError } from './journal-shipper';
import { PrimaryStartError, startPrimary, StreamAheadError, type Primary } from './primary-start';

/** Stands in until the stream is reached: every chunk is refused, so nothing unshipped is acknowledged. */
class NotConnectedShipper implements ChunkShipper {
  readonly epoch = 0;
  constructor(private readonly why: () => string) {}
  ship(): Promise<void> {
    return Promise.reject(new JetStreamUnavailableError(this.why()));
  }
}

export interface PrimaryRoleOptions {
  readonly config: ReplicationConfig;
  readonly journal: Journal;
  readonly journalFile: string;
  readonly role: ServerRoleState;
  readonly url: string;
  readonly log: (message: string) => void;
  /** Between attempts to reach JetStream at start. @default 1000 */
  readonly retryMs?: number;
}

export class PrimaryRole {
  private primary: Primary | null = null;
  private lastFailure = 'JetStream has not been reached yet';
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  private constructor(private readonly options: PrimaryRoleOptions) {}

  /**
   * Reaches JetStream once before the server serves (a stream ahead of the
   * journal is copied before recovery applies it); if it does not answer,
   * the server serves reads and keeps trying. A server that is not allowed to
   * be primary (another holds the lease) throws PrimaryStartError.
   */
  static async start(options: PrimaryRoleOptions): Promise<PrimaryRole> {
    const role = new PrimaryRole(options);
    options.journal.shipThrough(new NotConnectedShipper(() => role.lastFailure));
    options.role.becomePrimary(options.url);
    await role.attempt(false);
    return role;
  }

  /** A standby that took over: its shipper starts at the fence it published (replica-role.ts). */
  static promoted(options: PrimaryRoleOptions, primary: Primary): PrimaryRole {
    const role = new PrimaryRole(options);
    role.primary = primary;
    options.journal.follow(false);
    options.journal.shipThrough(primary.shipper);
    options.role.becomePrimary(options.url);
    options.log(
      `took over as primary ${options.config.node} of stream ${options.config.stream} (epoch ${primary.holder.epoch})`,
    );
    return role;
  }

  /** `serving`: the server answers requests already (a retry after JetStream was unreachable at start). */
  private async attempt(serving: boolean): Promise<void> {
    const { config, journal, journalFile, url, log } = this.options;
    try {
      this.primary = await startPrimary({
        config,
        journal,
        journalFile,
        url,
        log,
        serving,
        onFenced: (fence) => this.fenced(fence),
      });
      log(
        `shipping the journal to JetStream stream ${config.stream} as primary ${config.node} (epoch ${this.primary.holder.epoch})`,
      );
    } catch (error) {
      if (error instanceof PrimaryStartError) throw error;
      if (error instanceof StreamAheadError) return this.fatal(error);
      this.lastFailure = `JetStream at ${config.servers.join(',')} cannot be reached (${(error as Error).message}); writes resume when it answers`;
      log(this.lastFailure);
      if (!this.stopped)
        this.retry = setTimeout(
          () => void this.attempt(true).catch((fatal: unknown) => this.fatal(fatal)),
          this.options.retryMs ?? 1000,
        );
    }
  }

  /** Replaced: writes are refused from now on, naming the new primary (the lease says where it is when the stream did not). */
  private fenced(fence: FenceMessage): void {
    this.options.role.fenced(fence);
    if (fence.url !== '' || this.primary === null) return;
    this.primary.lease.read().then(
      (state) => {
        if (state !== null)
          this.options.role.fenced({ node: state.holder.node, epoch: state.holder.epoch, url: state.holder.url });
      },
      () => undefined,
    );
  }

  /** Another server took the lease while this one could not reach JetStream: it must not ship, ever. */
  private fatal(error: unknown): void {
    this.lastFailure = (error as Error).message;
    this.options.log(`this server cannot be the primary: ${this.lastFailure}`);
  }

  /** The stream it ships to; null while JetStream has not been reached. */
  get stream(): JournalStream | null {
    return this.primary?.stream ?? null;
  }

  status(appliedSeq: number): ReplicationStatus {
    const { config, role } = this.options;
    return {
      role: role.role,
      stream: config.stream,
      node: config.node,
      epoch: this.primary?.holder.epoch ?? 0,
      primary: role.primary,
      appliedSeq,
    };
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.retry !== null) clearTimeout(this.retry);
    await this.primary?.close();
  }
}
